#!/bin/bash
# record --continuous --push URL against a receiver started here on
# 127.0.0.1 (a few lines of Python, nothing else is talked to): one POST
# per period, its request line and query as Pyroscope's ingest API
# documents it (name=APP{labels}, from, until, sampleRate, format=pprof),
# the bearer token and basic auth from files, TLS through libcurl (a
# self-signed server trusted with --push-ca-file), a body that protoc decodes
# as pprof with the split's shares; a server down for 10 s then up gets
# every spooled period, in order, none twice; a full spool drops periods
# and counts them, and what it holds at exit goes first at the next start; bad URLs, labels, unreadable secret files and a link
# planted as the spool are refused before recording starts.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 protoc gzip openssl readelf
need_perf_events

# libcurl is loaded by --push only: no other command starts with it
readelf -d "$DCPROF" | grep NEEDED >"$TMP/needed"
grep -q 'libc\.so' "$TMP/needed" || die "cannot read dcprof's NEEDED entries"
! grep -q libcurl "$TMP/needed" || die "dcprof is linked with libcurl"

SPLIT=$(build_workload split)
spawn sh -c 'exec "$0" 60 --truth >"$1"' "$SPLIT" "$TMP/truth"
pid=$SPAWNED

cat >"$TMP/server.py" <<'PY'
import http.server, json, os, sys
out, portfile, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out, exist_ok=True)
seen = [0]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        seen[0] += 1
        with open(os.path.join(out, "%04d.body" % seen[0]), "wb") as f:
            f.write(body)
        with open(os.path.join(out, "%04d.json" % seen[0]), "w") as f:
            json.dump({"line": self.requestline, "headers": dict(self.headers)}, f)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", port), Receiver)
if len(sys.argv) > 5:
    import ssl
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(sys.argv[4], sys.argv[5])
    server.socket = tls.wrap_socket(server.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
PY
# start_server DIR [PORT [CERT KEY]]: sets PORT and SERVER (TLS with CERT)
start_server() {
	spawn_server "$TMP/port" python3 "$TMP/server.py" "$1" "$TMP/port" "${2:-0}" "${@:3}"
}
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# the requests of DIR against the periods logged in $TMP/err
check_requests() {
	python3 - "$1" "$TMP/err" "$2" "$(uname -n)" "$(uname -r)" "$TOP/proto" "$TMP/truth" <<'PY'
import glob, gzip, json, os, re, subprocess, sys, urllib.parse
d, err, auth, host, release, proto, truth = sys.argv[1:8]
periods = re.findall(r"^dcprof: period '([^']*)'", open(err).read(), re.M)
reqs = sorted(glob.glob(os.path.join(d, "*.json")))
print("%d periods written, %d requests" % (len(periods), len(reqs)))
assert len(reqs) == len(periods), "not one request per period"
froms, counts = [], {}
for r in reqs:
    j = json.load(open(r))
    m = re.match(r"^POST (/ingest\?[^ ]*) HTTP/1\.1$", j["line"])
    assert m, j["line"]
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(m.group(1)).query, strict_parsing=True)
    assert sorted(q) == ["format", "from", "name", "sampleRate", "until"], sorted(q)
    assert q["format"] == ["pprof"] and q["sampleRate"] == ["499"], q
    name = q["name"][0]
    assert name == "dcprof{hostname=%s,kernel_release=%s,env=test}" % (host, release), name
    f, u = int(q["from"][0]), int(q["until"][0])
    assert 0 < f <= u and u - f <= 3, (f, u)
    froms.append((f, u))
    assert j["headers"].get("Authorization") == auth, j["headers"].get("Authorization")
    body = open(r[:-5] + ".body", "rb").read()
    if body[:2] == b"\x1f\x8b":
        body = gzip.decompress(body)
    text = subprocess.run(["protoc", "--decode", "perftools.profiles.Profile",
                           "--proto_path=" + proto, proto + "/profile.proto"],
                          input=body, capture_output=True, check=True).stdout.decode()
    strings = re.findall(r'^string_table: "(.*)"$', text, re.M)
    funcs = {int(i): strings[int(n)] for i, n in re.findall(
        r"^function \{\n  id: (\d+)\n  name: (\d+)", text, re.M)}
    locs = {int(i): funcs.get(int(fn)) for i, fn in re.findall(
        r"^location \{\n  id: (\d+)\n(?:  [^\n]*\n)*?  line \{\n    function_id: (\d+)", text, re.M)}
    for leaf, v in re.findall(r"^sample \{\n  location_id: (\d+)\n(?:  location_id: \d+\n)*  value: (\d+)", text, re.M):
        fn = locs.get(int(leaf))
        counts[fn] = counts.get(fn, 0) + int(v)
assert froms == sorted(froms) and len(set(froms)) == len(froms), "out of order or twice: %s" % froms
want = {"work_fifty": 49.6, "work_thirty": 30.0, "work_twenty": 20.4}
total = sum(counts.get(s, 0) for s in want)
assert total > 1000, counts
for s, w in want.items():
    share = 100.0 * counts.get(s, 0) / total
    print("%s: %.1f%%" % (s, share))
    assert abs(share - w) <= 4, "%s has %.1f%%" % (s, share)
PY
}

