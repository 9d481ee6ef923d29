#!/usr/bin/env python3
"""sass_loops.py: the main loops of a build's GEMM kernels, read from `cuobjdump -sass`.

For each kernel whose name matches --kernels (a regular expression; default the SIMT SGEMM
kernels), every loop of at least --min-bytes (a backward branch that far) with its size in bytes,
its instructions, FFMAs, DMMAs and LDGSTS, and the register-bank conflicts of its FFMAs: source
registers read from the register file (not the operand reuse cache, that is not marked .reuse in
the same slot of the instruction before) that share a bank, under a model of two banks (register
number mod 2), each extra read one conflict. Hopper's banking is not documented; the model is a
heuristic that told apart the one schedule measured slower (notes/kernel-choice.md, eleventh
session), not a simulator.

    cuobjdump -sass build/libfastgemm.so > new.sass
    perf/sass_loops.py new.sass                  # every SIMT kernel's loops
    perf/sass_loops.py new.sass --against old.sass --first
        # the first (fast) loop of each kernel in both builds, with whether its code is the same

cuobjdump and nvdisasm come with the CUDA toolkit, or from pip's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm wheels.
"""
import argparse
import re
import sys

INSTR = re.compile(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);')
TARGET = re.compile(r'0x([0-9a-f]+)')
REG = re.compile(r'R(\d+)(\.reuse)?$')
ANY_REG = re.compile(r'\bR\d+\b')
PREDICATE = re.compile(r'^@!?U?P\w+\s+')


def opcode(text):
    """An instruction's opcode, past its predicate (@P0, @!P1)."""
    return PREDICATE.sub('', text).split()[0]


def kernels(path, pattern):
    """{kernel name: {address: instruction text}} for the kernels whose name matches pattern."""
    found, name, code = {}, None, {}
    with open(path) as f:
        for line in f:
            if 'Function :' in line:
                if name and re.search(pattern, name):
                    found[name] = code
                name, code = line.split('Function :')[1].strip(), {}
                continue
            m = INSTR.match(line)
            if m:
                code[int(m.group(1), 16)] = m.group(2)
    if name and re.search(pattern, name):
        found[name] = code
    return found


def loops(code, min_bytes):
    """The loops of at least min_bytes, in address order: lists of instruction texts.

    >>> code = {0x0: 'FFMA R0, R2, R4, R0', 0x10: '@!P1 LDGSTS.E [R3], desc[UR4][R6.64]',
    ...         0x20: '@P0 BRA 0x0', 0x30: 'EXIT'}
    >>> [len(body) for body in loops(code, 32)], loops(code, 48)
    ([3], [])
    >>> describe(loops(code, 32)[0]).split()
    ['48', 'B', '3', 'instr', '1', 'FFMA', '0', 'DMMA', '1', 'LDGSTS', '2', 'bank']
    """
    out = []
    for addr, text in sorted(code.items()):
        if 'BRA' not in text:
            continue
        m = TARGET.search(text)
        if m and int(m.group(1), 16) < addr and addr - int(m.group(1), 16) >= min_bytes:
            start = int(m.group(1), 16)
            out.append([code[a] for a in range(start, addr + 16, 16) if a in code])
    return out


def bank_conflicts(body):
    """FFMA register-bank conflicts under the two-bank model (module docstring).

    The first reads R2, R4 and R0 (one bank: 2 conflicts), the second R2, R5 and R1 (1), the
    third R7 and R3 (1), its R2 coming from the reuse cache that the second's R2.reuse filled:

    >>> bank_conflicts(['FFMA R0, R2, R4, R0', 'FFMA R1, R2.reuse, R5, R1', 'FFMA R3, R2, R7, R3'])
    4
    """
    conflicts, prev, prev_reuse = 0, [None] * 3, [False] * 3
    for text in body:
        if not opcode(text).startswith('FFMA'):
            prev, prev_reuse = [None] * 3, [False] * 3
            continue
        regs, reuse = [], []
        for op in [o.strip() for o in PREDICATE.sub('', text)[4:].split(',')][1:4]:
            m = REG.match(op)
            regs.append(int(m.group(1)) if m else None)
            reuse.append(bool(m and m.group(2)))
        reads = [r % 2 for i, r in enumerate(regs) if r is not None and not (prev_reuse[i] and prev[i] == r)]
        conflicts += sum(max(0, reads.count(b) - 1) for b in set(reads))
        prev, prev_reuse = regs, reuse
    return conflicts


def describe(body):
    count = lambda op: sum(opcode(t).startswith(op) for t in body)
    return '%6d B %5d instr %5d FFMA %3d DMMA %3d LDGSTS %4d bank' % (
        16 * len(body), len(body), count('FFMA'), count('DMMA'), count('LDGSTS'), bank_conflicts(body))


def short(name):
    """kernel<configuration's numbers> and the instance's flags, from an Itanium-mangled name.

    >>> short('_ZN7fg_simt10sgemm_simtINS_10SimtConfigILi128ELi256ELi16ELi64ELi64ELi3ELi16ELi8ELi2720EE'
    ...       'ELb1ELb1ELb0ELb0EEEvllllfPKflS4_lfPfllbbb')
    'sgemm_simt<128,256,16,64,64,3,16,8,2720> 1100'
    """
    base, rest = '', name[3:] if name.startswith('_ZN') else ''
    while rest[:1].isdigit():  # the nested name's parts: a length, then that many characters
        n = re.match(r'\d+', rest).group(0)
        base, rest = rest[len(n):len(n) + int(n)], rest[len(n) + int(n):]
    cfg = re.search(r'Config((?:ILi|Li)\d+E(?:Li\d+E)*)EE((?:Lb[01]E)*)', rest)
    if not base or not cfg:
        return name[:100]
    nums = re.findall(r'Li(\d+)E', cfg.group(1))
    flags = ''.join(re.findall(r'Lb([01])E', cfg.group(2)))
    return '%s<%s> %s' % (base, ','.join(nums), flags)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('sass', help='cuobjdump -sass output')
    ap.add_argument('--against', help='a second build\'s cuobjdump -sass output, to compare')
    ap.add_argument('--kernels', default=r'fg_simt\d+sgemm_simt', help='kernel name pattern')
    ap.add_argument('--min-bytes', type=int, default=8000, help='the shortest loop reported')
    ap.add_argument('--first', action='store_true', help='only each kernel\'s first loop (the fast loop)')
    a = ap.parse_args()
    new = kernels(a.sass, a.kernels)
    old = kernels(a.against, a.kernels) if a.against else {}
    if not new:
        sys.exit('no kernel matches %r in %s' % (a.kernels, a.sass))
    for name in sorted(new, key=short):
        mine = loops(new[name], a.min_bytes)
        theirs = loops(old[name], a.min_bytes) if name in old else []
        if a.first:
            mine, theirs = mine[:1], theirs[:1]
        print(short(name))
        for i, body in enumerate(mine):
            line = '  loop %d: %s' % (i, describe(body))
            if a.against and i < len(theirs):
                other = theirs[i]
                same = [ANY_REG.sub('R', t) for t in body] == [ANY_REG.sub('R', t) for t in other]
                line += ' | against %6d B %4d bank, %s' % (
                    16 * len(other), bank_conflicts(other), 'the same code' if body == other else
                    'registers differ' if same else 'code differs')
            print(line)


if __name__ == '__main__':
    main()
