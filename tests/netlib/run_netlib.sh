#!/bin/sh
# run_netlib.sh TESTER INFILE LIB ROUTINE EXPECT [HAS_GPU]: runs a netlib Level-3 tester from
# Debian's libblas-test (xblat3s, xblat3d, xscblat3, xdcblat3) with LD_PRELOAD=LIB and error-exit
# tests on, reads its report, and requires ROUTINE (SGEMM, DGEMM, cblas_sgemm, cblas_dgemm) to
# have PASSED every test, and the trace to show libfastgemm ran the calls (EXPECT: cpu, gpu, omp,
# any); with FASTGEMM_OZAKI=on and EXPECT gpu, some of them by the Ozaki scheme.
# The testers' own folder goes first on LD_LIBRARY_PATH: it holds the reference libblas.so.3,
# whose CBLAS globals (RowMajorStrg) the CBLAS testers need.
set -u
tester=$1 infile=$2 lib=$3 routine=$4 expect=$5 has_gpu=${6:-}
here=$(dirname "$0")
case $expect in gpu|omp) if [ -n "$has_gpu" ]; then "$has_gpu" || { echo "no CUDA device: skipped"; exit 77; }; fi ;; esac
if [ ! -x "$tester" ] || [ ! -f "$infile" ]; then
  echo "FAIL: $tester or $infile is missing (Debian: apt-get install libblas-test)"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$infile" "$work/input"
# Error-exit tests on (the .in files' seventh line).
sed -i 's/^F\( *LOGICAL FLAG, T TO TEST ERROR EXITS\)/T\1/' "$work/input"
cd "$work" || exit 1
LD_LIBRARY_PATH=$(dirname "$tester")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  FASTGEMM_TRACE=$work/trace LD_PRELOAD=$lib "$tester" < input > stdout.txt 2>&1
rc=$?
# The Fortran testers write the report to the file named on the input's first line.
report=$(sed -n "1s/^'\([^']*\)'.*/\1/p" input)
if [ -n "$report" ] && [ -f "$report" ]; then cat "$report" stdout.txt > all.txt; else cp stdout.txt all.txt; fi
echo "tester exit code $rc; its lines on $routine:"
grep -E "^ *$routine " all.txt
fail=0
case $routine in
  cblas_*) want="PASSED THE TESTS OF ERROR-EXITS|PASSED THE COLUMN-MAJOR COMPUTATIONAL|PASSED THE ROW-MAJOR +COMPUTATIONAL" ;;
  *) want="PASSED THE TESTS OF ERROR-EXITS|PASSED THE COMPUTATIONAL TESTS" ;;
esac
IFS='|'
for w in $want; do
  grep -Eq "^ *$routine +$w" all.txt || { echo "FAIL: no '$routine $w'"; fail=1; }
done
unset IFS
if grep -Eq "FAIL|FATAL|XERBLA WAS CALLED" all.txt; then
  echo "FAIL: the report shows errors for $routine:"; grep -E "FAIL|FATAL|XERBLA WAS CALLED" all.txt | head -20; fail=1
fi
# Only the traced calls of this routine matter (the tester runs other routines too), and the line
# that names the CPU BLAS.
grep -iE "^fastgemm: ([a-z_]*$(echo "$routine" | tr 'A-Z' 'a-z' | sed 's/^cblas_//')|cpu-blas=)" trace > trace.routine 2>/dev/null
sh "$here/../check_trace.sh" trace.routine "$expect" || fail=1
# With FASTGEMM_OZAKI=on (float testers on the GPU), the scheme must have run some of the calls
# (the pipeline's trace line counts its kernels).
ozaki=$(grep -c 'ozaki: [1-9]' trace.routine)
echo "calls traced: $(wc -l < trace.routine); through the Ozaki scheme: $ozaki"
if [ "${FASTGEMM_OZAKI:-off}" = on ] && [ "$expect" = gpu ] && [ "$ozaki" -eq 0 ]; then
  echo "FAIL: FASTGEMM_OZAKI=on, and no call went through the Ozaki scheme"; fail=1
fi
exit $fail