# 1. a server that is up: one request per period, as documented
start_server "$TMP/up"
echo "secret-token" >"$TMP/token"
chmod 600 "$TMP/token"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d1" --period 2 \
	--duration 7 --push "http://127.0.0.1:$PORT/" --push-label env=test \
	--push-token-file "$TMP/token"
cat "$TMP/err"
grep -q "^dcprof: push: [0-9]* requests taken, 0 failed tries, 0 periods dropped" "$TMP/err" ||
	die "the push does not count what it sent"
check_requests "$TMP/up" "Bearer secret-token" || die "the requests are not as documented"
kill "$SERVER"

# 2. down for 4 s (the tries 1, 2 and 4 s apart), then up: every period
# arrives, in order, once
PORT=$(free_port)
printf 'user:pass word\n' >"$TMP/basic"
"$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d2" --period 1 \
	--push "http://127.0.0.1:$PORT" --push-label env=test \
	--push-basic-auth-file "$TMP/basic" 2>"$TMP/err" &
rec=$!
sleep 4
grep -q "^dcprof: push: cannot send period .*retrying in" "$TMP/err" ||
	die "a server that is down is not said so"
[ -n "$(ls "$TMP/d2/.spool")" ] || die "nothing waits in the spool"
start_server "$TMP/down-up" "$PORT"
for i in $(seq 200); do
	grep -q "^dcprof: push: sent again after" "$TMP/err" && break
	sleep 0.1
done
sleep 2
kill -TERM "$rec"
wait "$rec" || die "exit $? after SIGTERM: $(cat "$TMP/err")"
cat "$TMP/err"
check_requests "$TMP/down-up" "Basic $(printf 'user:pass word' | base64)" ||
	die "the spooled periods did not all arrive once, in order"
[ -z "$(ls "$TMP/d2/.spool")" ] || die "periods left in the spool"
kill "$SERVER"

# 3. a full spool: periods dropped from the push, counted
PORT=$(free_port)
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d3" --period 1 \
	--duration 4 --push "http://127.0.0.1:$PORT" --push-spool-size 1K
cat "$TMP/err"
grep -q "^dcprof: push: the push spool .* is full (1024 bytes at most): period [0-9-]*T[0-9:]*Z dropped from the push (1 so far)" "$TMP/err" ||
	die "a full spool is not said so"
