#!/bin/sh
# run_python.sh PYTHON SUITE LIB EXPECT ENTRY [HAS_GPU]: the products of gemm_cases.py SUITE
# (numpy or scipy) with PYTHON, once without libfastgemm and once under LD_PRELOAD=LIB with
# its trace on. Both results must agree with each other and with float64 within the netlib
# gauge; the trace must show every product's GEMM call under the name ENTRY ({p}: s or d, e.g.
# scipy_cblas_{p}gemm64_ for pip's NumPy 2.x) and every computing call on backend EXPECT
# (cpu or gpu; with gpu and HAS_GPU given, a machine without a GPU skips).
set -u
py=$1 suite=$2 lib=$3 expect=$4 entry=$5 has_gpu=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
need_gpu "$expect" "$has_gpu"
module=numpy
[ "$suite" = scipy ] && module=scipy.linalg.blas
[ -x "$py" ] || missing "no Python at $py"
"$py" -c "import $module" 2> /dev/null || missing "$py cannot import $module"
"$py" -c "import numpy; print('numpy', numpy.__version__, numpy.__file__)"
[ "$suite" = scipy ] && "$py" -c "import scipy; print('scipy', scipy.__version__, scipy.__file__)"
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
check_calls "$work/trace" "$work/got/expected" || rc=1
exit $rc
