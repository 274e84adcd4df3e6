#!/bin/bash
# exclusive: sets kernel.perf_event_paranoid for the machine
# Without root (issue 18): an unprivileged user records their own programs.
# As root, the test creates a user (removed at exit) and runs dcprof as it
# with setpriv; as another user, it runs as that user. With
# perf_event_paranoid above 0, per-CPU events are refused to that user and
# dcprof falls back to per-task events with inherit:
#  - the split workload per command: shares within 3 points of its measured
#    truth, no kernel frames claimed, and the report (text and JSON) says
#    kernel frames were not allowed (paranoid 2); the file is the user's,
#    mode 0600;
#  - a fork/exec storm per command: the children's sampled CPU at least 90%
#    of their getrusage CPU (children of 40 ms: a per-task timer loses up
#    to one period of each new task, 1 ms at 999 Hz), or perf record's
#    share as the same user less 3 points, if that is lower;
#  - --call-graph dwarf per command: >= 95% full chains, as for root;
#  - -p of the user's own running process: all its samples kept, in its
#    own function;
#  - -p of root's process: one clear line naming the reason, non-zero, no
#    file; -a: the clear refusal naming CAP_PERFMON and the sysctl, no file;
#  - top -p of the user's own split workload (top --stdio, 2 intervals):
#    the same fallback, the three functions named, no kernel frames;
#  - top -- split (top --stdio, the command started by top): the same
#    fallback said in one line, the command's pid only, its three
#    functions within 3 points of its truth in the final totals, no kernel
#    frames, and top ends with the command;
#  - perf_event_paranoid 3 (as root, set for this part and restored): a
#    kernel that refuses every perf event to users then (Debian's patch;
#    tests/tools/perf_gate.c probes which this kernel is) must get one line
#    naming kernel.perf_event_paranoid and CAP_PERFMON, a non-zero status
#    and no file; one that treats 3 as 2 (upstream) must record as with 2.
#    The refusal is also checked on any kernel through perf_gate's seccomp
#    filter, which fails perf_event_open with EACCES as Debian's kernels do.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 setpriv

PARANOID=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$PARANOID" -le 2 ] || skip "perf_event_paranoid is $PARANOID: no perf events for users"
PARANOID_FILE=/proc/sys/kernel/perf_event_paranoid
restore_paranoid() {
	[ "$(cat "$PARANOID_FILE")" = "$PARANOID" ] ||
		echo "$PARANOID" >"$PARANOID_FILE"
}

# the user and a directory it owns
chmod 711 "$TMP"
U=$TMP/u
mkdir -p "$U/home"
if [ "$(id -u)" -eq 0 ]; then
	need useradd userdel
	NAME=dcpnr$$
	useradd -M -d "$U/home" -s /bin/false "$NAME" ||
		die "cannot create the user '$NAME'"
	# paranoid is raised to 3 for one part: put back in any case
	trap 'restore_paranoid; pkill -KILL -u "$NAME" 2>/dev/null; userdel "$NAME" 2>/dev/null; _cleanup' EXIT
	chown -R "$NAME:" "$U"
	as_user() { setpriv --reuid="$NAME" --regid="$(id -g "$NAME")" \
		--clear-groups env HOME="$U/home" "$@"; }
	UID_USER=$(id -u "$NAME")
else
	as_user() { "$@"; }
	UID_USER=$(id -u)
fi
# the build must be readable by the user
as_user test -x "$DCPROF" || skip "the user cannot run '$DCPROF'"
[ "$PARANOID" -ge 1 ] || skip_part "perf_event_paranoid is $PARANOID: the per-task fallback is not exercised"

