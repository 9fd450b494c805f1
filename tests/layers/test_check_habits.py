#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/check-git-log on a repository it makes: clean commits pass, each kind of
bad message fails and is named, the base commit itself is never checked."""
import os
import subprocess
import sys
import tempfile


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@example.invalid',
               GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@example.invalid')
    return subprocess.run(['git', '-C', repo] + list(args), env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit(repo, msg):
    git(repo, 'commit', '-q', '--allow-empty', '--cleanup=verbatim', '-m', msg)
    return git(repo, 'rev-parse', 'HEAD')


def check(tool, repo, base, head):
    r = subprocess.run([sys.executable, tool, '--repo', repo, base, head],
                       capture_output=True, text=True)
    return r.returncode, r.stdout


def main():
    tool = sys.argv[1]
    fails = 0
    with tempfile.TemporaryDirectory() as repo:
        git(repo, 'init', '-q')
        base = commit(repo, 'x' * 90 + ' (the base: never checked)')
        commit(repo, 'box: a subject of fewer than 72 characters')
        good = commit(repo, 'docs: a subject\n\nand a body after a blank line\n')
        cases = [
            ('y' * 73, 'subject of 73 characters'),
            ('box: a subject that ends with a period.', 'ends with a period'),
            ('fixup! box: something', 'work-in-progress'),
            ('box: a subject\nwith its body glued on', 'no blank line'),
        ]
        rc, out = check(tool, repo, base, good)
        if rc != 0 or '2 commit(s)' not in out or '0 problem(s)' not in out:
            print('FAIL: clean commits: exit %d\n%s' % (rc, out))
            fails += 1
        prev = good
        for msg, want in cases:
            head = commit(repo, msg)
            rc, out = check(tool, repo, prev, head)
            if rc != 1 or want not in out:
                print('FAIL: %r: exit %d, wanted "%s"\n%s' % (msg, rc, want, out))
                fails += 1
            prev = head
        rc, out = check(tool, repo, base, 'no-such-ref')
        if rc != 2:
            print('FAIL: an unknown ref: exit %d' % rc)
            fails += 1
    print('%d passed, %d failed' % (6 - fails, fails))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
