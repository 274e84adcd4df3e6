#!/bin/bash
# The CPython layouts the Python walk reads by (lib/record/bpf/
# python_layout.c):
#  - the table: every field of an entry equal to what gdb says of the same
#    question (a member's offset, a type's size, an enumerator: the
#    MEMBER, SIZE and ENUMERATOR lines of the table) in that version's
#    debug info -- 3.11's in Debian's python3.11-dbg (found by the
#    interpreter's build id), 3.12's and 3.13's in pyenv's 3.12.1 and
#    3.13.0 builds where they are installed;
#  - the recorder's own reading of that debug info (lib/symbols/
#    dwarf_types.c; tests/unit/test_python.c compares it with the table
#    field by field): record -v of each interpreter says its layout came
#    from the debug info, with no field where it disagrees with the table,
#    and names the Python frames;
#  - a copy of Debian's interpreter without debug info and with another
#    build id: its layout from the table for 3.11, its frames named too.
. "$(dirname "$0")/test-lib.sh"
need gdb python3 strip
PY311=/usr/bin/python3.11

# check VERSION FILE: the entry of VERSION against FILE's debug info
check() {
	local version=$1 file=$2 n=0 field value expr got
	python3 - "$TOP/lib/record/bpf/python_layout.c" "$version" \
		>"$TMP/fields" <<'PY' || die "cannot read the $version layout"
import re, sys
text = open(sys.argv[1]).read()
name = "layout_%s[] = {" % sys.argv[2].replace(".", "_")
entry = text[text.index(name):]
entry = entry[:entry.index("};")]
lines = re.findall(r'\b(MEMBER|SIZE|ENUMERATOR)\(\s*(\w+),((?:\s*"[^"]*",)+)\s*(\d+)\)',
                   entry)
assert len(lines) >= 20, "only %d fields found" % len(lines)
assert len(lines) == len(re.findall(r"\b(?:MEMBER|SIZE|ENUMERATOR)\(", entry)), \
    "a field the test cannot read"
for kind, field, args, value in lines:
    args = re.findall(r'"([^"]*)"', args)
    if kind == "MEMBER":
        expr = "&((%s *)0)->%s" % (args[0], args[1])
    elif kind == "SIZE":
        expr = "sizeof(%s)" % args[0]
    else:
        expr = args[0]
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

cat >"$TMP/prog.py" <<'PY'
import time


def layout_spin():
    end = time.thread_time() + 0.4
    while time.thread_time() < end:
        pass


layout_spin()
PY

# record_layout NAME VERSION INTERPRETER FILE WHERE: prog.py recorded with
# -v; the layout of FILE (the interpreter file the recorder finds) said to
# come from WHERE ("the debug info of" or "the table for VERSION"), no
# field said to disagree, and the spinning function named
record_layout() {
	local name=$1 version=$2 py=$3 file=$4 where=$5 said
	expect_exit 0 "$DCPROF" record -v -g --backend bpf -o "$TMP/$name.data" \
		-- "$py" "$TMP/prog.py"
	said=$(grep -F "Python $version layout of '$file'" "$TMP/err")
	[ "$(printf '%s\n' "$said" | grep -c .)" -ge 1 ] ||
		die "$name: nothing said of the layout of $file: $(grep -i python "$TMP/err")"
	printf '%s\n' "$said" | grep -qF ": from $where" ||
		die "$name: the layout of $file is not from $where: $said"
	! printf '%s\n' "$said" | grep -q "gives" ||
		die "$name: the debug info and the table disagree: $said"
	[ "$(printf '%s\n' "$said" | grep -c ": from ")" -eq 1 ] ||
		die "$name: the layout of $file was said more than once: $said"
	"$DCPROF" export --format folded -i "$TMP/$name.data" >"$TMP/$name.folded" ||
		die "$name: cannot export the profile"
	grep -q ";layout_spin (prog.py)" "$TMP/$name.folded" ||
		die "$name: no Python frame named layout_spin: $(head -c 600 "$TMP/$name.folded")"
	echo "$TEST_NAME: $name: $(printf '%s\n' "$said" | sed 's/.*: from/from/'), Python frames named"
}

[ -x "$PY311" ] || { [ -z "${CI:-}" ] || die "no $PY311 under CI"; skip "no $PY311"; }
id=$(readelf -n "$PY311" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] || die "$PY311 has no build id"
[ -f "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ [ -z "${CI:-}" ] || die "no debug info for $PY311 under CI (python3.11-dbg)"
	  skip "no debug info for $PY311 (apt-get install python3.11-dbg)"; }
check 3.11 "$PY311"

bpf=yes
if [ "$(id -u)" -ne 0 ] ||
	! "$DCPROF" record --backend bpf --duration 0.3 -o "$TMP/probe.data" \
		>/dev/null 2>"$TMP/probe.err"; then
	[ -z "${CI:-}" ] || die "the BPF backend does not load under CI: $(cat "$TMP/probe.err")"
	skip_part "the recorder's layouts: the BPF backend does not load"
	bpf=
fi
if [ -n "$bpf" ]; then
	record_layout debian 3.11 "$PY311" "$PY311" "the debug info of '"
	# another file to the recorder, which finds no debug info for it
	cp "$PY311" "$TMP/python3.11"
	strip --strip-debug "$TMP/python3.11"
	python3 "$TOP/tests/tools/set_build_id.py" "$TMP/python3.11" "$TEST_NAME" ||
		die "cannot give the copy a build id of its own"
	[ "$(readelf -n "$TMP/python3.11" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')" != "$id" ] ||
		die "the copy kept the build id of $PY311"
	record_layout copy 3.11 "$TMP/python3.11" "$TMP/python3.11" \
		"the table for 3.11 (no debug info found)"
fi

for v in 3.12.1 3.13.0; do
	lib=/root/.pyenv/versions/$v/lib/libpython${v%.*}.so.1.0
	if [ -f "$lib" ]; then
		check "${v%.*}" "$lib"
		[ -z "$bpf" ] ||
			record_layout "pyenv-$v" "${v%.*}" \
				"/root/.pyenv/versions/$v/bin/python${v%.*}" "$lib" \
				"the debug info of '$lib'"
	else
		skip_part "no CPython $v at $lib"
	fi
done
pass
