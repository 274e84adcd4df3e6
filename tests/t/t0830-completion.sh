#!/bin/bash
# The bash completion completion/dcprof.bash, sourced in a fresh bash and
# asked as bash would ask it (COMP_WORDS, COMP_CWORD, _dcprof): it offers
# exactly the commands `dcprof --help` lists, and after a command and "-"
# exactly the options `dcprof COMMAND --help` prints (and --help); values
# for --format, --kind and --tree, --sort's keys not given yet; files
# after -i; annotate's sampled functions; the profiled command's name
# after "record --" and "top --".
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/t08-help.inc"

COMPLETION=$TOP/completion/dcprof.bash
[ -f "$COMPLETION" ] || die "no bash completion at '$COMPLETION'"

# complete WORD...: what _dcprof offers for the last word, one a line,
# sorted (bash -c: nothing of this shell leaks into it).
complete_words() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(( $# - 1 ))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_dcprof dcprof "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}" || exit 1
		printf "%s\n" "${COMPREPLY[@]}"
	' complete "$COMPLETION" "$@" | LC_ALL=C sort -u
}

# The complete -F registration itself.
bash --norc --noprofile -c '. "$1" && complete -p dcprof' x "$COMPLETION" \
	>"$TMP/reg" 2>&1 || die "sourcing the completion registers nothing: $(cat "$TMP/reg")"
grep -q -- '-F _dcprof dcprof' "$TMP/reg" || die "unexpected registration: $(cat "$TMP/reg")"

help_commands | LC_ALL=C sort >"$TMP/help-commands"
complete_words dcprof "" >"$TMP/comp-commands"
diff -u "$TMP/help-commands" "$TMP/comp-commands" >"$TMP/diff" ||
	die "completed commands differ from dcprof --help's (- help, + completion):
$(cat "$TMP/diff")"
[ "$(complete_words dcprof rep)" = report ] || die "'rep' does not complete to report"

for cmd in $(help_commands); do
	{ help_options "$cmd"; echo --help; } | LC_ALL=C sort -u >"$TMP/help-$cmd"
	complete_words dcprof "$cmd" - >"$TMP/comp-$cmd"
	diff -u "$TMP/help-$cmd" "$TMP/comp-$cmd" >"$TMP/diff" ||
		die "options of '$cmd' differ between --help (-) and the completion (+):
$(cat "$TMP/diff")"
	# every option there, also after other words
	complete_words dcprof "$cmd" -i x - | cmp -s - "$TMP/comp-$cmd" ||
		die "'$cmd' completes other options after '-i x'"
done

want() {
	local w=$1
	shift
	[ "$(complete_words "$@" | tr '\n' ' ')" = "$w " ] ||
		die "'$*' completes to '$(complete_words "$@" | tr '\n' ' ')', want '$w'"
}
want "json text" dcprof report --format ""
want "folded otlp pprof" dcprof export --format ""
want "html svg" dcprof flamegraph --format ""
want "maps tasks" dcprof collect --kind ""
want "callee caller" dcprof report --tree ""
want "comm,file" dcprof report -s comm,f
# a key already given is not offered again (it offered comm,comm)
want "comm,cgroup comm,container comm,file comm,pid comm,pod comm,process comm,symbol comm,tid comm,unit" dcprof report --sort comm,
want "pid,tid,cgroup pid,tid,comm pid,tid,container pid,tid,file pid,tid,pod pid,tid,process pid,tid,symbol pid,tid,unit" dcprof report --sort pid,tid,
touch "$TMP/prof-a.data" "$TMP/prof-b.data"
want "$TMP/prof-a.data $TMP/prof-b.data" dcprof report -i "$TMP/prof-"
want "$TMP/prof-a.data" dcprof flamegraph --diff "$TMP/prof-b.data" "$TMP/prof-a"
# annotate's SYMBOL: the profile's sampled functions (it offered files)
P=$TOP/tests/fuzz/corpus/fuzz_profile_read/compact-g.data
"$DCPROF" report -i "$P" --sort symbol --no-demangle --limit 500 |
	sed -n 's/^ *[0-9]* *[0-9.]*%  \[[.k]\] \(__s[^ []*\)$/\1/p' |
	LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//' >"$TMP/syms"
[ -s "$TMP/syms" ] || die "no __s symbol in $P"
PATH=$BUILD:$PATH want "$(cat "$TMP/syms")" dcprof annotate -i "$P" __s
echo "annotate -i $(basename "$P") __s<TAB>: $(cat "$TMP/syms")"
complete_words dcprof record -g -- bas | grep -qx bash ||
	die "'record -g -- bas' does not offer the command bash"
complete_words dcprof top --stdio -- bas | grep -qx bash ||
	die "'top --stdio -- bas' does not offer the command bash"
echo "$TEST_NAME: $(wc -l <"$TMP/help-commands") commands and their options complete"
pass
