#!/bin/bash
# exclusive: saturates every CPU at the kernel's top rate and wants no sample lost
# The BPF backend (issue 14): dcprof record --backend bpf counts stacks in
# the kernel. Skips only when the kernel refuses BPF to root (or the backend
# was not built, outside CI).
#  - the split workload per command: shares within 1 point of its measured
#    truth; the profile says backend bpf (text and JSON); the same with
#    user frames named by build id in the kernel (DCPROF_BPF_FRAMES=buildid);
#  - a process started before recording, -a: its samples all in its own
#    binary and name, >= 95% in spin_forever; the start-up walk of tasks
#    and maps went through the kernel's task iterators;
#  - two functions called through one pointer from one call site, 70/30:
#    shares within 1 point of the truth (stacks with the same callers);
#  - --only the split binary while a second binary (another build id)
#    spins: only the split's file is kept, the rest counted as filtered;
#  - while recording, a perf_event program of dcprof's is loaded (bpftool);
#  - a program over its CPU budget (DCPROF_BPF_CPU_MAX_PERCENT=0.3): the rate
#    lowered, each sample weighted: shares and counts as unthrottled;
#  - every CPU busy, -a -g at 10 kHz and at 100 kHz (or the kernel's
#    maximum): no sample lost; >= 80% of those due at 10 kHz; above it, at
#    least half as many as perf -a -g takes right after, and the kernel's
#    maximum rate not lowered (an interrupt too slow);
#    with a process started every 50 ms too, the recording ends at its
#    --duration (the drains stop at the poll's deadline);
#  - a count map made tiny (DCPROF_BPF_MAP_ENTRIES=1): lost samples shown;
#  - --off-cpu with --call-graph dwarf on the perf backend is refused in
#    one line that names the BPF backend;
#  - python3's broken frame-pointer chains end at [truncated], with the
#    hint (dwarf with the perf ring);
#  - unprivileged (setpriv nobody): auto falls back to perf with one line
#    saying why; --backend bpf fails in one line, non-zero, no file;
#  - no kernel BTF (DCPROF_BPF_BTF pointing nowhere): the same;
#  - the default backend: bpf for root, perf for nobody (no fallback said)
#    and with -c.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 readelf
need_perf_events
need_bpf_backend
sample_rate 4999 999

# unique build ids: other tests may run the same workloads meanwhile
bid_flag() { printf -- "-Wl,--build-id=0x%08x%08x%08x%08x%08x" $1 $RANDOM$RANDOM \
	$$ $RANDOM $RANDOM; }
SPLIT=$(build_workload split "$(bid_flag 200)")
SPIN=$(build_workload spin "$(bid_flag 201)")
SPIN2=$TMP/spin2
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer "$(bid_flag 202)" -o "$SPIN2" \
	"$TOP/tests/workloads/spin.c" || die "cannot build spin2"

# split_shares LABEL JSON MIN [POINTS]: the functions of the truth the
# workload printed into $TMP/truth hold at least MIN samples of the report
# in JSON (by symbol), each share within POINTS (default 1) of the truth
split_shares() {
	report_counts "$2" |
		check_split_shares "$TMP/truth" "$3" "${4:-1}" "$1"
}

# --- the split, per command, shares within 1 point --------------------------
F=$TMP/split.data
expect_exit 0 "$DCPROF" record --backend bpf -F "$RATE" -o "$F" -- \
	"$SPLIT" 4 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
cp "$TMP/out" "$TMP/split.json"
[ "$(json_get "$TMP/split.json" 'd["meta"]["backend"]')" = bpf ] ||
	die "the JSON meta does not say backend bpf"
split_shares bpf "$TMP/split.json" 3000 || die "bpf: shares are off"
expect_exit 0 "$DCPROF" report -i "$F"
grep -q '^# backend: bpf$' "$TMP/out" || die "the text report does not say backend bpf"

# the same with every user frame named by build id in the kernel
expect_exit 0 env DCPROF_BPF_FRAMES=buildid "$DCPROF" record --backend bpf \
	-F "$RATE" -o "$TMP/ip.data" -- "$SPLIT" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
expect_exit 0 "$DCPROF" report -i "$TMP/ip.data" --format json --sort symbol
cp "$TMP/out" "$TMP/ip.json"
split_shares "bpf buildid" "$TMP/ip.json" 2000 ||
	die "bpf, build-id frames: shares are off"

