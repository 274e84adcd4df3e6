#!/bin/bash
# exclusive: wants -c samples within 10% of the CPU time the workload saw, which load skews
# record's perf flags, each checked by what it selects:
#  -C 0: of two busy processes pinned to CPU 0 and CPU 1, only the first;
#  -c PERIOD: a command that burns a known CPU time gets CPU time / PERIOD
#    samples (within 10%);
#  -u USER: of a user's busy process, one it starts while recording and
#    root's, only the user's two;
#  -e page-faults -c N: a command that touches a known number of new pages
#    gets pages / N samples (within 10%);
#  -e cpu-clock:u -g: a command spending most of its time in system calls
#    has no kernel frame (and has some without :u).
. "$(dirname "$0")/test-lib.sh"
need gcc python3 taskset setpriv useradd userdel
need_root
need_perf_events

SPIN=$(build_workload spin)
BURN=$(build_workload cpu_burn)
TOUCH=$(build_workload touch_pages)
chmod 755 "$TMP" # the test user runs spin from here
mkdir -m 1777 "$TMP/ready" || die "cannot make a directory"

# start_spin NAME [PREFIX...]: a spinning process (run by PREFIX), running
# once this returns; $SPAWNED
start_spin() {
	local name=$1
	shift
	spawn "$@" "$SPIN" "$TMP/ready/$name"
	wait_file "$TMP/ready/$name"
}

# samples_by_pid FILE: "PID SAMPLES" lines of profile FILE
samples_by_pid() {
	"$DCPROF" report -i "$1" --sort pid --format json >"$TMP/pid.json" ||
		die "cannot report '$1'"
	python3 - "$TMP/pid.json" <<'PY'
import json, sys
n = {}
for r in json.load(open(sys.argv[1]))["rows"]:
    n[r["pid"]] = n.get(r["pid"], 0) + r["samples"]
for p, s in n.items():
    print(p, s)
PY
}

# samples_of FILE PID: the samples of process PID in profile FILE
samples_of() {
	samples_by_pid "$1" | awk -v p="$2" '$1 == p { s += $2 } END { print s + 0 }'
}

# within WHAT GOT WANT: fail unless GOT is WANT +- 10%
within() {
	python3 -c "import sys; g, w = int(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(g - w) > 0.1 * w)" \
		"$2" "$3" || die "$1: $2 samples, expected $3 +- 10%"
	echo "$TEST_NAME: $1: $2 samples (expected $3)"
}

# ---- -C 0 ---------------------------------------------------------------
if [ "$(nproc)" -ge 2 ]; then
	start_spin cpu0 taskset -c 0
	ON0=$SPAWNED
	start_spin cpu1 taskset -c 1
	ON1=$SPAWNED
	expect_exit 0 "$DCPROF" record -a -C 0 --duration 1.5 -o "$TMP/cpu.data"
	kill "$ON0" "$ON1"
	n0=$(samples_of "$TMP/cpu.data" "$ON0")
	n1=$(samples_of "$TMP/cpu.data" "$ON1")
	echo "$TEST_NAME: -C 0: $n0 samples of the spin on cpu 0, $n1 of the one on cpu 1"
	[ "$n0" -ge 200 ] || die "-C 0: only $n0 samples of the spin pinned to cpu 0"
	[ "$n1" -eq 0 ] || die "-C 0: $n1 samples of the spin pinned to cpu 1"
	"$DCPROF" report -i "$TMP/cpu.data" --format json >"$TMP/cpu.json"
	[ "$(json_get "$TMP/cpu.json" 'd["meta"]["nr_cpus"]')" = 1 ] ||
		die "-C 0: the profile says it sampled more than one cpu"
	expect_exit 2 "$DCPROF" record -C 0-x -o "$TMP/bad.data" -- true
	grep -q "invalid cpu list '0-x'" "$TMP/err" || die "-C 0-x: $(cat "$TMP/err")"
	expect_exit 1 "$DCPROF" record -C 4095 -o "$TMP/bad.data" -- true
	grep -q 'cpu 4095 is not online' "$TMP/err" ||
		die "-C of an offline cpu: $(cat "$TMP/err")"
else
	skip_part "-C: one cpu only"
fi

# ---- -c PERIOD: 2 s of CPU at 1 ms: 2000 samples -------------------------
# (which task a tick finds is by chance on a busy machine: enough samples
# keep that well inside the 10%)
expect_exit 0 "$DCPROF" record -c 1000000 -o "$TMP/period.data" -- "$BURN" 2
n=$(samples_by_pid "$TMP/period.data" | awk '{ s += $2 } END { print s + 0 }')
within "-c 1000000 over 2 s of CPU" "$n" 2000
expect_exit 0 "$DCPROF" record -e task-clock -c 2000000 -o "$TMP/period.data" -- "$BURN" 2
n=$(samples_by_pid "$TMP/period.data" | awk '{ s += $2 } END { print s + 0 }')
within "-e task-clock -c 2000000 over 2 s of CPU" "$n" 1000
expect_exit 2 "$DCPROF" record -F 99 -c 1000000 -o "$TMP/bad.data" -- true
grep -q -- '-F and -c exclude each other' "$TMP/err" || die "-F -c: $(cat "$TMP/err")"

# ---- -u USER --------------------------------------------------------------
USER_T=dcpt197-$$
useradd -M -r -s /usr/sbin/nologin "$USER_T" >/dev/null 2>&1 ||
	die "cannot create a test user"
