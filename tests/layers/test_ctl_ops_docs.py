#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The control operations as the documents tell them, against the command table
they are dispatched from (control/api/ctl_request.c, ctl_ops[]): PROTOCOL.md's table has
a row for each and no other; a document that counts them ("the eight
operations") counts right; docs/architecture.md's list names every one.
Usage: test_ctl_ops_docs.py SOURCE_ROOT"""
import re
import sys

WORDS = {'one': 1, 'two': 2, 'three': 3, 'four': 4, 'five': 5, 'six': 6, 'seven': 7,
         'eight': 8, 'nine': 9, 'ten': 10, 'eleven': 11, 'twelve': 12}


def main():
    root = sys.argv[1]
    api = open(root + '/control/api/ctl_request.c').read()
    table = re.search(r'ctl_ops\[\] = \{(.*?)\n\};', api, re.S)
    ops = re.findall(r'\{ "([a-z0-9_]+)", f_', table.group(1)) if table else []
    fails = []
    if len(ops) < 2:
        fails.append('no command table ctl_ops[] in control/api/ctl_request.c')
    proto = open(root + '/control/PROTOCOL.md').read()
    sec = proto.split('## Operations', 1)[-1].split('\n## ', 1)[0]
    rows = re.findall(r'^\| `([a-z0-9_]+)` \|', sec, re.M)
    if sorted(rows) != sorted(ops):
        fails.append('control/PROTOCOL.md "Operations": rows %s, the table %s' % (rows, ops))
    for doc in ('control/README.md', 'docs/architecture.md', 'README.md', 'control/PROTOCOL.md'):
        text = open(root + '/' + doc).read()
        for m in re.finditer(r'\b(%s|\d+) (?:control )?operations\b' % '|'.join(WORDS), text):
            n = WORDS.get(m.group(1)) or int(m.group(1))
            if n != len(ops):
                fails.append('%s: "%s", the table has %d' % (doc, m.group(0), len(ops)))
    # netreducectl's commands (control/cli/netreducectl.c, cmds[]): every operation
    # but job_renew (the library's lease), and no other
    cli = open(root + '/control/cli/netreducectl.c').read()
    ctable = re.search(r'cmds\[\] = \{(.*?)\n\};', cli, re.S)
    cli_ops = set(re.findall(r'\{ "[a-z ]+", "[^"]*", "([a-z0-9_]+)",', ctable.group(1))) if ctable else set()
    if cli_ops != set(ops) - {'job_renew'}:
        fails.append('control/cli/netreducectl.c cmds[]: operations %s, the table less job_renew %s'
                     % (sorted(cli_ops), sorted(set(ops) - {'job_renew'})))
    arch = open(root + '/docs/architecture.md').read()
    step = re.search(r'\*\*API\*\* \(`control/api/ctl_request.c`\):(.*?)\n\d\. ', arch, re.S)
    for op in ops:
        if not step or '`%s`' % op not in step.group(1):
            fails.append('docs/architecture.md, the API step: `%s` not named' % op)
    for f in fails:
        print('FAIL: ' + f)
    print('%d operations in the table; %d passed, %d failed' % (len(ops), 0 if fails else 1,
                                                                1 if fails else 0))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
