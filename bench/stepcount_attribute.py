#!/usr/bin/env python3
"""Instructions per 16-chain step of P1, by part, from two bench/stepcount.c runs (see
docs/performance.md, "How it is measured"; bench/results/2026-11-23-p1-hot-path-passes.md, "Third pass"): the per-address counts of a run of N2 steps minus one of N1,
divided by the batch steps between them, each address attributed to the innermost Philox,
Box-Muller, gradient or update function of its inline chain (addr2line -i), the rest to the fused
loop's bookkeeping; and the hot loop's stack stores and loads (objdump).

usage: stepcount_attribute.py EXE COUNTS_N1 COUNTS_N2 BATCH_STEPS
  e.g. ./stepcount a.txt ./ember_hotpath_parts count 20; ./stepcount b.txt ./ember_hotpath_parts count 40
       stepcount_attribute.py ./ember_hotpath_parts a.txt b.txt 80      (64 chains = 4 batches x 20)
"""
import collections, re, subprocess, sys

exe, fa, fb, steps = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
load = lambda p: {int(k, 16): int(v) for k, v in (l.split() for l in open(p))}
A, B = load(fa), load(fb)
diff = {k: B.get(k, 0) - A.get(k, 0) for k in set(A) | set(B)}
diff = {k: v for k, v in diff.items() if v}
out = subprocess.run(['addr2line', '-a', '-i', '-f', '-C', '-e', exe] + ['%x' % a for a in sorted(diff)],
                     capture_output=True, text=True).stdout.splitlines()
chains, cur, i = {}, None, 0
while i < len(out):
    if out[i].startswith('0x'):
        cur = int(out[i], 16); chains[cur] = []; i += 1
    else:
        chains[cur].append(out[i]); i += 2


def base(f):  # the qualified name without template arguments, parameters or return type
    name, depth = '', 0
    for ch in f:
        depth += ch == '<'
        depth -= ch == '>'
        if depth == 0 and ch not in '<>':
            if ch == '(':
                break
            name += ch
    return name.split(' ')[-1]


def part(chain):
    for f in map(base, chain):  # innermost first
        if 'philox' in f: return 'Philox'
        if any(s in f for s in ('box_muller', 'sincos_turn', 'log_positive')) or \
                f.endswith(('::uniform', '::low30', '::bit')):
            return 'Box-Muller'
        if 'value_and_grad' in f: return 'gradient'
        if 'euler_maruyama' in f: return 'update'
    return 'bookkeeping'


total = collections.Counter()
for a, v in diff.items():
    total[part(chains[a])] += v
for p in ('Philox', 'Box-Muller', 'gradient', 'update', 'bookkeeping'):
    print('%-12s %7.1f' % (p, total[p] / steps))
print('%-12s %7.1f' % ('total', sum(total.values()) / steps))

# The step loop: addresses executed once per batch step or more; its stack traffic.
hot = sorted(a for a, v in diff.items() if v >= steps)
dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', '-M', 'intel', '--start-address=%#x' % hot[0],
                      '--stop-address=%#x' % (hot[-1] + 16), exe], capture_output=True, text=True).stdout
stores = loads = operands = 0
for l in dis.splitlines():
    m = re.match(r'\s*([0-9a-f]+):\s*(\S+)\s*(.*)', l)
    if not m or diff.get(int(m.group(1), 16), 0) < steps or not re.search(r'PTR \[r[sb]p', m.group(3)):
        continue
    if 'broadcast' in m.group(2):
        continue
    if re.match(r'[A-Z]+WORD PTR \[r[sb]p', m.group(3)): stores += 1
    elif m.group(2).startswith('vmov'): loads += 1
    else: operands += 1
print('stack stores %d, reloads (vmov) %d, stack operands %d' % (stores, loads, operands))
