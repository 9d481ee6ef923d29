#!/bin/sh
# run_errors.sh LIB PROGRAM: PROGRAM (abi_errors, linked with some BLAS) makes each invalid call
# once on its own and once with libfastgemm preloaded: the output (stdout and stderr together)
# and the exit status must be the same, and C must be untouched.
set -u
lib=$1 prog=$2
fails=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in s d; do
  for w in ta tb m k lda ldb ldc c_layout c_ta c_m c_row_m c_row_n c_row_lda c_ldc; do
    case=${p}_$w
    "$prog" "$case" > "$out/alone" 2>&1
    rc_alone=$?
    FASTGEMM_MODE=cpu LD_PRELOAD=$lib "$prog" "$case" > "$out/preloaded" 2>&1
    rc_pre=$?
    if [ $rc_alone -eq 2 ]; then echo "FAIL: $case: $(cat "$out/alone")"; fails=$((fails + 1)); continue; fi
    if [ $rc_alone -ne $rc_pre ] || ! cmp -s "$out/alone" "$out/preloaded"; then
      echo "FAIL: $case differs. Alone (exit $rc_alone):"; cat "$out/alone"
      echo "preloaded (exit $rc_pre):"; cat "$out/preloaded"
      fails=$((fails + 1))
    elif grep -q '^returned' "$out/alone" && ! grep -q '^returned; C = 9 10 11 12$' "$out/alone"; then
      echo "FAIL: $case: C changed: $(grep '^returned' "$out/alone")"; fails=$((fails + 1))
    else
      printf '%-14s same (exit %d): %s\n' "$case" "$rc_pre" "$(head -1 "$out/preloaded")"
    fi
  done
done
echo "run_errors: $fails of 28 cases differ"
[ $fails -eq 0 ]
