#!/bin/bash
# record --continuous under faults and limits: retention by age (--keep)
# and by size (--keep-size), oldest first, never a file dcprof did not
# name; a tmpfs that fills mid-run: the period that cannot be written is
# dropped with one log line and counted, every finished file stays
# intact, and writing resumes once space is freed; bad input (--period 0,
# a DIR that is a file or on a read-only file system, bad ages and sizes,
# options that need --continuous) is refused before recording starts.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 mount umount
need_root
need_perf_events

SPLIT=$(build_workload split)
spawn "$SPLIT" 120
pid=$SPAWNED

# a period file of its own name
period_count() { grep -c "^dcprof: period '" "$1"; }

# --keep: nothing older than 3 s stays; a file dcprof did not name stays
D=$TMP/age
mkdir "$D" && echo mine >"$D/notes.txt" && echo mine >"$D/20200101T000000.000Z-x.txt"
expect_exit 0 "$DCPROF" record -F 199 -p "$pid" --continuous "$D" --period 1 \
	--keep 3s --duration 7
grep -q "removed .*(--keep)" "$TMP/err" || die "--keep removed nothing: $(cat "$TMP/err")"
[ -e "$D/notes.txt" ] && [ -e "$D/20200101T000000.000Z-x.txt" ] ||
	die "--keep removed a file dcprof did not name"
python3 - "$D" <<'PY' || die "--keep left an old period"
import os, sys, time, datetime
now = time.time()
for n in os.listdir(sys.argv[1]):
    if not n.endswith(".dcprof"):
        continue
    t = datetime.datetime.strptime(n[:19], "%Y%m%dT%H%M%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    print(n, "%.1f s old" % (now - t))
    assert now - t <= 3 + 1 + 0.5, n + " is older than --keep 3s"
PY

# --keep-size: the finished periods take at most the size given
D=$TMP/size
expect_exit 0 "$DCPROF" record -F 199 -p "$pid" --continuous "$D" --period 1 \
	--keep-size 6K --duration 7
grep -q "removed .*(--keep-size)" "$TMP/err" || die "--keep-size removed nothing"
total=$(cat "$D"/*.dcprof | wc -c)
echo "--keep-size 6K: $(ls "$D" | wc -l) files, $total bytes"
[ "$total" -le 6144 ] || die "--keep-size 6K left $total bytes"
# the newest stay: the last period written is there
last=$(sed -n "s/^dcprof: period '\([^']*\)'.*/\1/p" "$TMP/err" | tail -1)
[ -e "$last" ] || die "--keep-size removed the newest period"

# disk full: a tmpfs filled mid-run, then freed
MNT=$TMP/small
mkdir "$MNT" || die "cannot create '$MNT'"
mount -t tmpfs -o size=512k tmpfs "$MNT" ||
	skip "cannot mount a tmpfs (not allowed in this container?)"
trap 'umount "$MNT" 2>/dev/null; umount "$TMP/ro" 2>/dev/null; _cleanup' EXIT
D=$MNT/p
"$DCPROF" record -F 999 -a -g --continuous "$D" --period 1 \
	--flush-interval 0.2 2>"$TMP/full.err" &
rec=$!
for i in $(seq 100); do [ "$(period_count "$TMP/full.err")" -ge 2 ] && break; sleep 0.1; done
[ "$(period_count "$TMP/full.err")" -ge 2 ] || die "no periods written"
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
wait_line "$TMP/full.err" "^dcprof: period dropped" 10
sleep 1.5
rm -f "$MNT/filler"
n=$(period_count "$TMP/full.err")
for i in $(seq 100); do [ "$(period_count "$TMP/full.err")" -gt "$n" ] && break; sleep 0.1; done
[ "$(period_count "$TMP/full.err")" -gt "$n" ] ||
	die "writing did not resume once space was freed: $(tail -3 "$TMP/full.err")"
kill -TERM "$rec"
wait "$rec" || die "exit $? after SIGTERM"
cat "$TMP/full.err"
grep -q "^dcprof: period dropped (1 so far): .*No space left on device" "$TMP/full.err" ||
	die "no clear line for the dropped period"
dropped=$(sed -n 's/^dcprof: [0-9]* periods written, \([0-9]*\) dropped$/\1/p' "$TMP/full.err")
[ "${dropped:-0}" -ge 1 ] || die "the dropped periods are not counted"
for f in $(sed -n "s/^dcprof: period '\([^']*\)'.*/\1/p" "$TMP/full.err"); do
	expect_exit 0 "$DCPROF" report -i "$f" --format json
	[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = true ] ||
		die "finished period '$f' is damaged"
done
ls "$D" | grep -v '\.dcprof$' && die "files left beside the periods"
[ "$(ls "$D" | wc -l)" -eq "$(period_count "$TMP/full.err")" ] ||
	die "a dropped period left a file: $(ls "$D")"

# bad input: refused before anything is recorded
bad() {
	"$DCPROF" record "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "'$*' exited $rc"
	head -1 "$TMP/err" | grep -q '^dcprof: ' || die "'$*': $(cat "$TMP/err")"
	grep -q "recording continuously" "$TMP/err" && die "'$*' started recording"
	echo "refused: $*: $(head -1 "$TMP/err")"
}
echo x >"$TMP/file"
mkdir "$TMP/ro" && mount -t tmpfs -o ro tmpfs "$TMP/ro" || die "cannot mount a read-only tmpfs"
bad -a --continuous "$TMP/d0" --period 0
bad -a --continuous "$TMP/d0" --period -5
bad -a --continuous "$TMP/file"
bad -a --continuous "$TMP/ro"
bad -a --continuous "$TMP/ro/sub"
bad -a --continuous "$TMP/d0" --keep 3x
bad -a --continuous "$TMP/d0" --keep-size 0
bad -a --continuous "$TMP/d0" --keep-size 10Q
bad -a --period 5
bad -a --keep 1d
bad -a --continuous "$TMP/d0" -o "$TMP/x.data"
bad --continuous "$TMP/d0" -- true
[ ! -e "$TMP/d0" ] || [ -z "$(ls -A "$TMP/d0")" ] || die "bad input left files"
pass
