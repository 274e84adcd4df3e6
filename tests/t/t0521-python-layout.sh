#!/bin/bash
# The CPython layouts the Python walk reads by (lib/record/bpf/
# python_layout.c): every offset of the 3.11 entry equal to what gdb says
# of the same field in Debian's python3.11 debug info (python3.11-dbg),
# found by the interpreter's build id; the table's expressions are the
# comments above its fields.
. "$(dirname "$0")/test-lib.sh"
need gdb python3
PY=/usr/bin/python3.11
[ -x "$PY" ] || { [ -z "${CI:-}" ] || die "no $PY under CI"; skip "no $PY"; }
id=$(readelf -n "$PY" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || die "$PY has no build id"
[ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ [ -z "${CI:-}" ] || die "no debug info for $PY under CI (python3.11-dbg)"
	  skip "no debug info for $PY (apt-get install python3.11-dbg)"; }

# the 3.11 entry's "gdb: EXPR" comments and the values below them
python3 - "$TOP/lib/record/bpf/python_layout.c" >"$TMP/fields" <<'PY' ||
import re, sys
text = open(sys.argv[1]).read()
entry = text[text.index('.version = "3.11"'):]
entry = entry[:entry.index("},")]
pairs = re.findall(r"/\* gdb: (.*?) \*/\s*\.(\w+) = (\d+),", entry)
assert len(pairs) >= 20, "only %d fields found" % len(pairs)
for expr, field, value in pairs:
    print("%s\t%s\t%s" % (field, value, expr))
PY
	die "cannot read the layout table"

{
	echo "set max-value-size unlimited"
	while IFS=$'\t' read -r field value expr; do
		echo "printf \"$field %ld\\n\", (long)($expr)"
	done <"$TMP/fields"
} >"$TMP/gdb.cmd"
timeout 120 gdb -batch -nx -x "$TMP/gdb.cmd" "$PY" >"$TMP/gdb.out" 2>"$TMP/gdb.err" ||
	die "gdb failed: $(tail -5 "$TMP/gdb.err")"

n=0
while IFS=$'\t' read -r field value expr; do
	got=$(awk -v f="$field" '$1 == f { print $2 }' "$TMP/gdb.out")
	[ -n "$got" ] || die "gdb gave nothing for $field ($expr): $(tail -3 "$TMP/gdb.err")"
	[ "$got" = "$value" ] ||
		die "$field is $value in the table, $got in the debug info ($expr)"
	n=$((n + 1))
done <"$TMP/fields"
echo "t0521-python-layout: $n fields of 3.11 match the debug info"
pass
