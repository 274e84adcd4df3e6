#!/bin/bash
# record --continuous --push otlp+http:// against a receiver that decides
# as Pyroscope's OTLP handler does (tests/tools/otlp_receiver.py: tenant,
# path, content type, gzip, the request decoded by python3-protobuf and
# every dictionary index and zero entry checked), on 127.0.0.1 only.
#  1. periods cut into requests within --push-max-samples, all taken:
#     POST /v1development/profiles, application/x-protobuf, gzip, the
#     tenant header; service.name, host.name and the --push-label on the
#     resource; every stack of every period there once, with the counts
#     of `dcprof export --format folded` of the period's file
#     periods cut within --push-max-bytes alike;
#     two processes of one name, comm their only attribute: a stack of
#     both is one sample, as the schema's sample identity wants
#  2. a server that answers 200 text/html: not counted as sent, said once,
#     the periods kept; the next run to a receiver delivers them; a 200
#     of another API (JSON, or protobuf that is not the answer) alike
#  3. a partial success (rejected_profiles): taken, the dropped profiles
#     counted and said
#  4. a bad --push URL refused before recording
. "$(dirname "$0")/test-lib.sh"
need gcc
need_python_protobuf
need_perf_events

RECEIVER=$TOP/tests/tools/otlp_receiver.py
SPLIT=$(build_workload split)
spawn sh -c 'exec "$0" 120 >/dev/null' "$SPLIT"
pid=$SPAWNED

# start_server DIR CONFIG_JSON: sets PORT and SERVER
start_server() {
	spawn_server "$TMP/port" "$PYPB" "$RECEIVER" "$1" "$TMP/port" "$TMP/pb" "$2"
}

# account DIR ERRLOG: every period logged in ERRLOG is in the requests
# the receiver took, stack for stack, and nothing else is
account() {
	python3 - "$1" "$2" "$DCPROF" "$TOP/tests/tools" <<'PY'
import collections, glob, json, os, sys
sys.path.insert(0, sys.argv[-1])
import period_stacks
d, err, dcprof = sys.argv[1:4]
want = period_stacks.logged(err, dcprof)
got = collections.defaultdict(collections.Counter)
for f in sorted(glob.glob(os.path.join(d, "*.flat.json"))):
    for r in json.load(open(f))["resources"]:
        for s in r["scopes"]:
            for p in s["profiles"]:
                if p["type"] != "samples":
                    continue
                got[p["time_unix_nano"]]
                for x in p["samples"]:
                    got[p["time_unix_nano"]][";".join(x["stack"])] += x["value"]
times = sorted(got)
print("%d periods logged, %d with requests taken" % (len(want), len(times)))
assert len(times) == len(want), "%d periods taken, %d logged" % (len(times), len(want))
for t, path in zip(times, sorted(want)):
    if want[path] != got[t]:
        sys.exit("period %s: %d stacks missing, %d extra" % (
            path, len(want[path] - got[t]), len(got[t] - want[path])))
print("every stack of every period taken once")
PY
}

# 1. a multi-tenant receiver; requests of at most 8 samples a Profile
start_server "$TMP/r1" '{"multitenant": true}'
expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid" --continuous "$TMP/d1" --period 1 \
	--duration 3 --push "otlp+http://127.0.0.1:$PORT" --push-tenant team-a \
	--push-max-samples 8 --push-sample-labels comm,tid --push-label env=test
cat "$TMP/err"
grep -q "^dcprof: push: period .* cut into [0-9]* requests for the server's limits" "$TMP/err" ||
	die "no period was cut: the test's samples limit did not bite"
grep -q "^dcprof: push: [1-9][0-9]* requests taken, 0 failed tries, 0 periods dropped (spool full), 0 requests set aside (never acceptable), [1-9][0-9]* periods split$" "$TMP/err" ||
	die "the push does not count what it sent"
