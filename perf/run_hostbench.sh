#!/bin/sh
# run_hostbench.sh BUILD OUT [hostbench options]: the host-pointer sweep of issue 5 in one run:
# libfastgemm (auto), libfastgemm forced to the GPU, NVBLAS (its best settings: tile 2048,
# autopin, CPU side = the system OpenBLAS) and the system OpenBLAS on all cores, sgemm_ and
# dgemm_ on page-aligned matrices in pageable memory. Writes OUT/hostbench.csv and one log per
# library.
set -u
BUILD=$1 OUT=$2
shift 2
BENCH=$BUILD/fastgemm-hostbench
FG=$BUILD/libfastgemm.so
OPENBLAS=${OPENBLAS:-$(ldconfig -p | awk '/libopenblas\.so\.0 /{print $NF; exit}')}
NVBLAS=${NVBLAS:-$( (ldconfig -p | awk '/libnvblas\.so/{print $NF; exit}'; ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null) | head -1)}
mkdir -p "$OUT"
echo "label,prec,m,n,k,ms,gflops,max_rel_err" > "$OUT/hostbench.csv"
bench() { # label lib [VAR=value ...]
    label=$1 lib=$2
    shift 2
    env "$@" "$BENCH" --lib "$lib" --label "$label" $ARGS > "$OUT/hostbench_$label.log" 2>&1
    echo "$label: exit $?" >&2
    grep -E "^$label," "$OUT/hostbench_$label.log" >> "$OUT/hostbench.csv"
    grep FAIL "$OUT/hostbench_$label.log" >&2
}
ARGS="$*"
cat > "$OUT/nvblas.conf" <<CONF
NVBLAS_LOGFILE $OUT/nvblas.log
NVBLAS_CPU_BLAS_LIB $OPENBLAS
NVBLAS_GPU_LIST 0
NVBLAS_TILE_DIM 2048
NVBLAS_AUTOPIN_MEM_ENABLED
CONF
echo "OpenBLAS: $OPENBLAS; NVBLAS: $NVBLAS" >&2
# The auto mode with this machine's profile, measured first (as a user would).
"$BUILD/fastgemm-calibrate" > "$OUT/calibrate.log" 2>&1
bench fastgemm_auto "$FG" FASTGEMM_MODE=auto
bench fastgemm_gpu "$FG" FASTGEMM_MODE=gpu
bench nvblas "$NVBLAS" NVBLAS_CONFIG_FILE="$OUT/nvblas.conf"
bench openblas "$OPENBLAS"
# Untimed: the trace lines (the model's predictions, how the pipeline cut each call).
FASTGEMM_MODE=auto FASTGEMM_TRACE="$OUT/trace_auto.log" "$BENCH" --lib "$FG" --label traced \
  --min-time 0 --max-n 8192 > /dev/null 2>&1
