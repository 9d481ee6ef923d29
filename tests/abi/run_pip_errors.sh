#!/bin/sh
# run_pip_errors.sh LIB PROGRAM PYTHON: PROGRAM (pip_errors) makes each invalid call through the
# names of pip's NumPy wheel (scipy64) and SciPy wheel (scipy), over the OpenBLAS each wheel
# bundles (found from PYTHON, a Python with both from PyPI), once alone and once with libfastgemm
# preloaded: output and exit status must be the same, C untouched. A machine without such a
# Python skips (77), except under FASTGEMM_PROGRAMS_REQUIRED=1 (CI).
set -u
lib=$1 prog=$2 py=$3
wheel_blas() { # MODULE PATTERN: the wheel's bundled OpenBLAS
  "$py" -c "import $1, glob, os; print(glob.glob(os.path.join(os.path.dirname($1.__file__), '..', '$1.libs', '$2'))[0])" 2>/dev/null
}
np=$(wheel_blas numpy 'libscipy_openblas64_*.so')
sp=$(wheel_blas scipy 'libscipy_openblas-*.so')
if [ -z "$np" ] || [ -z "$sp" ]; then
  echo "no pip NumPy and SciPy wheels at $py (.ci/install-programs makes them)"
  [ "${FASTGEMM_PROGRAMS_REQUIRED:-0}" = 1 ] && { echo FAIL; exit 1; }
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fails=0 n=0 preload_env="PIP_ERRORS_WHO=$out/who"
. "$(dirname "$0")/same_alone_preloaded.sh"
for family in scipy64 scipy; do
  blas=$np
  [ $family = scipy ] && blas=$sp
  for w in ta m lda ldc c_layout c_tb c_m c_row_lda; do
    n=$((n + 1))
    rm -f "$out/who"
    same "$family $w" "$lib" "$prog" "$blas" $family $w
    if [ ! -s "$out/who" ] || grep -qv "libfastgemm" "$out/who"; then
      echo "FAIL: $family $w: preloaded, a name was not bound to libfastgemm: $(cat "$out/who" 2>/dev/null)"
      fails=$((fails + 1))
    fi
  done
done
echo "run_pip_errors: $fails of $n cases differ"
[ $fails -eq 0 ]
