#!/bin/bash
# The CPython layouts the Python walk reads by (lib/record/bpf/
# python_layout.c): every offset of an entry equal to what gdb says of the
# same field in that version's debug info -- 3.11's in Debian's
# python3.11-dbg (found by the interpreter's build id), 3.12's and 3.13's
# in pyenv's 3.12.1 and 3.13.0 builds where they are installed; the
# table's expressions are the comments above its fields.
. "$(dirname "$0")/test-lib.sh"
need gdb python3
PY311=/usr/bin/python3.11

# check VERSION FILE: the entry of VERSION against FILE's debug info
check() {
	local version=$1 file=$2 n=0 field value expr got
	python3 - "$TOP/lib/record/bpf/python_layout.c" "$version" \
		>"$TMP/fields" <<'PY' || die "cannot read the $version layout"
import re, sys
text = open(sys.argv[1]).read()
entry = text[text.index('.version = "%s"' % sys.argv[2]):]
entry = entry[:entry.index("},")]
pairs = re.findall(r"/\* gdb: (.*?) \*/\s*\.(\w+) = (\d+),", entry)
assert len(pairs) >= 20, "only %d fields found" % len(pairs)
for expr, field, value in pairs:
    print("%s\t%s\t%s" % (field, value, expr))
PY
	{
		echo "set max-value-size unlimited"
		while IFS=$'\t' read -r field value expr; do
			echo "printf \"$field %ld\\n\", (long)($expr)"
		done <"$TMP/fields"
	} >"$TMP/gdb.cmd"
	timeout 120 gdb -batch -nx -x "$TMP/gdb.cmd" "$file" >"$TMP/gdb.out" \
		2>"$TMP/gdb.err" || die "gdb failed on $file: $(tail -5 "$TMP/gdb.err")"
	while IFS=$'\t' read -r field value expr; do
		got=$(awk -v f="$field" '$1 == f { print $2 }' "$TMP/gdb.out")
		[ -n "$got" ] ||
			die "$version: gdb gave nothing for $field ($expr): $(tail -3 "$TMP/gdb.err")"
		[ "$got" = "$value" ] ||
			die "$version: $field is $value in the table, $got in the debug info ($expr)"
		n=$((n + 1))
	done <"$TMP/fields"
	echo "$TEST_NAME: $n fields of $version match the debug info of $file"
}

[ -x "$PY311" ] || { [ -z "${CI:-}" ] || die "no $PY311 under CI"; skip "no $PY311"; }
id=$(readelf -n "$PY311" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || die "$PY311 has no build id"
[ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ [ -z "${CI:-}" ] || die "no debug info for $PY311 under CI (python3.11-dbg)"
	  skip "no debug info for $PY311 (apt-get install python3.11-dbg)"; }
check 3.11 "$PY311"

for v in 3.12.1 3.13.0; do
	lib=/root/.pyenv/versions/$v/lib/libpython${v%.*}.so.1.0
	if [ -f "$lib" ]; then
		check "${v%.*}" "$lib"
	else
		skip_part "no CPython $v at $lib"
	fi
done
pass
