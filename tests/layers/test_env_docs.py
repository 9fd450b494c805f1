#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every environment variable the library reads (a getenv("NR_...") in host/, an
env_str, env_uint or F("NR_...") or a float row of nr_config.c) has its row in host/README.md's table, and
every row names a variable the library reads.  Usage: test_env_docs.py SOURCE_ROOT"""
import os
import re
import sys


def main():
    root = sys.argv[1]
    read = set()
    for d, _, files in os.walk(os.path.join(root, 'host')):
        for f in files:
            if f.endswith(('.c', '.h')):
                text = open(os.path.join(d, f), errors='replace').read()
                read |= set(re.findall(r'getenv\("(NR_[A-Z0-9_]+)"\)', text))
                read |= set(re.findall(r'\b(?:F|env_str|env_uint)\("(NR_[A-Z0-9_]+)"', text))
                read |= set(re.findall(r'\{ "(NR_[A-Z0-9_]+)", ', text))   # nr_config.c's floats
    doc = open(os.path.join(root, 'host/README.md')).read()
    rows = set()
    for m in re.finditer(r'^\| ((?:`NR_[A-Z0-9_]+`(?:, )?)+) \|', doc, re.M):
        rows |= set(re.findall(r'`(NR_[A-Z0-9_]+)`', m.group(1)))
    fails = ['%s: read by the library, no row in host/README.md' % v for v in sorted(read - rows)]
    fails += ['%s: a row of host/README.md, read nowhere in host/' % v for v in sorted(rows - read)]
    for f in fails:
        print('FAIL: ' + f)
    print('%d variables read, %d documented; %d passed, %d failed'
          % (len(read), len(rows), 0 if fails else 1, 1 if fails else 0))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
