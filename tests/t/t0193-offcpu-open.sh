#!/bin/bash
# exclusive: the threads of a process must be off the CPU when -p starts, within a window of wall time
# record --off-cpu charges a thread still switched out when the recording
# ends with its time up to the end, on the stack it left the CPU on: the
# hung thread is what off-CPU time is asked about most. A command runs
# 1 s, recorded for 0.6 s: its thread "stuck" blocks reading a pipe from
# its start to the process's exit, its main thread sleeps the 1 s. On each
# backend, both threads' off-CPU time is at least 85% of the recording
# (report --threads), the stuck thread's under the kernel's pipe read
# and found by --symbol of its thread function.
# Builds before this charged a block only at its switch-in: 0 ms for
# both (0.3% of their lives).
# -p of it already running: both threads were off the CPU before the
# recording began; found at its start, they are charged from it, on
# their kernel stack and the user ip of their system call (before: not
# in the view at all).
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events

W=$(build_workload off_cpu)

# check BACKEND: records the workload and checks the two threads
check() {
	local b=$1 F=$TMP/$1.data
	expect_exit 0 "$DCPROF" record --backend "$b" --off-cpu -g \
		--duration 0.6 -o "$F" -- "$W" stuck 1
	expect_exit 0 "$DCPROF" report -i "$F" --threads --format json
	cp "$TMP/out" "$TMP/$b.threads.json"
	expect_exit 0 "$DCPROF" report -i "$F" --value off-cpu --children \
		--format json
	cp "$TMP/out" "$TMP/$b.children.json"
	# --symbol with off-CPU time: any frame of the stack (its leaf is
	# always the scheduler's; before, nothing matched the thread's own)
	expect_exit 0 "$DCPROF" report -i "$F" --value off-cpu \
		--symbol stuck_thread --format json
	python3 - "$TMP/out" "$TMP/$b.threads.json" "$b" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
length = json.load(open(sys.argv[2]))["length_ms"]
print("%s: --symbol stuck_thread: %.1f ms" % (sys.argv[3], d["total"] / 1e6))
assert d["total"] >= 0.85 * length * 1e6, d["total"]
PY
		die "$b: --symbol of a function on the off-CPU stacks matches too little"
	python3 - "$TMP/$b.threads.json" "$TMP/$b.children.json" "$b" <<'PY' ||
import json, sys
t = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
b = sys.argv[3]
length = t["length_ms"]
off = {}
for r in t["threads"]:
    off[r["thread"]] = off.get(r["thread"], 0) + r["interruptible_ms"] + \
        r["uninterruptible_ms"] + r["runnable_ms"]
print("%s: recording %.0f ms; off-CPU: stuck %.1f ms, main %.1f ms" %
      (b, length, off.get("stuck", 0), off.get("off_cpu", 0)))
for name in ("stuck", "off_cpu"):
    assert off.get(name, 0) >= 0.85 * length, \
        "%s: %s off the CPU %.1f of %.0f ms" % (b, name, off.get(name, 0), length)
# (pipe_read, anon_pipe_read since 6.16)
pipe = sum(r["children_ms"] for r in c["rows"]
           if r["symbol"].endswith("pipe_read") and r["comm"] == "stuck")
print("%s: under pipe_read %.1f ms" % (b, pipe))
assert pipe >= 0.85 * length, "%s: %.1f ms under pipe_read" % (b, pipe)
PY
		die "$b: the threads still switched out at the end are not charged"
}

# check_pid BACKEND: -p of the process already running, whose two
# threads went off the CPU before the recording began: found at its start
# (off_cpu.under_way), charged from it on their kernel stack and the user
# ip of their system call; none left without time
check_pid() {
	local b=$1 wpid
	"$W" stuck 1.5 &
	wpid=$!
	sleep 0.3
	expect_exit 0 "$DCPROF" record --backend "$b" --off-cpu -g \
		-p "$wpid" --duration 0.4 -o "$TMP/$b.pid.data"
	wait "$wpid"
	expect_exit 0 "$DCPROF" report -i "$TMP/$b.pid.data" --threads \
		--format json
	cp "$TMP/out" "$TMP/$b.pid.json"
	expect_exit 0 "$DCPROF" report -i "$TMP/$b.pid.data" --value off-cpu \
		--children --format json
	python3 - "$TMP/$b.pid.json" "$TMP/out" "$b" <<'PY' ||
import json, sys
t = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
b = sys.argv[3]
length = t["length_ms"]
off = {r["thread"]: r["interruptible_ms"] + r["uninterruptible_ms"] +
       r["runnable_ms"] for r in t["threads"]}
print("%s -p: recording %.0f ms; off-CPU %s; %d under way, %d without time"
      % (b, length, off, c["off_cpu"]["under_way"], t["threads_without_time"]))
for name in ("stuck", "off_cpu"):
    assert 0.85 * length <= off.get(name, 0) <= 1.02 * length, (name, off)
assert c["off_cpu"]["under_way"] >= 2, c["off_cpu"]
assert t["threads_without_time"] == 0, t["threads_without_time"]
syms = {r["symbol"]: r["children_ms"] for r in c["rows"]}
pipe = sum(v for k, v in syms.items() if k.endswith("pipe_read"))
libc_read = sum(v for k, v in syms.items() if k in ("read", "__libc_read"))
assert pipe >= 0.85 * length, "%.1f ms under pipe_read" % pipe
assert libc_read >= 0.85 * length, "%.1f ms under libc's read" % libc_read
# the rest of their user stacks is not known: said by a marker
assert syms.get("[truncated]", 0) >= 0.85 * length, syms
PY
		die "$b -p: the threads off the CPU at the start are not charged"
}

check perf
check_pid perf
need_bpf_backend
check bpf
check_pid bpf
pass
