#!/bin/sh
# run_coldstart.sh BUILD OUT [N] [REPS]: issue 52's cold start. Whole processes of
# fastgemm-coldstart (CALLS sgemm_ calls of N^3, default 4096, on fresh host matrices), timed
# from their start to their end: the system OpenBLAS alone; libfastgemm preloaded over it in auto
# mode with no stored profile (an empty cache folder each time) and with one (measured first by
# fastgemm-calibrate); NVBLAS over it. CALLS 3 and 10, REPS rounds (default 5), the labels in a
# new order each round. Writes OUT/coldstart.csv (label,calls,round,ms,gemm_ms,main_ms,to_main_ms,
# to_return_ms: the whole process, its calls, its main from the first fill to the last check, and
# the times from the launch to main's start and to its return) and prints the medians: what
# goes before main (loading) and after its return (exit handlers, CUDA's teardown) apart.
# Then CUDA's own start and exit with no GEMM, for the floor (fastgemm-cudastart, labels cuda_*,
# calls 0). FG_ENV="VAR=VALUE ..." adds settings to the libfastgemm processes.
set -u
BUILD=$1 OUT=$2 N=${3:-4096} REPS=${4:-5}
BENCH=$BUILD/fastgemm-coldstart
FG=$(cd "$BUILD" && pwd)/libfastgemm.so
OPENBLAS=${OPENBLAS:-$(ldconfig -p | awk '/libopenblas\.so\.0 /{print $NF; exit}')}
NVBLAS=${NVBLAS:-$( (ldconfig -p | awk '/libnvblas\.so/{print $NF; exit}'; ls /usr/local/cuda/lib64/libnvblas.so* 2>/dev/null) | head -1)}
mkdir -p "$OUT/cache"
rm -f "$OUT"/trace_*.log "$OUT/coldstart.log"
sh "$(dirname "$0")/nvblas_conf.sh" "$OUT/nvblas.conf" "$OPENBLAS" "$OUT/nvblas.log"
echo "OpenBLAS: $OPENBLAS; NVBLAS: $NVBLAS; n = $N" >&2
XDG_CACHE_HOME=$OUT/cache "$BUILD/fastgemm-calibrate" -q || echo "fastgemm-calibrate failed" >&2
echo "label,calls,round,ms,gemm_ms,main_ms,to_main_ms,to_return_ms" > "$OUT/coldstart.csv"
run() { # LABEL CALLS ROUND: one process, timed
  label=$1 calls=$2 round=$3
  fresh=$(mktemp -d)
  case $label in
    openblas) set -- env ;;
    fastgemm_noprofile) set -- env ${FG_ENV:-} LD_PRELOAD="$FG" XDG_CACHE_HOME="$fresh" ;;
    fastgemm_profile) set -- env ${FG_ENV:-} LD_PRELOAD="$FG" XDG_CACHE_HOME="$OUT/cache" ;;
    nvblas) set -- env LD_PRELOAD="$NVBLAS" NVBLAS_CONFIG_FILE="$OUT/nvblas.conf" ;;
  esac
  t0=$(date +%s%N)
  "$@" COLDSTART_LAUNCH_NS="$t0" COLDSTART_BLAS="$OPENBLAS" FASTGEMM_TRACE="$OUT/trace_${label}_$calls.log" "$BENCH" "$N" "$calls" \
    > "$OUT/run.log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  rm -rf "$fresh"
  [ $rc -eq 0 ] || { echo "$label $calls round $round: exit $rc" >&2; cat "$OUT/run.log" >&2; }
  gemm=$(awk '/^call [0-9]+:/ {s += $3} END {printf "%.1f", s}' "$OUT/run.log")
  main=$(awk '/^main:/ {print $2}' "$OUT/run.log")
  to_main=$(awk '/^launch:/ {print $2}' "$OUT/run.log")
  to_return=$(awk '/^launch:/ {print $(NF - 4)}' "$OUT/run.log")
  echo "$label,$calls,$round,$(( (t1 - t0) / 1000 ))e-3,$gemm,${main:-nan},${to_main:-nan},${to_return:-nan}" >> "$OUT/coldstart.csv"
  { echo "== $label $calls round $round"; cat "$OUT/run.log"; } >> "$OUT/coldstart.log"
}
labels="openblas fastgemm_noprofile fastgemm_profile"
[ -n "$NVBLAS" ] && labels="$labels nvblas"
for round in $(seq 1 "$REPS"); do
  for calls in 3 10; do
    # the labels rotated by one place each round
    order=$(echo $labels | tr ' ' '\n' | awk -v k="$round" '{a[NR] = $0} END {for (i = 0; i < NR; i++) print a[(i + k) % NR + 1]}')
    for label in $order; do run "$label" "$calls" "$round"; done
  done
done
# CUDA's own start and exit, no GEMM (fastgemm-cudastart): calls 0, gemm_ms the steps' time.
if [ -x "$BUILD/fastgemm-cudastart" ]; then
  for round in $(seq 1 "$REPS"); do
    for step in none init context memory memory-quick; do
      t0=$(date +%s%N)
      case $step in
        *-quick) "$BUILD/fastgemm-cudastart" --quick-exit "${step%-quick}" > "$OUT/run.log" 2>&1 ;;
        *) "$BUILD/fastgemm-cudastart" "$step" > "$OUT/run.log" 2>&1 ;;
      esac
      rc=$?
      t1=$(date +%s%N)
      [ $rc -eq 0 ] || { echo "cuda $step round $round: exit $rc" >&2; cat "$OUT/run.log" >&2; }
      steps=$(awk '/^(init|context|memory):/ {s += $2} END {printf "%.1f", s}' "$OUT/run.log")
      main=$(awk '/^main:/ {print $2}' "$OUT/run.log")
      echo "cuda_$step,0,$round,$(( (t1 - t0) / 1000 ))e-3,$steps,${main:-nan},nan,nan" >> "$OUT/coldstart.csv"
      { echo "== cuda_$step round $round"; cat "$OUT/run.log"; } >> "$OUT/coldstart.log"
    done
  done
fi
python3 - "$OUT/coldstart.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for calls in ("3", "10", "0"):
    med = {}
    for label in sorted({r["label"] for r in rows}):
        mine = [r for r in rows if r["label"] == label and r["calls"] == calls]
        if mine:
            med[label] = [statistics.median(float(r[k]) for r in mine) for k in ("ms", "gemm_ms", "main_ms", "to_main_ms", "to_return_ms")] + [len(mine)]
    base = med.get("openblas")
    for label, (m, g, mm, tm, tr, count) in med.items():
        if calls == "0":  # CUDA alone: its steps, and the process around main
            print(f"CUDA alone {label:<20} median {m:8.1f} ms (steps {g:7.1f}, main {mm:7.1f}, outside main {m - mm:6.1f}; of {count})")
            continue
        ratio = f"  OpenBLAS/this {base[0] / m:.2f}" if base else ""
        print(f"{calls:>2} calls  {label:<20} median {m:8.1f} ms (calls {g:7.1f}, main {mm:7.1f}, before main {tm:6.1f}, after its return {m - tr:6.1f}; of {count}){ratio}")
PY
