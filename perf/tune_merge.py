#!/usr/bin/env python3
"""tune_merge.py BASE.csv [NEWER.csv ...] [--drop TRANS:MxNxK ...]
               [--exclude TRANS:MxNxK:PREFIX ...] [--candidates NAME,...] > merged.csv

One tuner CSV for `fastgemm-tune --select-from` out of several runs: the problems of BASE in
BASE's order (the order of the table it gives), each with the rows of the first NEWER file that
measured it (so list the newest first), else BASE's own; then the problems BASE lacks, in the
order the NEWER files first measure them (a grid point added later, e.g. 4095x4095x4095).
--drop keeps BASE's rows for a problem whatever the newer files measured. --exclude removes, at
one problem, the rows of the configurations whose names start with PREFIX (e.g.
NN:2048x2048x2048:simt_128x256x16: the host pipeline cuts sgemm_ 4096 into pieces of that
shape, and two of them run side by side only on tiles of more than one block an SM).
--candidates keeps only the rows of the named configurations (a table's own, to select again
among them alone, with a tuner built with just those). BASE may be of the tuner's older format,
without the round column (its rows are then passes, round 0). How cuda/sgemm_table.gen.h was
made: perf/NOTES.md, SGEMM items 24, 25, 29 and 31."""
import sys

HEADER = 'trans,m,n,k,candidate,splits,ms,tflops,cublas_tflops,ratio,check,round'


def problems(path):
    """{(trans, m, n, k): [rows]} and the problems in the file's order."""
    rows, order = {}, []
    with open(path) as f:
        head = f.readline().rstrip('\n').split(',')
        add_round = head[-1] != 'round'
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            if add_round:
                line += ',0'
            key = tuple(line.split(',')[:4])
            if key not in rows:
                rows[key] = []
                order.append(key)
            rows[key].append(line)
    return rows, order


def main(argv):
    files, drop, exclude, only = [], set(), [], None
    it = iter(argv)
    for a in it:
        if a == '--candidates':
            only = set(next(it).split(','))
        elif a == '--exclude':
            trans, shape, prefix = next(it).split(':')
            exclude.append(((trans, *shape.split('x')), prefix))
        elif a == '--drop':
            trans, shape = next(it).split(':')
            drop.add((trans, *shape.split('x')))
        else:
            files.append(a)
    if not files:
        sys.exit(__doc__)
    base, order = problems(files[0])
    newer = [problems(p) for p in files[1:]]
    added = []
    for _, n_order in newer:
        added += [key for key in n_order if key not in base and key not in added]

    def kept(key, row):
        name = row.split(',')[4]
        excluded = any(key == k and name.startswith(p) for k, p in exclude)
        return (only is None or name in only) and not excluded

    print(HEADER)
    for key in order + added:
        src = base if key in drop and key in base else next((n for n, _ in newer if key in n), base)
        rows = [r for r in src[key] if kept(key, r)]
        if rows:
            print('\n'.join(rows))


if __name__ == '__main__':
    main(sys.argv[1:])
