#!/bin/sh
# run_r.sh RSCRIPT LIB EXPECT [HAS_GPU]: R's matrix products (products.R) under LD_PRELOAD=LIB
# with the trace on: each must agree with R's own loops within the netlib gauge, the trace must
# show each product's dgemm_ call and every computing call on backend EXPECT (cpu or gpu; with
# gpu and HAS_GPU given, a machine without a GPU skips).
set -u
rscript=$1 lib=$2 expect=$3 has_gpu=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
need_gpu "$expect" "$has_gpu"
command -v "$rscript" > /dev/null 2>&1 || missing "no R ($rscript; Debian: apt-get install r-base-core)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
FASTGEMM_TRACE=$work/trace LD_PRELOAD=$lib "$rscript" --vanilla "$here/products.R" "$work/expected" || rc=1
[ -f "$work/expected" ] || { echo "FAIL: R did not finish"; exit 1; }
sh "$here/../check_trace.sh" "$work/trace" "$expect" || rc=1
check_calls "$work/trace" "$work/expected" || rc=1
exit $rc