# two functions called from one instruction through a pointer, 70/30: their
# stacks differ only in the leaf, which the count's key carries apart from
# its callers' hash; a leaf taken from the stack kept under that hash gave
# every sample to the function sampled first
DISPATCH=$(build_workload dispatch "$(bid_flag 203)")
expect_exit 0 "$DCPROF" record --backend bpf -F "$RATE" \
	-o "$TMP/dispatch.data" -- "$DISPATCH" 3 --truth
grep '^dispatch: ' "$TMP/out" >"$TMP/truth" || die "dispatch printed no truth"
expect_exit 0 "$DCPROF" report -i "$TMP/dispatch.data" --format json \
	--sort symbol
split_shares "bpf, one call site" "$TMP/out" 2000 ||
	die "bpf: the leaves of one call site are mixed up"

# --- a process started before, -a; and the program is loaded ------------------
spawn "$SPIN" "$TMP/ready"
PID=$SPAWNED
wait_file "$TMP/ready"
"$DCPROF" record -vv --backend bpf -a -F "$RATE" --duration 3 \
	-o "$TMP/all.data" >"$TMP/rec.out" 2>"$TMP/rec.err" &
REC=$!
_spawned+=("$REC")
if command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ]; then
	BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)
	for ((i = 0; i < 100; i++)); do
		"$BPFTOOL" prog show 2>/dev/null | grep -q "perf_event  *name dcp_sample" && break
		sleep 0.05
	done
	[ "$i" -lt 100 ] || die "no perf_event program dcp_sample is loaded while recording"
else
	[ -z "${CI:-}" ] || die "bpftool is not installed under CI"
	skip_part "bpftool is not installed: the loaded program is not checked"
fi
wait "$REC" || die "record -a exited non-zero: $(cat "$TMP/rec.err")"
# the existing tasks and their maps were walked by the kernel's iterators
[ "$(grep -c "^dcprof: BPF collection: [1-9]" "$TMP/rec.err")" = 2 ] ||
	die "the start-up walk did not use the task iterators: $(grep -i "collection\|walking" "$TMP/rec.err")"
expect_exit 0 "$DCPROF" report -i "$TMP/all.data" --sort comm,pid,file,symbol \
	--format json
cp "$TMP/out" "$TMP/all.json"
python3 - "$TMP/all.json" "$PID" "$SPIN" <<'PY' || die "bpf -a: the existing process is misattributed"
import json, sys
d = json.load(open(sys.argv[1]))
pid, binary = int(sys.argv[2]), sys.argv[3]
mine = [r for r in d["rows"] if r["pid"] == pid]
total = sum(r["samples"] for r in mine)
good = sum(r["samples"] for r in mine
           if r["file"] == binary and r["symbol"] == "spin_forever")
lost = sum(r["samples"] for r in mine
           if r["file"] == "[unknown]" or r["comm"] != "spin"
           or (r["file"] != binary and not r["file"].startswith("[kernel")))
print("pid %d: %d of %d in spin_forever, %d elsewhere than its binary or "
      "the kernel" % (pid, good, total, lost))
assert total >= 1000, "only %d samples" % total
assert good >= 0.95 * total, "only %.1f%%" % (100.0 * good / total)
assert lost == 0, lost
PY
kill "$PID"

# --- --only: a second binary is filtered in the kernel ------------------------
spawn "$SPIN2" "$TMP/ready2"
PID2=$SPAWNED
wait_file "$TMP/ready2"
expect_exit 0 "$DCPROF" record --backend bpf -a --only "$SPLIT" \
	-o "$TMP/only.data" -- "$SPLIT" 2
kill "$PID2"
expect_exit 0 "$DCPROF" report -i "$TMP/only.data" --sort file --format json
cp "$TMP/out" "$TMP/only.json"
python3 - "$TMP/only.json" "$SPLIT" <<'PY' || die "bpf --only keeps the wrong samples"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["stats"]
files = sorted(set(r["file"] for r in d["rows"]))
print("files %s, kept %d, filtered %d, samples %d" % (
    files, s["samples_kept"], s["samples_filtered"], s["samples"]))
assert files == [sys.argv[2]], files
# the spinning second binary alone is about 2 s of a CPU
assert s["samples_filtered"] >= 1000, s
assert s["samples_kept"] + s["samples_filtered"] == s["samples"], s
assert s["samples_kept"] >= 1000, s
PY

