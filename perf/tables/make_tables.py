#!/usr/bin/env python3
"""make_tables.py [--check] [--merged] [SPEC ...]

Makes the library's kernel tables (kernels/sgemm_table.gen.h, kernels/dgemm_table.gen.h) from
committed inputs, with python3 alone (no GPU): each SPEC (default perf/tables/sgemm.spec and
perf/tables/dgemm.spec) names the tuner CSVs to merge, the configurations to leave out, the
candidates of the tuner build, the configurations to keep, how many to keep, and the overrides
applied after the selection. The selection is fastgemm-tune's --select-from (perf/tune.cu:
csv_parse, apply_final, emit_table), done here the same way step for step, so that the tables
come out as the tuner wrote them, below their first comment; the merge is perf/tune_merge.py's,
which this replaces.

SPEC paths, and the paths in a spec, are from the repository's root, wherever it runs.

  (no option)  writes each SPEC's output
  --check      writes nothing; prints a diff and exits 1 where an output differs from what the
               inputs give
  --merged     prints the merged CSV of the one SPEC (what fastgemm-tune --select-from reads,
               to check this selection against the tuner's on a GPU)

How the tables are made and how to tune for another GPU: perf/tables/README.md."""
import difflib
import os
import re
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_SPECS = ['perf/tables/sgemm.spec', 'perf/tables/dgemm.spec']
CSV_HEADER = 'trans,m,n,k,candidate,splits,ms,tflops,cublas_tflops,ratio,check,round'
INF = float('inf')

# Per family: the name prefix, the table's macro prefix, the configuration macro's parameters.
FAMILIES = {
    's': ('simt', 'SGEMM', 'BM, BN, BK, WM, WN, STAGES, TM, TN, FEATURES'),
    'd': ('dmma', 'DGEMM', 'BM, BN, BK, WM, WN, STAGES, FEATURES'),
}


def fail(msg):
    sys.exit('make_tables.py: ' + msg)


def path_of(rel):
    return os.path.join(ROOT, rel)


# ---- specs, candidates, overrides ----

def read_lines(rel):
    """The lines of a file without comments (#...) and blank lines, each with its line number."""
    with open(path_of(rel)) as f:
        for no, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if line:
                yield no, line


def problem_key(text, where):
    """TRANS:MxNxK as the CSVs write it: (trans, m, n, k), all strings."""
    trans, _, shape = text.partition(':')
    dims = shape.split('x')
    if trans not in ('NN', 'NT', 'TN', 'TT') or len(dims) != 3 or not all(map(str.isdigit, dims)):
        fail(f'{where}: not TRANS:MxNxK: {text}')
    return (trans, *dims)


def read_spec(rel):
    """The spec's settings: single keys as strings; csv, exclude and keep as lists."""
    spec = {'spec': rel, 'csv': [], 'exclude': [], 'keep': [], 'only-candidates': 'no',
            'overrides': None}
    single = ('prec', 'output', 'tuned-on', 'candidates', 'max-configs', 'only-candidates',
              'overrides')
    for no, line in read_lines(rel):
        key, _, value = line.partition(' ')
        value = value.strip()
        where = f'{rel}:{no}'
        if key == 'csv':
            spec['csv'].append(value)
        elif key == 'keep':  # NAME[,NAME...]
            spec['keep'] += value.split(',')
        elif key == 'exclude':
            # TRANS:MxNxK[:PREFIX]: the rows of that problem whose configuration's name starts
            # with PREFIX (every row of the problem without one).
            parts = value.split(':')
            if len(parts) not in (2, 3):
                fail(f'{where}: exclude TRANS:MxNxK[:PREFIX]')
            spec['exclude'].append((problem_key(':'.join(parts[:2]), where),
                                    parts[2] if len(parts) == 3 else ''))
        elif key in single:
            spec[key] = value
        else:
            fail(f'{where}: unknown key {key}')
    for key in ('prec', 'output', 'tuned-on', 'candidates', 'max-configs'):
        if key not in spec:
            fail(f'{rel}: no {key}')
    if (spec['prec'] not in FAMILIES or not spec['csv']
            or spec['only-candidates'] not in ('yes', 'no')):
        fail(f'{rel}: prec is s or d, at least one csv, only-candidates yes or no')
    return spec


def candidate_name(prec, nums):
    """The name the library gives a configuration (perf/tune_candidate.cuh, candidate_name)."""
    family = FAMILIES[prec][0]
    if prec == 's':
        bm, bn, bk, wm, wn, s, tm, tn, f = nums
        name = f'{family}_{bm}x{bn}x{bk}_w{wm}x{wn}_t{tm}x{tn}_s{s}'
    else:
        bm, bn, bk, wm, wn, s, f = nums
        name = f'{family}_{bm}x{bn}x{bk}_w{wm}x{wn}_s{s}'
    return name + (f'_f{f}' if f else '')


