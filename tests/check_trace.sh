#!/bin/sh
# check_trace.sh TRACE EXPECT: libfastgemm really handled the calls. TRACE (FASTGEMM_TRACE's file)
# must hold trace lines, and with EXPECT=gpu every call that computed something ran on the GPU
# (none fell back to the CPU); EXPECT=cpu or omp likewise; EXPECT=any accepts any.
trace=$1 expect=$2
n=$(grep -c '^fastgemm: ' "$trace" 2>/dev/null || true)
if [ "${n:-0}" -eq 0 ]; then
  echo "FAIL: libfastgemm traced no call: it did not handle the GEMMs"
  exit 1
fi
computed=$(grep '^fastgemm: ' "$trace" | grep -vc 'backend=none' || true)
echo "trace: $n calls through libfastgemm, $computed computed; backends:"
grep '^fastgemm: ' "$trace" | sed 's/.*backend=\([a-z-]*\).*/\1/' | sort | uniq -c
if [ "$expect" != any ]; then
  wrong=$(grep '^fastgemm: ' "$trace" | grep -v 'backend=none' | grep -vc "backend=$expect " || true)
  if [ "${wrong:-0}" -ne 0 ]; then
    echo "FAIL: $wrong calls did not run on backend=$expect, e.g.:"
    grep '^fastgemm: ' "$trace" | grep -v 'backend=none' | grep -v "backend=$expect " | head -3
    exit 1
  fi
fi
exit 0
