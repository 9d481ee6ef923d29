#!/bin/sh
# run_abi.sh HOW LIB PROGRAM EXPECT [HAS_GPU]: runs an ABI test program with libfastgemm
# either linked (HOW=linked; LIB's folder goes on LD_LIBRARY_PATH, so a program built elsewhere
# finds this build) or preloaded over the program's own BLAS (HOW=preload), traces the calls,
# and checks the program's verdict and the trace (EXPECT: cpu, gpu or any).
# With EXPECT=gpu and HAS_GPU given, a machine without a GPU skips (exit 77).
set -u
how=$1 lib=$2 prog=$3 expect=$4 has_gpu=${5:-}
here=$(dirname "$0")
if [ "$expect" = gpu ] && [ -n "$has_gpu" ]; then "$has_gpu" || { echo "no CUDA device: skipped"; exit 77; }; fi
if [ ! -x "$prog" ]; then echo "FAIL: $prog is missing (gfortran not found at configure time?)"; exit 1; fi
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
if [ "$how" = preload ]; then
  FASTGEMM_TRACE=$trace LD_PRELOAD=$lib "$prog"
else
  FASTGEMM_TRACE=$trace LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$prog"
fi
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: $prog exited with $rc"; exit 1; fi
exec sh "$here/../check_trace.sh" "$trace" "$expect"
