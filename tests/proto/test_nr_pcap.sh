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

[ -d "$V" ] || { echo "FAIL: captures directory $V missing (set -Dvectors_dir)"; exit 1; }
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
