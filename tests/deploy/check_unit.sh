#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/deploy/check_unit.sh BUILD_DIR: the systemd unit as ninja install
# puts it, checked by systemd's own tools.
#   - DESTDIR install into a temporary root: the unit, the options file in
#     /etc/netreduce (mode 0600, never over one that is there; the folder
#     0750), the sysusers.d file, the dashboard;
#   - the service user: systemd-sysusers, on a scratch root, makes of the
#     installed sysusers.d file the user and the group the unit's User= and
#     Group= name (netreduce, not root);
#   - the capabilities: AmbientCapabilities= the same set as
#     CapabilityBoundingSet= (the user holds what the unit allows, no more),
#     none but what DPDK needs (NR_UNIT_CAPS: CAP_IPC_LOCK CAP_NET_ADMIN
#     CAP_NET_RAW), never CAP_SYS_ADMIN;
#   - systemd-analyze verify: no message at all (it exits 0 on a directive
#     it ignores, so any output fails), with ExecStart on the installed binary;
#   - systemd-analyze security --offline: systemd's own reading of the
#     unit: a static non-root user, CAP_SYS_ADMIN out of the bounding set;
#     the exposure score, printed with what it counts against the unit; over
#     3.5 fails (a hardening lost).
# Exit 0 pass, 1 fail, 77 skip (no systemd-analyze: the systemd package).
set -euo pipefail

build=$(cd "${1:?usage: check_unit.sh BUILD_DIR}" && pwd)
max=${NR_UNIT_MAX_EXPOSURE:-3.5}
caps=${NR_UNIT_CAPS:-CAP_IPC_LOCK CAP_NET_ADMIN CAP_NET_RAW}
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
[ "$(stat -c %a "$(dirname "$conf")")" = 750 ] || fail "$(dirname "$conf"): expected mode 750"
grep -q "^EnvironmentFile=${conf#"$root"}$" "$unit" || fail "the unit does not read ${conf#"$root"}"
sysusers=$(find "$root" -name netreduce.conf -path '*/lib/sysusers.d/*' | head -1)
[ -n "$sysusers" ] || fail "ninja install put no netreduce.conf under lib/sysusers.d"
echo "installed: ${unit#"$root"}, ${conf#"$root"}, ${sysusers#"$root"}"
# an admin's options are kept on the next install
echo "# mine" >> "$conf"
DESTDIR=$root meson install -C "$build" --no-rebuild --quiet > /dev/null 2>&1
tail -n 1 "$conf" | grep -q '^# mine$' || fail "ninja install overwrote an edited $conf"

# the user: what systemd-sysusers makes of the installed file, on a scratch root
mkdir -p "$root/sysroot/etc"
out=$(systemd-sysusers --root="$root/sysroot" "$sysusers" 2>&1) ||
	{ echo "$out"; fail "systemd-sysusers ${sysusers#"$root"} failed"; }
user=$(sed -n 's/^User=//p' "$unit")
group=$(sed -n 's/^Group=//p' "$unit")
[ -n "$user" ] && [ "$user" != root ] && [ "$user" != 0 ] ||
	fail "User=${user:-(none)}: the box runs as root; expected its own user (netreduce)"
pw=$(grep "^$user:" "$root/sysroot/etc/passwd" || true)
[ -n "$pw" ] || fail "User=$user: ${sysusers#"$root"} makes no such user"
[ "$(cut -d: -f7 <<< "$pw")" = /usr/sbin/nologin ] || fail "user $user has a shell: $pw"
gid=$(grep "^$group:" "$root/sysroot/etc/group" | cut -d: -f3 || true)
[ -n "$group" ] && [ -n "$gid" ] || fail "Group=${group:-(none)}: ${sysusers#"$root"} makes no such group"
[ "$(cut -d: -f4 <<< "$pw")" = "$gid" ] || fail "user $user's primary group is not $group"
echo "user: User=$user Group=$group, made by systemd-sysusers of ${sysusers#"$root"}: $pw"

# the capabilities: the ambient set is the bounding set, both within what
# DPDK needs ($caps) and without CAP_SYS_ADMIN
capset() {
	sed -n "s/^$1=//p" "$unit" | tr ' ' '\n' | { grep . || true; } | sort -u | tr '\n' ' ' | sed 's/ $//'
}
bound=$(capset CapabilityBoundingSet)
ambient=$(capset AmbientCapabilities)
[ -n "$bound" ] || fail "no CapabilityBoundingSet=: the box would hold every capability"
[[ $bound != *'~'* ]] || fail "CapabilityBoundingSet=$bound: a deny list; expected the allowed ones"
[ "$ambient" = "$bound" ] || fail "AmbientCapabilities=${ambient:-(none)} is not" \
	"CapabilityBoundingSet=$bound: the user would lack what the unit allows, or get more"
for c in $bound; do
	[ "$c" = CAP_SYS_ADMIN ] && fail "$c in the unit: the default box must not hold it (uio's drop-in adds it)"
	[[ " $caps " == *" $c "* ]] || fail "$c in the unit: DPDK's default setups need only $caps (NR_UNIT_CAPS)"
done
echo "capabilities: ambient = bounding = $bound"

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
grep -q '✓ User=/DynamicUser=' <<< "$out" || fail "systemd-analyze security: the service runs as root"
grep -q '✓ CapabilityBoundingSet=~CAP_SYS_ADMIN' <<< "$out" ||
	fail "systemd-analyze security: CAP_SYS_ADMIN is in the bounding set"
echo "systemd-analyze security: exposure $score (0 safe .. 10 unsafe; fails over $max)"
awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }' ||
	fail "exposure $score over $max: a hardening directive was lost"
echo "PASS: deploy/unit: installed, user $user, ambient = bounding capabilities, verified clean, exposure $score"