n=$(sed -n 's/^dcprof: push: 0 requests taken, [0-9]* failed tries, \([0-9]*\) periods dropped (spool full).*/\1/p' "$TMP/err")
[ "${n:-0}" -ge 3 ] || die "the dropped periods are not counted"
# what was left in the spool goes first at the next start
left=$(ls "$TMP/d3/.spool")
[ -n "$left" ] || die "nothing was left in the spool"
start_server "$TMP/next-run"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d3" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT"
[ -z "$(ls "$TMP/d3/.spool")" ] || die "the spool was not emptied by the next run"
from_left=$(echo "$left" | head -1 | sed 's/^0*\([0-9]*\)-.*/\1/')
first=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["line"])' "$TMP/next-run/0001.json")
echo "left from the last run: $left; first request of the next: $first"
case $first in *"&from=$from_left&"*) ;; *) die "the period left in the spool was not sent first" ;; esac
[ "$(ls "$TMP/next-run"/*.json | wc -l)" -ge 3 ] || die "the next run's periods did not all arrive"
kill "$SERVER"

# 4. TLS (libcurl): a server of a self-signed certificate, trusted with
# --push-ca-file, refused without it
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
	-days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
	die "openssl cannot make a certificate"
start_server "$TMP/tls" 0 "$TMP/cert.pem" "$TMP/key.pem"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d6" --period 1 \
	--duration 2 --push "https://127.0.0.1:$PORT" --push-ca-file "$TMP/cert.pem"
n=$(grep -c "^dcprof: period '" "$TMP/err")
[ "$(ls "$TMP/tls"/*.json 2>/dev/null | wc -l)" -eq "$n" ] ||
	die "https: $(ls "$TMP/tls" | wc -l) files for $n periods: $(cat "$TMP/err")"
expect_exit 0 "$DCPROF" record -F 499 -p "$pid" --continuous "$TMP/d7" --period 1 \
	--duration 1 --push "https://127.0.0.1:$PORT"
grep -q "^dcprof: push: cannot send period .*certificate" "$TMP/err" ||
	die "an untrusted certificate is not refused: $(cat "$TMP/err")"
echo "https: $n periods over TLS; untrusted: $(grep -m1 'cannot send' "$TMP/err")"
kill "$SERVER"

# 5. bad input, before recording starts
bad() {
	"$DCPROF" record -p "$pid" --continuous "$TMP/d4" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "'$*' exited $rc"
	head -1 "$TMP/err" | grep -q '^dcprof: ' || die "'$*': $(cat "$TMP/err")"
	grep -q "recording continuously" "$TMP/err" && die "'$*' started recording"
	echo "refused: $*: $(head -1 "$TMP/err")"
}
bad --push ftp://127.0.0.1/x
bad --push "not a url"
bad --push "http://127.0.0.1:1/?x=1"
bad --push http://127.0.0.1:1 --push-token-file "$TMP/no-such-file"
bad --push http://127.0.0.1:1 --push-token-file /dev/null
bad --push http://127.0.0.1:1 --push-basic-auth-file "$TMP/token"
bad --push http://127.0.0.1:1 --push-label nokey
bad --push http://127.0.0.1:1 --push-label "k=v{}"
bad --push http://127.0.0.1:1 --push-app "a b"
bad --push-label env=x
bad --push https://127.0.0.1:1 --push-ca-file "$TMP/no-such-ca.pem"
bad --push-ca-file "$TMP/cert.pem"
# a link planted as the spool is not followed
mkdir "$TMP/d5" "$TMP/elsewhere" && ln -s "$TMP/elsewhere" "$TMP/d5/.spool"
"$DCPROF" record -p "$pid" --continuous "$TMP/d5" --push http://127.0.0.1:1 \
	>"$TMP/out" 2>"$TMP/err" && die "a link as the spool was accepted"
grep -q "^dcprof: the push spool '$TMP/d5/.spool' is not a directory" "$TMP/err" ||
	die "a link as the spool: $(cat "$TMP/err")"
[ -z "$(ls -A "$TMP/elsewhere")" ] || die "the spool link was followed"
"$DCPROF" record -a --push http://127.0.0.1:1 >"$TMP/out" 2>"$TMP/err" &&
	die "--push without --continuous was accepted"
pass
