#!/bin/bash
# exclusive: system-wide top wants 1,000 samples in each 2 s interval of wall time
# dcprof top --stdio on the split workload (a known 50/30/20 split of CPU
# time, truth measured by the workload as in t0100-split.sh): every one of
# 3 intervals has the three functions on top with shares within 3 points of
# the truth; with --limit 3 the three rows shown are these, in order, out
# of more groups; text blocks are separated by a blank line; at --delay
# 0.3 no interval's rate is above CPUs x 999 Hz; a -p process that exits
# is said; -o writes a profile (its command line top's)
# that report reads; bad input is refused with a clear message.
# top -- CMD on split (another split busy beside it): rows of the command's
# pid only, the three functions within 3 points of the truth in every full
# interval where the command had 400 samples (at least one: a loaded machine
# may starve it in some) and in the final session totals, and top ends by
# itself (status 0) when the command exits, its last object saying so;
# --iterations ending first stops the command (SIGTERM, SIGKILL 2 s later
# for one that ignores it); a command that does not exist is one error
# line.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)

# --- JSON, one object per interval, with -o -------------------------------
"$SPLIT" 9 --truth >"$TMP/truth" &
SPLIT_PID=$!
sleep 0.5
expect_exit 0 "$DCPROF" top --stdio --iterations 3 --delay 2 --format json \
	--limit 50 -o "$TMP/top.data"
cp "$TMP/out" "$TMP/top.json"
wait "$SPLIT_PID" || die "split failed"
grep -q '^split: ' "$TMP/truth" || die "split printed no truth"
[ "$(wc -l <"$TMP/top.json")" -eq 3 ] ||
	die "want 3 JSON lines, got: $(cat "$TMP/top.json")"
python3 - "$TMP/top.json" "$SPLIT" "$TMP/interval" <<'PY' || die "top's shares are off"
import json, sys
# this test's split only: top is system-wide, and another split (another
# test's copy) may run at the same time
mine = sys.argv[2]
want = {"work_fifty", "work_thirty", "work_twenty"}
for n, line in enumerate(open(sys.argv[1]), 1):
    d = json.loads(line)
    assert d["interval"] == n, d["interval"]
    rows = [r for r in d["rows"] if r["comm"] == "split" and r.get("file") == mine]
    top3 = {r["symbol"] for r in rows[:3]}
    assert top3 == want, "interval %d: split's top rows %s" % (n, top3)
    # the interval's counts, for the shares below
    with open("%s.%d" % (sys.argv[3], n), "w") as f:
        for r in rows:
            f.write("%s %d\n" % (r["symbol"], r["samples"]))
    for r in d["rows"]:
        assert 0 <= r["share"] <= 100 and 0 <= r["session_share"] <= 100
PY
for n in 1 2 3; do
	check_split_shares "$TMP/truth" 1000 3 "interval $n" \
		<"$TMP/interval.$n" || die "top's shares are off"
done

# --- the rate is of the interval's samples over the time they were taken -
# short intervals of a command: never above what the CPUs can give at the
# frequency (before: up to 3,648/s on 2 CPUs at 999 Hz, the samples held
# in the kernel at one snapshot counted in the next interval's seconds)
expect_exit 0 "$DCPROF" top --stdio --delay 0.3 --iterations 12 --format json \
	-- "$SPLIT" 2.5
python3 - "$TMP/out" "$(nproc)" <<'PY' || die "top's rate is above what the CPUs give"
import json, sys
cpus = int(sys.argv[2])
rates = [json.loads(l)["samples_per_second"] for l in open(sys.argv[1]) if l.strip()]
print("rates at --delay 0.3:", " ".join("%.0f" % r for r in rates))
assert len(rates) >= 5, rates
assert all(r <= 1.05 * cpus * 999 for r in rates), rates
PY

# -p of a process that exits while watched: said (before: 0.00% rows and
# no word of it)
"$SPLIT" 0.8 &
gone_pid=$!
expect_exit 0 "$DCPROF" top --stdio --delay 0.5 --iterations 4 --format json \
	-p "$gone_pid"
wait "$gone_pid"
python3 - "$TMP/out" <<'PY' || die "-p of a process that exited: not said"
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
assert last["targets"] == 1 and last["targets_exited"] == 1, last
PY

# the -o profile says how top was run (before: "dcprof top" alone)
expect_exit 0 "$DCPROF" report -i "$TMP/top.data"
grep -q '^# command: dcprof top --stdio --iterations 3 --delay 2' "$TMP/out" ||
	die "the -o profile's command: $(grep '^# command' "$TMP/out")"