account "$TMP/r1" "$TMP/err" || die "the periods did not arrive whole"
"$PYPB" - "$TMP/r1" "$(uname -n)" <<'PY' || die "the requests are not as the receiver wants them"
import glob, json, sys
n = 0
for f in sorted(glob.glob(sys.argv[1] + "/*[0-9].json")):
    r = json.load(open(f))
    assert r["verdict"] == "taken", r
    assert r["line"].startswith("POST /v1development/profiles "), r["line"]
    h = r["headers"]
    assert h["Content-Type"] == "application/x-protobuf", h
    assert h["Content-Encoding"] == "gzip" and h["X-Scope-OrgID"] == "team-a", h
    n += 1
for f in sorted(glob.glob(sys.argv[1] + "/*.flat.json")):
    res = json.load(open(f))["resources"]
    assert len(res) == 1, res
    a = res[0]["attrs"]
    assert a["service.name"] == "dcprof" and a["env"] == "test", a
    assert a["host.name"] == sys.argv[2], a
    profiles = res[0]["scopes"][0]["profiles"]
    assert [(p["type"], p["unit"], p["period_type"], p["period_unit"])
            for p in profiles] == \
        [("samples", "count", "cpu", "nanoseconds")], profiles
    for p in profiles:
        assert len(p["samples"]) <= 8, len(p["samples"])
        assert p["period"] == 10**9 // 499, p["period"]
        for s in p["samples"]:
            assert set(s["attrs"]) == {"process.executable.name", "thread.id"}, s
            assert isinstance(s["attrs"]["thread.id"], str), s
print("%d requests: path, headers, resource, sample types and attributes as wanted" % n)
PY
[ -z "$(ls "$TMP/d1/.spool" | grep pb.gz)" ] || die "periods left in the spool"
kill "$SERVER"

# 1a. the bytes limit: requests of at most 1500 bytes before gzip, unless
# one of a single row (each Profile one sample at most), every stack there
start_server "$TMP/r1a" '{}'
expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid" --continuous "$TMP/d1a" --period 1 \
	--duration 2 --push "otlp+http://127.0.0.1:$PORT" --push-max-bytes 1500
cat "$TMP/err"
grep -q "^dcprof: push: period .* cut into [0-9]* requests for the server's limits" "$TMP/err" ||
	die "no period was cut: the test's bytes limit did not bite"
grep -q "^dcprof: push: [1-9][0-9]* requests taken, 0 failed tries, 0 periods dropped (spool full), 0 requests set aside" "$TMP/err" ||
	die "the requests within the bytes limit were not all taken"
account "$TMP/r1a" "$TMP/err" || die "the periods cut by bytes did not arrive whole"
python3 - "$TMP/r1a" <<'PY' || die "a request is over the bytes limit"
import glob, json, sys
sizes = []
for f in sorted(glob.glob(sys.argv[1] + "/*[0-9].json")):
    r = json.load(open(f))
    flat = json.load(open(f[:-5] + ".flat.json"))
    most = max(len(p["samples"]) for p in
               flat["resources"][0]["scopes"][0]["profiles"])
    assert r["raw_len"] <= 1500 or most <= 1, (r["raw_len"], most)
    sizes.append(r["raw_len"])
print("%d requests of %d to %d bytes before gzip" % (len(sizes), min(sizes), max(sizes)))
PY
kill "$SERVER"

# 1b. two processes of one name and the default sample attribute (comm):
# their rows of one stack are one sample (the schema's identity: stack and
# attributes), else the receiver refuses the request; every stack there
spawn sh -c 'exec "$0" 120 >/dev/null' "$SPLIT"
pid2=$SPAWNED
start_server "$TMP/r1b" '{}'
expect_exit 0 "$DCPROF" record -g -F 499 -p "$pid,$pid2" --continuous "$TMP/d1b" \
	--period 1 --duration 2 --push "otlp+http://127.0.0.1:$PORT"
cat "$TMP/err"
grep -q "^dcprof: push: [1-9][0-9]* requests taken, 0 failed tries, 0 periods dropped (spool full), 0 requests set aside" "$TMP/err" ||
	die "the requests of two processes of one name were not all taken"
