#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# nr-pcap on the real captures: icrc_ok == rocev2, icrc_bad=0, malformed=0,
# exit 0; on a copy with one payload byte of one RoCE packet flipped, that
# packet is reported BAD and the exit status is 1; a missing file exits 2.
# usage: test_nr_pcap.sh NR_PCAP VECTORS_DIR
set -u
NRPCAP=$1
V=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The captures live beside the repository (../shared/vectors/roce), never in it:
# without that directory there is nothing to check, so skip and say so.
[ -d "$V" ] || { echo "SKIP: the real RoCEv2 captures are not at $V (they are read from" \
	"../shared/vectors/roce beside the checkout; meson configure -Dvectors_dir=DIR)"; exit 77; }
TMP=$(mktemp -d /tmp/nrp-pcap-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

n=0
for f in "$V"/*.pcap; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	out=$("$NRPCAP" "$f"); rc=$?
	last=$(printf '%s\n' "$out" | tail -n 1)
	echo "$(basename "$f"): $last (exit $rc)"
	case "$last" in
	rocev2=*" icrc_ok="*" icrc_bad=0 malformed=0 other="*) ;;
	*) fail "$f: unexpected last line '$last'" ;;
	esac
	roce=$(printf '%s\n' "$last" | sed -n 's/^rocev2=\([0-9]*\) .*/\1/p')
	ok=$(printf '%s\n' "$last" | sed -n 's/.* icrc_ok=\([0-9]*\) .*/\1/p')
	[ -n "$roce" ] && [ "$roce" -gt 0 ] && [ "$roce" = "$ok" ] || fail "$f: icrc_ok=$ok rocev2=$roce"
	[ "$rc" -eq 0 ] || fail "$f: exit $rc"
done
[ "$n" -gt 0 ] || fail "no captures in $V"

# The unverifiable ones: every RoCE packet BAD, exit 1.
for f in "$V"/icrc_unverifiable/*.pcap; do
	[ -e "$f" ] || { fail "no captures in $V/icrc_unverifiable"; break; }
	last=$("$NRPCAP" "$f" | tail -n 1)
	"$NRPCAP" "$f" >/dev/null; rc=$?
	echo "icrc_unverifiable/$(basename "$f"): $last (exit $rc)"
	case "$last" in
	rocev2=*" icrc_ok=0 icrc_bad="*" malformed=0 "*) ;;
	*) fail "$f: '$last'" ;;
	esac
	[ "$rc" -eq 1 ] || fail "$f: exit $rc, expected 1"
done

# One payload byte flipped in the first RoCE packet that has a payload.
SRC="$V/magnate3_nvme-rdma-idle_cx.pcap"
info=$(python3 - "$SRC" "$TMP/flipped.pcap" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
b = bytearray(open(src, 'rb').read())
assert b[:4] == b'\xd4\xc3\xb2\xa1', 'expected a little-endian pcap'
off, frame = 24, 0
while off + 16 <= len(b):
    incl = struct.unpack_from('<I', b, off + 8)[0]
    f = off + 16
    frame += 1
    if (b[f + 12:f + 14] == b'\x08\x00' and b[f + 23] == 17 and
            struct.unpack_from('>H', b, f + 36)[0] == 4791):
        end = 14 + struct.unpack_from('>H', b, f + 16)[0]
        # SEND/WRITE opcodes 0x00-0x0B without RETH/ImmDt: 12-byte BTH.
        if b[f + 42] in (0x00, 0x01, 0x02, 0x04) and end - 4 > 54:
            b[f + 54] ^= 0x20
            open(dst, 'wb').write(b)
            print(frame)
            sys.exit(0)
    off = f + incl
sys.exit('no RoCE packet with payload found')
PY
) || fail "could not make the flipped copy"
if [ -n "$info" ]; then
	out=$("$NRPCAP" -v "$TMP/flipped.pcap"); rc=$?
	printf '%s\n' "$out"
	printf '%s\n' "$out" | grep -q "#$info .*ICRC BAD" || fail "frame $info not reported BAD"
	[ "$(printf '%s\n' "$out" | grep -c 'ICRC BAD')" -eq 1 ] || fail "expected exactly one BAD line"
	printf '%s\n' "$out" | tail -n 1 | grep -q ' icrc_bad=1 malformed=0 ' || fail "totals wrong"
	[ "$rc" -eq 1 ] || fail "flipped copy: exit $rc, expected 1"
fi

# The same packets as pcapng, as Linux cooked capture (SLL, tcpdump -i any) and
# under an unsupported link type (raw IP: exit 2).
SRC="$V/magnate3_rdma-write-read_ibdump_read2_cx.pcap"
want=$("$NRPCAP" "$SRC" | tail -n 1)
python3 - "$SRC" "$TMP" <<'PY' || fail "could not convert $SRC"
import struct, sys
src, tmp = sys.argv[1], sys.argv[2]
b = open(src, 'rb').read()
recs, off = [], 24
while off + 16 <= len(b):
    ts, us, incl, orig = struct.unpack_from('<IIII', b, off)
    recs.append((ts, us, b[off + 16:off + 16 + incl]))
    off += 16 + incl
def pcap(name, dlt, conv):
    with open(name, 'wb') as o:
        o.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, dlt))
        for ts, us, f in recs:
            g = conv(f)
            o.write(struct.pack('<IIII', ts, us, len(g), len(g)) + g)
# Linux SLL: packet type, ARPHRD_ETHER, address length, 8-byte address, protocol.
pcap(tmp + '/sll.pcap', 113,
     lambda f: struct.pack('>HHH', 0, 1, 6) + f[6:12] + b'\0\0' + f[12:14] + f[14:])
pcap(tmp + '/raw.pcap', 101, lambda f: f[14:])
def blk(t, body):
    body += b'\0' * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack('<II', t, n) + body + struct.pack('<I', n)
with open(tmp + '/ng.pcapng', 'wb') as o:
    o.write(blk(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1)))
    o.write(blk(1, struct.pack('<HHI', 1, 0, 65535)))
    for ts, us, f in recs:
        t = ts * 1000000 + us
        o.write(blk(6, struct.pack('<IIIII', 0, t >> 32, t & 0xffffffff, len(f), len(f)) + f))
PY
for alt in sll.pcap ng.pcapng; do
	got=$("$NRPCAP" "$TMP/$alt" | tail -n 1); rc=$?
	echo "$alt: $got"
	[ "$got" = "$want" ] || fail "$alt: '$got', expected '$want'"
done
err=$("$NRPCAP" "$TMP/raw.pcap" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] || fail "raw IP link type: exit $rc, expected 2"
printf '%s\n' "$err" | grep -q "not supported" || fail "raw IP message '$err'"

# Missing file: exit 2 and a message naming it.
err=$("$NRPCAP" "$TMP/no-such.pcap" 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] || fail "missing file: exit $rc, expected 2"
printf '%s\n' "$err" | grep -q "cannot read $TMP/no-such.pcap" || fail "message '$err'"
# Not a capture at all: exit 2.
echo "not a pcap" > "$TMP/junk.pcap"
"$NRPCAP" "$TMP/junk.pcap" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "junk file: exit $rc, expected 2"
# Help.
"$NRPCAP" --help | grep -q "usage: nr-pcap" || fail "--help"

[ "$fails" -eq 0 ] && echo "nr-pcap: all checks passed"
[ "$fails" -eq 0 ]
