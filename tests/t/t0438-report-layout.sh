#!/bin/bash
# report's layout (issue 19, item 6) and its --help against its option
# table (item 8), on a recording of two processes, sym_chain from a long
# path and split:
# - text trees (--tree caller and callee) have a level of process names at
#   the root: each leaf sits under its own process; --no-process merges
#   them (no process rows, no root twice);
# - the flat view's columns are as wide as their longest cell and each
#   name of the header starts (numbers: ends) where its column does; a path
#   over 40 characters is shortened to ".../" and its last components,
#   --full-path prints it whole;
# - JSON says how many rows --limit left out ("left_out"), flat and tree;
# - `report --help` lists exactly the options of report's getopt table
#   (read from src/cmd/report.c, with the shared ones of read_opts.h).
# Every check runs and the failures are listed together.
. "$(dirname "$0")/test-lib.sh"
. "$(dirname "$0")/t08-help.inc"
. "$(dirname "$0")/t08-optable.inc"
need gcc python3
need_perf_events

LONG=$TMP/a-directory-with-a-rather-long-name/and-another-level-below-it
mkdir -p "$LONG"
S=$(build_workload sym_chain)
mv "$S" "$LONG/sym_chain"
S=$LONG/sym_chain
P=$(build_workload split)
F=$TMP/layout.data
fails=()
fail() {
	fails+=("$*")
	echo "$TEST_NAME: check failed: $*" >&2
}
report() {
	"$DCPROF" report -i "$F" "$@" >"$TMP/out" 2>"$TMP/err"
	echo $? >"$TMP/rc"
	[ "$(cat "$TMP/rc")" = 0 ] ||
		fail "report $* exited $(cat "$TMP/rc"): $(head -c 300 "$TMP/err")"
}

expect_exit 0 "$DCPROF" record -g -o "$F" -- \
	sh -c '"$1" 1.5 & "$2" 1.5; wait' sh "$S" "$P"

# tree_check FILE MODE: the text tree's nodes by indentation; MODE process:
# the leaves under their own process; merged: no process rows, roots once
tree_check() {
	python3 - "$1" "$2" <<'PY'
import re, sys
mode = sys.argv[2]
rows = []
for line in open(sys.argv[1]):
    m = re.match(r'^ +[0-9.]+% +[0-9.]+%  ( *)(.*)$', line.rstrip("\n"))
    if m:
        rows.append((len(m.group(1)) // 2, m.group(2)))
assert rows, "no tree rows"
stack, under = [], {}
for depth, name in rows:
    stack[depth:] = [name]
    under.setdefault(name, set()).add(stack[0])
roots = [n for d, n in rows if d == 0]
procs = [n for d, n in rows if n.endswith(" (process)")]
if mode == "process":
    assert set(roots) == {"sym_chain (process)", "split (process)"}, roots
    for leaf, proc in (("leaf_sixty", "sym_chain"), ("work_fifty", "split")):
        assert under.get(leaf) == {proc + " (process)"}, (leaf, under.get(leaf))
else:
    assert not procs, procs
    assert len(roots) == len(set(roots)), roots
print("tree (%s): %d rows, roots %s" % (mode, len(rows), roots[:4]))
PY
}

# 1. the process level, and --no-process
for order in caller callee; do
	report --tree $order --percent-limit 1
	tree_check "$TMP/out" process ||
		fail "--tree $order has no process level: $(sed -n '9,16p' "$TMP/out")"
	report --tree $order --percent-limit 1 --no-process
	tree_check "$TMP/out" merged ||
		fail "--tree $order --no-process: $(sed -n '9,16p' "$TMP/out")"
done

# 2. columns under their names; the long path shortened, or in full
report --sort pid,comm,file,symbol
cp "$TMP/out" "$TMP/flat.txt"
report --sort pid,comm,file,symbol --full-path
cp "$TMP/out" "$TMP/full.txt"
python3 - "$TMP/flat.txt" "$TMP/full.txt" "$S" <<'PY' || fail "the flat view's columns are not aligned: $(sed -n '7,10p' "$TMP/flat.txt")"
import sys
def table(path):
    lines = [l.rstrip("\n") for l in open(path) if not l.startswith("#")]
    return lines[0], lines[1:]
for path, long_path in ((sys.argv[1], False), (sys.argv[2], True)):
    head, rows = table(path)
    assert rows, "no rows"
    starts = {k: head.index("  " + k + " ") + 2 for k in ("comm", "file")}
    starts["symbol"] = head.index("  symbol") + 2
    pid_end = head.index(" pid ") + 4
    for r in rows:
        assert r[pid_end - 1].isdigit() and r[pid_end] == " ", (head, r)
        for k, at in starts.items():
            assert r[at - 2:at] == "  " and r[at] != " ", (k, head, r)
    mine = [r for r in rows if "sym_chain" in r and "leaf_sixty" in r]
    assert mine, "no leaf_sixty row"
    cell = mine[0][starts["file"]:starts["symbol"]].strip()
    if long_path:
        assert cell == sys.argv[3], cell
    else:
        assert len(sys.argv[3]) > 40 and cell.startswith(".../") and \
            sys.argv[3].endswith(cell[3:]) and len(cell) <= 40, cell
print("columns aligned, the long path as %r" % cell)
PY

# 3. what --limit left out, in JSON
report --format json --sort symbol
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["rows"]))' "$TMP/out" 2>/dev/null) || n=0
report --format json --sort symbol --limit 2
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
assert len(d["rows"]) == 2 and d["left_out"] == int(sys.argv[2]) - 2, d.get("left_out")' \
	"$TMP/out" "$n" 2>/dev/null || fail "flat JSON: no left_out of $n - 2"
report --format json --tree callee
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["tree"]["roots"]))' "$TMP/out" 2>/dev/null) || n=0
report --format json --tree callee --limit 3
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))["tree"]
assert len(d["roots"]) == 3 and d["left_out"] == int(sys.argv[2]) - 3, d.get("left_out")' \
	"$TMP/out" "$n" 2>/dev/null || fail "tree JSON: no left_out of $n - 3"

# 4. --help against the getopt table
options_of_source "$TOP/src/cmd/report.c" >"$TMP/table"
help_options report >"$TMP/help"
diff "$TMP/table" "$TMP/help" >"$TMP/d" ||
	fail "report --help and its option table differ (< table, > help): $(tr '\n' ' ' <"$TMP/d")"

[ ${#fails[@]} -eq 0 ] || die "${#fails[@]} checks failed: $(printf '%s; ' "${fails[@]}")"
pass
