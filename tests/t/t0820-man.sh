#!/bin/bash
# The man page docs/man/dcprof.1 against the binary: a section for every
# command `dcprof --help` lists and no other, each listing exactly the
# options `dcprof COMMAND --help` prints (read from the page's source, so
# this part needs no man); then `man -l` renders it without a warning.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/t08-help.inc"

PAGE=$TOP/docs/man/dcprof.1
[ -f "$PAGE" ] || die "no man page at '$PAGE'"

# man_commands: the commands of the page's ".SS "dcprof CMD"" sections.
man_commands() {
	sed -n 's/^\.SS "dcprof \([a-z][a-z-]*\)"$/\1/p' "$PAGE"
}

# man_options CMD: the options of the .TP entries in CMD's section: the
# words of each entry's tag line that start with a dash, roff's \- read
# as -, a metavariable's \fI...\fR and the quotes left out.
man_options() {
	awk -v want="$1" '
		/^\.S[SH] / { in_cmd = ($0 == ".SS \"dcprof " want "\"") }
		in_cmd && tag { tag = 0
			gsub(/\\-/, "-"); gsub(/\\f[IRB]/, " "); gsub(/"/, " ")
			for (i = 2; i <= NF; i++) {
				w = $i; sub(/,$/, "", w)
				if (w ~ /^--?[A-Za-z0-9]/) print w
			}
		}
		in_cmd && /^\.TP/ { tag = 1 }
	' "$PAGE" | LC_ALL=C sort -u
}

help_commands | LC_ALL=C sort >"$TMP/help-commands"
man_commands | LC_ALL=C sort >"$TMP/man-commands"
diff -u "$TMP/help-commands" "$TMP/man-commands" >"$TMP/diff" ||
	die "the man page's commands differ from dcprof --help's (- help, + man):
$(cat "$TMP/diff")"
[ -s "$TMP/help-commands" ] || die "dcprof --help lists no command"

for cmd in $(help_commands); do
	help_options "$cmd" >"$TMP/help-$cmd"
	man_options "$cmd" >"$TMP/man-$cmd"
	[ -s "$TMP/help-$cmd" ] || die "dcprof $cmd --help lists no option"
	diff -u "$TMP/help-$cmd" "$TMP/man-$cmd" >"$TMP/diff" ||
		die "options of '$cmd' differ between --help (-) and the man page (+):
$(cat "$TMP/diff")"
done
# The general options: --version and --help, as `dcprof --help` shows.
for o in --version --help; do
	"$DCPROF" --help | head -1 | grep -q -- "\[$o\]" ||
		die "dcprof --help's usage line does not show [$o]"
	grep -q "^\.B[R]* .*${o//-/\\\\-}" "$PAGE" || die "the man page does not describe $o"
done
echo "$TEST_NAME: $(wc -l <"$TMP/help-commands") commands and their options agree"

# Rendering, when man is there (man-db, groff-base): a rendered page with
# every command's section and no warning from groff (-ww: all of them).
if ! command -v man >/dev/null 2>&1; then
	[ -z "${CI:-}" ] || die "'man' is not installed under CI (man-db and groff-base)"
	skip_part "'man' is not installed (apt-get install man-db groff-base): the page is not rendered"
	pass
fi
MANWIDTH=80 MAN_KEEP_FORMATTING= MANROFFOPT=-ww man -l "$PAGE" \
	>"$TMP/rendered" 2>"$TMP/warnings" || die "man -l failed: $(head -c 500 "$TMP/warnings")"
[ ! -s "$TMP/warnings" ] || die "man -l warns: $(head -c 500 "$TMP/warnings")"
grep -q '^NAME' "$TMP/rendered" || die "the rendered page has no NAME section"
for cmd in $(help_commands); do
	grep -q "^   dcprof $cmd\$" "$TMP/rendered" ||
		die "the rendered page has no section for '$cmd'"
done
pass
