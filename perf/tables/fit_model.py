#!/usr/bin/env python3
"""fit_model.py: the kernel chooser's cost model, fitted to tuner runs on random problems.

The model of one launch of configuration c in s slices of k on an m x n x k problem (the
library's copy: kernels/choose.cuh, which must agree with time_s below):
  tiles = ceil(m/BM) ceil(n/BN), units = tiles * s, each of kt = ceil(ceil(k/BK) / s) k-tiles;
  the busiest SM runs B = ceil(units / SMs) units, up to occ(c) at a time;
  j = min(B, occ(c)), rate = r_c min(1, j / jsat_c) f[class] (times u_c unless both operands
  allow 16-byte copies; times e_c where m < BM or n < BN, a tile longer than its dimension,
  whose blocks all run on the edge: 1 unless the spec has `short-factors yes`; times t_c[pair],
  the transpose pair's factor of its own, 1 but for the configurations the spec names in
  `own-transposes`; times w[wave group], the launch's factor by B and whether it is split: 1
  unless the spec has `wave-factors yes`), where the copy class is the transpose pair and whether
  each operand allows 16-byte copies;
  time = B (kt + p_c / j) 2 BM BN BK / rate + launch,
  plus, when s > 1, the reduction: (s + 1) m n esize / bandwidth + launch.
Fitted in turns (Model.fit): per configuration (a row's time depends on its own configuration's
constants and its class's factor only) r_c (an SM's rate), p_c (a unit's fixed cost in k-tiles),
jsat_c (the blocks an SM needs to reach r_c) and u_c (its rate's factor without 16-byte copies),
by Levenberg-Marquardt on log time with a soft-L1 loss (a few wild timings do not pull the fit);
then the family's 16 class factors f from the residuals by class, then (short-factors) each
configuration's e_c from the residuals of its rows with a tile longer than a dimension, then the
t_c of the configurations named in `own-transposes` from their rows' residuals by transpose pair,
then (wave-factors) the w of each wave group from its rows' residuals;
last, with the rest fixed, the stream-K term of the configurations named in `streamk`
(streamk_model.py). Pure Python: no package needed.

Usage:
  fit_model.py SPEC [--check]     writes (or compares) the spec's header
  fit_model.py SPEC --judge CSV.. fits on the spec's CSVs, then, on every problem of the given
                                  CSVs, scores the model's pick: its measured ratio to cuBLAS
                                  over that of the best measured there
  fit_model.py SPEC --candidates  prints the table's configurations as tuner candidate lines
                                  (perf/tune_candidates.txt's format), for the tuner build
                                  that measures the model's inputs
A spec (perf/tables/*_model.spec): `prec s|d`, `output FILE`, `configs FILE` (the generated
table header whose configurations the model covers), `sms N`, `csv FILE` repeated, `launch-us`,
`bandwidth-gbs`, `pack-us` (a packing copy's fixed cost), `k-free yes|no` (whether the family reads operands along k at one speed
whatever their alignment: packing then leaves them be), `short-factors yes|no` (whether each
configuration's rate has a factor of its own where its tile is longer than m or n),
`own-transposes NAME` repeated (configurations whose rate has a factor of its own per transpose
pair, where the family's class factors do not fit them), `wave-factors yes|no` (whether the rate
has a factor by wave group: B of 1, 2, 3-4, 5-8 or more, unsplit or split), `streamk NAME
BLOCKS` repeated, `streamk-min-ktiles N`, `streamk-margin F` and `streamk-csv FILE` repeated (the configurations
weighed unsplit with stream-K, the blocks of their stream-K kernel an SM holds, where they are
weighed, by what fraction they must beat the rest, and the tuner's --stream-k 2 runs they are
fitted to: streamk_model.py). Rows used: the tuner's round 0
that passed validation.
"""
import argparse
import csv
import math
import os
import re
import sys

