#!/bin/bash
# record --continuous --push against receivers that decide as the real
# servers' code does (tests/tools/push_receiver.py: Pyroscope's /ingest,
# tenant middleware, ValidateProfile, pprofsplit and ValidateLabels with
# their default limits and status codes; Parca's UI fallback and its
# WriteRaw gateway with the normalizer's rules), on 127.0.0.1 only. Every
# period is accounted for: the pieces the server took carry, period by
# period, the same stacks and counts as `dcprof export --format folded` of
# the period's file; nothing refused is counted as sent.
#  1. a multi-tenant Pyroscope whose sample limit is low: the periods cut
#     into requests within it, all taken, with the tenant header, string
#     sample labels only (numeric ones the server would drop), and every
#     stack of every period there once
#  2. the same server without --push-tenant: 401, said once with the
#     option to give, the periods kept; the next run with the tenant
#     delivers them first
#     periods of the same whole seconds each keep their pieces
#  3. a server that answers 422 (an ingester down) to the first requests:
#     retried, then everything delivered once, in order
#  4. a piece the server can never take (over its samples limit): set
#     aside, counted and said, and the periods behind it not blocked; a
#     period outside the ingestion window kept while only the server's
#     clock says so, set aside once it is too old by dcprof's too
#  5. a Parca-like server: http:// gets 200 text/html, which is not
#     counted as sent (said once, kept); parca+http:// goes to WriteRaw
#  6. --off-cpu: the three sample types taken, every off-CPU ns there;
#     -c: cpu/nanoseconds of count x period and no sampleRate; another
#     event: EVENT/count of -c events, samples alone with -F
#  7. bad push options refused before recording
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

RECEIVER=$TOP/tests/tools/push_receiver.py
SPLIT=$(build_workload split)
spawn sh -c 'exec "$0" 120 >/dev/null' "$SPLIT"
pid=$SPAWNED

# start_server DIR CONFIG_JSON: sets PORT and SERVER
start_server() {
	spawn_server "$TMP/port" python3 "$RECEIVER" "$1" "$TMP/port" "$2"
}

# account DIR PERIODS_DIR [ERRLOG]: every period logged in ERRLOG (default
# $TMP/err) is in the pieces the server took, stack for stack; prints the
# number of pieces taken
account() {
	python3 - "$1" "$2" "${3:-$TMP/err}" "$DCPROF" "$TOP/tests/tools" <<'PY'
import collections, glob, json, os, sys
sys.path.insert(0, sys.argv[-1])
import period_stacks
d, periods_dir, err, dcprof = sys.argv[1:5]
# folded marks kernel frames with _[k]; pprof does not
want = period_stacks.logged(err, dcprof, "k")
got = collections.defaultdict(collections.Counter)
taken = 0
for f in sorted(glob.glob(os.path.join(d, "*.profile.json"))):
    for p, info in json.load(open(f)):
        taken += 1
        st = p["string_table"]
        funcs = {fn["id"]: st[fn["name"]] for fn in p["function"]}
        locs = {l["id"]: [funcs[ln["function_id"]] for ln in reversed(l["line"])]
                for l in p["location"]}
        got[p["time_nanos"]]  # a period without samples is one piece too
        for s in p["sample"]:
            frames = []
            for lid in reversed(s["location_id"]):
                frames += locs[lid]
            got[p["time_nanos"]][";".join(frames)] += s["value"][0]
print("%d periods logged, %d with pieces taken, %d pieces" % (len(want), len(got), taken))
# the periods by time: the logged ones in order, the pieces by time_nanos
times = sorted(got)
assert len(times) == len(want), "%d periods with pieces, %d logged" % (len(times), len(want))
for t, path in zip(times, sorted(want)):
    w, g = want[path], got[t]
    if w != g:
        missing = w - g
        extra = g - w
        sys.exit("period %s: %d stacks missing, %d extra: %s / %s" % (
            path, len(missing), len(extra), list(missing.items())[:3], list(extra.items())[:3]))
print("every stack of every period taken once")
PY
}