W=$TOP/tests/workloads
wl() { # NAME [GCC ARGS]: build tests/workloads/NAME.c into $U
	local n=$1
	shift
	gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -Wl,--build-id \
		-o "$U/$n" "$W/$n.c" -lpthread "$@" || die "cannot build '$n'"
}
wl split
wl storm
wl spin
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -shared -fPIC -Wl,--build-id \
	-o "$U/libdcpwork.so" "$W/unwind_lib.c" &&
	gcc -std=gnu11 -O1 -g -fomit-frame-pointer -Wl,--build-id \
		-o "$U/unwind_main" "$W/unwind_main.c" -L"$U" -ldcpwork \
		-Wl,-rpath,"$U" || die "cannot build the dwarf workload"
gcc -std=gnu11 -O1 -o "$U/perf_gate" "$TOP/tests/tools/perf_gate.c" ||
	die "cannot build perf_gate"
gcc -std=gnu11 -O1 -g $SAN_CFLAGS -I"$TOP/include" -o "$TMP/folded" \
	"$TOP/tests/tools/folded.c" -L"$BUILD" -ldcprof -Wl,-rpath,"$BUILD" ||
	die "cannot build the folded-stacks tool"
[ "$(id -u)" -ne 0 ] || chown -R "$NAME:" "$U"

# 1. the split workload per command
F=$U/split.data
expect_exit 0 as_user "$DCPROF" record -o "$F" -- "$U/split" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"
[ "$PARANOID" -lt 1 ] || grep -q 'per-task events' "$TMP/err" ||
	die "no line says the recording fell back to per-task events: $(cat "$TMP/err")"
# the README's promise: one line, not one per thing the user lacks
[ "$PARANOID" -lt 1 ] || [ "$(grep -c '^dcprof: warning:' "$TMP/err")" -eq 1 ] ||
	die "more than one warning as a user: $(grep '^dcprof: warning:' "$TMP/err")"
[ "$(stat -c %u:%a "$F")" = "$UID_USER:600" ] ||
	die "the profile is $(stat -c %u:%a "$F"), not the user's with mode 600"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort file,symbol
cp "$TMP/out" "$TMP/split.json"
python3 - "$TMP/split.json" "$PARANOID" <<'PY' || die "split as a user is off"
import json, sys
d = json.load(open(sys.argv[1]))
paranoid = int(sys.argv[2])
assert d["meta"]["complete"], "incomplete"
kernel = sum(r["samples"] for r in d["rows"] if r["file"].startswith("[kernel"))
print("kernel frames: %d samples; kernel_excluded %s" % (kernel, d["meta"].get("kernel_excluded")))
if paranoid >= 2:
    assert d["meta"].get("kernel_excluded") is True, "the meta does not say kernel frames were not allowed"
    assert kernel == 0, "%d samples claim kernel frames" % kernel
PY
# each function's samples in every file (the rows are by file and symbol)
report_counts "$TMP/split.json" | check_split_shares "$TMP/truth" 2000 3 ||
	die "split as a user is off"
if [ "$PARANOID" -ge 2 ]; then
	expect_exit 0 "$DCPROF" report -i "$F"
	grep -q '^# .*kernel frames were not allowed' "$TMP/out" ||
		die "the report header does not say kernel frames were not allowed"
fi

# 2. a fork/exec storm per command: 80 children of 40 ms
expect_exit 0 as_user "$DCPROF" record -o "$U/storm.data" -- "$U/storm" 80 40
read -r _ _ PARENT _ CPU_US _ <"$TMP/out" && [ -n "$CPU_US" ] ||
	die "storm printed no summary: $(cat "$TMP/out")"
expect_exit 0 "$DCPROF" report -i "$U/storm.data" --sort comm,pid --format json
children=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(r["samples"] for r in d["rows"]
          if r["comm"] in ("storm", "storm-parent") and r["pid"] != int(sys.argv[2])))
