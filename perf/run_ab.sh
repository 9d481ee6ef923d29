#!/bin/bash
# run_ab.sh OLD_SRC NEW_BUILD OUT: two libfastgemm builds side by side in one run, e.g. a change
# against the commit before it. Builds OLD_SRC (a source tree, e.g. `git archive REV`) into
# BUILD_OLD (default OLD_SRC/build-ab), then, alternating old and new ROUNDS times (default 2), runs
# fastgemm-sweep of each (squares and irregular shapes, SWEEP_PREC precisions, default "s d";
# each process times its library next to cuBLAS), and one fastgemm-hostbench process with both
# libraries interleaved shape by shape (auto mode, after fastgemm-calibrate, and gpu mode).
# Writes OUT/sweep_{old,new}_{1,2}_{s,d}.csv and OUT/hostbench.csv; prints a per-shape summary
# of the sweeps (perf/ab_summary.py). HOSTBENCH="options" for the bench (empty: skipped).
# SWEEP_SHAPES: the sweep's --shapes (default all). OLD_BUILT=1: BUILD_OLD is already built
# (e.g. elsewhere, carried), use it as it is. CMAKE_ARGS: more for the old tree's configure step.
set -u
OLD_SRC=$1 NEW_BUILD=$2 OUT=$3
BUILD_OLD=${BUILD_OLD:-$OLD_SRC/build-ab}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
if [ "${OLD_BUILT:-0}" != 1 ]; then
  # shellcheck disable=SC2086
  cmake -S "$OLD_SRC" -B "$BUILD_OLD" -DFASTGEMM_BUILD_TESTS=OFF ${CMAKE_ARGS:-} > "$OUT/old_configure.log" 2>&1 &&
    cmake --build "$BUILD_OLD" -j"$(nproc)" --target fastgemm fastgemm-sweep > "$OUT/old_build.log" 2>&1 ||
    { tail -20 "$OUT/old_build.log"; exit 1; }
fi
for round in $(seq 1 "${ROUNDS:-2}"); do
  for side in old new; do
    b=$BUILD_OLD
    [ $side = new ] && b=$NEW_BUILD
    for p in ${SWEEP_PREC:-s d}; do
      "$b/fastgemm-sweep" --prec "$p" --shapes "${SWEEP_SHAPES:-all}" --csv "$OUT/sweep_${side}_${round}_$p.csv" \
        > "$OUT/sweep_${side}_${round}_$p.log" 2>&1 || echo "sweep $side $round $p: FAILED"
    done
  done
done
python3 "$root/perf/ab_summary.py" "$OUT" | tee "$OUT/ab_summary.txt"
if [ -n "${HOSTBENCH-}" ]; then
  "$NEW_BUILD/fastgemm-calibrate" > "$OUT/calibrate.log" 2>&1
  # shellcheck disable=SC2086
  "$NEW_BUILD/fastgemm-hostbench" --lib "old_auto=$BUILD_OLD/libfastgemm.so@auto" \
    --lib "new_auto=$NEW_BUILD/libfastgemm.so@auto" --lib "old_gpu=$BUILD_OLD/libfastgemm.so@gpu" \
    --lib "new_gpu=$NEW_BUILD/libfastgemm.so@gpu" $HOSTBENCH > "$OUT/hostbench.log" 2>&1
  echo "hostbench: exit $?"
  { echo "label,prec,m,n,k,ms,gflops,max_rel_err,p25_ms,p75_ms,calls"
    grep -E "^(old|new)_(auto|gpu)," "$OUT/hostbench.log"; } > "$OUT/hostbench.csv"
  python3 "$root/perf/ab_summary.py" --host "$OUT/hostbench.csv" | tee -a "$OUT/ab_summary.txt"
fi
