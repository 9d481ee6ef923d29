"""streamk_model.py: the stream-K term of the kernel chooser's cost model (fit_model.py; the
library's copy: kernels/choose.cuh's time_streamk, which must agree with time_s below).

A configuration the spec names in `streamk NAME BLOCKS` (BLOCKS: how many blocks of its stream-K
kernel an SM holds, the slots the library's plan counts) is weighed unsplit with stream-K forced,
as the tuner's --stream-k 2 runs it (rows named NAME+sk). The plan (streamk_plan in
kernels/common/streamk.cuh, forced) runs the first F tiles one a block, then C blocks over the kt
k-tiles of each of the T other tiles, L = T kt / C each, J = ceil(C / SMs) on an SM:
  time = 2 launch (the stream-K launch and its counters' reset)
       + [F > 0] B (kt + p_c / j) 2 BM BN BK / (rate min(1, j / jsat_c)) + launch   (fit_model's)
       + (J L + (1 + L / kt) (p_c + q_c)) 2 BM BN BK / (rate min(1, J / jsat_c))
       + (ceil(C / T) + 1) BM BN esize / w_c,
where rate is the configuration's rate of fit_model's Model times s_c: the runs' pieces (1 + L /
kt a block) each cost q_c k-tiles more than a unit's p_c, and a tile's last block adds the
partial sums of the ceil(C / T) + 1 blocks that share it at w_c bytes per second. Fitted after
the rest of the model, per configuration, by its Levenberg-Marquardt on log time: q_c, s_c and
w_c on the configuration's stream-K rows where a tile has `streamk-min-ktiles` k-tiles or more
(the chooser weighs stream-K only there: with fewer, a block's run is a few k-tiles).
"""
import csv
import math
import os


def plan(tiles, ktiles, slots):
    """streamk_plan(tiles, ktiles, slots, ..., force=true): (first, stream-K tiles, blocks)."""
    full, rest = divmod(tiles, slots)
    part = slots if rest == 0 else rest + slots if full >= 1 and 2 * rest < slots else rest
    return tiles - part, part, min(part * ktiles, slots)


def plan_shape(model, i, trans, m, n, lda):
    """The m x n the plan tiles: n x m where the SIMT family's NN runs as the TT of the
    transposed problem (kernels/sgemm_simt_launch.cuh's swaps_nn, unsplit)."""
    if model.esize != 4 or trans != "NN" or lda * model.esize % 16:
        return m, n
    bm, bn, _, _, wn, _, _, tn, feat = model.numbers[i]  # SimtConfig's: BM, BN, BK, WM, WN, S, TM, TN, F
    if bn <= bm or 4 * (wn // tn) != 32 or feat & 1024:  # SimtTraits' SWAP_NN (FG_NO_SWAP = 1024)
        return m, n
    spread = feat & 512
    if spread and m % bn and (m < bn or (m - bn) % 4):  # edge_stays<BN>(m)
        return m, n
    if -(-n // bm) * -(-m // bn) <= -(-m // bm) * -(-n // bn):
        return n, m
    return m, n


def time_s(model, i, p, q, m, n, k, cls, mm, nn):
    """Predicted seconds of configuration i with stream-K forced: p its constants of the model
    (Model.fit_one's), q its stream-K parameters (constants() gives them in their units), the
    plan on mm x nn (plan_shape)."""
    rate_tflops, fixed, jsat, unaligned = model.constants(i, p)
    q_fixed, s_rate, w_gbs = constants(q)
    _, bm, bn, bk, _ = model.configs[i]
    rate = model.rate(i, rate_tflops, unaligned, m, n, cls) * s_rate
    flop = 2.0 * bm * bn * bk
    kt = -(-k // bk)
    first, tiles, ctas = plan(-(-mm // bm) * -(-nn // bn), kt, model.streamk[i] * model.sms)
    t = 2 * model.launch
    if first > 0:
        t += model.units_time(i, first, kt, fixed, jsat, rate) + model.launch
    run = tiles * kt / ctas
    j = -(-ctas // model.sms)
    t += (j * run + (1 + run / kt) * (fixed + q_fixed)) * flop / (rate * min(1.0, j / jsat))
    t += (-(-ctas // tiles) + 1) * bm * bn * model.esize / (w_gbs * 1e9)
    return t


def constants(q):
    """q's constants: a piece's k-tiles beyond a unit's, the rate's factor, GB/s of the adds."""
    return math.exp(min(q[0], 10.0)), math.exp(min(max(q[1], -3.0), 3.0)), math.exp(min(max(q[2], -5.0), 12.0))


def read_rows(paths, model, root):
    """Rows (config index, m, n, k, copy class, seconds, plan's m, plan's n) of round 0 that passed,
    of the configurations named `streamk`, where a tile has min_ktiles k-tiles or more."""
    rows = []
    for path in paths:
        for r in csv.DictReader(open(os.path.join(root, path))):
            name = r["candidate"]
            if r["round"] != "0" or r["check"] != "ok" or not name.endswith("+sk"):
                continue
            i = model.index.get(name[:-3])
            m, n, k, tr = int(r["m"]), int(r["n"]), int(r["k"]), r["trans"]
            if i not in model.streamk or -(-k // model.configs[i][3]) < model.sk_min_ktiles:
                continue
            lda, ldb = (k if tr[0] == "T" else m), (n if tr[1] == "T" else k)
            cls = model.copy_class_of(tr, lda, ldb)
            rows.append((i, m, n, k, cls, float(r["ms"]) * 1e-3) + plan_shape(model, i, tr, m, n, lda))
    return rows


def fit(model, params, rows):
    """Each named configuration's q (constants()) on its rows, from a few starting points."""
    out = {}
    for i in sorted(model.streamk):
        mine = [r[1:] for r in rows if r[0] == i]
        if not mine:
            raise SystemExit(f"fit_model.py: no stream-K rows of configuration {model.configs[i][0]}")
        log_ratio = lambda q, r, i=i: math.log(time_s(model, i, params[i], q, *r[:4], r[5], r[6]) / r[4])
        best = None
        for start in ([math.log(4.0), 0.0, math.log(200.0)], [0.0, math.log(0.9), math.log(50.0)],
                      [math.log(16.0), math.log(1.1), math.log(800.0)]):
            q, c = model.lm(mine, start, log_ratio)
            if best is None or c < best[1]:
                best = (q, c)
        out[i] = best[0]
    return out
