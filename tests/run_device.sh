#!/bin/bash
# run_device.sh: on a machine with a GPU, builds libfastgemm with every core and runs the whole
# CTest suite, gpu label included (compute-sanitizer runs are tests there); logs go to $OUT.
# CTEST_ARGS narrows the tests (e.g. "-R sweep_s"); NO_TESTS=1 skips them. SWEEP="args for fastgemm-sweep" also times libfastgemm against cuBLAS (sweep.csv,
# sweep.png), and the kernels' SASS instruction counts go to sass_*.txt.
# TUNE="args for fastgemm-tune" builds and runs the tuner (tune.csv, tune.log, and the table it
# writes, sgemm_table.gen.h, or dgemm_table.gen.h with --prec d); ABLATE="args for fastgemm-ablate" the ablation (ablate.csv,
# ablate.log). NCU="args for fastgemm-sweep" profiles its GEMM kernels (ncu.txt).
# OMPBENCH="args for fastgemm-ompbench" times both GPU backends next to cuBLAS (ompbench.csv;
# each OpenMP kernel for at most OMPBENCH_LIMIT seconds, their traces in ompbench.log).
# TARGETS="..." builds only those targets. Logs come back in logs.tar.gz.
# What such a machine may lack comes prebuilt in $CARRY (default .devcarry, see the README):
#   netlib/   Debian's libblas-test testers, their .in files and the reference libblas.so.3
#   prebuilt/ abi_f_linked and abi_f_blas (built where gfortran is); test_omp_interop,
#             libfastgemm_omp.so and their OpenMP runtime (tests/prebuild_omp.sh, built where
#             an OpenMP offload compiler is)
#   gfortran/ libgfortran.so.5 and libquadmath.so.0, used only if the machine has none
#   programs/ the real-program suite's ScaLAPACK test with an Open MPI, ScaLAPACK and BLAS
#             runtime (tests/programs/prepare_devcarry.sh), used if it is there
# The suite's pip NumPy and SciPy are the machine's python3's (unless .venv-programs/ is there);
# a SciPy wheel carried in .whl/ is installed for the run where that Python has none.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/device-out}
CARRY=${CARRY:-$root/.devcarry}
BUILD=${BUILD:-$root/build-device}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
ldconfig -p | grep -q 'libgfortran.so.5 ' || export LD_LIBRARY_PATH=$CARRY/gfortran${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The prebuilt Fortran program linked against libblas.so.3: the reference one, if the machine has none.
ldconfig -p | grep -q 'libblas.so.3 ' || export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$CARRY/netlib
programs=()
[ -d "$CARRY/programs" ] && programs+=(-DFASTGEMM_PROGRAMS_CARRY="$CARRY/programs")
if [ ! -x "$root/.venv-programs/bin/python3" ] && command -v python3 > /dev/null; then
  programs+=(-DFASTGEMM_PIP_PYTHON="$(command -v python3)")
  if ! python3 -c 'import scipy' 2> /dev/null && ls "$root"/.whl/scipy-*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$BUILD/pysite" "$root"/.whl/scipy-*.whl &&
      export PYTHONPATH=$BUILD/pysite${PYTHONPATH:+:$PYTHONPATH}
  fi
fi
tuner=OFF
[ -z "${TUNE:-}${ABLATE:-}" ] || tuner=ON
# CMAKE_ARGS: more for the configure step (e.g. -DFASTGEMM_TIMELINE=ON, with BUILD=another folder).
# shellcheck disable=SC2086
cmake -S "$root" -B "$BUILD" -DFASTGEMM_NETLIB_DIR="$CARRY/netlib" -DFASTGEMM_BUILD_TUNER="$tuner" \
  -DFASTGEMM_PREBUILT_TESTS="$CARRY/prebuilt" "${programs[@]}" ${CMAKE_ARGS:-} > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
targets=()
for t in ${TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j"$(nproc)" "${targets[@]}" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build ok"
cd "$BUILD" || exit 1
for p in sgemm_simt dgemm_dmma; do
  cuobjdump --dump-sass CMakeFiles/fastgemm_objects.dir/kernels/$p.cu.o > $p.sass 2>/dev/null &&
    grep -oE "Function : [^ ]+|FFMA|DMMA[.0-9x]*|LDS(\.[A-Z0-9.]+)?|LDGSTS(\.[A-Z0-9.]+)?|STG(\.[A-Z0-9.]+)?|LDL|STL" $p.sass |
    awk '/^Function/ {f=$3; next} {c[f" "$0]++} END {for (k in c) print c[k], k}' | sort -k2 > "$OUT/sass_$p.txt"
done
rc=0
if [ -z "${NO_TESTS:-}" ]; then
  ctest -j8 -V ${CTEST_ARGS:-} > "$OUT/ctest.log" 2>&1
  rc=$?
  grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|Skipped|Failed" "$OUT/ctest.log" | tail -60
fi
if [ -x ./fastgemm-demo ]; then
  FASTGEMM_TRACE=1 ./fastgemm-demo > "$OUT/demo.log" 2>&1
  echo "demo: exit $?"; grep -v "^fastgemm:" "$OUT/demo.log"
fi
if [ -n "${TUNE:-}" ]; then
  case "$TUNE" in *"--prec d"*) table=dgemm_table.gen.h ;; *) table=sgemm_table.gen.h ;; esac
  ./fastgemm-tune $TUNE --csv "$OUT/tune.csv" --emit "$OUT/$table" > "$OUT/tune.log" 2>&1 || rc=1
  sed -n '/^Table/,$p' "$OUT/tune.log"