' "$TMP/out" "$PARENT") || die "cannot read the storm's report"
want=$((CPU_US * 999 / 1000000))
echo "storm: children sampled $children, their CPU time says $want"
# perf record as the same user, the reference: per-task cpu-clock events
# miss part of a short-lived child's time on some VMs (88% of it for both
# on a kvm-clock guest, 95% and more elsewhere); dcprof is held to 90% or
# to perf's share less 3 points, whichever is lower
floor=90
if command -v perf >/dev/null; then
	as_user perf record -q -F 999 -o "$U/perf.data" -- "$U/storm" 80 40 \
		>"$TMP/pout" 2>"$TMP/perr" ||
		die "perf record of the storm failed: $(tail -3 "$TMP/perr")"
	read -r _ _ PPARENT _ PCPU_US _ <"$TMP/pout" && [ -n "$PCPU_US" ] ||
		die "storm printed no summary under perf: $(cat "$TMP/pout")"
	pchildren=$(perf script -f -i "$U/perf.data" -F pid 2>/dev/null |
		awk -v p="$PPARENT" '$1 != p' | wc -l)
	pwant=$((PCPU_US * 999 / 1000000))
	pshare=$((pchildren * 100 / (pwant ? pwant : 1)))
	echo "storm under perf record: children sampled $pchildren, their CPU time says $pwant ($pshare%)"
	[ $((pshare - 3)) -lt "$floor" ] && floor=$((pshare - 3))
else
	skip_part "perf is not installed: dcprof is held to 90% of the children's CPU time"
fi
[ $((children * 100)) -ge $((want * floor)) ] ||
	die "the children sampled $children, less than $floor% of their CPU time ($want)"

# 3. --call-graph dwarf per command: full chains
expect_exit 0 as_user "$DCPROF" record --call-graph dwarf -o "$U/dwarf.data" \
	-- "$U/unwind_main" cb 3
"$TMP/folded" -u "$U/dwarf.data" >"$TMP/dwarf.folded" 2>/dev/null ||
	die "cannot read dwarf.data"
python3 - "$TMP/dwarf.folded" <<'PY' || die "dwarf chains as a user are incomplete"
import sys
cb = full = 0
for line in open(sys.argv[1]):
    stack, count = line.rsplit(" ", 1)
    f = stack.split(";")
    if f[0] != "unwind_main" or not ("cb_seventy" in f or "cb_thirty" in f):
        continue
    cb += int(count)
    n = [x for x in f if x in ("main", "unwind_lib_run", "cb_seventy", "cb_thirty")]
    if n[:2] == ["main", "unwind_lib_run"] and len(n) == 3:
        full += int(count)
print("callback samples %d, full chains %d" % (cb, full))
assert cb >= 1000, "only %d callback samples" % cb
assert full >= 0.95 * cb, "only %d of %d complete" % (full, cb)
PY

# 4. -p of the user's own running process
rm -f "$U/ready"
spawn as_user "$U/spin" "$U/ready"
SPIN=$SPAWNED
wait_file "$U/ready"
SPIN_PID=$(pgrep -n -f "^$U/spin ") || die "no spin process"
expect_exit 0 as_user "$DCPROF" record -p "$SPIN_PID" --duration 2 -o "$U/p.data"
kill -KILL "$SPIN" 2>/dev/null
wait "$SPIN" 2>/dev/null
expect_exit 0 "$DCPROF" report -i "$U/p.data" --sort pid,symbol --format json
python3 - "$TMP/out" "$SPIN_PID" <<'PY' || die "-p of the user's own process"
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
total = sum(r["samples"] for r in d["rows"])
mine = sum(r["samples"] for r in d["rows"]
           if r["pid"] == pid and r["symbol"] == "spin_forever")
print("-p %d: %d of %d samples in spin_forever" % (pid, mine, total))
assert total >= 300, "only %d samples" % total
assert mine == total, "%d of %d samples elsewhere" % (total - mine, total)
PY

# The refusals are one line; the BPF backend's auto mode may say first
# that it fell back to the perf backend (its own line, not a refusal's).
refusal_line() {
	grep -v 'using the perf backend' "$TMP/err" >"$TMP/err.1"
	mv "$TMP/err.1" "$TMP/err"
	one_line_error
}

