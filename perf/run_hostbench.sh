#!/bin/sh
# run_hostbench.sh BUILD OUT [hostbench options]: the host-pointer sweep of issue 5 in one run:
# libfastgemm (auto), libfastgemm forced to the GPU, NVBLAS (its best settings: tile 2048,
# autopin, CPU side = the system OpenBLAS) and the system OpenBLAS on all cores, sgemm_ and
# dgemm_ on page-aligned matrices in pageable memory, all four in one process with their calls
# interleaved shape by shape (perf/hostbench.c). Writes OUT/hostbench.csv and its log.
# LEARN_AB=1 adds a fifth column, fastgemm_learn: a copy of the library (settings of its own in
# the same process) in auto mode with FASTGEMM_LEARN=1; give it --rounds 10 (one pass of the
# square for five: 50 shares a shape, as the default makes for four), since the default for
# five (three passes, 30 rounds) takes about three times as long.
set -u
BUILD=$1 OUT=$2
shift 2
BENCH=$BUILD/fastgemm-hostbench
FG=$BUILD/libfastgemm.so
OPENBLAS=${OPENBLAS:-$(ldconfig -p | awk '/libopenblas\.so\.0 /{print $NF; exit}')}
NVBLAS=${NVBLAS:-$( (ldconfig -p | awk '/libnvblas\.so/{print $NF; exit}'; ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null) | head -1)}
mkdir -p "$OUT"
ARGS="$*"
sh "$(dirname "$0")/nvblas_conf.sh" "$OUT/nvblas.conf" "$OPENBLAS" "$OUT/nvblas.log"
echo "OpenBLAS: $OPENBLAS; NVBLAS: $NVBLAS" >&2
# The auto mode with this machine's profile, measured first (as a user would).
"$BUILD/fastgemm-calibrate" > "$OUT/calibrate.log" 2>&1
LEARN=""
if [ "${LEARN_AB:-0}" = 1 ]; then
  COPY=$(mktemp -d)
  cp -L "$FG" "$COPY/libfastgemm.so"
  LEARN="--lib-env FASTGEMM_LEARN=1 --lib fastgemm_learn=$COPY/libfastgemm.so@auto"
fi
# shellcheck disable=SC2086
NVBLAS_CONFIG_FILE="$OUT/nvblas.conf" "$BENCH" --lib "fastgemm_auto=$FG@auto" --lib "fastgemm_gpu=$FG@gpu" \
  --lib "nvblas=$NVBLAS" --lib "openblas=$OPENBLAS" $LEARN $ARGS > "$OUT/hostbench.log" 2>&1
echo "hostbench: exit $?" >&2
[ -z "$LEARN" ] || rm -rf "$COPY"
{ echo "label,prec,m,n,k,ms,gflops,max_rel_err,p25_ms,p75_ms,calls"; grep -E "^(fastgemm_auto|fastgemm_gpu|fastgemm_learn|nvblas|openblas)," "$OUT/hostbench.log"; } \
  > "$OUT/hostbench.csv"
grep FAIL "$OUT/hostbench.log" >&2
# Untimed: the trace lines (the model's predictions, how the pipeline cut each call).
FASTGEMM_MODE=auto FASTGEMM_TRACE="$OUT/trace_auto.log" "$BENCH" --lib "$FG" --label traced \
  --min-time 0 --max-n 8192 > /dev/null 2>&1
