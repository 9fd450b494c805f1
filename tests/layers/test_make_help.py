#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""make help against the Makefile itself: every target a user may name (each rule
whose name is a word, not a file) is in .PHONY and has its "## " help lines, so
that `make help` lists it; and `make help` lists exactly those targets.  And
FUZZ_TARGETS builds every target tests/fuzz/run fuzzes.
Usage: test_make_help.py SOURCE_ROOT"""
import re
import subprocess
import sys


def main():
    root = sys.argv[1]
    text = open(root + '/Makefile').read()
    phony = set()
    for m in re.finditer(r'^\.PHONY:(.*)$', text, re.M):
        phony |= set(m.group(1).split())
    rules = re.findall(r'^([a-z][a-z0-9-]*):(?!=)', text, re.M)
    out = subprocess.run(['make', '-s', '-C', root, 'help'], capture_output=True, text=True)
    listed = re.findall(r'^make (\S+)', out.stdout, re.M)
    fails = []
    if out.returncode != 0:
        fails.append('make help: exit %d: %s' % (out.returncode, out.stderr[-300:]))
    for t in rules:
        if t not in phony:
            fails.append('target %s is not in .PHONY' % t)
        if t not in listed:
            fails.append('target %s has no "## " help line above its rule' % t)
    for t in phony - set(rules):
        fails.append('.PHONY names %s, which has no rule' % t)
    # make fuzz builds every target tests/fuzz/run fuzzes (make test runs it)
    fuzz = re.search(r'^FUZZ_TARGETS := ((?:.*\\\n)*.*)$', text, re.M)
    built = set(re.findall(r'nrz-fuzz-([a-z0-9]+)', fuzz.group(1))) if fuzz else set()
    run = open(root + '/tests/fuzz/run').read()
    targets = re.search(r'^TARGETS = \[(.*?)\]', run, re.M | re.S)
    wanted = set(re.findall(r"'([a-z0-9]+)'", targets.group(1))) if targets else set()
    if not wanted or wanted - built:
        fails.append('FUZZ_TARGETS builds %s, tests/fuzz/run fuzzes %s'
                     % (sorted(built), sorted(wanted)))
    for t in listed:
        if t not in rules:
            fails.append('make help lists %s, which has no rule' % t)
    for f in fails:
        print('FAIL: ' + f)
    print('make help: %d targets listed, %d rules; %d passed, %d failed'
          % (len(listed), len(rules), 0 if fails else 1, 1 if fails else 0))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