trap 'userdel "$USER_T" 2>/dev/null; _cleanup' EXIT
AS_USER=(setpriv --reuid="$USER_T" --regid="$USER_T" --clear-groups)
start_spin root
ROOT_SPIN=$SPAWNED
start_spin user1 "${AS_USER[@]}"
USER1=$SPAWNED
mkfifo "$TMP/ready.fifo" || die "cannot make a fifo"
"$DCPROF" record -u "$USER_T" --duration 3 -o "$TMP/user.data" --ready-fd 3 \
	>"$TMP/user.out" 2>"$TMP/user.err" 3>"$TMP/ready.fifo" &
REC=$!
_spawned+=("$REC")
line=$(timeout 30 cat "$TMP/ready.fifo") || die "no ready line within 30 s"
[ "$line" = recording ] || die "-u: --ready-fd wrote '$line'"
start_spin user2 "${AS_USER[@]}" # started while recording
USER2=$SPAWNED
wait "$REC" || die "record -u failed: $(cat "$TMP/user.err")"
kill "$ROOT_SPIN" "$USER1" "$USER2"
samples_by_pid "$TMP/user.data" >"$TMP/user.pids"
echo "$TEST_NAME: -u: samples by pid: $(tr '\n' ' ' <"$TMP/user.pids") (root's spin $ROOT_SPIN, the user's $USER1 and $USER2)"
u1=$(samples_of "$TMP/user.data" "$USER1")
u2=$(samples_of "$TMP/user.data" "$USER2")
[ "$u1" -ge 300 ] || die "-u: only $u1 samples of the user's first spin"
[ "$u2" -ge 100 ] || die "-u: only $u2 samples of the spin the user started while recording"
awk -v a="$USER1" -v b="$USER2" '$1 != a && $1 != b { exit 1 }' "$TMP/user.pids" ||
	die "-u: samples of other users' processes: $(tr '\n' ' ' <"$TMP/user.pids")"
expect_exit 2 "$DCPROF" record -u no-such-user-197 -o "$TMP/bad.data"
grep -q "no such user: 'no-such-user-197'" "$TMP/err" || die "-u of no user: $(cat "$TMP/err")"

# ---- -e page-faults -c 1000: 200000 new pages, 200 samples ---------------
expect_exit 0 "$DCPROF" record -e page-faults -c 1000 -o "$TMP/pf.data" -- "$TOUCH" 200000
n=$(samples_by_pid "$TMP/pf.data" | awk '{ s += $2 } END { print s + 0 }')
within "-e page-faults -c 1000 over 200000 pages" "$n" 200
"$DCPROF" report -i "$TMP/pf.data" --format json >"$TMP/pf.json"
[ "$(json_get "$TMP/pf.json" 'd["meta"]["event"]')" = page-faults ] ||
	die "the profile does not name the event page-faults"
"$DCPROF" report -i "$TMP/pf.data" | grep -q '^# recorded .* event page-faults every 1000$' ||
	die "the report header does not say 'event page-faults every 1000'"
expect_exit 0 "$DCPROF" record -e minor-faults -c 1000 -o "$TMP/pf.data" -- "$TOUCH" 100000
n=$(samples_by_pid "$TMP/pf.data" | awk '{ s += $2 } END { print s + 0 }')
within "-e minor-faults -c 1000 over 100000 pages" "$n" 100
for ev in context-switches cpu-migrations major-faults cpu-clock:k; do
	expect_exit 0 "$DCPROF" record -e "$ev" -o "$TMP/ev.data" -- "$BURN" 0.2
done
expect_exit 1 "$DCPROF" record -e cpu-clock:x -o "$TMP/bad.data" -- true
one_line_error
grep -q "unknown modifier ':x'" "$TMP/err" || die "-e cpu-clock:x: $(cat "$TMP/err")"

# ---- -e cpu-clock:u: no kernel frame --------------------------------------
# kernel_samples FILE: samples of profile FILE with a kernel frame anywhere
kernel_samples() {
	"$DCPROF" report -i "$1" --sort file --children --format json \
		>"$TMP/k.json" || die "cannot report '$1'"
	json_get "$TMP/k.json" \
		'sum(r["children"] for r in d["rows"] if r["file"].startswith("[kernel"))'
}
expect_exit 0 "$DCPROF" record -g -o "$TMP/k.data" -- "$BURN" 1 syscalls
k=$(kernel_samples "$TMP/k.data")
[ "$k" -ge 100 ] || die "without :u, only $k samples have kernel frames"
expect_exit 0 "$DCPROF" record -g -e cpu-clock:u -o "$TMP/u.data" -- "$BURN" 1 syscalls
k=$(kernel_samples "$TMP/u.data")
n=$(samples_by_pid "$TMP/u.data" | awk '{ s += $2 } END { print s + 0 }')
echo "$TEST_NAME: -e cpu-clock:u: $n samples, $k with kernel frames"
[ "$n" -ge 50 ] || die "-e cpu-clock:u: only $n samples"
[ "$k" -eq 0 ] || die "-e cpu-clock:u: $k samples have kernel frames"
"$DCPROF" report -i "$TMP/u.data" --format json >"$TMP/u.json"
[ "$(json_get "$TMP/u.json" 'd["meta"]["event"]')" = cpu-clock:u ] ||
	die "the profile does not name the event cpu-clock:u"
[ "$(json_get "$TMP/u.json" 'd["meta"]["kernel_excluded"]')" = false ] ||
	die ":u is not the kernel's refusal: kernel_excluded must stay false"

pass