import streamk_model

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def read_spec(path):
    spec = {"csv": [], "own-transposes": [], "streamk": [], "streamk-csv": []}
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, val = line.split(None, 1)
        if key in ("csv", "own-transposes", "streamk", "streamk-csv"):
            spec[key].append(val)
        else:
            spec[key] = val
    return spec


def config_lines(header):
    """The configurations of a generated table header: (name, its numbers) each, in order."""
    text = open(os.path.join(ROOT, header)).read()
    block = text.split("_CONFIGS(X)", 1)[1].split("#define", 1)[0]
    return [(m.group(1), [int(x) for x in m.group(2).split(",")])
            for m in re.finditer(r'X\("([^"]+)", ([\d, ]+)\)', block)]


def read_configs(header):
    """The configurations of a generated table header: (name, BM, BN, BK, stages) each."""
    return [(name, v[0], v[1], v[2], v[5]) for name, v in config_lines(header)]


def candidate_lines(header):
    """The configurations of a generated table header as the tuner's candidate lines (their
    numbers after the name)."""
    return [" ".join(str(x) for x in v) for _, v in config_lines(header)]


def aligned(ld, esize):
    return ld * esize % 16 == 0


# The wave groups of wave_group (the size of kernels/choose.cuh's Machine::wave).
WAVE_GROUPS = 10