class Candidate:
    """A configuration: its name, the numbers of its macro as written ("BM, BN, ..."), its
    block tile's area (the table's order)."""

    def __init__(self, prec, words, where):
        arity = 9 if prec == 's' else 7
        if len(words) != arity or not all(w.isdigit() for w in words):
            fail(f'{where}: not {arity} numbers: {" ".join(words)}')
        nums = [int(w) for w in words]
        self.name = candidate_name(prec, nums)
        self.params = ', '.join(words)
        self.area = nums[0] * nums[1]


def candidate_of_name(prec, name, where):
    """The configuration a name stands for (an override's, not one of the tuner build's)."""
    pattern = (r'simt_(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_t(\d+)x(\d+)_s(\d+)(?:_f(\d+))?' if prec == 's'
               else r'dmma_(\d+)x(\d+)x(\d+)_w(\d+)x(\d+)_s(\d+)(?:_f(\d+))?')
    m = re.fullmatch(pattern, name)
    if not m:
        fail(f'{where}: not a configuration name: {name}')
    words = list(m.groups())
    if prec == 's':  # the name has TM, TN before S; the macro after
        words = words[:5] + [words[7]] + words[5:7] + words[8:]
    words[-1] = words[-1] or '0'
    c = Candidate(prec, words, where)
    if c.name != name:
        fail(f'{where}: {name} is not written as the library names it ({c.name})')
    return c


def read_candidates(prec, rel):
    """The tuner build's candidates, in its order: the lines of a candidate file that start
    with a digit, as CMake reads them (FASTGEMM_TUNE_CANDIDATES_S/_D)."""
    with open(path_of(rel)) as f:
        return [Candidate(prec, line.split(), f'{rel}:{no}')
                for no, line in enumerate(f, 1) if line[:1].isdigit()]


def read_overrides(prec, rel):
    """replace OLD NEW: the selected configuration OLD becomes NEW, in OLD's place (the rows
    that take OLD take NEW). force TRANS:MxNxK NAME SPLITS: that problem's row takes NAME (a
    configuration of the list, after the replacements) with SPLITS; a problem the selection has
    no row for is appended, in this file's order."""
    replace, force = [], []
    for no, line in read_lines(rel):
        words, where = line.split(), f'{rel}:{no}'
        if words[0] == 'replace' and len(words) == 3:
            replace.append((words[1], candidate_of_name(prec, words[2], where), where))
        elif words[0] == 'force' and len(words) == 4 and words[3].isdigit():
            force.append((problem_key(words[1], where), words[2], int(words[3]), where))
        else:
            fail(f'{where}: replace OLD NEW or force TRANS:MxNxK NAME SPLITS')
    return replace, force


# ---- the merge (one CSV for the selection out of several runs) ----

def read_csv(rel):
    """{(trans, m, n, k): [rows]} and the problems in the file's order; a CSV of the tuner's
    older format (no round column) has passes only, round 0."""
    rows, order = {}, []
    with open(path_of(rel)) as f:
        add_round = f.readline().rstrip('\n').split(',')[-1] != 'round'
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


def merge(spec, names):
    """The merged CSV's lines, and how many problems each CSV gave rows to. The problems of the
    first CSV (the base) in its order, each with the rows of the first later CSV that measured
    it (list the newest first), else the base's own; then the problems the base lacks, in the
    order the later CSVs first measure them. The spec's excludes leave rows out; with
    only-candidates, so do configurations that are not candidates (else the selection stops at
    them, as the tuner does)."""
    base, order = read_csv(spec['csv'][0])
    newer = [read_csv(rel) for rel in spec['csv'][1:]]
    added = []
    for _, n_order in newer:
        added += [key for key in n_order if key not in base and key not in added]
    only = spec['only-candidates'] == 'yes'

    def kept(key, row):
        name = row.split(',')[4]
        excluded = any(key == k and name.startswith(p) for k, p in spec['exclude'])
        return (not only or name in names) and not excluded

    lines, given = [CSV_HEADER], [0] * len(spec['csv'])
    for key in order + added:
        at = next((i + 1 for i, (n, _) in enumerate(newer) if key in n), 0)
        rows = [r for r in (newer[at - 1][0] if at else base)[key] if kept(key, r)]
        lines += rows
        given[at] += bool(rows)
    return lines, given


# ---- the selection (perf/tune.cu, select_from_csv and emit_table) ----

