#!/bin/sh
# run_scalapack.sh PROGRAM LIB EXPECT [HAS_GPU]: ScaLAPACK's pdgemm (PROGRAM: pdgemm_check.f90)
# on a 2x2 process grid under mpirun -np 4, each process with LIB preloaded and a trace file of
# its own. The program checks C against a serial product; every process's trace must show its
# local dgemm_ calls, each computing one on backend EXPECT (cpu or gpu; with gpu and HAS_GPU
# given, a machine without a GPU skips). On a machine without MPI, FASTGEMM_PROGRAMS_CARRY
# names the folder tests/programs/prepare_devcarry.sh filled and FASTGEMM_PROGRAMS_ROOT where
# CMake unpacked its runtime: its env.sh puts that Open MPI, ScaLAPACK and BLAS first.
set -u
prog=$1 lib=$2 expect=$3 has_gpu=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
need_gpu "$expect" "$has_gpu"
if [ -n "${FASTGEMM_PROGRAMS_CARRY:-}" ] && [ -n "${FASTGEMM_PROGRAMS_ROOT:-}" ]; then
  . "$FASTGEMM_PROGRAMS_CARRY/env.sh"
fi
command -v mpirun > /dev/null 2>&1 || missing "no mpirun (Debian: apt-get install openmpi-bin)"
[ -x "$prog" ] || missing "no $prog (Debian: apt-get install libscalapack-openmpi-dev gfortran)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root unless told; four processes on fewer cores need --oversubscribe; the
# single-copy mechanism of shared memory (ptrace-based) is refused in many containers.
asroot=""
[ "$(id -u)" -eq 0 ] && asroot=--allow-run-as-root
OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
  timeout 300 mpirun $asroot --oversubscribe -np 4 sh "$here/rank.sh" "$work" "$lib" "$prog" > "$work/out" 2>&1
rc=$?
cat "$work/out"
[ $rc -eq 0 ] || { echo "FAIL: mpirun exited with $rc"; exit 1; }
grep -q "^pdgemm_check: PASSED" "$work/out" || { echo "FAIL: the program did not report PASSED"; exit 1; }
# At least a local dgemm_ per pdgemm call of the program (5) in every process.
echo "5 ^fastgemm: dgemm_ " > "$work/expected"
for r in 0 1 2 3; do
  echo "process $r:"
  [ -f "$work/trace.$r" ] || { echo "FAIL: process $r wrote no trace: libfastgemm took none of its calls"; rc=1; continue; }
  sh "$here/../check_trace.sh" "$work/trace.$r" "$expect" || rc=1
  check_calls "$work/trace.$r" "$work/expected" || rc=1
  # One process per trace file, each its own.
  pids=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$work/trace.$r" | sort -u)
  [ "$(echo "$pids" | wc -w)" -eq 1 ] || { echo "FAIL: process $r's trace holds the calls of processes $pids"; rc=1; }
  all_pids="${all_pids:-} $pids"
done
[ "$(printf '%s\n' $all_pids | sort -u | wc -l)" -eq 4 ] || { echo "FAIL: not four processes: pids$all_pids"; rc=1; }
echo "processes:$all_pids"
exit $rc
