#!/bin/sh
# run_hostbench.sh BUILD OUT [hostbench options]: the host-pointer sweep of issue 5 in one run:
# libfastgemm (auto), libfastgemm forced to the GPU, NVBLAS (its best settings: tile 2048,
# autopin, CPU side = the system OpenBLAS) and the system OpenBLAS on all cores, sgemm_ and
# dgemm_ on page-aligned matrices in pageable memory, all four in one process with their calls
# interleaved shape by shape (perf/hostbench.c). Writes OUT/hostbench.csv and its log.
set -u
BUILD=$1 OUT=$2
shift 2
BENCH=$BUILD/fastgemm-hostbench
FG=$BUILD/libfastgemm.so
OPENBLAS=${OPENBLAS:-$(ldconfig -p | awk '/libopenblas\.so\.0 /{print $NF; exit}')}
NVBLAS=${NVBLAS:-$( (ldconfig -p | awk '/libnvblas\.so/{print $NF; exit}'; ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null) | head -1)}
mkdir -p "$OUT"
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
NVBLAS_CONFIG_FILE="$OUT/nvblas.conf" "$BENCH" --lib "fastgemm_auto=$FG@auto" --lib "fastgemm_gpu=$FG@gpu" \
  --lib "nvblas=$NVBLAS" --lib "openblas=$OPENBLAS" $ARGS > "$OUT/hostbench.log" 2>&1
echo "hostbench: exit $?" >&2
{ echo "label,prec,m,n,k,ms,gflops,max_rel_err,p25_ms,p75_ms,calls"; grep -E "^(fastgemm_auto|fastgemm_gpu|nvblas|openblas)," "$OUT/hostbench.log"; } \
  > "$OUT/hostbench.csv"
grep FAIL "$OUT/hostbench.log" >&2
# Untimed: the trace lines (the model's predictions, how the pipeline cut each call).
FASTGEMM_MODE=auto FASTGEMM_TRACE="$OUT/trace_auto.log" "$BENCH" --lib "$FG" --label traced \
  --min-time 0 --max-n 8192 > /dev/null 2>&1