def apply_final(results, ratios, finalists, final_ratios):
    """tune.cu's apply_final on one problem: each finalist's pass ratio moves to the median of
    its final's, the problem's other results by the finalists' median change. results[i]:
    [cand, splits, ms], ratios[i] its ratio; finalists index results, final_ratios[f] the
    final's ratios of finalists[f]."""
    change = []
    for f, v in enumerate(final_ratios):
        if not v:
            return
        v.sort()
        change.append(v[len(v) // 2] / ratios[finalists[f]])
    if not change:
        return
    drift = sorted(change)[len(change) // 2]
    for r, result in enumerate(results):
        c = change[finalists.index(r)] if r in finalists else drift
        ratios[r] *= c
        result[2] /= c


def measurements(lines, cands, where):
    """tune.cu's select_from_csv: the problems [(m, n, k, trans)] and, for each, its results
    [cand, splits, time in units of cuBLAS's], the finals applied."""
    index = {c.name: i for i, c in enumerate(cands)}
    problems, per_problem = [], []  # per_problem[p]: the results of problems[p]
    ratios, finalists, final_ratios = [], [], []  # the last problem's
    for line in lines[1:]:
        f = line.split(',')
        if len(f) != 12:
            fail(f'{where}: not a tuner CSV line: {line}')
        tp, m, n, k, name, splits, ratio, check, rnd = (f[0], int(f[1]), int(f[2]), int(f[3]), f[4],
                                                        int(f[5]), float(f[9]), f[10], int(f[11]))
        problem = (m, n, k, (tp[0] == 'T') + 2 * (tp[1] == 'T'))
        if not problems or problems[-1] != problem:
            if problems:
                apply_final(per_problem[-1], ratios, finalists, final_ratios)
            problems.append(problem)
            per_problem.append([])
            ratios, finalists, final_ratios = [], [], []
        if name not in index:
            fail(f'{where}: {name} is no candidate of this build')
        c, results = index[name], per_problem[-1]
        if check != 'ok':
            continue
        if rnd == 0:
            results.append([c, splits, 1.0 / ratio])
            ratios.append(ratio)
            continue
        r = next((i for i, x in enumerate(results) if x[0] == c and x[1] == splits), None)
        if r is None:
            continue  # a final without its pass: not this run's
        if r not in finalists:
            finalists.append(r)
            final_ratios.append([])
        final_ratios[finalists.index(r)].append(ratio)
    if problems:
        apply_final(per_problem[-1], ratios, finalists, final_ratios)
    return problems, per_problem


def select(cands, problems, per_problem, keep_names, max_configs, where):
    """tune.cu's emit_table: the configurations kept (indices into cands, largest block tile
    first), the rows [(m, n, k, trans, configuration, splits)] and the average of the best."""
    nc = len(cands)
    t = [[INF] * nc for _ in problems]
    split_of = [[1] * nc for _ in problems]
    for p, results in enumerate(per_problem):
        for c, splits, ms in results:
            if ms < t[p][c]:
                t[p][c], split_of[p][c] = ms, splits
    index = {c.name: i for i, c in enumerate(cands)}
    forced = set()
    for name in keep_names:
        if name not in index:
            fail(f'{where}: keep: {name} is no candidate of this build')
        forced.add(index[name])
    keep = set(forced)
    for tp in t:
        arg = -1
        for c in range(nc):
            if tp[c] < INF and (arg < 0 or tp[c] < tp[arg]):
                arg = c
        if arg >= 0:
            keep.add(arg)

    def cost(subset):
        total = 0.0
        for tp in t:
            best_all = min(tp)
            best_set = min((tp[c] for c in subset), default=INF)
            if best_all < INF:
                total += best_set / best_all
        return total

    while len(keep) > max_configs:
        drop, drop_cost = -1, INF
        for c in sorted(keep):
            if c in forced:
                continue
            x = cost(keep - {c})
            if x < drop_cost:
                drop, drop_cost = c, x
        if drop < 0:
            break  # only the ones kept by name are left
        keep.discard(drop)
    kept = sorted(keep, key=lambda c: (-cands[c].area, c))
    rows = []
    for p, (m, n, k, trans) in enumerate(problems):
        arg = -1
        for i, c in enumerate(kept):
            if t[p][c] < INF and (arg < 0 or t[p][c] < t[p][kept[arg]]):
                arg = i
        if arg >= 0:
            rows.append((m, n, k, trans, arg, split_of[p][kept[arg]]))
    total = cost(keep)
    return kept, rows, len(problems) / total if total else INF


def apply_overrides(prec, configs, rows, rel):
    """The overrides file's replacements and forced rows, on the selected list and rows."""
    replace, force = read_overrides(prec, rel)
    for old, new, where in replace:
        at = next((i for i, c in enumerate(configs) if c.name == old), None)
        if at is None:
            fail(f'{where}: {old} is not in the table')
        configs[at] = new
    names = [c.name for c in configs]
    for (tp, m, n, k), name, splits, where in force:
        if name not in names:
            fail(f'{where}: {name} is not in the table')
        problem = (int(m), int(n), int(k), (tp[0] == 'T') + 2 * (tp[1] == 'T'))
        row = problem + (names.index(name), splits)
        at = next((i for i, r in enumerate(rows) if r[:4] == problem), None)
        if at is None:
            rows.append(row)
        else:
            rows[at] = row


# ---- the header file ----

def comment(text):
    return ''.join('// ' + line + '\n' for line in
                   textwrap.wrap(text, 97, break_long_words=False, break_on_hyphens=False))


def header_text(spec, configs, rows):
    """The table's header, in the tuner's format (emit_table) below its first comment."""
    _, P, params = FAMILIES[spec['prec']]
    out = comment(f'{os.path.basename(spec["output"])}: GENERATED by python3 '
                  'perf/tables/make_tables.py. Do not edit.')
    out += comment(
        f'From {spec["spec"]} and its inputs: the tuner build\'s candidates {spec["candidates"]}; '
        f'the tuner CSVs, merged in this order, {", ".join(spec["csv"])}'
        + (f'; the overrides {spec["overrides"]}' if spec['overrides'] else '')
        + ". The selection is fastgemm-tune's --select-from (perf/tune.cu). To change the table, "
        'change the inputs and run the command again (perf/tables/README.md); --check compares.')
    out += f'#define FG_{P}_TUNED_ON "{spec["tuned-on"]}"\n\n'
    out += f'// The configurations built: X(name, {params})\n#define FG_{P}_CONFIGS(X) \\\n'
    out += ' \\\n'.join(f'    X("{c.name}", {c.params})' for c in configs) + '\n'
    out += ('// The first of them (the largest block tile; the ablation in perf/ starts from it)\n'
            f'#define FG_{P}_FIRST(X) X("{configs[0].name}", {configs[0].params})\n')
    out += ('\n// The problems measured and the best configuration and split-K for each:\n'
            '// X(m, n, k, transposes (1: A, 2: B), configuration, splits)\n'
            f'#define FG_{P}_TABLE(X) \\\n')
    out += ' \\\n'.join('    X(%d, %d, %d, %d, %d, %d)' % r for r in rows) + '\n'
    return out


def make(rel):
    """The spec's table: (output path, text, summary)."""
    spec = read_spec(rel)
    cands = read_candidates(spec['prec'], spec['candidates'])
    lines, given = merge(spec, {c.name for c in cands})
    problems, per_problem = measurements(lines, cands, rel)
    kept, rows, average = select(cands, problems, per_problem, spec['keep'],
                                 int(spec['max-configs']), rel)
    configs = [cands[c] for c in kept]
    if spec['overrides']:
        apply_overrides(spec['prec'], configs, rows, spec['overrides'])
    given = ', '.join(f'{os.path.basename(c)} {g}' for c, g in zip(spec['csv'], given))
    summary = (f'{len(configs)} configurations, {average:.3f} of the best everywhere on average'
               f'{" before the overrides" if spec["overrides"] else ""}, {len(rows)} rows; '
               f'problems from each CSV: {given}')
    return spec['output'], header_text(spec, configs, rows), summary


def main(argv):
    opts = [a for a in argv if a.startswith('--')]
    specs = [a for a in argv if not a.startswith('--')] or DEFAULT_SPECS
    if any(o not in ('--check', '--merged') for o in opts) or len(opts) > 1:
        sys.exit(__doc__)
    if opts == ['--merged']:
        if len(specs) != 1:
            fail('--merged takes one SPEC')
        spec = read_spec(specs[0])
        names = {c.name for c in read_candidates(spec['prec'], spec['candidates'])}
        print('\n'.join(merge(spec, names)[0]))
        return 0
    differ = 0
    for rel in specs:
        output, text, summary = make(rel)
        if opts == ['--check']:
            try:
                with open(path_of(output), newline='') as f:
                    committed = f.read()
            except OSError as e:
                committed = ''
                print(f'{output}: {e.strerror}')
            if committed == text:
                print(f'{output}: as its inputs give it ({summary})')
            else:
                differ = 1
                sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True),
                                                           text.splitlines(True), output,
                                                           f'{output} (from {rel})'))
        else:
            with open(path_of(output), 'w', newline='') as f:
                f.write(text)
            print(f'wrote {output} ({summary})')
    return differ


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
