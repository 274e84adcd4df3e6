#!/bin/bash
# record --continuous --push's log lines as people read them: a period is
# named by its start (UTC, the form --since takes), never by its spool
# file, and a refusal quotes the server's message on one bounded line with
# its control characters made harmless. The receiver started here (on
# 127.0.0.1) answers the first request 503 with a two-line body carrying a
# terminal escape, then refuses every request 400 with a JSON message far
# over the bound, in multi-byte characters; then one answers with a web
# page whose content type carries a terminal escape.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

SPLIT=$(build_workload split)
spawn sh -c 'exec "$0" 60 >/dev/null' "$SPLIT"
pid=$SPAWNED

cat >"$TMP/server.py" <<'PY'
import http.server, os, sys
portfile, mode = sys.argv[1], sys.argv[2]
seen = [0]
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        seen[0] += 1
        if mode == "page":
            # a web page, its content type with a terminal escape
            body = b"<html>not the API</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html\x1b[31m; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if seen[0] == 1:
            code, body = 503, b"busy \x1b[2J\x07now\r\nsecond line of the page"
        else:
            code, body = 400, (b'{"code":3,"message":"bad\x1b]0;title\x07 ' +
                               "\u00e9".encode() * 400 + b'"}')
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
server.serve_forever()
PY
# start_server MODE: sets PORT
start_server() {
	spawn_server "$TMP/port" python3 "$TMP/server.py" "$TMP/port" "$1"
}
start_server refusals

expect_exit 0 "$DCPROF" record -F 199 -p "$pid" --continuous "$TMP/d" --period 1 \
	--duration 2 --push "http://127.0.0.1:$PORT"
cat -v "$TMP/err"

# the periods' starts, from their files (DIR/20261203T165000.000Z-HOST...)
starts=$(sed -n "s|^dcprof: period '$TMP/d/\([0-9]\{8\}T[0-9]\{6\}\)\..*|\1|p" "$TMP/err" |
	sed 's/^\(....\)\(..\)\(..\)T\(..\)\(..\)\(..\)$/\1-\2-\3T\4:\5:\6Z/')
[ -n "$starts" ] || die "no period was logged"
grep "^dcprof: push:" "$TMP/err" | grep -q "pb\.gz" && die "a push line names a spool file"

retry=$(grep -a "^dcprof: push: cannot send period " "$TMP/err") || die "the 503 is not said"
first=$(echo "$starts" | head -1)
[ "$retry" = "dcprof: push: cannot send period $first: HTTP 503 (busy  [2J now); retrying in 1 s" ] ||
	die "the retry does not name the first period ($first) with the body's first line: $retry"

refused=$(grep -a "^dcprof: push: the server refused period " "$TMP/err") || die "the 400 is not said"
echo "$refused" | while read -r line; do
	when=$(echo "$line" | LC_ALL=C sed -n 's/^dcprof: push: the server refused period \([^ ]*\) with HTTP 400 (.*/\1/p')
	echo "$starts" | grep -qx "$when" || die "'$when' is not the start of a period: $line"
done || exit 1
line=$(echo "$refused" | head -1)
msg=$(echo "$line" | LC_ALL=C sed 's/.*with HTTP 400 (\(.*\)): it can never take it.*/\1/')
echo "$msg" | grep -q '^bad ]0;title  éé*\.\.\.$' || die "the message is not quoted, cut and marked: $msg"
[ "${#msg}" -le 300 ] || die "the message is ${#msg} characters long"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/err" && die "a control character reached the log"
echo "$msg" | iconv -f UTF-8 -t UTF-8 >/dev/null || die "the cut split a character: $msg"

# a page with a content type the log quotes
start_server page
expect_exit 0 "$DCPROF" record -F 199 -p "$pid" --continuous "$TMP/p" --period 1 \
	--duration 1 --push "http://127.0.0.1:$PORT"
cat -v "$TMP/err"
grep -aq "^dcprof: push: the server answered HTTP 200 with text/html \[31m; charset=utf-8, not the /ingest API's answer" "$TMP/err" ||
	die "a web page's answer is not said with its content type"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$TMP/err" && die "a control character of the content type reached the log"
pass