fi
if [ -n "${ABLATE:-}" ]; then
  ./fastgemm-ablate $ABLATE --csv "$OUT/ablate.csv" > "$OUT/ablate.log" 2>&1 || rc=1
  cat "$OUT/ablate.log"
fi
if [ -n "${SWEEP:-}" ]; then
  ./fastgemm-sweep $SWEEP --csv "$OUT/sweep.csv" > "$OUT/sweep.log" 2>&1 || rc=1
  grep -E "TFLOP|GPU" "$OUT/sweep.log"
  python3 "$root/perf/plot.py" "$OUT/sweep.png" "$OUT/sweep.csv" || true
fi
if [ -n "${OMPBENCH:-}" ]; then # both GPU backends next to cuBLAS on device memory
  omp_env=""
  [ -e fastgemm/libfastgemm_omp.so ] ||
    omp_env="FASTGEMM_OMP_LIB=$CARRY/prebuilt/libfastgemm_omp.so LD_LIBRARY_PATH=$CARRY/prebuilt:${LD_LIBRARY_PATH:-}"
  { FASTGEMM_BACKEND=cuda ./fastgemm-ompbench --label cuda $OMPBENCH
    for k in omp_direct omp_team; do
      env $omp_env FASTGEMM_BACKEND=omp FASTGEMM_KERNEL=$k OMP_TARGET_OFFLOAD=MANDATORY FASTGEMM_TRACE=1 \
        timeout "${OMPBENCH_LIMIT:-600}" ./fastgemm-ompbench --label $k $OMPBENCH | tail -n +2
    done
  } > "$OUT/ompbench.csv" 2> "$OUT/ompbench.log" || rc=1
  cat "$OUT/ompbench.csv" "$OUT/ompbench.log"
fi
if [ -n "${NCU:-}" ]; then # Nsight Compute on the GEMM kernels of a small fastgemm-sweep run
  ncu --section SpeedOfLight --section SchedulerStats --section WarpStateStats \
      --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
      -k regex:gemm -c 4 ./fastgemm-sweep $NCU --reps 1 > "$OUT/ncu.txt" 2>&1 || true
  grep -E "^  [a-z_0-9]+.*\(|Duration|SM Frequency|Issue Slots Busy|Executed Ipc Active|No Eligible|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -80
fi
# At most 8 files come back: the logs travel as one archive.
(cd "$OUT" && ls *.log *.txt > /dev/null 2>&1 && tar czf logs.tar.gz *.log *.txt && rm -f *.log *.txt)
exit $rc