expect_exit 0 "$DCPROF" report -i "$TMP/top.data" --sort symbol --format json
python3 - "$TMP/out" <<'PY' || die "the -o profile does not report the session"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["complete"], "the profile is not complete"
syms = {r["symbol"] for r in d["rows"]}
assert {"work_fifty", "work_thirty", "work_twenty"} <= syms, syms
PY

# --- --limit 3: only the rows shown are put in order, and they are the best
"$SPLIT" 5 >/dev/null &
SPLIT_PID=$!
sleep 0.5
expect_exit 0 "$DCPROF" top --stdio --iterations 2 --delay 1.5 --format json \
	--limit 3 --pid "$SPLIT_PID"
wait "$SPLIT_PID" || die "split failed"
python3 - "$TMP/out" <<'PY' || die "--limit 3 does not show the best rows: $(cat "$TMP/out")"
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    syms = [r["symbol"] for r in d["rows"]]
    assert syms == ["work_fifty", "work_thirty", "work_twenty"], syms
    assert d["entries"] > 3, "the heap was not needed: %d groups" % d["entries"]
PY

# --- text: blocks separated by one blank line ------------------------------
expect_exit 0 "$DCPROF" top --stdio --iterations 2 --delay 0.3 --limit 5
python3 - "$TMP/out" <<'PY' || die "text blocks are wrong: $(cat "$TMP/out")"
import sys
blocks = open(sys.argv[1]).read().split("\n\n")
blocks = [b for b in blocks if b.strip()]
assert len(blocks) == 2, len(blocks)
for i, b in enumerate(blocks, 1):
    lines = b.splitlines()
    assert lines[0].startswith("interval %d:" % i), lines[0]
    assert lines[1].split()[:3] == ["last", "session", "samples"], lines[1]
PY

# --- top -- CMD: the command's process tree, until it exits -----------------
# (niced: the same binary beside it, but not taking the command's CPU)
spawn nice -n 19 "$SPLIT" 30
OTHER=$SPAWNED
start=$(date +%s%N)
expect_exit 0 "$DCPROF" top --stdio --iterations 60 --delay 1 --format json \
	--sort pid,comm,file,symbol --limit 50 -- "$SPLIT" 3.5 --truth
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
kill -KILL "$OTHER" 2>/dev/null
wait "$OTHER" 2>/dev/null
grep '^split: ' "$TMP/out" >"$TMP/cmd.truth" || die "the command printed no truth"
grep '^{' "$TMP/out" >"$TMP/cmd.json"
echo "top -- split 3.5: ended after $elapsed_ms ms"
# 3.5 s of CPU time: longer on a busy machine, far from 60 intervals
[ "$elapsed_ms" -lt 30000 ] || die "top ran $elapsed_ms ms: it did not end with the command"
rm -f "$TMP"/cmd.counts.*
python3 - "$TMP/cmd.json" "$TMP/cmd.counts" "$SPLIT" "$OTHER" <<'PY2' || die "top -- CMD is wrong: $(head -c 600 "$TMP/cmd.json")"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
mine, other = sys.argv[3], int(sys.argv[4])
want = {"work_fifty", "work_thirty", "work_twenty"}
assert 3 <= len(objs) < 30, "%d tables for a 3.5 s command" % len(objs)
pid = objs[0]["command_pid"]
assert pid != other
for n, d in enumerate(objs, 1):
    last = n == len(objs)
    assert d["command_exited"] == last, "table %d: command_exited %s" % (n, d["command_exited"])
    pids = {r["pid"] for r in d["rows"]}
    assert pids == {str(pid)} or pids == {pid}, "table %d: rows of pids %s, the command is %d" % (n, pids, pid)
    # the command's first instants, forked but not yet exec'd, are dcprof
    assert {r["comm"] for r in d["rows"]} <= {"split", "dcprof"}, d["rows"]
    # the header's samples are every one read: the table's, and the
    # other tasks' (the niced split beside it) said apart
    if len(d["rows"]) < 50:
        assert sum(r["samples"] for r in d["rows"]) == \
            d["samples"] - d["samples_other_tasks"], "table %d: %s" % (n, d)
    # the counts of the split's functions: an interval's, and the
    # session's in the last table, for the shares below
    rows = [r for r in d["rows"] if r["file"] == mine and r["symbol"] in want]
    key = "session_samples" if last else "samples"
    with open("%s.%s" % (sys.argv[2], "session" if last else "%03d" % n), "w") as f:
        for r in rows:
            f.write("%s %d\n" % (r["symbol"], r[key]))
    if last:
        assert d["command_status"] == 0, d["command_status"]
