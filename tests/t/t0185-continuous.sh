#!/bin/bash
# exclusive: wants 2,000 samples in each 3 s period of wall time
# record --continuous: 12 s of --period 3 on the split workload, alongside a
# single recording of the same 12 s (the workload starts once both record,
# and both end with it): four or more period files, each a
# complete profile, 0600, named by start time and host; their samples add
# up to the single recording's within 2%, and the split's shares are right
# in each period and in all of them read as one. SIGHUP cuts a period at
# once; SIGTERM writes the last one whole; after SIGKILL the finished
# periods are intact and the current one reads up to its last flush.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)
D=$TMP/periods

# the workload waits, stopped, until both recorders are recording, and
# both record it until it exits: the same 12 s, whatever each one's
# start-up took
spawn sh -c 'kill -STOP $$; exec "$0" 12 --truth >"$1"' "$SPLIT" "$TMP/truth"
pid=$SPAWNED
wait_stopped "$pid"
"$DCPROF" record -F 999 -p "$pid" -o "$TMP/single.data" --ready-fd 3 \
	>"$TMP/single.out" 2>&1 3>"$TMP/single.ready" &
single=$!
"$DCPROF" record -F 999 -p "$pid" --continuous "$D" --period 3 \
	--ready-fd 3 >"$TMP/cont.out" 2>"$TMP/cont.err" 3>"$TMP/cont.ready" &
cont=$!
wait_line "$TMP/single.ready" '^recording$' 30
wait_line "$TMP/cont.ready" '^recording$' 30
kill -CONT "$pid"
wait "$cont" || die "record --continuous failed: $(cat "$TMP/cont.err")"
wait "$single" || die "the single recording failed: $(cat "$TMP/single.out")"
cat "$TMP/cont.err"
wait "$pid"

n=$(ls "$D" | wc -l)
[ "$n" -ge 4 ] || die "$n period files after 12 s of --period 3: $(ls "$D")"
[ "$(grep -c "^dcprof: period '" "$TMP/cont.err")" -eq "$n" ] ||
	die "not one log line per period"
host=$(uname -n)
for f in "$D"/*; do
	base=$(basename "$f")
	[[ $base =~ ^[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-.+\.dcprof$ ]] ||
		die "'$base' is not named by its start time"
	[[ $base == *"-$host.dcprof" ]] || die "'$base' does not name the host"
	[ "$(stat -c %a "$f")" = 600 ] || die "'$base' is not 0600"
	expect_exit 0 "$DCPROF" report -i "$f" --format json --sort symbol
	cp "$TMP/out" "$TMP/$base.json"
	[ "$(json_get "$TMP/$base.json" 'd["meta"]["complete"]')" = true ] ||
		die "'$base' is not complete"
done
expect_exit 0 "$DCPROF" report -i "$TMP/single.data" --format json --sort symbol
cp "$TMP/out" "$TMP/single.json"

python3 - "$TMP/single.json" "$TMP"/*.dcprof.json <<'PY' || die "periods do not add up to the single recording"
import json, sys
def kept(p):
    return json.load(open(p))["stats"]["samples_kept"]
single = kept(sys.argv[1])
periods = [kept(p) for p in sys.argv[2:]]
print("single recording: %d samples; periods: %s = %d" % (single, periods, sum(periods)))
assert single > 8000, "the single recording holds only %d samples" % single
assert abs(sum(periods) - single) <= 0.02 * single, "off by more than 2%"
PY

# shares per period (those with enough samples to judge) against the
# thread CPU time each function took (t0100)
grep -q '^split: ' "$TMP/truth" || die "split printed no truth"
judged=0
for j in "$TMP"/*.dcprof.json; do
	report_counts "$j" >"$j.counts"
	rc=0
	check_split_shares "$TMP/truth" 2000 3 "$(basename "$j" .json):" \
		<"$j.counts" || rc=$?
	case $rc in
	0) judged=$((judged + 1)) ;;
	3) echo "$(basename "$j" .json): not judged" ;;
	*) die "a period's shares are off" ;;
	esac
done
[ "$judged" -ge 3 ] || die "only $judged periods with 2000 samples"

# the periods read as one: the single recording's samples, the same shares
expect_exit 0 "$DCPROF" report -i "$D" --format json --sort symbol
cp "$TMP/out" "$TMP/merged.json"
python3 - "$TMP/merged.json" "$TMP"/*.dcprof.json <<'PY' || die "the merged periods are off"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stats"]["samples_kept"] == sum(
    json.load(open(p))["stats"]["samples_kept"] for p in sys.argv[2:])
PY
report_counts "$TMP/merged.json" |
	check_split_shares "$TMP/truth" 1 3 merged: ||
	die "the merged periods are off"

# SIGHUP cuts now, SIGTERM writes the last period whole
D2=$TMP/signals
spawn "$SPLIT" 30
pid=$SPAWNED
exec 5>"$TMP/ready"
"$DCPROF" record -F 499 -p "$pid" --continuous "$D2" --period 600 \
	--ready-fd 5 2>"$TMP/sig.err" &
rec=$!
exec 5>&-
wait_line "$TMP/ready" recording
sleep 1
kill -HUP "$rec"
wait_line "$TMP/sig.err" "^dcprof: period '" 5
sleep 1
kill -TERM "$rec"
wait "$rec" || die "SIGTERM: exit $?: $(cat "$TMP/sig.err")"
cat "$TMP/sig.err"
[ "$(ls "$D2" | wc -l)" -eq 2 ] || die "SIGHUP and SIGTERM left $(ls "$D2")"
for f in "$D2"/*; do
	expect_exit 0 "$DCPROF" report -i "$f" --format json
	[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = true ] ||
		die "'$f' is not complete"
	[ "$(json_get "$TMP/out" 'd["stats"]["samples_kept"]')" -gt 200 ] ||
		die "'$f' holds too few samples"
done

# SIGKILL: the finished periods intact, the current one readable
D3=$TMP/killed
"$DCPROF" record -F 499 -p "$pid" --continuous "$D3" --period 1 \
	--flush-interval 0.2 2>"$TMP/kill.err" &
rec=$!
for i in $(seq 100); do
	[ "$(grep -c "^dcprof: period '" "$TMP/kill.err")" -ge 2 ] && break
	sleep 0.1
done
sleep 0.5
kill -KILL "$rec"
wait "$rec"
finished=$(sed -n "s/^dcprof: period '\([^']*\)'.*/\1/p" "$TMP/kill.err")
[ "$(echo "$finished" | wc -l)" -ge 2 ] || die "fewer than 2 periods before SIGKILL"
for f in $finished; do
	expect_exit 0 "$DCPROF" report -i "$f" --format json
	[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = true ] ||
		die "finished period '$f' is not complete after SIGKILL"
done
for f in "$D3"/*; do
	echo "$finished" | grep -qxF "$f" && continue
	expect_exit 0 "$DCPROF" report -i "$f" --format json
	[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = false ] ||
		die "the period cut short is marked complete"
	echo "cut short by SIGKILL: $(basename "$f"), $(json_get "$TMP/out" 'd["stats"]["samples_kept"]') samples"
done
pass
