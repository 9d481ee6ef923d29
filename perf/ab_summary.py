#!/usr/bin/env python3
"""ab_summary.py OUT | --host hostbench.csv: the summary of perf/run_ab.sh's run.

Sweeps (OUT/sweep_{old,new}_{round}_{prec}.csv): per precision, each shape and transpose pair's
ratio to cuBLAS (ours/cuBLAS time, as fastgemm-sweep writes it) for both rounds of each side,
new over old (the mean of the rounds), and the geometric mean of new/old with its spread.
--host: hostbench.csv with old_* and new_* labels: new/old wall time per shape and mode."""
import csv
import glob
import math
import os
import sys
from collections import defaultdict


def sweeps(out):
    data = defaultdict(dict)  # (prec, trans, m, n, k) -> {(side, round): ratio}
    checks_ok = True
    for path in sorted(glob.glob(os.path.join(out, "sweep_*_*_*.csv"))):
        _, side, rnd, _ = os.path.basename(path)[:-4].split("_")
        with open(path) as f:
            for row in csv.DictReader(f):
                key = (row["prec"], row["trans"], int(row["m"]), int(row["n"]), int(row["k"]))
                data[key][(side, rnd)] = float(row["ratio"])
                checks_ok &= row["check"] == "ok"
    by_prec = defaultdict(list)
    print("prec trans m n k | old r1 r2 | new r1 r2 | new/old")
    for key in sorted(data):
        r = data[key]
        old = [r[k] for k in sorted(r) if k[0] == "old"]
        new = [r[k] for k in sorted(r) if k[0] == "new"]
        if not old or not new:
            continue
        q = (sum(new) / len(new)) / (sum(old) / len(old))
        by_prec[key[0]].append(q)
        print("%s %s %d %d %d | %s | %s | %.3f" % (key + (" ".join("%.3f" % x for x in old),
                                                     " ".join("%.3f" % x for x in new), q)))
    for prec, qs in sorted(by_prec.items()):
        gm = math.exp(sum(math.log(q) for q in qs) / len(qs))
        print("%s: %d results, new/old geometric mean %.4f, min %.3f, max %.3f" %
              (prec, len(qs), gm, min(qs), max(qs)))
    print("every result validated" if checks_ok else "SOME RESULT FAILED VALIDATION")


def host(path):
    times = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            side, mode = row["label"].split("_", 1)
            times[(mode, row["prec"], int(row["m"]), int(row["n"]), int(row["k"]))][side] = float(row["ms"])
    qs = defaultdict(list)
    print("mode prec m n k | old ms | new ms | new/old")
    for key in sorted(times):
        t = times[key]
        if "old" in t and "new" in t:
            qs[key[0]].append(t["new"] / t["old"])
            print("%s %s %d %d %d | %.3f | %.3f | %.3f" % (key + (t["old"], t["new"], t["new"] / t["old"])))
    for mode, q in sorted(qs.items()):
        gm = math.exp(sum(math.log(x) for x in q) / len(q))
        print("host %s: %d shapes, new/old time geometric mean %.4f, min %.3f, max %.3f" %
              (mode, len(q), gm, min(q), max(q)))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--host":
        host(sys.argv[2])
    elif len(sys.argv) == 2:
        sweeps(sys.argv[1])
    else:
        sys.exit(__doc__)
