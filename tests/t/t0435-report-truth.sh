#!/bin/bash
# What report says is true, and perf's spellings mean what they mean in
# perf. On a recording with recursion and an inlined function
# (recurse_inline, -g) next to another process (sym_chain): every function's callee
# tree root has the Total and Self that --children gives it (Self of the
# sampled function non-zero); a non-numeric --pid is refused with one
# line; a filter that matches nothing says so on stderr (exit 0); with
# --comm the header states the samples the filter kept (what percentages
# are of) and all the samples kept; --stdio, -n (flat views),
# --no-children, -g (the caller tree) and the sort keys dso and sym give the same output as the
# spelling without them. Every check runs and the failures are listed
# together.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload recurse_inline)
O=$(build_workload sym_chain)
F=$TMP/truth.data
C=recurse_inline
fails=()
fail() {
	fails+=("$*")
	echo "$TEST_NAME: check failed: $*" >&2
}

# the workload, and a second process that --comm leaves out
expect_exit 0 "$DCPROF" record -g -o "$F" -- \
	sh -c '"$1" 3 & "$2" 1.5; wait' sh "$W" "$O"

# report ARGS...: run report on $F into $TMP/out, $TMP/err, $TMP/rc
report() {
	"$DCPROF" report -i "$F" "$@" >"$TMP/out" 2>"$TMP/err"
	echo $? >"$TMP/rc"
}

# 1. the callee tree against --children, every function
report --format json --tree callee --comm $C
cp "$TMP/out" "$TMP/callee.json"
report --format json --children --sort symbol --comm $C
cp "$TMP/out" "$TMP/children.json"
python3 - "$TMP/callee.json" "$TMP/children.json" <<'PY' ||
import json, sys
tree = json.load(open(sys.argv[1]))
ch = json.load(open(sys.argv[2]))
assert tree["total"] == ch["total"] and ch["total"] >= 1500, \
    "totals %s, %s" % (tree["total"], ch["total"])
roots = {}
for r in tree["tree"]["roots"]:
    if not r["inline"]:
        t = roots.setdefault(r["name"], [0, 0])
        t[0] += r["samples"]
        t[1] += r["self"]
rows = {r["symbol"]: (r["children"], r["samples"]) for r in ch["rows"]}
bad = ["%s: callee tree %s, --children %s" % (s, roots.get(s), v)
       for s, v in sorted(rows.items()) if tuple(roots.get(s, (0, 0))) != v]
assert not bad, "Total/Self differ: " + "; ".join(bad[:6])
assert set(roots) == set(rows), "roots %s" % sorted(set(roots) ^ set(rows))
for fn in ("main", "descend", "leaf_spin"):
    assert fn in rows, "no %s" % fn
# recursion counted once per sample; the leaf's Self is its own time
assert rows["descend"][0] <= tree["total"]
assert rows["leaf_spin"][1] >= 0.3 * tree["total"], rows["leaf_spin"]
assert rows["descend"][1] >= 0.15 * tree["total"], rows["descend"]
inl = [r for r in tree["tree"]["roots"] if r["inline"] and r["name"] == "burn"]
assert inl and inl[0]["self"] >= 0.5 * tree["total"], "burn: %s" % inl[:1]
print("callee tree: %d functions agree with --children" % len(rows))
PY
	fail "the callee tree does not agree with --children"
report --tree callee --comm $C
grep -Eq '^ +[0-9.]+% +[1-9][0-9.]*%  leaf_spin$' "$TMP/out" ||
	fail "the text callee tree gives leaf_spin no Self: $(grep leaf_spin "$TMP/out" | head -3)"

# 2. a pid that is not a number
report --pid abc
[ "$(cat "$TMP/rc")" = 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -q "^dcprof: .*'abc'" "$TMP/err" ||
	fail "--pid abc: exit $(cat "$TMP/rc"), stderr '$(head -c 300 "$TMP/err")'"

# 3. a filter that matches nothing
for filter in "--comm no_such_comm" "--pid 999999999" "--symbol no_such_fn"; do
	report $filter
	[ "$(cat "$TMP/rc")" = 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "^dcprof: warning: no sample matches" "$TMP/err" ||
		fail "$filter: exit $(cat "$TMP/rc"), stderr '$(head -c 300 "$TMP/err")'"
done

# 4. the header's two totals with --comm
report --format json --comm $C
cp "$TMP/out" "$TMP/comm.json"
report --comm $C
total=$(json_get "$TMP/comm.json" 'd["total"]')
kept=$(json_get "$TMP/comm.json" 'd["stats"]["samples_kept"]')
unf=$(json_get "$TMP/comm.json" 'd.get("unfiltered_total")')
[ "$unf" = "$kept" ] && [ "$total" -lt "$kept" ] ||
	fail "JSON: total $total, unfiltered_total $unf, samples_kept $kept"
grep -qx "# filtered (--comm): $total of the $kept samples kept match; percentages are of the $total" \
	"$TMP/out" || fail "the text header does not state $total of $kept: $(head -8 "$TMP/out")"

# 5. perf's spellings: the same output as without them
alias_pair() {
	local what=$1 a=$2 b=$3
	report $a
	cp "$TMP/out" "$TMP/a"
	echo "$(cat "$TMP/rc")" >"$TMP/rc-a"
	report $b
	[ "$(cat "$TMP/rc-a")" = 0 ] && [ "$(cat "$TMP/rc")" = 0 ] &&
		cmp -s "$TMP/a" "$TMP/out" ||
		fail "$what: '$a' and '$b' differ or fail: $(head -c 200 "$TMP/err")"
}
alias_pair "sort key dso" "--sort dso" "--sort file"
alias_pair "sort key sym" "--sort sym --children" "--sort symbol --children"
alias_pair "sort keys dso,sym" "--sort comm,dso,sym --format json" \
	"--sort comm,file,symbol --format json"
alias_pair "--stdio" "--stdio --tree caller" "--tree caller"
alias_pair "-n (flat)" "-n" ""
alias_pair "--no-children" "--no-children" ""
alias_pair "--children --no-children" "--children --no-children" ""
alias_pair "-g" "-g" "--tree caller"
# -n in a tree: a Samples column, the JSON's samples
n=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([r["samples"] for r in d["tree"]["roots"]
       if r["name"] == "leaf_spin" and not r["inline"]][0])' \
	"$TMP/callee.json" 2>/dev/null) || n=none
report -n --tree callee --comm $C
grep -Eq '^ +Total +Self +Samples  Function$' "$TMP/out" &&
	grep -Eq "^ +[0-9.]+% +[0-9.]+% +$n  leaf_spin$" "$TMP/out" ||
	fail "-n: the tree has no Samples column ($n for leaf_spin): $(sed -n '9,12p' "$TMP/out")"

[ ${#fails[@]} -eq 0 ] || die "${#fails[@]} checks failed: $(printf '%s; ' "${fails[@]}")"
pass
