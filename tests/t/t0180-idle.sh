#!/bin/bash
# exclusive: measures the idle share of the whole machine
# Idle time, system-wide, is one row, "[idle]", not pages of kernel idle
# functions; and its share matches the idle time the kernel counted in
# /proc/stat over 1.5 s in the middle of the recording (within 10 points). On an otherwise idle
# machine that row holds most samples; a machine busy with other work still
# checks the shape and the agreement.
. "$(dirname "$0")/test-lib.sh"
need python3
need_perf_events

cpu_idle() { awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
# The kernel's count is taken inside the sampled window, so that the
# recorder's own start (collection walk) and finish (symbols, writing),
# which no sample sees, do not count as time the machine was busy.
# The recorder says when it records (--ready-fd): the 3 s of --duration
# count from then, and the 1.5 s window starts there.
"$DCPROF" record -a --duration 3 -o "$TMP/idle.data" --ready-fd 3 \
	>"$TMP/rec.out" 2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
rec=$!
_spawned+=("$rec")
wait_line "$TMP/rec.ready" '^recording$' 30
before=$(cpu_idle)
sleep 1.5
after=$(cpu_idle)
wait "$rec" || die "record failed: $(cat "$TMP/rec.err")"
expect_exit 0 "$DCPROF" report -i "$TMP/idle.data" --format json
cp "$TMP/out" "$TMP/idle.json"
python3 - "$TMP/idle.json" "$before" "$after" <<'PY' || die "idle is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
i0, t0 = map(int, sys.argv[2].split())
i1, t1 = map(int, sys.argv[3].split())
truth = 100.0 * (i1 - i0) / (t1 - t0)
rows, total = d["rows"], d["total"]
idle = [r for r in rows if r["symbol"] == "[idle]" or r["file"] == "[idle]"
        or r["comm"] == "[idle]"]
kidle = [r for r in rows if r["file"].startswith("[kernel")
         and any(k in r["symbol"] for k in ("default_idle", "cpuidle",
                                            "do_idle", "intel_idle",
                                            "acpi_idle", "poll_idle",
                                            "mwait_idle", "cpu_idle"))]
n = idle[0]["samples"] if idle else 0
share = 100.0 * n / total
print("idle: %d rows, %d of %d samples (%.1f%%), /proc/stat says %.1f%%; "
      "kernel idle functions %d samples" % (len(idle), n, total, share, truth,
      sum(r["samples"] for r in kidle)))
assert len(idle) <= 1, "idle rows: %s" % idle
assert n == d["stats"]["samples_idle"], (n, d["stats"])
assert sum(r["samples"] for r in kidle) <= 0.01 * total, kidle
assert abs(share - truth) <= 10, "idle %.1f%%, /proc/stat %.1f%%" % (share, truth)
if truth >= 5:
    assert len(idle) == 1 and idle[0]["comm"] == "[idle]", idle
if truth >= 80:
    assert share >= 50, "idle holds only %.1f%%" % share
PY
expect_exit 0 "$DCPROF" report -i "$TMP/idle.data"
[ "$(grep -c '\[idle\]' "$TMP/out")" -le 1 ] || die "text: idle is not one line"

pass
