#!/bin/bash
# exclusive: wants 10 samples in a PLT stub that runs a few instructions a call: how the timer's samples skew onto them changes with load
# PLT stubs are named after the function they jump to, as perf names them:
# a program calling labs() and ffs() through the PLT in a loop has samples
# in the stubs themselves (each call jumps through the GOT there). They are
# reported as labs@plt and ffs@plt (no other stub: a name off by one entry
# would be another function's), and no sample in the program's own file
# stays without a name.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload plt_calls -fno-builtin)
# 4999 Hz, or the kernel's perf_event_max_sample_rate if lower (>= 999 Hz
# still gives the 1000 samples asserted below in 2 s)
sample_rate 4999 999

expect_exit 0 "$DCPROF" record -F "$RATE" -o "$TMP/plt.data" -- "$W" 2
expect_exit 0 "$DCPROF" report -i "$TMP/plt.data" --sort file,symbol \
	--format json
python3 - "$TMP/out" "$W" <<'PY' || die "PLT stubs misnamed"
import json, sys
d = json.load(open(sys.argv[1]))
mine = [r for r in d["rows"] if r["file"] == sys.argv[2]]
total = sum(r["samples"] for r in mine)
by = {}
for r in mine:
    by[r["symbol"]] = by.get(r["symbol"], 0) + r["samples"]
print("%d samples in %s: %s" % (total, sys.argv[2],
      sorted(by.items(), key=lambda kv: -kv[1])))
stubs = {s: n for s, n in by.items() if s.endswith("@plt")}
unnamed = sum(n for s, n in by.items() if s.startswith("["))
assert total >= 1000, "only %d samples in the program" % total
# tens of thousands of calls a millisecond: each stub gets a share
assert stubs.get("labs@plt", 0) >= 20, "labs@plt: %s" % stubs
assert stubs.get("ffs@plt", 0) >= 10, "ffs@plt: %s" % stubs
assert set(stubs) <= {"labs@plt", "ffs@plt", "clock_gettime@plt"}, \
    "stubs of functions the loop does not call: %s" % stubs
assert unnamed == 0, "%d samples in the program without a name" % unnamed
PY

pass
