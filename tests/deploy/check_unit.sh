#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/deploy/check_unit.sh BUILD_DIR: the systemd unit as ninja install
# puts it, checked by systemd's own tools.
#   - DESTDIR install into a temporary root: the unit, the options file in
#     /etc/netreduce (mode 0600, never over one that is there), the dashboard;
#   - systemd-analyze verify: no message at all (it exits 0 on a directive
#     it ignores, so any output fails), with ExecStart on the installed binary;
#   - systemd-analyze security --offline: the exposure score, printed with
#     what it counts against the unit; over 3.5 fails (a hardening lost).
# Exit 0 pass, 1 fail, 77 skip (no systemd-analyze: the systemd package).
set -euo pipefail

build=$(cd "${1:?usage: check_unit.sh BUILD_DIR}" && pwd)
max=${NR_UNIT_MAX_EXPOSURE:-3.5}
fail() { echo "FAIL: deploy/unit: $*"; exit 1; }

command -v systemd-analyze >/dev/null ||
	{ echo "SKIP: deploy/unit: systemd-analyze not installed (Debian package systemd)"; exit 77; }
root=$(mktemp -d /tmp/nr-unit.XXXXXX)
trap 'rm -rf "$root"' EXIT

DESTDIR=$root meson install -C "$build" --no-rebuild --quiet > "$root.log" 2>&1 ||
	{ cat "$root.log"; rm -f "$root.log"; fail "ninja install into DESTDIR=$root failed"; }
rm -f "$root.log"
unit=$(find "$root" -name netreduce-switch.service -path '*systemd/system*' | head -1)
[ -n "$unit" ] || fail "ninja install put no netreduce-switch.service under lib/systemd/system"
conf=$(find "$root" -name netreduce-switch.conf | head -1)
[ -n "$conf" ] || fail "ninja install put no netreduce-switch.conf"
[ "$(stat -c %a "$conf")" = 600 ] || fail "$conf: mode $(stat -c %a "$conf"), expected 600"
[ "$(stat -c %a "$(dirname "$conf")")" = 700 ] || fail "$(dirname "$conf"): expected mode 700"
grep -q "^EnvironmentFile=${conf#"$root"}$" "$unit" || fail "the unit does not read ${conf#"$root"}"
echo "installed: ${unit#"$root"}, ${conf#"$root"}"
# an admin's options are kept on the next install
echo "# mine" >> "$conf"
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet > /dev/null 2>&1
tail -n 1 "$conf" | grep -q '^# mine$' || fail "ninja install overwrote an edited $conf"

# verify: the unit with ExecStart on the installed binary (systemd-analyze
# checks that it is executable), every message a failure
exe=$(sed -n 's|^ExecStart=\([^ ]*\).*|\1|p' "$unit")
[ -x "$root$exe" ] || fail "ExecStart=$exe: not installed at $root$exe"
mkdir "$root/verify"
sed "s|^ExecStart=$exe|ExecStart=$root$exe|" "$unit" > "$root/verify/netreduce-switch.service"
out=$(systemd-analyze verify "$root/verify/netreduce-switch.service" 2>&1) && rc=0 || rc=$?
if [ "$rc" != 0 ] || [ -n "$out" ]; then
	echo "$out"
	fail "systemd-analyze verify: exit $rc, ${out:+a message (above)}"
fi
echo "systemd-analyze verify: clean"

out=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1) || true
score=$(sed -n 's/.*Overall exposure level for netreduce-switch.service: \([0-9.]*\).*/\1/p' <<< "$out")
[ -n "$score" ] || { echo "$out"; fail "systemd-analyze security gave no exposure level"; }
grep '✗' <<< "$out" | sed 's/  */ /g' | cut -c1-110
echo "systemd-analyze security: exposure $score (0 safe .. 10 unsafe; fails over $max)"
awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' ||
	fail "exposure $score over $max: a hardening directive was lost"
echo "PASS: deploy/unit: installed, verified clean, exposure $score"
