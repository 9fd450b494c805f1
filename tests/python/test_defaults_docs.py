#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The defaults the documents state, against what nr_config_init() gives.

host/netreduce.h says each struct nr_config field's default in its comment
("default 65536", "-1 (default)"), host/README.md in its environment table's
last column ("| `NR_MSG_SIZE` | ... | 65536 |"); this loads libnetreduce
(NETREDUCE_LIB), fills a config with nr_config_init() and holds every numeric
default either document states (and every quoted string one of netreduce.h) to
the field's value.  A default changed in the code and not in the documents, or
the reverse, fails here naming both.  Usage: test_defaults_docs.py SOURCE_DIR
"""
import ctypes
import os
import re
import sys

from netreduce import _lib

# fields whose documented default names what the library works out at init, not a value
AT_INIT = {'mtu', 'intra_gbps', 'inter_gbps', 'rack_agents', 'local_rank', 'soft_window',
           'soft_ackreq', 'spray_reorder', 'ack_timeout'}
VAR_FIELD = {'NR_BOX': 'switch_addr', 'NR_SWITCH': 'switch_addr'}


def value_of(cfg, field):
    v = getattr(cfg, field)
    return v.decode() if isinstance(v, bytes) else v


def header_defaults(text):
    """{field: stated default} from struct nr_config's comments."""
    body = text[text.index('struct nr_config {'):]
    body = body[:body.index('\n};')]
    out = {}
    for m in re.finditer(r'\b(\w+);\s*/\*(.*?)\*/', body, re.S):
        field, note = m.group(1), ' '.join(m.group(2).split())
        alt = re.search(r'(-?\d+) or (-?\d+) \(default\)', note)   # "0 or 1 (default)"
        if alt:
            out[field] = (float(alt.group(1)), float(alt.group(2)))
            continue
        d = re.search(r'\bdefault (-?\d+(?:\.\d+)?)\b', note) or \
            re.search(r'(-?\d+(?:\.\d+)?) \(default\)', note)
        if d:
            out[field] = (float(d.group(1)),)
            continue
        s = re.search(r'"(\w+)" \(default\)', note)
        if s:
            out[field] = s.group(1)
    return out


def readme_defaults(text):
    """{field: stated default} from host/README.md's environment table (numbers only)."""
    out = {}
    for m in re.finditer(r'^\| ((?:`NR_[A-Z0-9_]+`(?:, )?)+) \|.*\| ([^|]+) \|$', text, re.M):
        names = re.findall(r'`(NR_[A-Z0-9_]+)`', m.group(1))
        cells = [c.strip() for c in m.group(2).split(',')] if len(names) > 1 else [m.group(2).strip()]
        for name, cell in zip(names, cells):
            d = re.match(r'(-?\d+(?:\.\d+)?)(?:$|[ :(])', cell)
            if d:
                out[VAR_FIELD.get(name, name[3:].lower())] = (float(d.group(1)), name)
    return out


def main():
    root = sys.argv[1]
    lib = _lib.lib()
    cfg = _lib.NrConfig()
    lib.nr_config_init(ctypes.byref(cfg), ctypes.sizeof(cfg))
    fields = {f for f, _ in cfg._fields_}
    fails, checked = [], 0
    with open(os.path.join(root, 'host', 'netreduce.h')) as f:
        for field, want in sorted(header_defaults(f.read()).items()):
            if field not in fields or field in AT_INIT:
                continue
            got = value_of(cfg, field)
            checked += 1
            # a string field left NULL takes its default ("auto", "sum"), as the code says
            if (isinstance(want, tuple) and (got is None or float(got) not in want)) or \
               (isinstance(want, str) and got is not None and got != want):
                fails.append('host/netreduce.h says %s defaults to %s; nr_config_init gives %r'
                             % (field, ' or '.join('%g' % w for w in want)
                                if isinstance(want, tuple) else want, got))
    with open(os.path.join(root, 'host', 'README.md')) as f:
        for field, (want, name) in sorted(readme_defaults(f.read()).items()):
            if field not in fields or field in AT_INIT:
                continue
            got = value_of(cfg, field)
            checked += 1
            if got is None or float(got) != want:
                fails.append('host/README.md says %s defaults to %g; nr_config_init gives %r (%s)'
                             % (name, want, got, field))
    for f in fails:
        print('FAIL: ' + f)
    print('%d stated defaults checked; %d differ' % (checked, len(fails)))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
