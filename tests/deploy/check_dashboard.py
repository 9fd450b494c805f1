#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_dashboard.py: the Grafana dashboard loads, and queries what the box serves.

Usage: check_dashboard.py DASHBOARD SCHEMA [--metrics FILE]

  - DASHBOARD validates against SCHEMA (JSON Schema draft-07, with
    python3-jsonschema: the fields Grafana needs to import and draw it);
  - what a schema cannot say: panel ids unique, every panel inside the 24
    columns and none on top of another, refIds unique in a panel, every
    $variable a query uses declared (or one of Grafana's own);
  - with --metrics FILE (a scrape of the box's /metrics): every netreduce_
    metric a query names is a family or sample of that scrape, so no panel
    stays empty for a renamed or missing metric.
Exit 0 all right, 1 naming each problem, 77 without python3-jsonschema.
"""
import json
import re
import sys

GRAFANA_VARS = {'__rate_interval', '__interval', '__interval_ms', '__range', '__range_s',
                '__range_ms', '__name', '__from', '__to', '__dashboard'}
METRIC = re.compile(r'\b(netreduce_[a-z0-9_]+)\b')
VAR = re.compile(r'\$\{?([A-Za-z_][A-Za-z0-9_]*)')


def structure(d):
    problems = []
    ids, cells = {}, {}
    declared = {v['name'] for v in d.get('templating', {}).get('list', [])}
    for p in d['panels']:
        where = 'panel %s "%s"' % (p.get('id'), p.get('title'))
        if p['id'] in ids:
            problems.append('%s: id %d also panel "%s"' % (where, p['id'], ids[p['id']]))
        ids[p['id']] = p.get('title')
        g = p['gridPos']
        if g['x'] + g['w'] > 24:
            problems.append('%s: x %d + w %d is past the 24 columns' % (where, g['x'], g['w']))
        for yy in range(g['y'], g['y'] + g['h']):
            for xx in range(g['x'], min(24, g['x'] + g['w'])):
                if (xx, yy) in cells:
                    problems.append('%s: overlaps panel "%s" at column %d, row %d'
                                    % (where, cells[(xx, yy)], xx, yy))
                    break
                cells[(xx, yy)] = p.get('title')
            else:
                continue
            break
        refs = [t['refId'] for t in p.get('targets', [])]
        if len(refs) != len(set(refs)):
            problems.append('%s: refIds twice: %s' % (where, refs))
        texts = [t['expr'] for t in p.get('targets', [])]
        texts += [p.get('datasource', {}).get('uid', '')]
        texts += [t.get('datasource', {}).get('uid', '') for t in p.get('targets', [])]
        for text in texts:
            for v in VAR.findall(text):
                if v not in declared and v not in GRAFANA_VARS:
                    problems.append('%s: $%s is not a variable of the dashboard (templating.list)'
                                    % (where, v))
    return problems


def scraped_names(path):
    names = set()
    with open(path) as f:
        for line in f:
            if line.startswith('# TYPE ') or line.startswith('# HELP '):
                names.add(line.split()[2])
            elif line.strip() and not line.startswith('#'):
                names.add(re.split(r'[{ ]', line, maxsplit=1)[0])
    return names


def main(argv):
    args = argv[1:]
    metrics = None
    if '--metrics' in args:
        i = args.index('--metrics')
        metrics = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__)
        return 2
    try:
        import jsonschema
    except ImportError:
        print('SKIP: python3-jsonschema is not installed (make deps installs it)')
        return 77
    with open(args[0]) as f:
        dash = json.load(f)
    with open(args[1]) as f:
        schema = json.load(f)
    problems = []
    validator = jsonschema.Draft7Validator(schema)
    for e in sorted(validator.iter_errors(dash), key=lambda e: list(e.absolute_path)):
        problems.append('schema: %s: %s' % ('/'.join(str(p) for p in e.absolute_path) or '(top)',
                                           e.message))
    if not problems:
        problems += structure(dash)
    queried = set()
    for p in dash.get('panels', []):
        for t in p.get('targets', []):
            queried.update(METRIC.findall(t.get('expr', '')))
    for v in dash.get('templating', {}).get('list', []):
        queried.update(METRIC.findall(json.dumps(v.get('query', ''))))
    if metrics:
        have = scraped_names(metrics)
        for m in sorted(queried - have):
            problems.append('metric %s: queried by the dashboard, not in the scrape %s' % (m, metrics))
    for p in problems:
        print('check_dashboard: %s: %s' % (args[0], p))
    if problems:
        print('check_dashboard: %d problems' % len(problems))
        return 1
    print('check_dashboard: %s: %d panels, %d metrics queried%s: ok'
          % (args[0], len(dash['panels']), len(queried),
             ', every one in the scrape' if metrics else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
