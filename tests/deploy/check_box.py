#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_box.py: the real netreduce-switch as systemd and Prometheus see it.

Usage: check_box.py BUILD_DIR SOURCE_DIR      (root: DPDK; suite eal)

Starts build/netreduce-switch on two ring ports (EAL --no-huge, lcores 0,1)
as systemd would start it: NOTIFY_SOCKET a datagram socket of this script,
WATCHDOG_USEC 300 ms, stderr a file named by JOURNAL_STREAM; with tenants,
the TCP listener with TLS (--tls-cert, --tls-key: a CA and a certificate
for 127.0.0.1 made by the openssl CLI) and --metrics-listen.  Then, in order:
  - READY=1 comes, STATUS= says healthy, GET /healthz is 200 and
    `netreducectl health` exits 0;
  - netreducectl without --tls-ca is refused with "this box wants TLS",
    counted (netreduce_control_tls_plaintext_total 1);
  - a tenant creates a job named e2e-dash over TLS: GET /metrics labels it
    by id, name and tenant and shows no token or key; promtool check
    metrics finds nothing to say; every metric the Grafana dashboard
    queries is in the scrape (check_dashboard.py --metrics);
  - WATCHDOG=1 comes every half interval;
  - the worker's thread is stopped (ptrace, that thread alone): within
    --stall-ms /healthz is 503 naming the worker, `netreducectl health`
    exits 1, /metrics still answers at once (partial), the watchdog is no
    longer fed and the log says so at priority 2 (crit); let go, all comes
    back;
  - SIGTERM: STOPPING=1, exit 0;
  - every stderr line carries its syslog priority ("<N>"), the job's
    creation line names it the one way (job=1 name=e2e-dash tenant=vision).
