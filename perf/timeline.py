#!/usr/bin/env python3
"""timeline.py FILE: reads the stamps of one stream-K launch (a FASTGEMM_TIMELINE build run with
FG_TIMELINE_FILE=FILE, kernels/common/timeline.cuh) and prints where its time went: the whole waves'
end, the gap before the stream-K blocks, their spread, and a least-squares fit of each piece's
time to its k-tiles (a fixed cost per piece plus a cost per k-tile), beside the plain blocks'
cost per k-tile."""
import statistics
import sys


def pieces(first_k, end_k, ktiles):
    """The k-tile counts of a block's pieces, in the order streamk_run runs them: from its first
    tile boundary to its end, then the piece before the boundary."""
    bound = (first_k + ktiles - 1) // ktiles * ktiles
    if bound >= end_k:
        bound = first_k
    out, it = [], bound
    while it < end_k:
        t0 = it // ktiles * ktiles
        kt1 = min(end_k - t0, ktiles)
        out.append(t0 + kt1 - it)
        it = t0 + kt1
    if bound > first_k:
        out.append(bound - first_k)
    return out


def main(path):
    plan, dp, sk = {}, [], []
    for line in open(path):
        f = line.split()
        if f[0] == "plan":
            plan = {f[i]: int(f[i + 1]) for i in range(1, len(f), 2)}
        elif f[0] == "dp":
            dp.append((float(f[3]), float(f[4])))
        elif f[0] == "sk":
            sk.append((int(f[1]), [float(x) for x in f[3:]]))
    ktiles, ctas = plan["ktiles"], plan["ctas"]
    iters = plan["tiles"] * ktiles
    if dp:
        ends = sorted(e for _, e in dp)
        tile = statistics.median(e - s for s, e in dp)
        print("whole waves: %d blocks, a tile %.1f us (%.3f us a k-tile), the last end %.1f us, "
              "90%% of them ended by %.1f" % (len(dp), tile, tile / ktiles, ends[-1], ends[int(0.9 * (len(ends) - 1))]))
    starts = [t[0] for _, t in sk]
    ends = [t[-1] for _, t in sk]
    print("stream-K: %d blocks of %.2f tiles, started %.1f-%.1f us, ended %.1f-%.1f" %
          (len(sk), iters / ctas / ktiles, min(starts), max(starts), min(ends), max(ends)))
    xs, ys, saves, sums = [], [], [], []
    for j, t in sk:
        prev = t[0]
        for p, length in enumerate(pieces(iters * j // ctas, iters * (j + 1) // ctas, ktiles)[:4]):
            done, arrived, stored = t[1 + 3 * p], t[2 + 3 * p], t[3 + 3 * p]
            if done < 0:
                break
            xs.append(length)
            ys.append(done - prev)
            if arrived >= 0:
                saves.append(arrived - done)
            if stored >= 0:
                sums.append(stored - (arrived if arrived >= 0 else done))
            prev = max(done, arrived, stored)
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    print("pieces: %d, %.1f us each plus %.3f us a k-tile (least squares)" % (n, my - slope * mx, slope))
    if saves:
        print("save and arrival: median %.1f us, max %.1f" % (statistics.median(saves), max(saves)))
    if sums:
        print("the tile's sum and store: median %.1f us, max %.1f" % (statistics.median(sums), max(sums)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