# --- the program's CPU budget -------------------------------------------------
# Given 0.05% of the CPUs' time (kernel.perf_cpu_time_max_percent, here set
# through DCPROF_BPF_CPU_MAX_PERCENT; the program takes about 0.2% here
# since the stacks come from the event's own call chain, 0.7-1.2% when it
# walked them), the recorder divides the rate by a whole factor and the program
# counts every sample that many times: the program runs less, the counts
# keep the requested rate's units (samples within 15% of the unthrottled
# run of the same 4 s split), shares hold within 3 points (a quarter of the
# samples taken: at 0.1%, a factor of 13 and 1,500 samples, shares were off
# by more than a point on a loaded machine, for the old code too; 3 points,
# below), nothing
# is lost, and the lowering is said and counted.
expect_exit 0 env DCPROF_BPF_CPU_MAX_PERCENT=0.05 "$DCPROF" record --backend bpf \
	-v -F "$RATE" -o "$TMP/budget.data" -- "$SPLIT" 4 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
grep -q 'sampling lowered to [0-9]* Hz, each sample counted [0-9]* times' \
	"$TMP/err" || die "a program over its budget was not throttled: $(grep bpf: "$TMP/err")"
read -r counted ran < <(sed -n \
	's/^dcprof: bpf: \([0-9]*\) samples counted.* ran \([0-9]*\) times.*/\1 \2/p' "$TMP/err")
[ -n "$ran" ] && [ "$ran" -lt $((counted * 3 / 4)) ] ||
	die "throttled, the program still ran $ran times for $counted samples counted"
expect_exit 0 "$DCPROF" report -i "$TMP/budget.data" --format json --sort symbol
cp "$TMP/out" "$TMP/budget.json"
# 3 points: the lowered rate's period can fall in step with the split's
# 10 ms cycle of slices (the samples then cluster in part of it): 2 points
# failed 1 run in about 10, 2.6 points off with 17,000 samples taken
split_shares "bpf budget" "$TMP/budget.json" 3000 3 || die "bpf, throttled: shares are off"
python3 - "$TMP/budget.json" "$TMP/split.json" <<'PY' || die "throttled counts are off"
import json, sys
b, f = (json.load(open(p)) for p in sys.argv[1:3])
fns = ("work_fifty", "work_thirty", "work_twenty")
n = lambda d: sum(r["samples"] for r in d["rows"] if r["symbol"] in fns)
print("throttled %d samples against %d unthrottled; %d throttle events"
      % (n(b), n(f), b["stats"]["throttle_events"]))
assert 0.85 <= n(b) / n(f) <= 1.15, "%d samples against %d" % (n(b), n(f))
assert b["stats"]["throttle_events"] >= 1, "no throttle event counted"
assert b["stats"]["lost_samples"] == 0, "samples lost"
PY

# --- every CPU busy at 10 kHz and at the kernel's maximum: no sample lost ----
# At 100 kHz this VM's timer interrupts (each a VM exit) cannot come every
# 10 us: the kernel takes a share of the samples asked for that depends on
# the host, with perf as with dcprof. There the recording is held against
# perf's in the same seconds, and against the kernel's own throttle, which
# lowers the maximum rate when a sampling interrupt runs too long. What the
# kernel takes must all be counted.
MAX=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
rates=$((MAX < 10000 ? MAX : 10000))
[ "$MAX" -gt 10000 ] && rates="$rates $((MAX < 100000 ? MAX : 100000))"
[ "$MAX" -gt 10000 ] && need perf
busy=()
for ((i = 0; i < $(nproc); i++)); do
	spawn "$SPIN" "$TMP/busy$i"
	busy+=("$SPAWNED")
done
for rate in $rates; do
	expect_exit 0 "$DCPROF" record --backend bpf -a -g -F "$rate" \
		--duration 2 -o "$TMP/fast.data"
	max_after=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	perf_samples=0
	if [ "$rate" -gt 10000 ]; then
		perf record -q -N -B -a -g -F "$rate" -o "$TMP/perf-fast.data" \
			-- sleep 2 >"$TMP/perf.err" 2>&1 ||
			die "perf record at $rate Hz failed: $(tail -2 "$TMP/perf.err")"
		perf_samples=$(perf report -i "$TMP/perf-fast.data" --stats 2>/dev/null |
			awk '/SAMPLE events:/ { print $3; exit }')
		[ -n "$perf_samples" ] || die "no count of perf's samples at $rate Hz"
		rm -f "$TMP/perf-fast.data"
	fi
	expect_exit 0 "$DCPROF" report -i "$TMP/fast.data" --format json
	python3 - "$TMP/out" "$rate" "$(nproc)" "$perf_samples" "$MAX" "$max_after" <<'PY' || die "samples lost at $rate Hz"
