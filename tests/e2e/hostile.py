#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The attacker's tools for tests/e2e/hostile.sh, run in a host's namespace.

  hostile.py flood IFACE MAC[,MAC...] RATE    frames with each MAC as source, RATE a
                                              second, until SIGTERM; prints {"sent": N}
  hostile.py sniff IFACE                      counts RoCEv2 frames (UDP port 4791)
                                              arriving on IFACE until SIGTERM; prints
                                              {"roce": N, "frames": M}
  hostile.py ctl IP:PORT                      each line of stdin a control request
                                              (control/PROTOCOL.md), one connection
                                              each; prints each reply line
  hostile.py http URL [TOKEN]                 GET URL (bearer TOKEN); prints
                                              {"status": S, "families": [...]}
"""
import json
import signal
import socket
import struct
import sys
import time
import urllib.error
import urllib.request

ETH_P_ALL = 0x0003
ROCE_PORT = 4791
stop = False


def on_term(_sig, _frame):
    global stop
    stop = True


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def flood(iface, macs, rate):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    # a broadcast of the local experimental ethertype, 46 bytes of padding
    frames = [b"\xff" * 6 + mac_bytes(m) + struct.pack("!H", 0x88B5) + bytes(46)
              for m in macs.split(",")]
    sent, gap = 0, 1.0 / float(rate)
    while not stop:
        for f in frames:
            sock.send(f)
            sent += 1
        time.sleep(gap)
    print(json.dumps({"sent": sent}))


def sniff(iface):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((iface, 0))
    sock.settimeout(0.2)
    roce = frames = 0
    while not stop:
        try:
            b, addr = sock.recvfrom(65536)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        frames += 1
        # IPv4, UDP, destination port 4791: a RoCEv2 frame of the box's jobs
        if len(b) >= 38 and b[12:14] == b"\x08\x00" and b[23] == 17:
            ihl = (b[14] & 0x0F) * 4
            if len(b) >= 14 + ihl + 4 and struct.unpack("!H", b[16 + ihl:18 + ihl])[0] == ROCE_PORT:
                roce += 1
    print(json.dumps({"roce": roce, "frames": frames}))


def ctl(addr):
    host, port = addr.rsplit(":", 1)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                part = s.recv(65536)
                if not part:
                    break
                buf += part
        print(buf.decode().strip() or '{"ok":false,"error":"(connection closed, no reply)"}',
              flush=True)


def http(url, token=None):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, body = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read().decode()
    fams = sorted({ln.split()[2] for ln in body.splitlines() if ln.startswith("# TYPE ")})
    print(json.dumps({"status": status, "families": fams}))


def main():
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "flood" and len(args) == 3:
        flood(*args)
    elif cmd == "sniff" and len(args) == 1:
        sniff(args[0])
    elif cmd == "ctl" and len(args) == 1:
        ctl(args[0])
    elif cmd == "http" and len(args) in (1, 2):
        http(*args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
