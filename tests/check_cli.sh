#!/bin/sh
# check_cli.sh STATUS STREAM PATTERN COMMAND [ARG...]: a command-line program answers its command
# line as it should. COMMAND must exit with STATUS and print a line matching PATTERN (grep -E) on
# STREAM, and nothing on the other stream: with STREAM=stdout (--help, --version) no warning or
# trace line came (FASTGEMM_TRACE=1 in the test's environment would show any GEMM); with
# STREAM=stderr (a bad command line) the message is one line and nothing ran (the demo prints
# its header on stdout before the first GEMM).
expect=$1 stream=$2 pattern=$3
shift 3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" > "$out" 2> "$err"
rc=$?
echo "$*: exit $rc"
echo "-- stdout:"; cat "$out"
echo "-- stderr:"; cat "$err"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -eq "$expect" ] || fail "exit status $rc, not $expect"
if [ "$stream" = stdout ]; then
  grep -Eq -- "$pattern" "$out" || fail "no line of stdout matches '$pattern'"
  [ ! -s "$err" ] || fail "something on stderr"
else
  [ "$(wc -l < "$err")" -eq 1 ] || fail "stderr is not one line"
  grep -Eq -- "$pattern" "$err" || fail "stderr does not match '$pattern'"
  [ ! -s "$out" ] || fail "something on stdout: it ran"
fi
echo "ok"