requests() { ls "$1"/*.json 2>/dev/null | grep -vc profile; }

# 1. multi-tenant Pyroscope, samples limit 8: the periods cut within it
start_server "$TMP/mt" '{"mode": "pyroscope", "multitenant": true, "max_samples": 8}'
expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid" --continuous "$TMP/d1" --period 1 \
	--duration 3 --push "http://127.0.0.1:$PORT" --push-tenant team-a \
	--push-max-samples 8 --push-sample-labels comm,tid
cat "$TMP/err"
grep -q "^dcprof: push: period .* cut into [0-9]* requests for the server's limits" "$TMP/err" ||
	die "no period was cut: the test's samples limit did not bite"
grep -q "^dcprof: push: [0-9]* requests taken, 0 failed tries, 0 periods dropped (spool full), 0 requests set aside (never acceptable), [1-9][0-9]* periods split$" "$TMP/err" ||
	die "the push does not count what it sent"
account "$TMP/mt" "$TMP/d1" || die "the periods did not arrive whole"
python3 - "$TMP/mt" <<'PY' || die "the requests are not as the server wants them"
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*[0-9].json")):
    r = json.load(open(f))
    assert r["verdict"] == "taken", r
    assert r["headers"].get("X-Scope-OrgID") == "team-a", r["headers"]
    assert "sampleRate=499" in r["line"], r["line"]
for f in sorted(glob.glob(sys.argv[1] + "/*.profile.json")):
    for p, info in json.load(open(f)):
        assert len(p["sample"]) <= 8, len(p["sample"])
        assert info["numeric_labels"] == 0, "numeric sample labels sent"
        st = p["string_table"]
        keys = {st[l["key"]] for s in p["sample"] for l in s["label"]}
        assert keys <= {"comm", "tid"}, keys
        types = [(st[t["type"]], st[t["unit"]]) for t in p["sample_type"]]
        assert types == [("samples", "count"), ("cpu", "nanoseconds")], types
        assert p["period"] == 1000000000 // 499, p["period"]
print("tenant header, string labels, sample types: as the server wants")
PY
[ -z "$(ls "$TMP/d1/.spool" | grep pb.gz)" ] || die "periods left in the spool"

# 2. the same server, no tenant: 401, kept, said once; then delivered
rm -rf "$TMP/mt"/*
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT" --push-max-samples 8
cat "$TMP/err"
[ "$(grep -c "refused period .* with HTTP 401 (no org id): the periods stay in the spool" "$TMP/err")" -eq 1 ] ||
	die "a 401 is not said once"
grep -q "^dcprof: push: a multi-tenant Pyroscope wants its tenant: --push-tenant ID" "$TMP/err" ||
	die "the tenant option is not named"
grep -q "^dcprof: push: 0 requests taken, [1-9][0-9]* failed tries, 0 periods dropped (spool full), 0 requests set aside.*; the rest stays in the spool" "$TMP/err" ||
	die "a refused period was counted as sent or not kept"
left=$(ls "$TMP/d2/.spool" | grep -c pb.gz)
[ "$left" -ge 2 ] || die "only $left pieces kept in the spool"
cp "$TMP/err" "$TMP/err-401"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT" --push-tenant team-a \
	--push-max-samples 8
cat "$TMP/err"
[ -z "$(ls "$TMP/d2/.spool" | grep pb.gz)" ] || die "the kept periods were not delivered"
cat "$TMP/err-401" "$TMP/err" >"$TMP/err-both"
account "$TMP/mt" "$TMP/d2" "$TMP/err-both" || die "the kept periods did not arrive whole"
kill "$SERVER"

# 2b. periods of the same whole seconds (cuts a few ms apart): each its
# own spool pieces, none written over another
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2b" --period 60 \
	--push "http://127.0.0.1:$port" --push-sample-labels none 2>"$TMP/err" &
rec=$!
for i in $(seq 50); do grep -q "recording continuously" "$TMP/err" && break; sleep 0.1; done
# each SIGHUP once the period before it is cut: signals sent closer
# than the recorder handles them are one signal
for i in 1 2 3; do
	kill -HUP "$rec"
	for j in $(seq 100); do
		[ "$(grep -c "^dcprof: period '" "$TMP/err")" -ge "$i" ] && break
		sleep 0.05
	done
done
kill -TERM "$rec"
wait "$rec" || die "exit $? after SIGTERM: $(cat "$TMP/err")"
periods=$(grep -c "^dcprof: period '" "$TMP/err")
pieces=$(ls "$TMP/d2b/.spool" | grep -c pb.gz)
echo "$periods periods cut within a second or so, $pieces pieces in the spool: $(ls "$TMP/d2b/.spool" | tr '\n' ' ')"
[ "$periods" -ge 3 ] && [ "$pieces" -eq "$periods" ] || die "$periods periods, $pieces pieces spooled"
ls "$TMP/d2b/.spool" | grep -q -- "-0001.pb.gz" ||
	echo "(no two periods had the same seconds this time)"

# 3. 422 from an ingester that is down, then taken: in order, once
start_server "$TMP/flaky" '{"mode": "pyroscope", "fail_first": 2}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d3" --period 1 \
	--duration 3 --push "http://127.0.0.1:$PORT"
cat "$TMP/err"
grep -q "^dcprof: push: cannot send period .*: HTTP 422 (pushing IngestInput-pprof failed .*live replicas.*); retrying in" "$TMP/err" ||
	die "a transient 422 is not retried"
grep -q "^dcprof: push: sent again after 2 failed tries" "$TMP/err" || die "no recovery said"
account "$TMP/flaky" "$TMP/d3" || die "the retried periods did not arrive whole"
python3 - "$TMP/flaky" <<'PY' || die "not in order, or twice"
import glob, json, re, sys
taken = []
for f in sorted(glob.glob(sys.argv[1] + "/*[0-9].json")):
    r = json.load(open(f))
    if r["verdict"] == "taken":
        taken.append(int(re.search(r"from=(\d+)", r["line"]).group(1)))
assert taken == sorted(taken) and len(set(taken)) == len(taken), taken
print("taken in order, once each: %s" % taken)
PY
kill "$SERVER"

# 4. never acceptable: over the server's samples limit (2), not cut by
# dcprof (its limit left high): set aside, counted, nothing blocked
start_server "$TMP/strict" '{"mode": "pyroscope", "max_samples": 2}'
expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid" --continuous "$TMP/d4" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT"
cat "$TMP/err"
grep -q "^dcprof: push: the server refused period .* with HTTP 422 (the profile with labels .* exceeds the samples count limit .*): it can never take it, set aside in set-aside/" "$TMP/err" ||
	die "a never acceptable period is not said"
# every request either taken (a period of at most 2 rows) or set aside,
# none retried, none left: the set-aside ones blocked nothing
line=$(grep "^dcprof: push: [0-9]* requests taken" "$TMP/err")
taken=$(echo "$line" | sed 's/^dcprof: push: \([0-9]*\) requests taken.*/\1/')
aside=$(echo "$line" | sed 's/.* \([0-9]*\) requests set aside.*/\1/')
echo "$line" | grep -q " 0 failed tries, 0 periods dropped" || die "retried or dropped: $line"
refused=$(grep -l '"verdict": "refused"' "$TMP/strict"/*[0-9].json | wc -l)
[ "$aside" -ge 1 ] && [ "$aside" -eq "$refused" ] &&
	[ $((taken + aside)) -eq "$(requests "$TMP/strict")" ] ||
	die "$refused refused, $aside set aside, $taken taken of $(requests "$TMP/strict") requests"
[ "$(ls "$TMP/d4/.spool/set-aside" | grep -c pb.gz)" -eq "$aside" ] || die "not all set aside"
[ -z "$(ls "$TMP/d4/.spool" | grep pb.gz)" ] || die "the spool is blocked"
kill "$SERVER"

# 4b. the ingestion window (now-1h..now+10m): a period that looks too old
# to a server whose clock is ahead may be the clocks' fault: kept and
# retried; one that is too old by dcprof's clock too never passes: set aside
start_server "$TMP/ahead" '{"mode": "pyroscope", "clock_offset_s": 7200}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d4b" --period 1 \
	--duration 1 --push "http://127.0.0.1:$PORT"
cat "$TMP/err"
grep -q "^dcprof: push: cannot send period .*: HTTP 422 (profile with labels .* is outside of ingestion window .*); retrying in" "$TMP/err" ||
	die "a period outside the window by the server's clock alone is not retried"
n=$(ls "$TMP/d4b/.spool" | grep -c pb.gz)
[ "$n" -ge 1 ] || die "a period outside the window by the server's clock alone was not kept"
# the same pieces, as if they had waited two hours in the spool
old=$(( $(date +%s) - 7200 ))
for f in "$TMP/d4b/.spool"/*.pb.gz; do
	b=$(basename "$f")
	mv "$f" "$TMP/d4b/.spool/$(printf '%020d-%020d' $old $((old + 1)))-${b#*-*-}"
	old=$((old + 1))
done
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d4b" --period 1 \
	--duration 1 --push "http://127.0.0.1:$PORT"
cat "$TMP/err"
grep -q "^dcprof: push: the server refused period .* with HTTP 422 (profile with labels .* is outside of ingestion window .*): it can never take it" "$TMP/err" ||
	die "a period too old by both clocks is not set aside"
[ "$(ls "$TMP/d4b/.spool/set-aside" | grep -c pb.gz)" -ge "$n" ] || die "the old periods were not set aside"
kill "$SERVER"

# 5. Parca: its UI answers /ingest with 200 HTML; WriteRaw takes
start_server "$TMP/parca" '{"mode": "parca"}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d5" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT"
cat "$TMP/err"
[ "$(grep -c "answered HTTP 200 with text/html.*not the /ingest API's answer" "$TMP/err")" -eq 1 ] ||
	die "a 200 HTML page is not said once as not the API"
grep -q "^dcprof: push: 0 requests taken, [1-9][0-9]* failed tries.*; the rest stays in the spool" "$TMP/err" ||
	die "a 200 HTML page was counted as sent"
cp "$TMP/err" "$TMP/err-html"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d5" --period 1 \
	--duration 2 --push "parca+http://127.0.0.1:$PORT" --push-label env=test
cat "$TMP/err"
[ -z "$(ls "$TMP/d5/.spool" | grep pb.gz)" ] || die "Parca did not get the kept periods"
cat "$TMP/err-html" "$TMP/err" >"$TMP/err-both"
account "$TMP/parca" "$TMP/d5" "$TMP/err-both" || die "Parca did not get every period whole"
python3 - "$TMP/parca" "$(uname -n)" <<'PY' || die "the WriteRaw requests are not as Parca wants them"
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.profile.json")):
    for p, info in json.load(open(f)):
        assert info["name"] == "dcprof", info
        assert info["labels"]["env"] == "test" and info["labels"]["hostname"] == sys.argv[2], info
print("WriteRaw: __name__ dcprof, hostname and env labels")
PY
kill "$SERVER"

# 6. -c: a sample is N ns of cpu-clock; no sampleRate
start_server "$TMP/count" '{"mode": "pyroscope"}'
expect_exit 0 "$DCPROF" record -c 2000000 -p "$pid" --continuous "$TMP/d6" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT"
python3 - "$TMP/count" <<'PY' || die "-c is not pushed in its units"
import glob, json, sys
n = 0
for f in sorted(glob.glob(sys.argv[1] + "/*[0-9].json")):
    r = json.load(open(f))
    assert r["verdict"] == "taken" and "sampleRate" not in r["line"], r
for f in sorted(glob.glob(sys.argv[1] + "/*.profile.json")):
    for p, info in json.load(open(f)):
        st = p["string_table"]
        assert [(st[t["type"]], st[t["unit"]]) for t in p["sample_type"]] == [("samples", "count"), ("cpu", "nanoseconds")]
        assert p["period"] == 2000000, p["period"]
        for s in p["sample"]:
            assert s["value"][1] == s["value"][0] * 2000000, s["value"]
            n += 1
assert n, "no samples"
print("-c 2000000: %d samples of 2 ms each" % n)
PY
kill "$SERVER"

# 6a. --off-cpu: cpu and off-CPU types in each request, every
# nanosecond off the CPU of the period taken
start_server "$TMP/off" '{"mode": "pyroscope"}'
expect_exit 0 "$DCPROF" record --off-cpu -F 499 -p "$pid" --continuous "$TMP/d6a" \
	--period 1 --duration 2 --push "http://127.0.0.1:$PORT"
python3 - "$TMP/off" "$TMP/err" "$DCPROF" <<'PY' || die "the off-CPU values did not arrive whole"
import glob, json, re, subprocess, sys
d, err, dcprof = sys.argv[1:4]
want = 0
for path in re.findall(r"^dcprof: period '([^']*)'", open(err).read(), re.M):
    out = subprocess.run([dcprof, "export", "--format", "folded", "--value", "off-cpu",
                          "-i", path], capture_output=True, check=True, text=True).stdout
    want += sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines())
got = 0
for f in sorted(glob.glob(d + "/*[0-9].json")):
    assert json.load(open(f))["verdict"] == "taken", f
for f in sorted(glob.glob(d + "/*.profile.json")):
    for p, info in json.load(open(f)):
        st = p["string_table"]
        types = [(st[t["type"]], st[t["unit"]]) for t in p["sample_type"]]
        assert types == [("samples", "count"), ("cpu", "nanoseconds"),
                         ("off_cpu", "nanoseconds")], types
        got += sum(s["value"][2] for s in p["sample"])
print("off-CPU: %d ns exported, %d ns taken" % (want, got))
assert want > 0 and got == want
PY
kill "$SERVER"

# 6b. another event: page-faults counts events, never time; with -F a
# sample is a sample (the kernel varies the period)
TOUCH=$(build_workload touch_pages)
expect_exit 0 "$DCPROF" record -e page-faults -c 10 -o "$TMP/pf-c.data" -- "$TOUCH" 20000
expect_exit 0 "$DCPROF" export --format pprof -i "$TMP/pf-c.data" -o "$TMP/pf-c.pb.gz"
expect_exit 0 "$DCPROF" record -e page-faults:u -F 999 -o "$TMP/pf-f.data" -- "$TOUCH" 20000
expect_exit 0 "$DCPROF" export --format pprof -i "$TMP/pf-f.data" -o "$TMP/pf-f.pb.gz"
python3 - "$RECEIVER" "$TMP/pf-c.pb.gz" "$TMP/pf-f.pb.gz" <<'PY' || die "page-faults is not exported in its units"
import gzip, importlib.util, sys
spec = importlib.util.spec_from_file_location("r", sys.argv[1])
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
def load(path):
    p = r.decode_profile(gzip.decompress(open(path, "rb").read()))
    st = p["string_table"]
    return p, [(st[t["type"]], st[t["unit"]]) for t in p["sample_type"]], \
        (st[p["period_type"]["type"]], st[p["period_type"]["unit"]])
p, types, pt = load(sys.argv[2])
assert types == [("samples", "count"), ("page_faults", "count")], types
assert pt == ("page_faults", "count") and p["period"] == 10, (pt, p["period"])
n = sum(s["value"][0] for s in p["sample"])
assert n and all(s["value"][1] == 10 * s["value"][0] for s in p["sample"])
faults = sum(s["value"][1] for s in p["sample"])
print("-e page-faults -c 10: %d samples, %d faults" % (n, faults))
assert 15000 <= faults <= 60000, faults
p, types, pt = load(sys.argv[3])
assert types == [("samples", "count")], types
assert pt == ("page_faults", "count") and p["period"] == 0, (pt, p["period"])
print("-e page-faults:u -F 999: samples/count alone")
PY

# 7. refused before recording
bad() {
	"$DCPROF" record -p "$pid" --continuous "$TMP/d7" --duration 1 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "'$*' exited $rc"
	grep -q "recording continuously" "$TMP/err" && die "'$*' started recording"
	echo "refused: $(head -1 "$TMP/err")"
}
labels=()
for i in $(seq 24); do labels+=(--push-label "k$i=v"); done
bad --push http://127.0.0.1:1 "${labels[@]}"
grep -q "Pyroscope refuses a series of more than 30 label names, and these make 33" "$TMP/err" ||
	die "too many labels: $(cat "$TMP/err")"
# 21 fit: 4 of the server's, hostname, kernel_release, the default sample
# labels comm, container and unit, and 21; with thread as a sample label
# too, 20
bad --push http://127.0.0.1:1 "${labels[@]:0:42}" --push-sample-labels comm,container,unit,thread
labels=("${labels[@]:0:42}")
"$DCPROF" record -p "$pid" --continuous "$TMP/d8" --duration 1 \
	--push http://127.0.0.1:1 "${labels[@]}" >"$TMP/out" 2>"$TMP/err" ||
	die "21 labels refused: $(cat "$TMP/err")"
bad --push http://127.0.0.1:1 --push-label __secret=x
bad --push http://127.0.0.1:1 --push-label env=a --push-label env=b
bad --push http://127.0.0.1:1 --push-tenant "a b"
bad --push http://127.0.0.1:1 --push-sample-labels comm,cpu
bad --push parca+http://127.0.0.1:1 --push-app my-app
bad --push parca+ftp://127.0.0.1:1
bad --push-tenant x
pass