Exit 0 pass, 1 fail (naming what), 77 skip (not root, not built).
"""
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
WALL = 0x40000000
TOKEN = 'vision-' + os.urandom(12).hex()
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
TRACED = []     # the worker thread while this script holds it stopped


def let_go():
    """Detach the stopped worker thread: a process with a thread traced by
    this script could not be reaped by it."""
    while TRACED:
        LIBC.ptrace(PTRACE_DETACH, TRACED.pop(), None, None)


def fail(msg):
    let_go()
    print('FAIL: deploy/box: %s' % msg)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(url, timeout=5):
    """(status, body) of a GET."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class Notify:
    """The service manager's end of sd_notify: every datagram, timestamped."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.msgs = []
        self.lock = threading.Lock()
        self.stop = False
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        while not self.stop:
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            with self.lock:
                for line in data.split('\n'):
                    if line:
                        self.msgs.append((time.monotonic(), line))

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                for t, m in self.msgs:
                    if pred(m):
                        return t, m
            time.sleep(0.05)
        return None

    def since(self, t0, what):
        with self.lock:
            return [t for t, m in self.msgs if t >= t0 and m == what]


def thread_of(pid, name):
    for tid in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
            if f.read().strip() == name:
                return int(tid)
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, src = sys.argv[1], sys.argv[2]
    switch = os.path.join(build, 'netreduce-switch')
    ctl = os.path.join(build, 'control', 'netreducectl')
    if os.geteuid() != 0:
        print('SKIP: deploy/box: needs root (DPDK)')
        return 77
    for b in (switch, ctl):
        if not os.access(b, os.X_OK):
            print('SKIP: deploy/box: %s is not built' % b)
            return 77
    tmp = tempfile.mkdtemp(prefix='nr-deploy-')
    try:
        return run(build, src, switch, ctl, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree('/var/run/dpdk/nrdeploy%d' % os.getpid(), ignore_errors=True)


def make_certs(tmp):
    """A CA and the box's certificate for 127.0.0.1 (deploy/README.md's commands)."""
    ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
    with open(os.path.join(tmp, 'san.ext'), 'w') as f:
        f.write('subjectAltName=IP:127.0.0.1\n')
    for cmd in (['req', '-x509'] + ec + ['-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
                                         '-subj', '/CN=nr-deploy-ca'],
                ['req'] + ec + ['-keyout', 'box.key', '-out', 'box.csr', '-subj', '/CN=127.0.0.1'],
                ['x509', '-req', '-in', 'box.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
                 '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'box.pem']):
        r = subprocess.run(['openssl'] + cmd, cwd=tmp, capture_output=True, text=True)
        if r.returncode != 0:
            fail('openssl %s: %s' % (' '.join(cmd[:2]), r.stderr[-500:]))
    os.chmod(os.path.join(tmp, 'box.key'), 0o600)
    return [os.path.join(tmp, n) for n in ('ca.pem', 'box.pem', 'box.key')]


def run(build, src, switch, ctl, tmp):
    notify = Notify(os.path.join(tmp, 'notify'))
    ca, cert, key = make_certs(tmp)
    tenants = os.path.join(tmp, 'tenants.json')
    with open(tenants, 'w') as f:
        json.dump({'tenants': [{'name': 'vision', 'token': TOKEN, 'max_jobs': 4,
                                'ips': ['10.79.0.0/16']}]}, f)
    os.chmod(tenants, 0o600)
    spec = os.path.join(tmp, 'spec.json')
    with open(spec, 'w') as f:
        json.dump({'mtu': 1024, 'msg_size': 4096, 'pool_msgs': 4, 'conns': [
            {'src_ip': '10.79.0.1', 'dst_ip': '10.79.0.2', 'src_qpn': 17, 'dst_qpn': 18, 'ipsn': 0,
             'src_mac': '02:00:00:4f:00:01', 'dst_mac': '02:00:00:4f:00:02'},
            {'src_ip': '10.79.0.2', 'dst_ip': '10.79.0.1', 'src_qpn': 19, 'dst_qpn': 20, 'ipsn': 0,
             'src_mac': '02:00:00:4f:00:02', 'dst_mac': '02:00:00:4f:00:01'}]}, f)
    mport, cport = free_port(), free_port()
    # a secret's file that others can read is refused before anything starts
    for opt, extra in (('--token-file', ['--ctl-listen', '127.0.0.1:%d' % cport]),
                       ('--metrics-token-file', ['--metrics-listen', '127.0.0.1:%d' % mport])):
        loose = os.path.join(tmp, 'loose-token')
        with open(loose, 'w') as f:
            f.write(TOKEN + '\n')
        os.chmod(loose, 0o644)
        r = subprocess.run([switch, '--no-huge', '--', opt, loose] + extra, capture_output=True,
                           text=True, timeout=30)
        if r.returncode != 2 or 'chmod 600' not in r.stderr:
            fail('%s of mode 644: exit %d, %s' % (opt, r.returncode, r.stderr[-300:]))
        print('%s of mode 644: refused (%s)' % (opt, r.stderr.strip().splitlines()[-1][:110]))
    sock = os.path.join(tmp, 'ctl.sock')
    errpath = os.path.join(tmp, 'stderr')
    err = open(errpath, 'w')
    st = os.fstat(err.fileno())
    env = dict(os.environ, NOTIFY_SOCKET=os.path.join(tmp, 'notify'), WATCHDOG_USEC='300000',
               JOURNAL_STREAM='%d:%d' % (st.st_dev, st.st_ino))
    env.pop('WATCHDOG_PID', None)
    cmd = [switch, '-l', '0,1', '--no-huge', '-m', '256', '--no-pci',
           '--file-prefix', 'nrdeploy%d' % os.getpid(), '--vdev', 'net_ring0', '--vdev', 'net_ring1',
           '--', '--ctl-socket', sock, '--ctl-listen', '127.0.0.1:%d' % cport, '--tenants', tenants,
           '--metrics-listen', '127.0.0.1:%d' % mport, '--stall-ms', '300',
           '--tls-cert', cert, '--tls-key', key]
    print('$ ' + ' '.join(cmd))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    base = 'http://127.0.0.1:%d' % mport
    try:
        rc = checks(proc, notify, base, ctl, sock, cport, spec, src, tmp, errpath, ca)
    finally:
        let_go()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()
    return rc


def ctl_run(ctl, *args):
    r = subprocess.run([ctl] + list(args), capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr


def checks(proc, notify, base, ctl, sock, cport, spec, src, tmp, errpath, ca):
    def stderr_text():
        with open(errpath) as f:
            return f.read()

    if notify.wait(lambda m: m == 'READY=1', 60) is None:
        fail('no READY=1 within 60 s; stderr:\n' + stderr_text()[-3000:])
    print('READY=1')
    got = notify.wait(lambda m: m.startswith('STATUS=healthy'), 5)
    if got is None:
        fail('no STATUS=healthy... within 5 s of READY=1: %s' % notify.msgs)
    print(got[1])
    code, body = get(base + '/healthz')
    if code != 200 or not body.startswith('ok: 2 of 2 ports linked, 1 of 1 workers polling'):
        fail('GET /healthz: %d %s' % (code, body))
    print('GET /healthz: %d %s' % (code, body.strip()))
    rc, out = ctl_run(ctl, '--socket', sock, 'health')
    if rc != 0 or not out.startswith('healthy: 2 ports linked, 1 workers polling'):
        fail('netreducectl health: exit %d: %s' % (rc, out))

    # the token never in clear: a plain-text client is refused before it is read
    rc, out = ctl_run(ctl, '--connect', '127.0.0.1:%d' % cport, '--token', TOKEN, 'stats')
    if rc != 1 or 'this box wants TLS' not in out:
        fail('netreducectl without --tls-ca: exit %d: %s' % (rc, out))
    print('plain text refused: %s' % out.strip())
    # a tenant's job, named, over TLS
    rc, out = ctl_run(ctl, '--connect', '127.0.0.1:%d' % cport, '--tls-ca', ca, '--token', TOKEN,
                      'job', 'create', spec, '--name', 'e2e-dash')
    if rc != 0 or 'job 1 created' not in out:
        fail('job create as tenant vision: exit %d: %s' % (rc, out))
    key = re.search(r'key\s+([0-9a-f]{32})', out).group(1)
    # the job's counters are what its worker last published (every 100 ms,
    # and at the first turn of its loop after the job came): a scrape right
    # after job create may come first; within a second it has them
    t0 = time.monotonic()
    while True:
        code, text = get(base + '/metrics')
        if code != 200:
            fail('GET /metrics: %d' % code)
        if 'netreduce_job_slots{job="1"' in text or time.monotonic() - t0 > 1.0:
            break
        time.sleep(0.02)
    print('the job\'s published counters in the scrape after %.3f s' % (time.monotonic() - t0))
    scrape = os.path.join(tmp, 'metrics.txt')
    with open(scrape, 'w') as f:
        f.write(text)
    want = 'netreduce_job_ranks{job="1",name="e2e-dash",tenant="vision"} 2'
    if want not in text:
        fail('%s not in the scrape' % want)
    if 'netreduce_control_tls_plaintext_total 1\n' not in text:
        fail('the plain-text client is not counted: netreduce_control_tls_plaintext_total 1 '
             'not in the scrape')
    if TOKEN in text or key in text:
        fail('a secret (the tenant\'s token or the job\'s key) is in the scrape')
    print('GET /metrics: %d lines, %d families, the job by name and tenant, no secret'
          % (text.count('\n'), text.count('# TYPE ')))
    promtool = shutil.which('promtool')
    if promtool:
        r = subprocess.run([promtool, 'check', 'metrics'], input=text, capture_output=True, text=True)
        if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
            fail('promtool check metrics: exit %d:\n%s%s' % (r.returncode, r.stdout, r.stderr))
        print('promtool check metrics: clean')
    else:
        print('(promtool not installed: the prometheus package; the scrape not linted)')
    r = subprocess.run(['/usr/bin/python3', os.path.join(src, 'tests/deploy/check_dashboard.py'),
                        os.path.join(src, 'deploy/grafana/netreduce.json'),
                        os.path.join(src, 'tests/deploy/grafana-dashboard.schema.json'),
                        '--metrics', scrape], capture_output=True, text=True)
    print(r.stdout.strip())
    if r.returncode != 0:
        fail('the dashboard against the scrape: exit %d' % r.returncode)

    # the watchdog, fed every half WATCHDOG_USEC (150 ms, on 100 ms ticks)
    t0 = time.monotonic()
    time.sleep(2.0)
    fed = len(notify.since(t0, 'WATCHDOG=1'))
    print('WATCHDOG=1: %d in 2 s' % fed)
    if fed < 3:     # about 10; a loaded machine's 100 ms sleeps run long
        fail('the watchdog was fed %d times in 2 s (every 150-200 ms expected)' % fed)

    # a stuck worker: its thread stopped, the rest of the process running
    tid = thread_of(proc.pid, 'rte-worker-1')
    if tid is None:
        fail('no thread rte-worker-1 in the box')
    if LIBC.ptrace(PTRACE_SEIZE, tid, None, None) != 0:
        fail('ptrace of the worker thread %d: %s' % (tid, os.strerror(ctypes.get_errno())))
    TRACED.append(tid)
    if LIBC.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        fail('ptrace of the worker thread %d: %s' % (tid, os.strerror(ctypes.get_errno())))
    os.waitpid(tid, WALL)
    t_stop = time.monotonic()
    code, body = 200, ''
    while time.monotonic() - t_stop < 3 and code == 200:
        time.sleep(0.05)
        code, body = get(base + '/healthz')
    stuck_after = time.monotonic() - t_stop
    print('worker stopped: GET /healthz after %.2f s: %d %s' % (stuck_after, code, body.strip()))
    if code != 503 or 'worker 0 (lcore 1): stuck' not in body:
        fail('GET /healthz with the worker stopped: %d %s' % (code, body))
    rc, out = ctl_run(ctl, '--socket', sock, 'health')
    if rc != 1 or 'STUCK' not in out:
        fail('netreducectl health with the worker stopped: exit %d: %s' % (rc, out))
    # the control server's reaper asks the job's status about once a second:
    # by now it waits on the stuck worker, holding the control API's lock
    time.sleep(max(0, t_stop + 1.5 - time.monotonic()))
    t = time.monotonic()
    code, text = get(base + '/metrics')
    took = time.monotonic() - t
    if code != 200 or 'netreduce_metrics_partial 1' not in text or took > 1.0:
        fail('GET /metrics with the worker stopped: %d in %.2f s, partial line %s'
             % (code, took, 'netreduce_metrics_partial 1' in text))
    # (the control server's one thread serves it after the reaper's wait on
    # the stuck worker, 2 s a job: GET /healthz, on its own thread, does not wait)
    t = time.monotonic()
    rc, out = ctl_run(ctl, '--socket', sock, 'health')
    took_h = time.monotonic() - t
    if rc != 1:
        fail('netreducectl health with the reaper waiting on the stuck worker: exit %d' % rc)
    t1 = time.monotonic() + 0.3   # a feed already on its way
    time.sleep(1.0)
    late = notify.since(t1, 'WATCHDOG=1')
    print('WATCHDOG=1 while stuck: %d; /metrics in %.3f s (partial), netreducectl health in %.3f s'
          % (len(late), took, took_h))
    if late:
        fail('the watchdog was fed %d times while the worker was stuck' % len(late))
    let_go()
    t_go = time.monotonic()
    code = 503
    while time.monotonic() - t_go < 3 and code != 200:
        time.sleep(0.05)
        code, body = get(base + '/healthz')
    if code != 200:
        fail('GET /healthz after the worker went on: %d %s' % (code, body))
    time.sleep(0.6)
    if not notify.since(t_go, 'WATCHDOG=1'):
        fail('the watchdog was not fed again once the worker went on')
    print('worker let go: healthy again, the watchdog fed again')

    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        fail('no exit within 20 s of SIGTERM')
    if rc != 0 or notify.wait(lambda m: m == 'STOPPING=1', 1) is None:
        fail('SIGTERM: exit %d, STOPPING=1 %s' % (rc, 'sent' if notify.wait(
            lambda m: m == 'STOPPING=1', 0) else 'not sent'))
    print('SIGTERM: STOPPING=1, exit 0')

    text = stderr_text()
    lines = [ln for ln in text.split('\n') if ln]
    bare = [ln for ln in lines if not re.match(r'^<[0-7]>', ln)]
    if bare:
        fail('%d stderr lines without a priority, e.g. %r' % (len(bare), bare[0]))
    for want in ('<5>netreduce control: job=1 name=e2e-dash tenant=vision: created',
                 '<2>netreduce-switch: not feeding the systemd watchdog',
                 '<5>netreduce-switch: every worker polls again',
                 '<6>netreduce.dp: worker 0 on lcore 1', '<6>EAL: '):
        if want not in text:
            fail('stderr: no line starting %r:\n%s' % (want, text[-2000:]))
    print('stderr: %d lines, each with its priority (e.g. %s)' % (len(lines), lines[0][:60]))
    notify.stop = True
    print('PASS: deploy/box: READY, STATUS, WATCHDOG (stopped for a stuck worker, resumed), '
          'STOPPING; /healthz and netreducectl health; /metrics by job name and tenant, promtool '
          'clean, the dashboard\'s metrics all served; journal priorities on every line')
    return 0


if __name__ == '__main__':
    sys.exit(main())
