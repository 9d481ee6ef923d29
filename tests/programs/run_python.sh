#!/bin/sh
# run_python.sh PYTHON FROM SUITE LIB EXPECT ENTRY [HAS_GPU]: the products of gemm_cases.py
# SUITE (numpy or scipy) with PYTHON, whose module must come FROM debian (python3-numpy,
# python3-scipy: /usr/lib/python3/dist-packages) or pip (any other place), once without
# libfastgemm and once under LD_PRELOAD=LIB with its trace on. Both results must agree with each
# other and with float64 within the netlib gauge; the trace must show every product's GEMM call
# under the name ENTRY ({p}: s or d, e.g. scipy_cblas_{p}gemm64_ for pip's NumPy 2.x) and every
# computing call on backend EXPECT (cpu or gpu; with gpu and HAS_GPU given, a machine without a
# GPU skips); on the CPU, a pip wheel's calls must reach the wheel's own OpenBLAS.
set -u
py=$1 from=$2 suite=$3 lib=$4 expect=$5 entry=$6 has_gpu=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
need_gpu "$expect" "$has_gpu"
module=numpy
[ "$suite" = scipy ] && module=scipy.linalg.blas
[ -x "$py" ] || missing "no Python at $py"
"$py" -c "import $module" 2> /dev/null || missing "$py cannot import $module"
where=$("$py" -c "import $suite; print($suite.__file__)")
echo "$suite $("$py" -c "import $suite; print($suite.__version__)") from $where"
case $from:$where in
  debian:/usr/lib/python3/dist-packages/*) ;;
  debian:*) missing "$py's $suite is not Debian's" ;;
  pip:/usr/lib/python3/dist-packages/*) missing "$py's $suite is Debian's, not pip's" ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same products without libfastgemm: the reference.
env -u LD_PRELOAD -u FASTGEMM_TRACE "$py" "$here/gemm_cases.py" "$suite" run "$work/ref" ||
  { echo "FAIL: the run without libfastgemm failed"; exit 1; }
FASTGEMM_TRACE=$work/trace LD_PRELOAD=$lib "$py" "$here/gemm_cases.py" "$suite" run "$work/got" "$entry" ||
  { echo "FAIL: the run under LD_PRELOAD=$lib failed"; exit 1; }
rc=0
"$py" "$here/gemm_cases.py" "$suite" check "$work/ref" "$work/got" || rc=1
sh "$here/../check_trace.sh" "$work/trace" "$expect" || rc=1
# pip's wheels bundle their OpenBLAS (libscipy_openblas*): the calls run on the CPU go on to it.
if [ "$from" = pip ] && [ "$expect" = cpu ]; then
  other=$(grep '^fastgemm: cpu-blas=' "$work/trace" | grep -v '^fastgemm: cpu-blas=[^ ]*/libscipy_openblas')
  [ -z "$other" ] || { echo "FAIL: CPU calls went to another BLAS than the wheel's: $other"; rc=1; }
fi
check_calls "$work/trace" "$work/got/expected" || rc=1
exit $rc