PY2
judged=0
for f in "$TMP"/cmd.counts.[0-9]*; do
	n=$((10#${f##*.}))
	rc=0
	check_split_shares "$TMP/cmd.truth" 400 3 "interval $n" <"$f" || rc=$?
	case $rc in
	0) judged=$((judged + 1)) ;;
	# a loaded machine gave the command little CPU this interval
	3) echo "interval $n: not judged" ;;
	*) die "top -- CMD is wrong: interval $n's shares" ;;
	esac
done
[ "$judged" -ge 1 ] || die "no interval had 400 samples of the command"
check_split_shares "$TMP/cmd.truth" 1500 3 session <"$TMP/cmd.counts.session" ||
	die "top -- CMD is wrong: the session's shares"

# --iterations ending first: the command is stopped with top
expect_exit 0 "$DCPROF" top --stdio --iterations 1 --delay 0.5 --format json \
	-- "$SPLIT" 30
pid=$(json_get "$TMP/out" 'd["command_pid"]')
[ "$(json_get "$TMP/out" 'd["command_exited"]')" = false ] ||
	die "the command of 30 s exited: $(cat "$TMP/out")"
sleep 0.2
[ ! -e "/proc/$pid" ] || die "the command (pid $pid) outlived top"

# a command that ignores SIGTERM: killed 2 s later, top does not hang
start=$(date +%s%N)
expect_exit 0 timeout 20 "$DCPROF" top --stdio --iterations 1 --delay 0.5 \
	--format json -- sh -c 'trap "" TERM; while :; do :; done'
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
pid=$(json_get "$TMP/out" 'd["command_pid"]')
echo "a command deaf to SIGTERM: top ended after $elapsed_ms ms"
[ ! -e "/proc/$pid" ] || die "the command deaf to SIGTERM (pid $pid) outlived top"
[ "$elapsed_ms" -ge 2000 ] && [ "$elapsed_ms" -lt 10000 ] ||
	die "top ended after $elapsed_ms ms, not 2 s after the SIGTERM"

# a command that does not exist: one line, non-zero, nothing on stdout
for c in "$TMP/no-such-command" dcprof-no-such-command; do
	expect_exit 1 "$DCPROF" top --stdio -- "$c" arg
	one_line_error
	grep -q "cannot run '$c'" "$TMP/err" || die "not named: $(cat "$TMP/err")"
	[ ! -s "$TMP/out" ] || die "a failed command printed a table"
done
expect_exit 2 "$DCPROF" top --stdio -p 1 -- "$SPLIT" 1
grep -q "exclude each other" "$TMP/err" || die "-p with a command: $(cat "$TMP/err")"

# --- bad input --------------------------------------------------------------
for d in 0 -1 abc; do
	expect_exit 2 "$DCPROF" top --stdio --delay "$d"
	grep -q -- "--delay" "$TMP/err" || die "--delay $d: $(cat "$TMP/err")"
done
expect_exit 2 "$DCPROF" top --stdio --iterations 0
expect_exit 2 "$DCPROF" top --stdio --format xml
expect_exit 2 "$DCPROF" top --stdio --sort nonsense
# said, not ignored: twice the same key, a backend that is not one, and
# options of --stdio without it (before: two comm columns, status 1, and
# the full-screen view running regardless)
expect_exit 2 "$DCPROF" top --stdio --sort comm,comm
grep -q "twice" "$TMP/err" || die "--sort comm,comm: $(cat "$TMP/err")"
expect_exit 2 "$DCPROF" top --stdio --backend foo
for o in "--iterations 2" "--format json"; do
	expect_exit 2 "$DCPROF" top $o
	grep -q "applies to --stdio only" "$TMP/err" || die "$o: $(cat "$TMP/err")"
done
# a command killed by a signal is said so (before: "exited with status 137")
expect_exit 0 "$DCPROF" top --stdio --iterations 3 --delay 0.3 -- \
	sh -c 'sleep 0.2; kill -9 $$'
grep -q "killed by signal 9" "$TMP/out" ||
	die "a killed command: $(grep -o "'sh'.*" "$TMP/out" | head -2)"
# not a terminal, no --stdio: one clear error
"$DCPROF" top </dev/null >"$TMP/out" 2>"$TMP/err"
[ $? -eq 1 ] || die "top without a terminal did not fail with 1"
grep -q -- "--stdio" "$TMP/err" || die "no hint at --stdio: $(cat "$TMP/err")"
[ ! -s "$TMP/out" ] || die "top without a terminal printed to stdout"

pass
