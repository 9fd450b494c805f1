#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tools/check-git-log and tools/check-format on repositories they make.

check-git-log: clean commits pass, each kind of bad message fails and is named,
the base commit itself is never checked.  check-format (with the project's
.clang-format): a change whose new lines are formatted passes, one with a badly
formatted line fails, and a badly formatted line the change did not touch is
left alone.  Usage: test_check_habits.py CHECK_GIT_LOG CHECK_FORMAT CLANG_FORMAT_FILE"""
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
    """check-git-log's exit status and output."""
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
    fails += check_format(os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]))
    print('%d passed, %d failed' % (9 - fails, fails))
    return 1 if fails else 0


def check_format(tool, style):
    """4 cases; the failures."""
    import shutil
    fails = 0
    if not shutil.which('clang-format') and not shutil.which('clang-format-14'):
        print('FAIL: clang-format missing (Debian package clang-format: make deps)')
        return 4
    with tempfile.TemporaryDirectory() as repo:
        git(repo, 'init', '-q')
        shutil.copy(style, os.path.join(repo, '.clang-format'))
        src = os.path.join(repo, 'a.c')
        with open(src, 'w') as f:
            f.write('int  old_badly(int x){return x;}\n\nint f(int x)\n{\n\treturn x;\n}\n')
        git(repo, 'add', '-A')
        base = commit(repo, 'base')
        with open(src, 'a') as f:
            f.write('\nint g(int x)\n{\n\treturn x + 1;\n}\n')
        git(repo, 'commit', '-q', '-am', 'formatted')
        r = subprocess.run([tool, base, 'HEAD'], cwd=repo, capture_output=True, text=True)
        if r.returncode != 0:
            print('FAIL: a formatted change: exit %d\n%s%s' % (r.returncode, r.stdout, r.stderr))
            fails += 1
        good = git(repo, 'rev-parse', 'HEAD')
        with open(src, 'a') as f:
            f.write('\nint h(int x){ if(x) return 1; return 0; }\n')
        git(repo, 'commit', '-q', '-am', 'badly formatted')
        r = subprocess.run([tool, good, 'HEAD'], cwd=repo, capture_output=True, text=True)
        if r.returncode != 1 or 'int h(int x)' not in r.stdout:
            print('FAIL: a badly formatted line: exit %d\n%s%s' % (r.returncode, r.stdout, r.stderr))
            fails += 1
        if 'old_badly' in r.stdout:
            print('FAIL: a line the change did not touch was checked')
            fails += 1
        # a move with one formatted line changed: the moved lines are not the change's
        git(repo, 'reset', '-q', '--hard', good)
        os.makedirs(os.path.join(repo, 'room'))
        git(repo, 'mv', 'a.c', 'room/a.c')
        with open(os.path.join(repo, 'room', 'a.c'), 'a') as f:
            f.write('\nint k(void)\n{\n\treturn 2;\n}\n')
        git(repo, 'commit', '-q', '-am', 'moved')
        r = subprocess.run([tool, good, 'HEAD'], cwd=repo, capture_output=True, text=True)
        if r.returncode != 0 or 'old_badly' in r.stdout:
            print('FAIL: a moved file was checked whole: exit %d\n%s%s'
                  % (r.returncode, r.stdout, r.stderr))
            fails += 1
    return fails


if __name__ == '__main__':
    sys.exit(main())
