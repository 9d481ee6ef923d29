#!/usr/bin/env python3
"""tune_merge.py BASE.csv [NEWER.csv ...] [--drop TRANS:MxNxK ...] > merged.csv

One tuner CSV for `fastgemm-tune --select-from` out of several runs: the problems of BASE in
BASE's order (the order of the table it gives), each with the rows of the first NEWER file that
measured it, else BASE's own. --drop keeps BASE's rows for a problem whatever the newer files
measured (e.g. --drop NN:2048x2048x2048). BASE may be of the tuner's older format, without the
round column (its rows are then passes, round 0). How cuda/sgemm_table.gen.h was made:
perf/NOTES.md, SGEMM items 24 and 25."""
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
    files, drop = [], set()
    it = iter(argv)
    for a in it:
        if a == '--drop':
            trans, shape = next(it).split(':')
            drop.add((trans, *shape.split('x')))
        else:
            files.append(a)
    if not files:
        sys.exit(__doc__)
    base, order = problems(files[0])
    newer = [problems(p)[0] for p in files[1:]]
    print(HEADER)
    for key in order:
        src = base if key in drop else next((n for n in newer if key in n), base)
        print('\n'.join(src[key]))


if __name__ == '__main__':
    main(sys.argv[1:])
