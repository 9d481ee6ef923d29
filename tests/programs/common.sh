# common.sh: what the real-program suite's run_*.sh scripts share (sourced, POSIX sh).

# missing WHAT: a program the suite needs is not on this machine: the test is skipped (exit
# 77), except under FASTGEMM_PROGRAMS_REQUIRED=1 (CI), where every program must run.
missing() {
  if [ "${FASTGEMM_PROGRAMS_REQUIRED:-0}" = 1 ]; then
    echo "FAIL: $* (FASTGEMM_PROGRAMS_REQUIRED=1: every program must run)"
    exit 1
  fi
  echo "$*: skipped"
  exit 77
}

# need_gpu EXPECT HAS_GPU: with EXPECT=gpu, a machine without a CUDA device skips.
need_gpu() {
  if [ "$1" = gpu ] && [ -n "$2" ]; then "$2" || { echo "no CUDA device: skipped"; exit 77; }; fi
}

# check_calls TRACE EXPECTED: each line of EXPECTED, "COUNT REGEX", needs COUNT or more lines
# of TRACE that match REGEX (grep -E): the program's GEMM calls went through libfastgemm.
check_calls() {
  ok=0 bad=0
  while read -r count pattern; do
    n=$(grep -Ec "$pattern" "$1" 2> /dev/null)
    n=${n:-0}
    if [ "$n" -ge "$count" ]; then
      ok=$((ok + 1))
    else
      echo "FAIL: $n trace lines (of $count or more) match: $pattern"
      bad=$((bad + 1))
    fi
  done < "$2"
  echo "trace: $ok expected calls found, $bad missing"
  [ "$bad" -eq 0 ] && [ "$ok" -gt 0 ]
}