import json, sys
d = json.load(open(sys.argv[1]))
rate, perf = int(sys.argv[2]), int(sys.argv[4])
s, want = d["stats"], rate * int(sys.argv[3]) * 2
print("%d Hz, every CPU busy: %d samples of %d, lost %d samples, %d stacks, "
      "%.2f s recorded%s" % (rate, s["samples"], want, s["lost_samples"],
                             s["lost_records"], d["meta"]["duration_ns"] / 1e9,
                             "; perf: %d (dcprof/perf %.2f)" %
                             (perf, s["samples"] / max(perf, 1)) if perf else ""))
assert s["lost_samples"] == 0, "%d samples lost" % s["lost_samples"]
assert int(sys.argv[6]) == int(sys.argv[5]), \
    "the kernel lowered its maximum rate from %s to %s" % (sys.argv[5], sys.argv[6])
if rate <= 10000:
    assert s["samples"] >= 0.8 * want, "only %d samples of %d" % (s["samples"], want)
else:
    assert s["samples"] >= 0.5 * perf, "only %d samples, perf %d" % (s["samples"], perf)
assert s["lost_records"] <= 0.05 * s["samples"], "%d stacks lost" % s["lost_records"]
PY
done

# --- the recording ends at --duration, whatever the drains have left -----------
# At the top rate with a process started every 50 ms as well, the naming of
# the counts falls behind (the recorder, beside the spinners and under the
# sampling interrupts, gets little of a CPU): a drain that ran to its end
# before the deadline was looked at held these 2 s recordings open for
# 2.8 to 5.8 s on a quiet machine. Measured since: 2.00-2.04 s, the same
# under the sanitizers (2.08 with other work running).
(while :; do /bin/true; sleep 0.05; done) &
churn=$!
expect_exit 0 "$DCPROF" record --backend bpf -a -g -F "$rate" --duration 2 \
	-o "$TMP/churn.data"
kill "$churn"
wait "$churn" 2>/dev/null
expect_exit 0 "$DCPROF" report -i "$TMP/churn.data" --format json
python3 - "$TMP/out" "$rate" <<'PY' || die "--duration 2 at $rate Hz with a process every 50 ms ran on"
import json, sys
d = json.load(open(sys.argv[1]))
secs = d["meta"]["duration_ns"] / 1e9
print("%s Hz, a process every 50 ms: %.2f s recorded for --duration 2, %d samples, "
      "%d lost" % (sys.argv[2], secs, d["stats"]["samples"], d["stats"]["lost_samples"]))
assert 1.95 <= secs <= 2.5, "--duration 2 recorded %.2f s" % secs
PY

# --- a count map made tiny: the overflow is counted and shown -----------------
# (one entry, and the spinners still run: two processes every drain)
DCPROF_BPF_MAP_ENTRIES=1 "$DCPROF" record --backend bpf -a -g --duration 2 \
	-o "$TMP/tiny.data" >"$TMP/out" 2>"$TMP/err" ||
	die "record with a tiny map failed: $(cat "$TMP/err")"
kill "${busy[@]}" 2>/dev/null
expect_exit 0 "$DCPROF" report -i "$TMP/tiny.data"
grep -q "^# lost: .* [1-9][0-9]* samples;" "$TMP/out" ||
	die "a full count map is not shown as lost: $(grep '^# lost' "$TMP/out")"

# --- refusals -------------------------------------------------------------------
# --off-cpu with --call-graph dwarf is the BPF backend's (the kernel
# unwinds each switch-out): the perf backend refuses it in one line
expect_exit 2 "$DCPROF" record --backend perf --off-cpu --call-graph dwarf \
	-o "$TMP/dw.data" -- true
[ -e "$TMP/dw.data" ] && die "a refused dwarf recording left a file"
head -1 "$TMP/err" | grep -q "^dcprof: .*dwarf.*--backend bpf" ||
	die "the dwarf refusal does not name the BPF backend: $(cat "$TMP/err")"

# no BTF: --backend bpf fails, auto falls back
DCPROF_BPF_BTF=$TMP/no-btf "$DCPROF" record --backend bpf --duration 0.2 \
	-o "$TMP/nobtf.data" >"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] || die "--backend bpf without BTF exited 0"
one_line_error
grep -q "BTF" "$TMP/err" || die "the refusal does not name BTF: $(cat "$TMP/err")"
[ -e "$TMP/nobtf.data" ] && die "a refused recording left a file"
DCPROF_BPF_BTF=$TMP/no-btf "$DCPROF" record --backend auto --duration 0.2 \
	-o "$TMP/auto.data" >"$TMP/out" 2>"$TMP/err" ||
	die "auto without BTF failed: $(cat "$TMP/err")"
