# same_alone_preloaded.sh (sourced): same CASE LIB COMMAND...: runs COMMAND alone and with LIB
# preloaded (FASTGEMM_MODE=cpu), each with stdout and stderr together in $out/alone and
# $out/preloaded (the caller's folder $out), and checks that both print and exit the same and
# that a C the program printed after the call is the one it passed (9 10 11 12). Counts a
# difference in $fails; extra environment for the preloaded run comes in $preload_env.
same() {
  name=$1 lib=$2
  shift 2
  "$@" > "$out/alone" 2>&1
  rc_alone=$?
  env $preload_env FASTGEMM_MODE=cpu LD_PRELOAD="$lib" "$@" > "$out/preloaded" 2>&1
  rc_pre=$?
  if [ $rc_alone -eq 2 ]; then
    echo "FAIL: $name: $(cat "$out/alone")"; fails=$((fails + 1))
  elif [ $rc_alone -ne $rc_pre ] || ! cmp -s "$out/alone" "$out/preloaded"; then
    echo "FAIL: $name differs. Alone (exit $rc_alone):"; cat "$out/alone"
    echo "preloaded (exit $rc_pre):"; cat "$out/preloaded"
    fails=$((fails + 1))
  elif grep -q '^returned' "$out/alone" && ! grep -q '^returned; C = 9 10 11 12$' "$out/alone"; then
    echo "FAIL: $name: C changed: $(grep '^returned' "$out/alone")"; fails=$((fails + 1))
  else
    printf '%-18s same (exit %d): %s\n' "$name" "$rc_pre" "$(head -1 "$out/preloaded")"
  fi
}
