#!/bin/bash
# The frame where a user program was interrupted is the instruction
# itself, not a return address: a page fault fetching the first
# instruction of a mapping has the mapping's first byte as its user ip,
# and looking it up at ip - 1 (as callers are) finds the mapping before,
# or none. The workload calls code at offset 0 of a mapped file and drops
# its page after each call, so that about a third of its samples are in
# that fault. -g, on each backend: at least 50 such samples, at least 90%
# of them with their user frame in the code file ("[unresolved]": it has
# no symbols; the report names the file), none "[unknown]". Builds before
# this named every one "[unknown]" on both backends (369 and 294 of 369
# and 294); so was one sample in 150 recordings of python3 under load,
# at ld.so's first instruction after exec.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload fault_entry)
CODE=$TMP/entry.code

# check_backend BACKEND
check_backend() {
	local b=$1 F=$TMP/$1.data counts total named unknown children
	expect_exit 0 "$DCPROF" record --backend "$b" -g -o "$F" -- "$W" 1 "$CODE"
	expect_exit 0 "$DCPROF" export -i "$F" --format folded -o "$TMP/$b.folded"
	# "faults named unknown": samples whose kernel part begins in the
	# page fault entry, by the name of the user frame before it
	counts=$(awk '$1 ~ /^fault_entry;/ {
		n = split($1, f, ";")
		for (i = 2; i <= n; i++)
			if (f[i] == "asm_exc_page_fault_[k]") {
				all += $NF
				if (f[i - 1] == "[unresolved]") named += $NF
				if (f[i - 1] == "[unknown]") unknown += $NF
				break
			}
	} END { print all + 0, named + 0, unknown + 0 }' "$TMP/$b.folded")
	read -r total named unknown <<<"$counts"
	echo "$b: $total samples in the fault, $named in the code file, $unknown [unknown]"
	[ "$total" -ge 50 ] ||
		die "$b: only $total samples in the page fault: $(grep -c . "$TMP/$b.folded") stacks"
	[ "$unknown" -eq 0 ] ||
		die "$b: $unknown of $total samples in the fault have an [unknown] user frame"
	[ $((named * 10)) -ge $((total * 9)) ] ||
		die "$b: only $named of $total samples in the fault are in the code file"
	expect_exit 0 "$DCPROF" report -i "$F" --children --format json
	children=$(json_get "$TMP/out" \
		"sum(r['children'] for r in d['rows'] if r['file'] == '$CODE')")
	[ "$children" -ge "$named" ] ||
		die "$b: the report has $children samples under '$CODE', the folded stacks $named"
}

check_backend perf
need_bpf_backend
check_backend bpf
pass
