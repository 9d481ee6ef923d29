#!/bin/sh
# check_trace.sh TRACE EXPECT: libfastgemm really handled the calls. TRACE (FASTGEMM_TRACE's file)
# must hold trace lines, and with EXPECT=gpu every call that computed something ran on the GPU
# (none fell back to the CPU); EXPECT=cpu or omp likewise; EXPECT=any accepts any. Where a call
# ran on the CPU, the trace names the CPU BLAS it went to.
trace=$1 expect=$2
calls() { grep '^fastgemm: ' "$trace" 2>/dev/null | grep ' backend='; }
n=$(calls | wc -l)
if [ "${n:-0}" -eq 0 ]; then
  echo "FAIL: libfastgemm traced no call: it did not handle the GEMMs"
  exit 1
fi
computed=$(calls | grep -vc 'backend=none' || true)
echo "trace: $n calls through libfastgemm, $computed computed; backends:"
calls | sed 's/.*backend=\([a-z-]*\).*/\1/' | sort | uniq -c
if [ "$expect" != any ]; then
  wrong=$(calls | grep -v 'backend=none' | grep -vc "backend=$expect " || true)
  if [ "${wrong:-0}" -ne 0 ]; then
    echo "FAIL: $wrong calls did not run on backend=$expect, e.g.:"
    calls | grep -v 'backend=none' | grep -v "backend=$expect " | head -3
    exit 1
  fi
fi
if calls | grep -q 'backend=cpu'; then
  if ! grep -q '^fastgemm: cpu-blas=' "$trace"; then
    echo "FAIL: calls ran on the CPU, but the trace names no CPU BLAS"
    exit 1
  fi
  grep '^fastgemm: cpu-blas=' "$trace" | sed 's/ pid=.*//' | sort -u
fi
exit 0