account "$TMP/r1b" "$TMP/err" || die "the periods of two processes did not arrive whole"
kill "$SERVER" "$pid2"

# 2. 200 with a web page: not the receiver's answer; then delivered
start_server "$TMP/html" '{"html": true}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2" --period 1 \
	--duration 2 --push "otlp+http://127.0.0.1:$PORT"
cat "$TMP/err"
[ "$(grep -c "answered HTTP 200 with text/html.*not an OTLP receiver's answer" "$TMP/err")" -eq 1 ] ||
	die "a 200 HTML page is not said once as not the receiver's answer"
grep -q "^dcprof: push: 0 requests taken, [1-9][0-9]* failed tries.*; the rest stays in the spool" "$TMP/err" ||
	die "a 200 HTML page was counted as sent"
[ "$(ls "$TMP/d2/.spool" | grep -c pb.gz)" -ge 2 ] || die "the periods were not kept"
cp "$TMP/err" "$TMP/err-html"
kill "$SERVER"
start_server "$TMP/r2" '{}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2" --period 1 \
	--duration 2 --push "otlp+http://127.0.0.1:$PORT"
cat "$TMP/err"
[ -z "$(ls "$TMP/d2/.spool" | grep pb.gz)" ] || die "the kept periods were not delivered"
cat "$TMP/err-html" "$TMP/err" >"$TMP/err-both"
account "$TMP/r2" "$TMP/err-both" || die "the kept periods did not arrive whole"
kill "$SERVER"

# 2b. a 2xx of another API: JSON, or protobuf that is no
# ExportProfilesServiceResponse: not taken either
for answer in '{"type": "application/json", "body": "{\"status\": \"ok\"}"}' \
	'{"type": "application/x-protobuf", "body": "\u00ff\u00ff\u00ff"}'; do
	rm -rf "$TMP/d2b"
	start_server "$TMP/other" "{\"answer\": $answer}"
	expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2b" \
		--period 1 --duration 1 --push "otlp+http://127.0.0.1:$PORT"
	cat "$TMP/err"
	[ "$(grep -c "answered HTTP 200 with application/.*not an OTLP receiver's answer" "$TMP/err")" -eq 1 ] ||
		die "a 200 of another API ($answer) is not said once"
	grep -q "^dcprof: push: 0 requests taken, [1-9][0-9]* failed tries.*; the rest stays in the spool" "$TMP/err" ||
		die "a 200 of another API ($answer) was counted as sent"
	kill "$SERVER"
done

# 3. a partial success: the request is taken (not sent again), and the
# profiles the receiver dropped are counted and said
start_server "$TMP/r3" '{"reject": 1}'
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d3" --period 1 \
	--duration 2 --push "otlp+http://127.0.0.1:$PORT"
cat "$TMP/err"
taken=$(sed -n 's/^dcprof: push: \([0-9]*\) requests taken.*/\1/p' "$TMP/err")
[ "${taken:-0}" -ge 2 ] || die "the partial successes were not taken"
[ "$(grep -c "^dcprof: push: the receiver took period .* but dropped 1 of its profiles (profile type not allowed)" "$TMP/err")" -eq "$taken" ] ||
	die "a partial success is not said for each request"
grep -q "^dcprof: push: $taken requests taken, 0 failed tries.*, $taken profiles dropped by the receiver (OTLP partial success)$" "$TMP/err" ||
	die "the dropped profiles are not counted"
[ "$(ls "$TMP/r3"/*[0-9].json | wc -l)" -eq "$taken" ] || die "a partial success was sent again"
kill "$SERVER"

# 4. a URL that is not one
expect_exit 1 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d4" \
	--push "otlp+ftp://127.0.0.1:1"
one_line_error
grep -q "otlp+http(s)://" "$TMP/err" || die "the error does not name otlp+http(s)://"

pass
