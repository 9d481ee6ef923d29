#!/bin/sh
# run_two_copies.sh LIB PROGRAM LOADER: two copies of libfastgemm in one process. LOADER
# (two_copies) runs with LIB preloaded and loads a copy of LIB into the global scope, where it
# is the next definition of the BLAS names; PROGRAM (abi_c_linked, linked with LIB) runs with
# FASTGEMM_CPU_BLAS naming the copy. The copy that takes the calls never takes the other for its
# CPU BLAS: it says so in one line, every call is traced once (not once by each copy), and the
# CPU BLAS named is OpenBLAS.
set -u
lib=$1 prog=$2 loader=$3
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -L "$lib" "$work/libfastgemm.so.0"
fails=0
check() { # WHAT EXPECTED-MESSAGE CALLS
  if ! grep -q "$2" "$work/err"; then echo "FAIL: $1: no '$2' on stderr:"; cat "$work/err"; fails=$((fails + 1)); fi
  sh "$here/../check_trace.sh" "$work/trace" cpu || fails=$((fails + 1))
  calls=$(grep -c ' backend=' "$work/trace")
  [ "$calls" -eq "$3" ] || { echo "FAIL: $1: $calls trace lines for the program's $3 calls"; fails=$((fails + 1)); }
  grep -q '^fastgemm: cpu-blas=.*libopenblas' "$work/trace" || { echo "FAIL: $1: the CPU BLAS is not OpenBLAS"; fails=$((fails + 1)); }
  rm -f "$work/trace"
}
FASTGEMM_MODE=cpu FASTGEMM_TRACE=$work/trace LD_PRELOAD=$lib "$loader" "$work/libfastgemm.so.0" \
  > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err"; fails=$((fails + 1)); }
check "a copy loaded after the preloaded one" "is another copy of libfastgemm: its sgemm_ is not taken as the CPU BLAS" 2
FASTGEMM_MODE=cpu FASTGEMM_TRACE=$work/trace FASTGEMM_CPU_BLAS=$work/libfastgemm.so.0 \
  LD_LIBRARY_PATH=$(dirname "$lib") "$prog" > "$work/out" 2> "$work/err" || { cat "$work/out" "$work/err"; fails=$((fails + 1)); }
check "FASTGEMM_CPU_BLAS naming another copy" "FASTGEMM_CPU_BLAS='$work/libfastgemm.so.0' is a libfastgemm, not a CPU BLAS" 6
echo "run_two_copies: $fails failure(s)"
[ $fails -eq 0 ]
