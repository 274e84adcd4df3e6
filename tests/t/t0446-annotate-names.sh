#!/bin/bash
# annotate takes the names a user types for C++ functions (issue 41:
# "annotate heavy" said "no samples" when only ns::Calc<double>::heavy(int)
# existed): on sym_cxx (shapes::Box<int>::spin, shapes::Box<double>::spin,
# mycrate::spin, a third of the time each), "Box<int>::spin" annotates the
# one function, "spin" all three, each with its samples; a name that
# matches none ("spn", "Box") fails with one line listing the closest
# sampled functions.
# Calls are named as objdump names them (issue 41: "call 0x1030"): in
# plt_calls' main, every direct call's target in <> is objdump's, PLT stubs
# included (labs@plt, ffs@plt, through their GOT slot's relocation).
# Kernel functions: t0447.
. "$(dirname "$0")/test-lib.sh"
need g++ python3 objdump
need_perf_events

W=$TMP/sym_cxx
g++ -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$W" \
	"$TOP/tests/workloads/sym_cxx.cc" || die "cannot build sym_cxx"
F=$TMP/cxx.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$W" 1.5

names() { # NAME: the functions annotate NAME shows, "symbol samples" a line
	expect_exit 0 "$DCPROF" annotate "$1" -i "$F" --format json
	python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["functions"]:
    print("%s\t%d" % (f["symbol"], f["samples"]))' "$TMP/out" | sort
}
names 'Box<int>::spin' >"$TMP/box-int"
names spin >"$TMP/spin"
echo "Box<int>::spin: $(tr '\t\n' ' ;' <"$TMP/box-int")"
echo "spin: $(tr '\t\n' ' ;' <"$TMP/spin")"
[ "$(cut -f1 "$TMP/box-int")" = "shapes::Box<int>::spin(unsigned long)" ] ||
	die "Box<int>::spin does not annotate shapes::Box<int>::spin(unsigned long)"
[ "$(cut -f1 "$TMP/spin" | tr '\n' ';')" = "mycrate::spin;shapes::Box<double>::spin(unsigned long);shapes::Box<int>::spin(unsigned long);" ] ||
	die "spin does not annotate the three functions named spin"
awk -F'\t' '$2 < 100 { exit 1 }' "$TMP/spin" ||
	die "a function named spin has under 100 samples (a third of 1.5 s at 999 Hz)"

for typed in spn Box; do
	expect_exit 1 "$DCPROF" annotate "$typed" -i "$F"
	one_line_error
	echo "$typed: $(cat "$TMP/err")"
	grep -q "the closest sampled functions: .*'shapes::Box<int>::spin(unsigned long)'" "$TMP/err" ||
		die "annotate $typed does not list the closest functions"
done

# --- call targets ----------------------------------------------------------
P=$(build_workload plt_calls -fno-builtin)
F=$TMP/plt.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$P" 1
expect_exit 0 "$DCPROF" annotate main -i "$F"
# (a sampled instruction's line begins with its percent and samples)
sed -n 's/^ *\([0-9.]*% *[0-9]* *\)\{0,1\}\([0-9a-f]*\):  call 0x[0-9a-f]* <\(.*\)>$/\2 \3/p' "$TMP/out" |
	sort -u >"$TMP/ours"
objdump -d --no-show-raw-insn "$P" |
	sed -n 's/^ *\([0-9a-f]*\):[[:space:]]*call *[0-9a-f]* <\(.*\)>$/\1 \2/p' |
	sort -u >"$TMP/objdump"
echo "calls in main: $(tr '\n' ';' <"$TMP/ours")"
grep -q ' labs@plt$' "$TMP/ours" && grep -q ' ffs@plt$' "$TMP/ours" ||
	die "annotate does not name the PLT calls: $(grep call "$TMP/out" | head -5)"
# every call of main that annotate names, objdump names alike
join "$TMP/ours" "$TMP/objdump" | awk '$2 != $3 { bad = 1; print } END { exit bad }' ||
	die "annotate names a call otherwise than objdump"
[ "$(join "$TMP/ours" "$TMP/objdump" | wc -l)" -eq "$(wc -l <"$TMP/ours")" ] ||
	die "a call annotate names is not one objdump names: $(cat "$TMP/ours")"
pass
