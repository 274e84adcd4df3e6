#!/bin/bash
# exclusive: bounds the recorder's memory under -a through 100,000 forks
# 100,000 short-lived processes: fault_forks starts 100,000 children that
# exit at once (at most 64 alive; cloned sharing its memory, see the
# workload: a FORK record each, with the parent's maps, as fork gives),
# pausing after 20,000 and after 100,000. The recorder (system-wide, -g)
# must stay under 64 MiB resident, and must keep nothing of a process past
# its end but the profile's own data: the rows (one per pid and stack)
# and the stacks it has. Its peak (VmHWM) at 100,000 may exceed the one at
# 20,000 by at most 25% + 4 MiB plus what the rows and stacks added in
# between cost in memory (56 bytes a row: 40 in the row array, 16 of hash
# index at most; 40 a stack and 16 a frame), read from the working file
# at both points. A leak of 112 bytes a process, added by hand to the
# FORK replay, fails it (12 MiB of growth against 8 allowed). The
# recording must then finish, open complete, and have seen the
# processes: the profile keeps no count of processes seen, so the check
# is on what it does print: the children's samples are named after their
# parent ("fault_forks", a name they only get from the recorder following
# each fork), in at least COUNT/200 distinct children (about one child in
# fifty is sampled here; a recorder that misses forks names them ":PID").
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events
# ASan's shadow memory and quarantine make resident size meaningless here;
# the plain build's run of this test holds the bound.
[ -z "$SAN_CFLAGS" ] || skip "memory bounds are measured on the plain build"
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

COUNT=${FORKS:-100000}
STEP=$((COUNT / 5))
LIMIT_KB=$((64 * 1024))
FORKS_BIN=$(build_workload fault_forks)

F=$TMP/forks.data
"$DCPROF" record -a -g -o "$F" --ready-fd 3 >"$TMP/rec.out" \
	2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
REC=$!
_spawned+=("$REC")
wait_line "$TMP/rec.ready" '^recording$' 30

hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$REC/status"; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$REC/status"; }
# the recorder has caught up with the records of a batch once its peak
# stays put for 1 s (at most 20 s): not a fixed pause a slow machine
# outruns
settle() {
	local i same=0 prev='' cur
	for ((i = 0; i < 40 && same < 2; i++)); do
		sleep 0.5
		cur=$(hwm)
		if [ "$cur" = "$prev" ]; then same=$((same + 1)); else same=0; fi
		prev=$cur
	done
	[ "$same" -ge 2 ] || echo "note: the recorder's peak still grew after 20 s ($cur KiB)"
}
# rows, distinct stacks and their frames in a profile (the working file
# while recording)
gcc -std=gnu11 -Wall -Werror -I"$TOP/include" -o "$TMP/data_size" -x c - \
	-L"$BUILD" -ldcprof -Wl,-rpath,"$BUILD" <<'C' ||
#include <dcprof/dcprof.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct stack {
	uintptr_t frames; /* rows of one stack share its frames */
	uint32_t nr_frames;
};

static int cmp_stack(const void *a, const void *b)
{
	uintptr_t x = ((const struct stack *)a)->frames;
	uintptr_t y = ((const struct stack *)b)->frames;

	return x < y ? -1 : x > y;
}

/* usage: data_size PROFILE; prints: rows stacks frames */
int main(int argc, char **argv)
{
	struct dcp_sample_row row = { .sz = sizeof(row) };
	struct dcp_profile *p = argc == 2 ? dcp_profile_open(argv[1]) : NULL;
	size_t n, i, stacks = 0, frames = 0;
	struct stack *s;

	if (!p)
		return 1;
	n = dcp_profile_nr_rows(p);
	s = calloc(n + 1, sizeof(*s));
	if (!s)
		return 1;
	for (i = 0; i < n; i++) {
		if (dcp_profile_row(p, i, &row))
			return 1;
		s[i].frames = (uintptr_t)row.frames;
		s[i].nr_frames = row.nr_frames;
	}
	qsort(s, n, sizeof(*s), cmp_stack);
	for (i = 0; i < n; i++) {
		if (i && s[i].frames == s[i - 1].frames)
			continue;
		stacks++;
		frames += s[i].nr_frames;
	}
	printf("%zu %zu %zu\n", n, stacks, frames);
	free(s);
	dcp_profile_close(p);
	return 0;
}
C
	die "cannot build the profile counter"
# the working file's rows, stacks and frames once a flush (every 2 s; each
# one grows the file) has followed the settled recorder
data_size() {
	local size i
	size=$(stat -c %s "$F")
	for ((i = 0; i < 50 && $(stat -c %s "$F") == size; i++)); do
		sleep 0.2
	done
	"$TMP/data_size" "$F"
}
PAUSE=$TMP/pause
"$FORKS_BIN" "$COUNT" "$STEP" "$PAUSE" >"$TMP/forks.out" &
FP=$!
_spawned+=("$FP")
base=$(hwm)
h20=
for ((done = STEP; done < COUNT; done += STEP)); do
	wait_file "$PAUSE" 120
	settle
	h=$(hwm)
	sz=$(data_size) || die "cannot read the working file"
	read -r rows stacks frames <<<"$sz"
	echo "after $(cat "$PAUSE") forks: VmHWM $h KiB, VmRSS $(rss) KiB;" \
		"$rows rows, $stacks stacks of $frames frames"
	[ -z "$h20" ] && h20=$h && data20=($rows $stacks $frames)
	rm -f "$PAUSE"
done
wait "$FP" || die "fault_forks failed: $(cat "$TMP/forks.out")"
cat "$TMP/forks.out"
settle
h100=$(hwm)
sz=$(data_size) || die "cannot read the working file"
read -r rows stacks frames <<<"$sz"
echo "after $COUNT forks: VmHWM $h100 KiB, VmRSS $(rss) KiB (at start" \
	"$base KiB); $rows rows, $stacks stacks of $frames frames"
data_kb=$((((rows - data20[0]) * 56 + (stacks - data20[1]) * 40 +
	(frames - data20[2]) * 16) / 1024))
kill -INT "$REC"
wait "$REC"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc: $(cat "$TMP/rec.err")"

[ "$h100" -le "$LIMIT_KB" ] || die "the recorder grew to $h100 KiB"
echo "growth allowed: $((h20 / 4 + 4096)) KiB + $data_kb KiB of rows and stacks"
[ "$h100" -le $((h20 * 5 / 4 + 4096 + data_kb)) ] ||
	die "the recorder grows with the processes: $h20 KiB at $STEP, $h100 KiB at $COUNT, $data_kb KiB of it the profile's rows and stacks"

expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid --format json
cp "$TMP/out" "$TMP/forks.json"
python3 - "$TMP/forks.json" "$COUNT" "$FP" <<'PY' || die "the fork storm is not in the profile"
import json, sys
d = json.load(open(sys.argv[1]))
count, parent = int(sys.argv[2]), int(sys.argv[3])
s = d["stats"]
print({k: s[k] for k in ("samples", "lost_records", "lost_samples",
                         "reorder_late", "tasks_injected") if k in s})
assert d["meta"]["complete"], "incomplete profile"
named = {r["pid"] for r in d["rows"] if r["comm"] == "fault_forks"}
children = named - {parent}
print("children sampled under the name fault_forks: %d (of %d forked)"
      % (len(children), count))
assert parent in named, "the parent %d is not named fault_forks" % parent
assert len(children) >= count // 200, \
    "only %d children named: forks missed" % len(children)
PY
pass
