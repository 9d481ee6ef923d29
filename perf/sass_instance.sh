#!/bin/sh
# sass_instance.sh: one SIMT SGEMM kernel instance compiled alone for sm_90 (seconds, not the
# minutes of kernels/sgemm_simt.cu), its SASS and its loops (perf/sass_loops.py).
#
#   perf/sass_instance.sh BM,BN,BK,WM,WN,STAGES,TM,TN,FEATURES TA TB ELEM CT [OUT.sass]
#   perf/sass_instance.sh 128,128,16,64,32,3,8,8,656 0 1 1 0      # NT, element copies
#
# TA, TB, ELEM, CT: 0 or 1, the kernel's template flags (kernels/sgemm_simt.cuh). The flags are
# the library's (-O3 -DNDEBUG, C++17), so the instance's code is the library's: a way to try a
# change to the kernels against one instance before building the whole library. NVCC (default
# nvcc) and CUOBJDUMP (default cuobjdump; pip's nvidia-cuda-cuobjdump has one) can be set.
set -e
if [ $# -lt 5 ]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=$1
flags=$(for f in "$2" "$3" "$4" "$5"; do
    case $f in 0) printf 'false,' ;; 1) printf 'true,' ;; *) echo "TA TB ELEM CT are 0 or 1, not '$f'" >&2; exit 2 ;; esac
done)
out=${6:-sass_instance.sass}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/one.cu" <<EOF
#include "kernels/sgemm_simt.cuh"
// Taking the kernel's address instantiates it, whatever its parameters.
void *fg_sass_instance() { return (void *)&fg_simt::sgemm_simt<fg_simt::SimtConfig<$cfg>, ${flags%,}>; }
EOF
"${NVCC:-nvcc}" -O3 -DNDEBUG -arch=sm_90 -std=c++17 -I "$root/include" -I "$root" -cubin -Xptxas -v \
    -o "$dir/one.cubin" "$dir/one.cu" 2>&1 | grep -E "registers|spill" | sed 's/^ptxas info *: *//'
"${CUOBJDUMP:-cuobjdump}" -sass "$dir/one.cubin" > "$out"
python3 "$root/perf/sass_loops.py" "$out"
