#!/bin/sh
# run_errors.sh LIB PROGRAM: PROGRAM (abi_errors, linked with some BLAS) makes each invalid call
# once on its own and once with libfastgemm preloaded: the output (stdout and stderr together)
# and the exit status must be the same, and C must be untouched.
set -u
lib=$1 prog=$2
fails=0 preload_env=""
. "$(dirname "$0")/same_alone_preloaded.sh"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for p in s d; do
  for w in ta tb m k lda ldb ldc c_layout c_ta c_m c_row_m c_row_n c_row_lda c_ldc; do
    same "${p}_$w" "$lib" "$prog" "${p}_$w"
  done
done
echo "run_errors: $fails of 28 cases differ"
[ $fails -eq 0 ]
