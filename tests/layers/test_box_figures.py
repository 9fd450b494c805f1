#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The box's headline figures, wherever a document quotes them, against the one table
they come from: docs/performance.md's "The box" (aggregate and cold touch on one core,
1 and 4 KiB, each cell "run 1 / run 2").  Checked in every .md but docs/log.md and
NEWS.md (history):
  - "X of the cold touch" and "aggregate / cold touch is X": X within the table's
    aggregate / cold touch of the payload the sentence names (1 or 4 KiB; either when
    it names none), +-0.01, any element type the table has;
  - "A-B Gbit/s of N KiB payloads": A and B within the table's aggregate Gbit/s at N KiB
    (rounded down and up);
  - no table with a cold-touch column outside docs/performance.md (its figures live
    there; a document links to them).
Usage: test_box_figures.py SOURCE_ROOT        (--selftest: the check on stale text fails)"""
import os
import re
import sys

HISTORY = {'docs/log.md', 'NEWS.md'}
PERF = 'docs/performance.md'
RATIO = re.compile(r'(?:(\d\.\d\d)(?:-(\d\.\d\d))? of the cold touch'
                   r'|[Aa]ggregate / cold touch (?:is|=) (\d\.\d\d)(?: at (\d) KiB and (\d\.\d\d) at (\d) KiB)?)')
RATE = re.compile(r'(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))? Gbit/s of (\d) KiB payloads')
KIB = re.compile(r'(\d) KiB')


def cells(row):
    return [c.strip() for c in row.strip().strip('|').split('|')]


def runs(cell):
    return [float(x) for x in re.findall(r'\d+(?:\.\d+)?', cell)]


def box_table(text):
    """{(dtype, kib): {'agg': [..], 'touch': [..]}} from the box section's tables."""
    sec = text.split('\n## The box', 1)[1].split('\n## ', 1)[0]
    got = {}
    cols = None
    for line in sec.splitlines():
        if not line.startswith('|'):
            cols = None
            continue
        c = cells(line)
        if cols is None:
            cols = {k: i for i, h in enumerate(c) for k in (1, 4) if h.startswith('%d KiB: Gbit/s' % k)}
            continue
        m = re.match(r'(aggregate, 1 worker|cold touch)(?:.*?\b(fp32|bf16|fp16)\b)?', c[0])
        if not m or not cols:
            continue
        kind = 'agg' if m.group(1).startswith('aggregate') else 'touch'
        for k, i in cols.items():
            got.setdefault((m.group(2) or 'fp32', k), {}).setdefault(kind, []).extend(runs(c[i]))
    return got


def limits(table):
    """Per payload: (the ratios aggregate / cold touch, run by run; (min, max) Gbit/s)."""
    out = {}
    for (_, k), v in table.items():
        if len(v.get('agg', [])) != len(v.get('touch', [])):
            continue
        r, g = out.setdefault(k, ([], []))
        r += [a / t for a, t in zip(v['agg'], v['touch'])]
        g += v['agg']
    return out


def check(name, text, lim, fails):
    flat = [x for k in lim for x in lim[k][0]]
    for m in RATIO.finditer(text):
        sentence = re.split(r'[.:;]\s', text[max(0, m.start() - 160):m.start()])[-1]
        if re.search(r'ICRC|kernel', sentence):     # a part of the path, not the box's whole
            continue
        before = KIB.findall(text[max(0, m.start() - 120):m.start()])
        pairs = []
        if m.group(3) and m.group(4):
            pairs = [(m.group(3), int(m.group(4))), (m.group(5), int(m.group(6)))]
        else:
            k = int(before[-1]) if before and int(before[-1]) in lim else None
            pairs = [(x, k) for x in (m.group(1), m.group(2), m.group(3)) if x]
        for x, k in pairs:
            pool = lim[k][0] if k in lim else flat
            if not any(abs(float(x) - r) <= 0.01 + 1e-9 for r in pool):
                fails.append('%s: "%s": %s of the cold touch%s, where %s says %s'
                             % (name, m.group(0), x, ' at %d KiB' % k if k else '', PERF,
                                ', '.join('%.2f' % r for r in sorted(pool))))
    for m in RATE.finditer(text):
        k = int(m.group(3))
        if k not in lim:
            continue
        lo, hi = min(lim[k][1]), max(lim[k][1])
        for x in (m.group(1), m.group(2)):
            if x and not (int(lo) <= float(x) <= int(hi) + 1):
                fails.append('%s: "%s": %s Gbit/s at %d KiB, where %s says %.1f-%.1f'
                             % (name, m.group(0), x, k, PERF, lo, hi))
    for line in text.splitlines():
        if line.startswith('|') and re.search(r'cold[ -]touch', line, re.I) and re.search(
                r'touch \|| touch\b[^|]*\|', line) and name != PERF and '---' not in line:
            if re.search(r'\| *(agg|aggregate) */ *(cold )?touch *\||cold[ -]touch Gbit/s', line):
                fails.append('%s: a table of cold-touch figures (they live in %s): %s'
                             % (name, PERF, line.strip()[:80]))


def main():
    root = sys.argv[-1]
    perf = open(os.path.join(root, PERF)).read()
    lim = limits(box_table(perf))
    if 1 not in lim or 4 not in lim:
        print('FAIL: %s: no "The box" table with aggregate and cold touch rows at 1 and 4 KiB' % PERF)
        return 1
    fails = []
    if '--selftest' in sys.argv:
        stale = ('One core aggregates 33-36 Gbit/s of 1 KiB payloads, 0.23 of the cold touch.\n'
                 'At 1 KiB 0.40 of the cold touch, at 4 KiB 0.51 of the cold touch; 90 Gbit/s of 4 KiB payloads.\n'
                 '| payload | dtype | Gbit/s | cold touch Gbit/s | agg / touch |\n')
        check('stale.md', stale, lim, fails)
        for f in fails:
            print('(caught) ' + f)
        ok = len(fails) >= 3
        print('selftest: %d stale figures caught, %s' % (len(fails), 'passed' if ok else 'FAILED'))
        return 0 if ok else 1
    n = 0
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith('.') and x not in ('build', 'subprojects')
                   and not x.startswith('build-')]
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            if f.endswith('.md') and rel not in HISTORY:
                n += 1
                check(rel, open(os.path.join(d, f), errors='replace').read(), lim, fails)
    for f in fails:
        print('FAIL: ' + f)
    print('the box: %s at 1 KiB, %s at 4 KiB of the cold touch; %d documents, %d stale figures'
          % ('/'.join('%.2f' % r for r in lim[1][0]), '/'.join('%.2f' % r for r in lim[4][0]), n, len(fails)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