class Model:
    """The model of one precision over its configurations (read_configs)."""

    def __init__(self, configs, esize, sms, launch_us, bw_gbs, short_factors=False, own_transposes=(),
                 numbers=None, streamk=(), sk_min_ktiles=0, wave_factors=False):
        self.configs, self.esize, self.sms = configs, esize, sms
        self.numbers = numbers  # each configuration's numbers in the table header (config_lines)
        self.launch, self.bw = launch_us * 1e-6, bw_gbs * 1e9
        self.index = {c[0]: i for i, c in enumerate(configs)}
        self.factor = [1.0] * 16  # the rate's factor by copy class (copy_class)
        self.short = [1.0] * len(configs)  # a configuration's factor where its tile is longer than m or n
        self.short_factors = short_factors
        self.wave = [1.0] * WAVE_GROUPS  # the rate's factor by wave group (wave_group)
        self.wave_factors = wave_factors
        for name in own_transposes:
            if name not in self.index:
                sys.exit(f"fit_model.py: own-transposes {name} is no configuration of the table")
        self.own = {self.index[name] for name in own_transposes}
        # a configuration's factor by transpose pair (ta + 2 tb): 1 but for those of self.own
        self.trans = [[1.0] * 4 for _ in configs]
        # the configurations weighed with stream-K (streamk_model.py): index -> blocks an SM holds
        self.streamk = {}
        for line in streamk:
            name, blocks = line.split()
            if name not in self.index:
                sys.exit(f"fit_model.py: streamk {name} is no configuration of the table")
            self.streamk[self.index[name]] = int(blocks)
        self.sk_min_ktiles = sk_min_ktiles
        self.sk = {}  # index -> its stream-K parameters (streamk_model.fit)

    def occupancy(self, i):
        _, bm, bn, bk, stages = self.configs[i]
        smem = (bm + bn) * bk * self.esize * stages * 1.05
        return max(1, min(int(228 * 1024 // smem), 8))

    def time_s(self, i, p, m, n, k, s, cls):
        """Predicted seconds of configuration i in s slices in copy class cls with fit_one's
        parameters p (constants() gives them in their own units)."""
        rate_tflops, fixed, jsat, unaligned = self.constants(i, p)
        return self.time_const(i, rate_tflops, fixed, jsat, unaligned, m, n, k, s, cls)

    def constants(self, i, p):
        """p's constants: TFLOP/s of the chip, a unit's fixed k-tiles, the blocks an SM needs to
        reach the rate (1 to occ), the rate's factor where an operand rules out 16-byte copies
        (0 to 1.5)."""
        occ = self.occupancy(i)
        sig = lambda x: 1 / (1 + math.exp(-min(max(x, -50.0), 50.0)))
        return (math.exp(min(p[0], 10.0)), math.exp(min(max(p[1], -20.0), 10.0)), 1 + (occ - 1) * sig(p[2]),
                1.5 * sig(p[3]))

    def rate(self, i, rate_tflops, unaligned, m, n, cls):
        """kernels/choose.cuh's sm_rate: an SM's flop/s of configuration i on m x n in class cls."""
        rate = rate_tflops * 1e12 / self.sms * self.factor[cls] * (1.0 if cls >= 12 else unaligned)
        if self.short_tile(i, m, n):
            rate *= self.short[i]
        return rate * self.trans[i][cls & 3]

    def wave_group(self, i, m, n, s):
        """kernels/choose.cuh's wave_group: the busiest SM's units of configuration i in s slices
        on m x n (1, 2, 3-4, 5-8, more), plus 5 where split."""
        _, bm, bn, _, _ = self.configs[i]
        busy = -(-(-(-m // bm) * -(-n // bn) * s) // self.sms)
        group = 0 if busy == 1 else 1 if busy == 2 else 2 if busy <= 4 else 3 if busy <= 8 else 4
        return group + (5 if s > 1 else 0)

    def units_time(self, i, units, kt, fixed, jsat, rate):
        """kernels/choose.cuh's units_time: units of kt k-tiles of configuration i, one a block."""
        _, bm, bn, bk, _ = self.configs[i]
        busy = -(-units // self.sms)
        j = min(busy, self.occupancy(i))
        return busy * (kt + fixed / j) * 2.0 * bm * bn * bk / (rate * min(1.0, j / jsat))

    def time_const(self, i, rate_tflops, fixed, jsat, unaligned, m, n, k, s, cls):
        """kernels/choose.cuh's time of configuration i in s slices."""
        _, bm, bn, bk, _ = self.configs[i]
        rate = self.rate(i, rate_tflops, unaligned, m, n, cls) * self.wave[self.wave_group(i, m, n, s)]
        units = -(-m // bm) * -(-n // bn) * s
        kt = -(-(-(-k // bk)) // s)
        t = self.units_time(i, units, kt, fixed, jsat, rate) + self.launch
        if s > 1:
            t += (s + 1) * m * n * self.esize / self.bw + self.launch
        return t

    def fit_one(self, i, rows):
        """LM on log(predicted / measured), soft-L1 (scale 0.1), numeric Jacobian, from a few
        starting points."""
        best = None
        for start in ([math.log(40.0), math.log(4.0), 0.0, 1.0], [math.log(60.0), math.log(1.0), -2.0, 0.0],
                      [math.log(30.0), math.log(10.0), 2.0, 2.0]):
            p, c = self.lm(rows, start, lambda q, r: math.log(self.time_s(i, q, *r[:5]) / r[5]))
            if best is None or c < best[1]:
                best = (p, c)
        return best[0]

    def lm(self, rows, p, log_ratio):
        """Parameters from p minimizing the soft-L1 loss of log_ratio(q, row) (log(predicted /
        measured)) over the rows."""
        lam = 1e-2
        npar = len(p)

        def resid(q):
            return [log_ratio(q, r) for r in rows]

        def cost(rs):
            return sum(2 * 0.01 * (math.sqrt(1 + (x / 0.1) ** 2) - 1) for x in rs)

        r0 = resid(p)
        c0 = cost(r0)
        for _ in range(100):
            w = [1 / math.sqrt(math.sqrt(1 + (x / 0.1) ** 2)) for x in r0]  # IRLS weights
            jac = []
            for d in range(npar):
                q = list(p)
                h = 1e-5 * max(1.0, abs(q[d]))
                q[d] += h
                jac.append([(a - b) / h for a, b in zip(resid(q), r0)])
            A = [[sum(w[t] ** 2 * jac[a][t] * jac[b][t] for t in range(len(rows))) for b in range(npar)]
                 for a in range(npar)]
            g = [sum(w[t] ** 2 * jac[a][t] * r0[t] for t in range(len(rows))) for a in range(npar)]
            improved = False
            while lam < 1e8:
                M = [[A[a][b] + (lam * (A[a][a] + 1e-12) if a == b else 0) for b in range(npar)]
                     for a in range(npar)]
                step = solve(M, [-x for x in g])
                q = [a + b for a, b in zip(p, step)]
                r1 = resid(q)
                c1 = cost(r1)
                if c1 < c0:
                    improved = c0 - c1 > 1e-10 * (1 + c0)
                    p, r0, c0, lam = q, r1, c1, max(lam / 3, 1e-9)
                    break
                lam *= 4
            if not improved:
                break
        return p, c0

    def fit(self, rows):
        """The configurations' constants and the copy classes' factors, in turns: each
        configuration on its own rows with the factors fixed, then each class's factor from the
        residuals of its rows (their mean, clipped to +-0.5, shrunk by n / (n + 10) for a class of
        n rows), scaled so that their mean over all rows is 1."""
        by_config = {}
        for r in rows:
            by_config.setdefault(r[0], []).append(r[1:])
        for i, c in enumerate(self.configs):
            if i not in by_config:
                sys.exit(f"fit_model.py: no rows of configuration {c[0]}")
        for _ in range(4):
            params = [self.fit_one(i, by_config[i]) for i in range(len(self.configs))]
            step = self.factor_steps(rows, params, 16, lambda r: r[5])
            self.factor = [f * x for f, x in zip(self.factor, step)]
            mean = sum(math.log(self.factor[r[5]]) for r in rows) / len(rows)
            self.factor = [f / math.exp(mean) for f in self.factor]
            if self.short_factors:  # each configuration's, from its rows with a tile longer than m or n
                step = self.factor_steps(rows, params, len(self.configs),
                                         lambda r: r[0] if self.short_tile(r[0], r[1], r[2]) else None)
                self.short = [f * x for f, x in zip(self.short, step)]
            if self.own:  # the named configurations' own, from their rows by transpose pair
                step = self.factor_steps(rows, params, 4 * len(self.configs),
                                         lambda r: 4 * r[0] + (r[5] & 3) if r[0] in self.own else None)
                self.trans = [[f * step[4 * i + t] for t, f in enumerate(fs)] for i, fs in enumerate(self.trans)]
            if self.wave_factors:  # each wave group's, from its rows
                step = self.factor_steps(rows, params, WAVE_GROUPS, lambda r: self.wave_group(r[0], r[1], r[2], r[4]))
                self.wave = [f * x for f, x in zip(self.wave, step)]
        return [self.fit_one(i, by_config[i]) for i in range(len(self.configs))]

    def factor_steps(self, rows, params, groups, group):
        """Each group's factor step: exp(-mean) of its rows' log residuals under params, each
        clipped to +-0.5, the mean shrunk by n / (n + 10) for n rows (group(row): the row's group,
        or None for rows of no group)."""
        sums, counts = [0.0] * groups, [0] * groups
        for r in rows:
            g = group(r)
            if g is not None:
                x = math.log(r[6] / self.time_s(r[0], params[r[0]], *r[1:6]))
                sums[g] += min(max(x, -0.5), 0.5)
                counts[g] += 1
        return [math.exp(-sums[g] / (counts[g] + 10)) for g in range(groups)]

    def copy_class_of(self, trans, lda, ldb):
        return copy_class(trans[0] == "T", trans[1] == "T", aligned(lda, self.esize), aligned(ldb, self.esize))

    def short_tile(self, i, m, n):
        """Whether configuration i's block tile is longer than m or n (choose.cuh's time())."""
        return m < self.configs[i][1] or n < self.configs[i][2]


def copy_class(ta, tb, al_a, al_b):
    """The copy class of a call: its transposes and whether each operand allows 16-byte copies
    (choose.cuh's copy_class)."""
    return int(ta) + 2 * int(tb) + 4 * int(al_a) + 8 * int(al_b)


def solve(M, v):
    """Gaussian elimination with partial pivoting (4 x 4)."""
    n = len(v)
    a = [row[:] + [v[i]] for i, row in enumerate(M)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[piv] = a[piv], a[c]
        if abs(a[c][c]) < 1e-300:
            return [0.0] * n
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            for cc in range(c, n + 1):
                a[r][cc] -= f * a[c][cc]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][cc] * x[cc] for cc in range(r + 1, n))) / a[r][r]
    return x


def read_rows(paths, model):
    """Rows (config index, m, n, k, splits, copy class, seconds, trans, ratio) of round 0 that
    passed."""
    rows = []
    for path in paths:
        for r in csv.DictReader(open(os.path.join(ROOT, path))):
            if r.get("round", "0") != "0" or r["check"] != "ok" or r["candidate"] not in model.index:
                continue
            m, n, k, tr = int(r["m"]), int(r["n"]), int(r["k"]), r["trans"]
            lda, ldb = (k if tr[0] == "T" else m), (n if tr[1] == "T" else k)
            cls = copy_class(tr[0] == "T", tr[1] == "T", aligned(lda, model.esize), aligned(ldb, model.esize))
            rows.append((model.index[r["candidate"]], m, n, k, int(r["splits"]), cls,
                         float(r["ms"]) * 1e-3, tr, float(r["ratio"])))
    return rows


def header(spec, model, params):
    p = spec["prec"]
    P = p.upper()
    lines = [f"// {p}gemm_model.gen.h: GENERATED by python3 perf/tables/fit_model.py "
             f"{spec['path']}. Do not edit.",
             "// The kernel chooser's cost model (kernels/choose.cuh) fitted to the tuner CSVs",
             "// " + ", ".join(spec["csv"]) + ".",
             f"#define FG_{P}GEMM_MODEL_SMS {model.sms}",
             f"#define FG_{P}GEMM_MODEL_LAUNCH_S {model.launch:.6g}",
             f"#define FG_{P}GEMM_MODEL_BYTES_PER_S {model.bw:.6g}",
             "// A packing copy's fixed cost in seconds (its workspace, launch and release)",
             f"#define FG_{P}GEMM_MODEL_PACK_S {float(spec['pack-us']) * 1e-6:.6g}",
             "// Whether only the operands read along m or n need 16-byte copies (the spec's k-free)",
             f"#define FG_{P}GEMM_MODEL_K_FREE {'true' if spec.get('k-free', 'no') == 'yes' else 'false'}",
             "// The rate's factor by copy class: [ta + 2 tb + 4 (A allows 16-byte copies) + 8 (B does)]",
             f"#define FG_{P}GEMM_MODEL_FACTORS {{" + ", ".join(f"{x:.4g}" for x in model.factor) + "}",
             "// The rate's factor by wave group: the busiest SM's units 1, 2, 3-4, 5-8, more; unsplit, then split",
             f"#define FG_{P}GEMM_MODEL_WAVE_FACTORS {{" + ", ".join(f"{x:.4g}" for x in model.wave) + "}",
             "// Stream-K is weighed where a tile has this many k-tiles or more (the spec's streamk-min-ktiles),",
             "// and taken where it beats the rest by this fraction (streamk-margin)",
             f"#define FG_{P}GEMM_MODEL_SK_MIN_KTILES {model.sk_min_ktiles}",
             f"#define FG_{P}GEMM_MODEL_SK_MARGIN {float(spec.get('streamk-margin', '0')):.6g}",
             "// Per configuration of the table, in its order: X(name, TFLOP/s of the whole chip "
             "(its SMs' rate),",
             "// a unit's fixed cost in k-tiles, the blocks an SM needs to reach the rate, the rate's "
             "factor where",
             "// an operand rules out 16-byte copies, the blocks an SM holds, the rate's factor where the tile",
             "// is longer than m or n, its factor by transpose pair: NN, TN, NT, TT; with stream-K, a piece's",
             "// k-tiles beyond a unit's fixed cost, the rate's factor and the GB/s of a tile's adds of partial",
             "// sums (streamk_model.py; 0, 0, 0: not weighed))",
             f"#define FG_{P}GEMM_MODEL(X) \\"]
    body = []
    for i, c in enumerate(model.configs):
        rate, fixed, jsat, unaligned = model.constants(i, params[i])
        sk = streamk_model.constants(model.sk[i]) if i in model.sk else (0, 0, 0)
        body.append(f'    X("{c[0]}", {rate:.4g}, {fixed:.4g}, {jsat:.4g}, {unaligned:.4g}, {model.occupancy(i)}, '
                    f'{model.short[i]:.4g}, ' + ", ".join(f"{x:.4g}" for x in model.trans[i]) + ", " +
                    ", ".join(f"{x:.4g}" for x in sk) + ")")
    lines.append(" \\\n".join(body))
    return "\n".join(lines) + "\n"


def judge(model, params, rows):
    probs = {}
    for r in rows:
        probs.setdefault((r[7], r[1], r[2], r[3]), []).append(r)
    scores = []
    for (tr, m, n, k), here in sorted(probs.items()):
        best = max(here, key=lambda r: r[8])
        pick = min(here, key=lambda r: model.time_s(r[0], params[r[0]], m, n, k, r[4], r[5]))
        scores.append((pick[8] / best[8], pick[8], best[8], tr, m, n, k, pick, best))
    g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print(f"{len(scores)} problems: pick/best geometric mean {g([s[0] for s in scores]):.3f}, lowest "
          f"{min(s[0] for s in scores):.3f}; ratio to cuBLAS: pick {g([s[1] for s in scores]):.3f}, "
          f"best {g([s[2] for s in scores]):.3f}")
    for s in sorted(scores)[:8]:
        print(f"  {s[3]} {s[4]}x{s[5]}x{s[6]}: pick {model.configs[s[7][0]][0]} s{s[7][4]} {s[1]:.3f}, "
              f"best {model.configs[s[8][0]][0]} s{s[8][4]} {s[2]:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--judge", nargs="+")
    ap.add_argument("--candidates", action="store_true")
    a = ap.parse_args()
    spec = read_spec(a.spec)
    if a.candidates:
        print(f"# the configurations of {spec['configs']}, in its order (fit_model.py --candidates)")
        print("\n".join(candidate_lines(spec["configs"])))
        return 0
    spec["path"] = os.path.relpath(os.path.abspath(a.spec), ROOT)
    esize = 4 if spec["prec"] == "s" else 8
    model = Model(read_configs(spec["configs"]), esize, int(spec["sms"]), float(spec["launch-us"]),
                  float(spec["bandwidth-gbs"]), spec.get("short-factors", "no") == "yes", spec["own-transposes"],
                  [v for _, v in config_lines(spec["configs"])], spec["streamk"],
                  int(spec.get("streamk-min-ktiles", "0")), spec.get("wave-factors", "no") == "yes")
    params = model.fit(read_rows(spec["csv"], model))
    if model.streamk:
        model.sk = streamk_model.fit(model, params, streamk_model.read_rows(spec["streamk-csv"], model, ROOT))
    if a.judge:
        judge(model, params, read_rows(a.judge, model))
        return 0
    text = header(spec, model, params)
    out = os.path.join(ROOT, spec["output"])
    if a.check:
        old = open(out).read() if os.path.exists(out) else ""
        if old != text:
            print(f"{spec['output']} differs from what {spec['path']} makes; run fit_model.py {spec['path']}")
            return 1
        return 0
    open(out, "w").write(text)
    print(f"wrote {spec['output']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
