#!/bin/bash
# Files of other users are read only through the recorder's pinned
# handles: a program of user nobody, in a directory nobody owns, runs
# before and during a system-wide recording; while recording, nobody
# swaps the program's path for a symlink to a file only root may read
# (/etc/shadow) and then for another program. The recorder must never open
# that path (strace: no open of it at all), and the report must still name
# the program's own function, read from the pinned file.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 strace setpriv
need_root
need_perf_events
id nobody >/dev/null 2>&1 || skip "no user nobody"

chmod 755 "$TMP"
D=$TMP/other
mkdir "$D" && chmod 755 "$D" || die "cannot make '$D'"
SPIN=$(build_workload spin)
cp "$SPIN" "$D/prog" && chmod 755 "$D/prog" || die "cannot copy the workload"
chown -R nobody "$D" || die "cannot give '$D' to nobody"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
as_nobody() { "${NOBODY[@]}" "$@"; }

# One copy runs before the recording (collection walk), one starts during.
spawn "${NOBODY[@]}" "$D/prog" "$D/ready1"
first=$SPAWNED
wait_file "$D/ready1"
# LeakSanitizer cannot run under ptrace: off for the traced recorder of a
# sanitized build (the other tests check its leaks).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -e trace=open,openat,openat2 -o "$TMP/trace" \
	"$DCPROF" record -a --duration 3 -o "$TMP/p.data" >"$TMP/rec.out" 2>"$TMP/rec.err" &
rec=$!
_spawned+=("$rec")
wait_file "$TMP/p.data"
spawn "${NOBODY[@]}" "$D/prog" "$D/ready2"
second=$SPAWNED
wait_file "$D/ready2"
# The swap must come after the recorder pinned the program (at its first
# sample of it, after the walk of the existing tasks): wait for its handle
# (the recorder is strace's child), then half a second for the second
# copy's samples.
recorder=
for ((i = 0; i < 300; i++)); do
	[ -n "$recorder" ] || recorder=$(pgrep -P "$rec" -x dcprof | head -1)
	[ -n "$recorder" ] &&
		[[ $(ls -l "/proc/$recorder/fd" 2>/dev/null) == *" $D/prog"* ]] && break
	[ -e "/proc/$rec" ] || die "the recorder exited: $(cat "$TMP/rec.err")"
	sleep 0.05
done
[ "$i" -lt 300 ] || die "the recorder holds no handle on '$D/prog' after 15 s"
echo "pinned after $((i * 50)) ms"
sleep 0.5
# The swap, by the file's owner: first a link to a file only root reads,
# then another program at the same path.
as_nobody mv "$D/prog" "$D/prog.gone" || die "nobody cannot move the program"
as_nobody ln -s /etc/shadow "$D/prog" || die "nobody cannot plant the link"
sleep 0.5
as_nobody rm "$D/prog"
as_nobody cp /bin/true "$D/prog"
wait "$rec" || die "record failed: $(cat "$TMP/rec.err")"
kill "$first" "$second" 2>/dev/null

# No open of the path, nor of anything under the directory, by the recorder.
grep -F "$D/" "$TMP/trace" | grep -v ENOENT >"$TMP/opens"
[ -s "$TMP/opens" ] && die "the recorder opened the other user's path: $(head -3 "$TMP/opens")"
grep -q '/etc/shadow' "$TMP/trace" && die "the recorder opened /etc/shadow"

expect_exit 0 "$DCPROF" report -i "$TMP/p.data" --sort pid,symbol --format json
python3 - "$TMP/out" "$first" "$second" <<'PY' || die "the pinned program is not named"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for pid in map(int, sys.argv[2:]):
    mine = [r for r in rows if r["pid"] == pid]
    n = sum(r["samples"] for r in mine)
    named = sum(r["samples"] for r in mine if r["symbol"] == "spin_forever")
    print("pid %d: %d of %d samples in spin_forever" % (pid, named, n))
    assert n >= 100 and named >= 0.95 * n, mine[:5]
PY
pass