[ "$(grep -c "using the perf backend: .*BTF" "$TMP/err")" -eq 1 ] ||
	die "auto without BTF does not say once why it uses perf: $(cat "$TMP/err")"
expect_exit 0 "$DCPROF" report -i "$TMP/auto.data"
grep -q '^# backend: perf$' "$TMP/out" || die "the fallback profile does not say backend perf"

# Broken frame-pointer chains said as the perf ring says them (t0492):
# Debian's python3, built without frame pointers, breaks right after the
# leaf under --call-graph fp; the stacks end at a [truncated] marker, and
# the hint offers --call-graph dwarf (on this backend, the unwind tables
# -g takes). Builds before this marked nothing and gave no hint.
PY=/usr/bin/python3
check_fp_chains() {
	expect_exit 0 "$DCPROF" record --backend bpf --call-graph fp \
		-o "$TMP/py.data" -- "$PY" -c '
import time
t = time.time()
while time.time() - t < 1:
    sum(i * i % 7 for i in range(10000))
'
	grep -E '^dcprof: .*(python3|libc).*--call-graph dwarf unwinds them$' \
		"$TMP/err" >/dev/null ||
		die "no hint naming python3 or libc and --call-graph dwarf: $(cat "$TMP/err")"
	expect_exit 0 "$DCPROF" export -i "$TMP/py.data" --format folded \
		-o "$TMP/py.folded"
	grep '^python3' "$TMP/py.folded" | grep -v 'do_execveat_common' \
		>"$TMP/py.stacks" || die "no python3 stacks in the BPF profile"
	grep -q '\[truncated\]' "$TMP/py.stacks" ||
		die "no [truncated] frame in the BPF profile: $(head -3 "$TMP/py.stacks")"
}
if [ -x "$PY" ]; then
	check_fp_chains
else
	[ -z "${CI:-}" ] || die "no Debian python3 at $PY under CI"
	echo "t0200: SKIPPED IN PART: no $PY, frame-pointer chains not checked" >&2
fi

# unprivileged
need setpriv
chmod 711 "$TMP"
mkdir "$TMP/u" && chmod 777 "$TMP/u" || die "cannot make '$TMP/u'"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
as_nobody "$DCPROF" record --backend bpf -o "$TMP/u/bpf.data" -- true \
	>"$TMP/out" 2>"$TMP/err"
[ $? -ne 0 ] || die "--backend bpf as nobody exited 0"
one_line_error
grep -q "CAP_BPF" "$TMP/err" || die "the refusal does not say what is needed: $(cat "$TMP/err")"
[ -e "$TMP/u/bpf.data" ] && die "a refused recording left a file"
as_nobody "$DCPROF" record --backend auto -o "$TMP/u/auto.data" -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$(grep -c "using the perf backend: .*CAP_BPF" "$TMP/err")" -eq 1 ] ||
	die "auto as nobody does not say once why it uses perf: $(cat "$TMP/err")"
if [ "$rc" -eq 0 ]; then
	expect_exit 0 "$DCPROF" report -i "$TMP/u/auto.data"
	grep -q '^# backend: perf$' "$TMP/out" || die "nobody's profile does not say backend perf"
fi

# --- the default backend: bpf for root; for a user who may not load BPF
# programs, perf without a word of fallback; perf when -c asks for what
# only the ring records
expect_exit 0 "$DCPROF" record -o "$TMP/default.data" -- true
expect_exit 0 "$DCPROF" report -i "$TMP/default.data"
grep -q '^# backend: bpf$' "$TMP/out" || die "root's default backend is not bpf"
expect_exit 0 "$DCPROF" record -c 100000 -o "$TMP/default-c.data" -- true
expect_exit 0 "$DCPROF" report -i "$TMP/default-c.data"
grep -q '^# backend: perf$' "$TMP/out" || die "-c does not choose the perf backend"
as_nobody "$DCPROF" record -o "$TMP/u/default.data" -- true >"$TMP/out" 2>"$TMP/err"
rc=$?
! grep -q "using the perf backend" "$TMP/err" ||
	die "nobody's default recording speaks of a fallback: $(cat "$TMP/err")"
if [ "$rc" -eq 0 ]; then
	expect_exit 0 "$DCPROF" report -i "$TMP/u/default.data"
	grep -q '^# backend: perf$' "$TMP/out" || die "nobody's default backend is not perf"
fi

pass
