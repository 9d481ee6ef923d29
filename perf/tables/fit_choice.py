#!/usr/bin/env python3
"""fit_choice.py: a wave model of a configuration's time, fitted to tuner CSVs, judged on shapes it
was not fitted on (leave one shape out), next to the tables' nearest-measured-point rule.

The model of one launch of configuration c in s slices of k on an m x n x k problem:
  tiles = ceil(m/BM) ceil(n/BN), units = tiles * s, each of ceil(ceil(k/BK) / s) k-tiles;
  the busiest SM runs B = ceil(units / SMs) of them, up to occ(c) at a time (occ from the shared
  memory a block takes);
  time = B (k-tiles + p_c / j) 2 BM BN BK / (r_c min(1, j / jsat_c)),   j = min(B, occ(c)),
  plus, when s > 1, the reduction: (s + 1) m n bytes / 2.5 TB/s + 4 us.
r_c (the SM's rate), p_c (a unit's fixed cost in k-tiles) and jsat_c (the blocks an SM needs to
reach r_c) are fitted per configuration by robust least squares on log time. For each shape left
out, the model fitted on the others picks the (configuration, splits) of least predicted time
among those the CSV measured there; the nearest-point rule takes the best (configuration, splits)
of the nearest measured shape of the same transposes (sum of |log2| ratios of m, n, k), as
kernels/gemm_table.cuh does, at the nearest splits measured. Both are scored by the measured
ratio to cuBLAS of their pick over that of the shape's best.

Usage: fit_choice.py CSV ELEMENT_BYTES CONFIG,CONFIG,... [--sms N] [--verbose]
  (needs numpy and scipy; the CSV is fastgemm-tune's: rows of round 0 that passed are used)
"""
import argparse
import csv
import math
import re

from scipy.optimize import least_squares


def geometry(name):
    m = re.match(r"(?:simt|dmma)_(\d+)x(\d+)x(\d+)_.*_s(\d+)", name)
    return tuple(int(x) for x in m.groups())  # BM, BN, BK, stages


def occupancy(name, esize):
    bm, bn, bk, stages = geometry(name)
    smem = (bm + bn) * bk * esize * stages * 1.05  # the tiles of every stage, with padding
    return max(1, min(int(228 * 1024 // smem), 8))


class Model:
    def __init__(self, configs, esize, sms):
        self.configs, self.esize, self.sms = configs, esize, sms
        self.index = {c: i for i, c in enumerate(configs)}

    def time_ms(self, p, row):
        m, n, k, c, s = row["m"], row["n"], row["k"], row["candidate"], row["splits"]
        i = self.index[c]
        bm, bn, bk, _ = geometry(c)
        rate = math.exp(p[3 * i]) * 1e12 / self.sms
        fixed = abs(p[3 * i + 1])
        occ = occupancy(c, self.esize)
        jsat = 1 + (occ - 1) / (1 + math.exp(-p[3 * i + 2]))
        units = math.ceil(m / bm) * math.ceil(n / bn) * s
        ktiles = math.ceil(math.ceil(k / bk) / s)
        busiest = math.ceil(units / self.sms)
        j = min(busiest, occ)
        t = busiest * (ktiles + fixed / j) * 2 * bm * bn * bk / (rate * min(1.0, j / jsat))
        if s > 1:
            t += (s + 1) * m * n * self.esize / 2.5e12 + 4e-6
        return t * 1e3 + 0.005

    def fit(self, rows):
        p0 = [math.log(40.0), 4.0, 0.0] * len(self.configs)
        res = least_squares(lambda p: [math.log(self.time_ms(p, r) / r["ms"]) for r in rows], p0,
                            loss="soft_l1", f_scale=0.1, max_nfev=3000)
        return res.x


def ratio(row):
    return 2.0 * row["m"] * row["n"] * row["k"] / row["ms"] * 1e-9 / row["cublas_tflops"]


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("esize", type=int)
    ap.add_argument("configs")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    configs = a.configs.split(",")
    rows = []
    for r in csv.DictReader(open(a.csv)):
        if r.get("round", "0") != "0" or r["check"] != "ok" or r["candidate"] not in configs:
            continue
        rows.append({"trans": r["trans"], "m": int(r["m"]), "n": int(r["n"]), "k": int(r["k"]),
                     "candidate": r["candidate"], "splits": int(r["splits"]), "ms": float(r["ms"]),
                     "cublas_tflops": float(r["cublas_tflops"])})
    present = [c for c in configs if any(r["candidate"] == c for r in rows)]
    model = Model(present, a.esize, a.sms)
    shape = lambda r: (r["m"], r["n"], r["k"])
    shapes = sorted(set(map(shape, rows)))
    print(f"{a.csv}: {len(rows)} rows, {len(shapes)} shapes, configurations {', '.join(present)}")
    by_model, by_point = [], []
    for sh in shapes:
        train = [r for r in rows if shape(r) != sh]
        p = model.fit(train)
        for tr in sorted(set(r["trans"] for r in rows if shape(r) == sh)):
            here = [r for r in rows if shape(r) == sh and r["trans"] == tr]
            best = max(here, key=ratio)
            pick = min(here, key=lambda r: model.time_ms(p, r))
            by_model.append(ratio(pick) / ratio(best))
            others = sorted(set(shape(r) for r in train if r["trans"] == tr))
            near = min(others, key=lambda q: sum(abs(math.log2(x / y)) for x, y in zip(sh, q)))
            nbest = max((r for r in train if r["trans"] == tr and shape(r) == near), key=ratio)
            same = [r for r in here if r["candidate"] == nbest["candidate"]]
            if same:
                by_point.append(ratio(min(same, key=lambda r: abs(r["splits"] - nbest["splits"]))) /
                                ratio(best))
            if a.verbose:
                print(f"{tr} {sh[0]}x{sh[1]}x{sh[2]}: best {best['candidate']} s{best['splits']} "
                      f"{ratio(best):.3f}; model {pick['candidate']} s{pick['splits']} {ratio(pick):.3f}")
    for name, xs in (("model", by_model), ("nearest point", by_point)):
        print(f"{name}: pick/best geometric mean {geomean(xs):.3f}, lowest {min(xs):.3f}, "
              f"below 0.90: {sum(x < 0.9 for x in xs)} of {len(xs)}")


if __name__ == "__main__":
    main()
