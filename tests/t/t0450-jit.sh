#!/bin/bash
# JIT code named through a perf map file: a process copies a loop into
# anonymous executable memory and describes it in /tmp/perf-PID.map. Its
# samples are named jit_hot_loop (the map is removed before the recording
# ends: the recorder's handle still reads it). The same map owned by
# another user than the process's is ignored: [anon:exec], not the name.
# A JIT that runs its code for a while before it writes the map is named
# from then on, on either backend: the recorder looks again after a miss.
# A JIT whose memory is mapped after the recorder read the process's maps
# (it runs native code first) is still [anon:exec], never [unknown].
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events
need_bpf_backend

W=$(build_workload jit)

share() { # FILE SYMBOL: share of kept samples whose leaf is SYMBOL, percent
	"$DCPROF" report -i "$1" --sort symbol --format json >"$TMP/r.json" ||
		die "report of '$1' failed"
	python3 - "$TMP/r.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = sum(x["samples"] for x in r["rows"] if x["symbol"].endswith(sys.argv[2]))
print(round(100.0 * n / max(r["total"], 1)))
PY
}

expect_exit 0 "$DCPROF" record -o "$TMP/own.data" -- "$W" 2
own=$(share "$TMP/own.data" jit_hot_loop)
[ "$own" -ge 80 ] || die "only $own% of the samples named jit_hot_loop"
"$DCPROF" cookies -i "$TMP/own.data" --format json | grep -q '"kind":"jit"' ||
	die "no jit cookie in the profile"

expect_exit 0 "$DCPROF" record -o "$TMP/other.data" -- "$W" 2 12345
other=$(share "$TMP/other.data" jit_hot_loop)
[ "$other" -eq 0 ] || die "a map owned by another user was read ($other%)"
anon=$(share "$TMP/other.data" "[anon:exec]")
[ "$anon" -ge 80 ] || die "only $anon% of the samples in [anon:exec]"
echo "own map: $own% jit_hot_loop; foreign map: $anon% [anon:exec]"

# the map written after 0.5 s of 2.5 s: at most 0.5 s and a retry's wait
# (0.2 s) unnamed, the rest named; before, one miss was kept for good (0%)
for backend in perf bpf; do
	F=$TMP/late-$backend.data
	expect_exit 0 "$DCPROF" record --backend "$backend" -o "$F" -- "$W" 2.5 - 0.5
	late=$(share "$F" jit_hot_loop)
	early=$(share "$F" "[anon:exec]")
	echo "$backend: map written after 0.5 s of 2.5 s: $late% jit_hot_loop, $early% [anon:exec]"
	[ "$late" -ge 60 ] || die "$backend: only $late% named once the map was written"
	[ $((late + early)) -ge 95 ] || die "$backend: $late% named and $early% [anon:exec] of the JIT's samples"
done

# 0.3 s of the program's own code first (whose samples make the BPF
# backend read the maps), then 1 s in JIT memory mapped after that read
for backend in perf bpf; do
	F=$TMP/early-$backend.data
	expect_exit 0 "$DCPROF" record --backend "$backend" -o "$F" -- "$W" 1 12345 0 0.3
	anon=$(share "$F" "[anon:exec]")
	echo "$backend: JIT memory mapped after 0.3 s: $anon% [anon:exec]"
	[ "$anon" -ge 60 ] || die "$backend: only $anon% of the samples in [anon:exec] mapped late"
done
pass