# 5. -p of root's process: a clear refusal, no file
if [ "$(id -u)" -eq 0 ]; then
	spawn sleep 60
	ROOTPID=$SPAWNED
	as_user "$DCPROF" record -p "$ROOTPID" --duration 1 -o "$U/root.data" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "-p of root's process exited $rc"
	refusal_line
	grep -q "another user" "$TMP/err" && grep -q CAP_PERFMON "$TMP/err" ||
		die "the refusal does not say why: $(cat "$TMP/err")"
	[ ! -e "$U/root.data" ] || die "a refused recording left a file"
	kill -KILL "$ROOTPID" 2>/dev/null
	wait "$ROOTPID" 2>/dev/null
else
	skip_part "not root: no process of root's to refuse"
fi

# 6. -a: the clear refusal
if [ "$PARANOID" -ge 1 ]; then
	as_user "$DCPROF" record -a --duration 1 -o "$U/all.data" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "-a as a user exited $rc"
	refusal_line
	grep -q CAP_PERFMON "$TMP/err" && grep -q perf_event_paranoid "$TMP/err" ||
		die "the -a refusal does not name CAP_PERFMON and the sysctl: $(cat "$TMP/err")"
	[ ! -e "$U/all.data" ] || die "a refused recording left a file"
	# --off-cpu the same: why (per-CPU events), not tracefs's fallback
	# path that is not there (it said 'No such file or directory')
	as_user "$DCPROF" record --off-cpu -o "$U/off.data" -- "$U/split" 0.2 \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "--off-cpu as a user exited $rc"
	refusal_line
	grep -q "off-cpu needs per-CPU events.*CAP_PERFMON" "$TMP/err" ||
		die "the --off-cpu refusal does not say why: $(cat "$TMP/err")"
	[ ! -e "$U/off.data" ] || die "a refused recording left a file"
fi

# 7. top -p of the user's own process: the same per-task fallback
spawn as_user "$U/split" 8
SPLIT=$SPAWNED
for ((i = 0; i < 50; i++)); do
	SPLIT_PID=$(pgrep -n -f "^$U/split 8") && break
	sleep 0.1
done
[ -n "$SPLIT_PID" ] || die "no split process"
expect_exit 0 as_user "$DCPROF" top -p "$SPLIT_PID" --stdio --iterations 2 \
	--delay 1.5 --format json --sort file,symbol --limit 50
cp "$TMP/out" "$TMP/top.json"
[ "$PARANOID" -lt 1 ] || grep -q 'per-task events' "$TMP/err" ||
	die "top does not say it fell back to per-task events: $(cat "$TMP/err")"
kill -KILL "$SPLIT" 2>/dev/null
wait "$SPLIT" 2>/dev/null
python3 - "$TMP/top.json" "$U/split" "$PARANOID" <<'PY' || die "top -p as a user"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, "want 2 intervals, got %d lines" % len(lines)
want = {"work_fifty", "work_thirty", "work_twenty"}
for n, line in enumerate(lines, 1):
    d = json.loads(line)
    rows = d["rows"]
    named = {r["symbol"]: r["samples"] for r in rows if r["file"] == sys.argv[2]}
    kernel = sum(r["samples"] for r in rows if r["file"].startswith("[kernel"))
    print("interval %d: %s; kernel %d of %d" % (n, named, kernel, d["samples"]))
    assert want <= set(named), "interval %d names %s" % (n, sorted(named))
    assert sum(named[s] for s in want) >= 0.9 * d["samples"] >= 200, \
        "interval %d: %d samples, %d in split's functions" % (
            n, d["samples"], sum(named[s] for s in want))
    if int(sys.argv[3]) >= 2:
        assert kernel == 0, "interval %d: %d samples in kernel frames" % (n, kernel)
PY

# 7b. top -- CMD as the user: the command started per task with inherit
expect_exit 0 as_user "$DCPROF" top --stdio --iterations 60 --format json \
	--sort pid,file,symbol --limit 50 -- "$U/split" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/top-cmd.truth" || die "top -- split printed no truth"
