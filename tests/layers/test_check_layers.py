#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/check-layers on small synthetic trees: it passes a clean tree and
fails, naming the files and the symbols, on a circle, on an arrow against the
layer order (by a call and by an include), on a transport file used past
nr_transport.h, and on an undeclared folder; a
static namesake and a struct member of the same name are not arrows.  And
tools/check-doc-paths: it fails on a document that names a missing file or
make target, and (--listed) on a source file its folder's README leaves out.

Usage: test_check_layers.py CHECK_LAYERS CHECK_DOC_PATHS
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

CHECKER = sys.argv[1]
DOC_CHECKER = sys.argv[2]
failures = []


def tree(files):
    root = tempfile.mkdtemp(prefix='nr-layers-')
    atexit.register(shutil.rmtree, root, True)
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    return root


def run(files, checker=None, args=()):
    r = subprocess.run([sys.executable, checker or CHECKER, tree(files)] + list(args),
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def expect(name, files, code, *needles, checker=None, args=()):
    rc, out = run(files, checker, args)
    missing = [n for n in needles if n not in out]
    if rc != code or missing:
        failures.append('%s: exit %d (want %d), missing %s in:\n%s' % (name, rc, code, missing, out))
    else:
        print('ok: %s' % name)


BASE = {
    'proto/wire.h': '#pragma once\nint wire_len(int n);\nstatic inline int wire_pad(int n) { return -n & 3; }\n',
    'proto/wire.c': '#include "proto/wire.h"\nint wire_len(int n) { return n + wire_pad(n); }\n',
    'dataplane/engine/eng.h': '#pragma once\nint eng_sum(int a);\n',
    'dataplane/engine/eng.c': '#include "dataplane/engine/eng.h"\n#include "proto/wire.h"\n'
                              'int eng_sum(int a) { return wire_len(a); }\n',
    'host/a.c': '#include "proto/wire.h"\nint a_fn(void) { return wire_len(1); }\n',
    'host/b.c': 'int a_fn(void);\nint b_fn(void) { return a_fn(); }\n',
}

expect('clean tree passes', BASE, 0, '0 problems')

LONG = dict(BASE)
LONG['host/b.c'] = BASE['host/b.c'] + '/* more */\n' * 799
expect('a source file past 800 lines fails', LONG, 1, 'host/b.c: 801 lines, past 800')
LONG['host/b.c'] = BASE['host/b.c'] + '/* more */\n' * 798
LONG['tests/t.c'] = '/* a test */\n' * 900
expect('800 lines, and a long test, pass', LONG, 0, '0 problems')

circle = dict(BASE)
circle['host/a.c'] = 'int b_fn(void);\nint a_fn(void) { return b_fn(); }\n'
expect('a circle fails', circle, 1, 'circle of 2 files: host/a.c, host/b.c',
       'host/a.c -> host/b.c: b_fn', 'host/b.c -> host/a.c: a_fn')

longer = dict(BASE)
longer['host/c.c'] = 'int b_fn(void);\nint c_fn(void) { return b_fn(); }\n'
longer['host/a.c'] = 'int c_fn(void);\nint a_fn(void) { return c_fn(); }\n'
expect('a circle of three fails', longer, 1, 'circle of 3 files: host/a.c, host/b.c, host/c.c')

up_call = dict(BASE)
up_call['proto/wire.c'] = ('#include "proto/wire.h"\nint eng_sum(int a);\n'
                           'int wire_len(int n) { return eng_sum(n); }\n')
expect('a call against the layer order fails', up_call, 1,
       'arrow against the layer order: proto/wire.c (proto) -> dataplane/engine/eng.c (engine): eng_sum')

up_include = dict(BASE)
up_include['control/ctl.c'] = '#include "dataplane/engine/eng.h"\nint ctl_fn(void) { return 0; }\n'
expect('an include against the layer order fails', up_include, 1,
       'control/ctl.c (control) -> dataplane/engine/eng.c (engine): #include "dataplane/engine/eng.h"')

sideways = dict(BASE)
sideways['host/h.c'] = 'int eng_sum(int a);\nint h_fn(void) { return eng_sum(2); }\n'
expect('a layer beside it fails', sideways, 1, 'host/h.c (host) -> dataplane/engine/eng.c (engine): eng_sum')

header_up = dict(BASE)
header_up['host/types.h'] = '#pragma once\n#include "host/top.h"\nstruct t { int x; };\n'
header_up['host/top.h'] = '#pragma once\n#include "host/types.h"\nint top_fn(void);\n'
header_up['host/top.c'] = '#include "host/top.h"\nint top_fn(void) { return 0; }\n'
expect('a header including its user fails', header_up, 1,
       'circle of 2 files: host/top.c, host/types.h')

namesake = dict(BASE)
namesake['host/b.c'] = ('struct st { int a_fn; };\nstatic int a_fn(void) { return 1; }\n'
                        'int b_fn(struct st *s) { return a_fn() + s->a_fn; }\n')
namesake['host/a.c'] = 'int b_fn(void *s);\nint a_fn(void) { return b_fn(0); }\n'
expect('a static namesake is not an arrow', namesake, 0, '0 problems')

member = dict(BASE)
member['host/b.c'] = 'struct st { int a_fn; };\nint b_fn(struct st *s) { return s->a_fn; }\n'
member['host/a.c'] = 'int b_fn(void *s);\nint a_fn(void) { return b_fn(0); }\n'
expect('a member of the same name is not an arrow', member, 0, '0 problems')

prototype = dict(BASE)
prototype['host/api.h'] = '#pragma once\nint a_fn(void);\nint b_fn(void);\n'
expect('prototypes in an interface header are not arrows', prototype, 0, '0 problems')

undeclared = dict(BASE)
undeclared['gadgets/g.c'] = 'int g(void) { return 0; }\n'
expect('an undeclared folder fails', undeclared, 1, 'gadgets/: C sources in a folder no layer declares')

tests_free = dict(BASE)
tests_free['tests/t.c'] = 'int eng_sum(int a);\nint b_fn(void);\nint t(void) { return eng_sum(b_fn()); }\n'
expect('tests/ may use anything', tests_free, 0, '0 problems')

door = dict(BASE)
door['host/transport/nr_transport.h'] = '#pragma once\nint nr_tp_open(void);\n'
door['host/transport/transport.c'] = ('#include "host/transport/nr_transport.h"\nint soft_x(void);\n'
                                      'int nr_tp_open(void) { return soft_x(); }\n')
door['host/transport/tp_soft.c'] = 'int soft_x(void) { return 1; }\n'
door['host/collective/c.c'] = ('#include "host/transport/nr_transport.h"\n'
                               'int c_fn(void) { return nr_tp_open(); }\n')
expect('the transports through their interface pass', door, 0, '0 problems')
past = dict(door)
past['host/collective/c.c'] = 'int soft_x(void);\nint c_fn(void) { return soft_x(); }\n'
expect('a transport file used past the interface fails', past, 1,
       'arrow past the interface of transport: host/collective/c.c (collective) -> '
       'host/transport/tp_soft.c: soft_x')

named = dict(door)
named['host/collective/c.c'] = ('#include <string.h>\n#include "host/transport/nr_transport.h"\n'
                               '/* "soft" in a comment is prose */\n'
                               'int c_fn(const char *k) { return strcmp(k, "verbs") ? nr_tp_open() : 0; }\n')
expect('a collective naming a transport fails', named, 1,
       'host/collective/c.c:4 names the transport "verbs"')
named['host/collective/c.c'] = ('#include "host/transport/nr_transport.h"\n/* "soft" */\n'
                               'const char *c_msg = "software";\nint c_fn(void) { return nr_tp_open(); }\n')
expect('a comment or another string naming nothing passes', named, 0, '0 problems')

DOCS = dict(BASE)
DOCS['docs/map.md'] = 'The wire: `proto/wire.c`, [the engine](../dataplane/engine/eng.h), `b.c`.\n'
expect('a document naming files that exist passes', DOCS, 0, '0 missing',
       checker=DOC_CHECKER, args=['docs/map.md'])
DOCS_BAD = dict(DOCS)
DOCS_BAD['docs/map.md'] = 'The wire: `proto/wire.c`, and `host/gone.c`, [x](../proto/nope.md).\n'
expect('a document naming a missing file fails', DOCS_BAD, 1,
       'docs/map.md names host/gone.c', 'docs/map.md names ../proto/nope.md',
       checker=DOC_CHECKER, args=['docs/map.md'])

MOVED = dict(DOCS)
MOVED['docs/map.md'] = 'The map: [FPGA.md](../proto/FPGA.md), `BUILD/x.c` a placeholder.\n'
expect('a link to a moved upper-case document fails', MOVED, 1,
       'docs/map.md names ../proto/FPGA.md', checker=DOC_CHECKER, args=['docs/map.md'])

PAIRS = dict(DOCS)
PAIRS['docs/map.md'] = 'The sum: `eng_sum` (proto/wire.c), the length: `wire_len` (proto/wire.c).\n'
expect('a symbol said to be in a file it is not in fails', PAIRS, 1,
       'docs/map.md says `eng_sum` is in proto/wire.c: it is not', checker=DOC_CHECKER,
       args=['docs/map.md'])
PAIRS['docs/map.md'] = 'The sum: `eng_sum` (dataplane/engine/eng.c), `wire_len()` in `wire.h`.\n'
expect('a symbol in its file (or its header) passes', PAIRS, 0, '0 missing',
       checker=DOC_CHECKER, args=['docs/map.md'])

HOUSE = dict(DOCS)
HOUSE['docs/map.md'] = 'Measured at main 3ec9574: 40 Gbit/s.\n'
HOUSE['docs/log.md'] = 'At main 3ec9574 the box summed 40 Gbit/s.\n'
expect('a commit cited outside the history fails (--house)', HOUSE, 1,
       'docs/map.md cites commit 3ec9574: history goes to docs/log.md',
       checker=DOC_CHECKER, args=['--house', 'docs/map.md', 'docs/log.md'])
HOUSE['docs/map.md'] = 'Measured on 2026-12-06: 40 Gbit/s.\n'
HOUSE['proto/README.md'] = '# proto\n' + 'A line.\n' * 250
expect('a README past 250 lines fails (--house)', HOUSE, 1,
       'proto/README.md has 251 lines', checker=DOC_CHECKER,
       args=['--house', 'docs/map.md', 'docs/log.md', 'proto/README.md'])
HOUSE['proto/README.md'] = '# proto\n' + 'A line.\n' * 249
expect('the history citing commits, a README of 250 lines pass (--house)', HOUSE, 0,
       '0 missing', checker=DOC_CHECKER, args=['--house', 'docs/map.md', 'docs/log.md',
                                              'proto/README.md'])

MAKEDOCS = dict(DOCS)
MAKEDOCS['Makefile'] = 'all: build\nbuild:\n\ttrue\ndemo: build\n\ttrue\n'
MAKEDOCS['docs/map.md'] = 'Run `make build`, then `sudo make demo`; make sense of it.\n'
expect('a document showing make targets that exist passes', MAKEDOCS, 0, '0 missing',
       checker=DOC_CHECKER, args=['docs/map.md'])
MAKEDOCS['docs/map.md'] = 'Run `make biuld`.\n'
expect('a document showing a missing make target fails', MAKEDOCS, 1,
       'docs/map.md shows `make biuld`: no such target', checker=DOC_CHECKER, args=['docs/map.md'])

NAMES = dict(DOCS)
NAMES['host/api.c'] = ('#include <stdlib.h>\n/* NR_WINDOW */\nint nr_comm_start(void)'
                      ' { return getenv("NR_WINDOW") != 0; }\n'
                      'static const char *opts[] = { "window", 0 };\n')
NAMES['docs/map.md'] = 'Call `nr_comm_start()` with `NR_WINDOW=8`, or `prog --window 8`.\n'
expect('a document showing functions, variables and flags that exist passes', NAMES, 0,
       '0 missing', checker=DOC_CHECKER, args=['docs/map.md'])
NAMES['docs/map.md'] = 'Call `nr_comm_begin()` with `NR_WINDOWS=8`, or `prog --windows 8`.\n'
expect('a document showing a renamed function, variable or flag fails', NAMES, 1,
       'shows `nr_comm_begin`: no such function', 'shows `NR_WINDOWS`: no such environment',
       'shows `--windows`: no such option', checker=DOC_CHECKER, args=['docs/map.md'])

LISTED = dict(BASE)
LISTED['README.md'] = 'The host: `host/a.c`.\n'
LISTED['proto/README.md'] = '| `wire.[ch]` | the wire |\n'
LISTED['dataplane/README.md'] = '`engine/eng.c`: the engine\n'
expect('a file missing from its folder\'s README fails', LISTED, 1,
       'host/b.c is not named in README.md', checker=DOC_CHECKER, args=['--listed', '--all'])
LISTED['README.md'] = 'The host: `host/a.c`, `host/b.c`.\n'
expect('every file in its folder\'s README passes', LISTED, 0, '0 missing',
       checker=DOC_CHECKER, args=['--listed', '--all'])

if failures:
    print('\n'.join('FAIL: ' + f for f in failures))
    sys.exit(1)
print('check-layers self-test: all cases as expected')
