# bash completion of netreducectl (installed as
# share/bash-completion/completions/netreducectl): the words come from
# netreducectl --complete, which reads its own command table.
_netreducectl() {
	local cur=${COMP_WORDS[COMP_CWORD]} words=() i
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --connect | --token | --key | --count | --name | --tls-ca) ((i++)) ;;
		-*) ;;
		*) words+=("${COMP_WORDS[i]}") ;;
		esac
	done
	mapfile -t COMPREPLY < <("${COMP_WORDS[0]}" --complete "${words[@]}" "$cur" 2>/dev/null)
}
complete -F _netreducectl netreducectl
