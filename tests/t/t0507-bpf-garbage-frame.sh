#!/bin/bash
# exclusive: wants 500 samples in 1 s of a workload that runs by the wall clock
# A frame-pointer chain that leads to a return address outside user space
# (the top bit set, as garbage in a broken chain often is), walked in the
# kernel by tables (-g: the function has no CFI, so its frame pointer is
# taken) and by frame pointers alone: the stack ends at a [truncated]
# marker, and no frame is read as one the kernel named (file, offset) --
# which the top bit marks -- with a cookie the profile does not describe.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_bpf_backend

BAD=$(build_workload bad_frame -O2)
spawn "$BAD" "$TMP/ready"
wait_file "$TMP/ready"
pid=$SPAWNED

for mode in -g "--call-graph fp"; do
	# shellcheck disable=SC2086 # the mode's words
	expect_exit 0 "$DCPROF" record --backend bpf $mode -p "$pid" \
		--duration 1 -o "$TMP/bad.data"
	expect_exit 0 "$DCPROF" report -i "$TMP/bad.data" --tree caller \
		--format json
	[ -s "$TMP/err" ] && die "report ($mode): $(cat "$TMP/err")"
	python3 - "$TMP/out" "$mode" <<'PY' || die "the stacks of a garbage frame ($mode)"
import json, sys
d = json.load(open(sys.argv[1]))
roots = {n["name"]: n["samples"] for n in d["tree"]["roots"]}
total = d["total"]
print("%s: roots %s of %d" % (sys.argv[2], roots, total))
assert total >= 500, total
assert roots.get("[truncated]", 0) >= 0.99 * total, roots
PY
done
pass
