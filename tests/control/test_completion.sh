#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# netreducectl's bash completion (control/cli/netreducectl.bash) as a shell
# runs it: COMP_WORDS set as bash would, the function called, COMPREPLY read.
# Usage: test_completion.sh NETREDUCECTL SCRIPT
set -euo pipefail
ctl=$1
# shellcheck source=/dev/null
source "$2"
fails=0
expect() { # expect "WANT" WORD...: the words after netreducectl, the last being typed
	local want=$1
	shift
	COMP_WORDS=("$ctl" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_netreducectl
	if [ "${COMPREPLY[*]}" != "$want" ]; then
		echo "FAIL: netreducectl $* <TAB>: got '${COMPREPLY[*]}', want '$want'"
		fails=$((fails + 1))
	else
		echo "ok: netreducectl $* <TAB>: $want"
	fi
}
expect "jobs job stats backend health static" ""
expect "stats static" st
expect "create show destroy" job ""
expect "add remove" --socket /run/x.sock static ""
expect "remove" --json static r
expect "--socket" --so
expect "" job show ""
[ "$fails" = 0 ] || exit 1
echo "PASS: netreducectl completion"