grep '^{' "$TMP/out" >"$TMP/top-cmd.json"
if [ "$PARANOID" -ge 1 ]; then
	[ "$(grep -c 'per-task events' "$TMP/err")" -eq 1 ] ||
		die "top -- CMD does not say once it fell back to per-task events: $(cat "$TMP/err")"
fi
python3 - "$TMP/top-cmd.json" "$U/split" "$PARANOID" \
	>"$TMP/top-cmd.counts" <<'PY' || die "top -- CMD as a user"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert 2 <= len(objs) < 60, "%d tables" % len(objs)
last = objs[-1]
assert last["command_exited"] and last["command_status"] == 0, "the last table does not say the command ended"
assert not any(d["command_exited"] for d in objs[:-1])
pid = last["command_pid"]
for d in objs:
    pids = {int(r["pid"]) for r in d["rows"]}
    assert pids <= {pid}, "rows of pids %s, the command is %d" % (pids, pid)
    kernel = sum(r["session_samples"] for r in d["rows"] if r["file"].startswith("[kernel"))
    if int(sys.argv[3]) >= 2:
        assert kernel == 0, "%d samples in kernel frames" % kernel
# the session's samples of the split's own functions
for r in last["rows"]:
    if r["file"] == sys.argv[2]:
        print(r["symbol"], r["session_samples"])
PY
check_split_shares "$TMP/top-cmd.truth" 1500 3 "top -- split as a user," \
	<"$TMP/top-cmd.counts" || die "top -- CMD as a user"

# 8. perf_event_paranoid 3
# refused3 CMD...: as the user, CMD must be refused for paranoid 3: one
# line naming the sysctl and the capability, a status below 128 and not 0,
# no file.
refused3() {
	rm -f "$U/p3.data"
	as_user "$@" "$DCPROF" record -o "$U/p3.data" -- "$U/split" 1 \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] ||
		die "paranoid 3 refused: exited $rc: $(cat "$TMP/err")"
	refusal_line
	grep -qF 'kernel.perf_event_paranoid' "$TMP/err" &&
		grep -q CAP_PERFMON "$TMP/err" ||
		die "the paranoid 3 refusal does not name kernel.perf_event_paranoid and CAP_PERFMON: $(cat "$TMP/err")"
	[ ! -e "$U/p3.data" ] || die "a refused recording left a file"
	! compgen -G "$U/p3.data*" >/dev/null ||
		die "a refused recording left $(compgen -G "$U/p3.data*")"
	echo "paranoid 3 refused: $(cat "$TMP/err")"
}
if [ "$(id -u)" -eq 0 ] && [ "$PARANOID" -ge 1 ]; then
	echo 3 >"$PARANOID_FILE" || die "cannot set perf_event_paranoid to 3"
	as_user "$U/perf_gate" probe
	case $? in
	0)
		echo "this kernel lets users open perf events with paranoid 3 (as 2)"
		expect_exit 0 as_user "$DCPROF" record -o "$U/p3.data" -- \
			"$U/split" 1
		grep -q 'per-task events' "$TMP/err" ||
			die "paranoid 3: no per-task fallback: $(cat "$TMP/err")"
		restore_paranoid
		expect_exit 0 "$DCPROF" report -i "$U/p3.data" --format json \
			--sort symbol
		python3 - "$TMP/out" <<'PY' || die "paranoid 3 (as 2) recorded wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["meta"]["complete"] and d["meta"].get("kernel_excluded") is True
syms = {r["symbol"] for r in d["rows"]}
assert {"work_fifty", "work_thirty", "work_twenty"} <= syms, syms
PY
		;;
	1)
		echo "this kernel refuses users every perf event with paranoid 3"
		refused3
		;;
	*) die "perf_gate probe failed" ;;
	esac
	# Debian's refusal, simulated where the kernel does not refuse
	echo 3 >"$PARANOID_FILE" || die "cannot set perf_event_paranoid to 3"
	refused3 "$U/perf_gate" deny
	restore_paranoid
else
	skip_part "not root (or paranoid 0): perf_event_paranoid 3 is not tried"
fi

pass
