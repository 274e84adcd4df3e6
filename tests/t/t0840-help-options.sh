#!/bin/bash
# Every command's --help lists exactly the options its getopt table
# accepts (both ways: no option accepted but undocumented, none documented
# but refused), read from each command's source (t08-optable.inc); t0820
# then holds the man page to --help. A command without a source file of
# its own fails the test.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/t08-help.inc"
. "$(dirname "$0")/t08-optable.inc"
need python3

checked=0
for cmd in $(help_commands); do
	src=$TOP/src/cmd/$cmd.c
	[ -e "$src" ] || die "'$cmd' has no source file src/cmd/$cmd.c"
	options_of_source "$src" >"$TMP/table" ||
		die "cannot read the option table of '$src'"
	help_options "$cmd" >"$TMP/help"
	if ! diff -u "$TMP/table" "$TMP/help" >"$TMP/diff"; then
		die "'dcprof $cmd --help' and its option table disagree (- table, + help): $(grep -E '^[-+]' "$TMP/diff" | grep -vE '^(---|\+\+\+) ' | tr '\n' ' ')"
	fi
	echo "$cmd: $(wc -l <"$TMP/table") options, --help lists the same"
	checked=$((checked + 1))
done
[ "$checked" -ge 9 ] || die "only $checked commands checked"
pass
