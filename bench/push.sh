#!/bin/bash
# What continuous mode's push costs a machine: `record -a -g -F 99
# --continuous DIR --period P` beside the busy workload for SECONDS,
# without a push and pushing to a local receiver of each kind
# (tests/tools: Pyroscope's /ingest, Parca's WriteRaw gateway, an OTLP
# profiles receiver, each deciding as the server does), one after the
# other in one run. For each: the bytes on the wire (request bodies, the
# requests taken) per hour and per period, the recorder's CPU per period
# and as a share of one core, and its peak RSS; beside the budget the
# OpenTelemetry eBPF profiler states for itself (at most 1% CPU and
# 250 MB of memory).
#   bench/push.sh
# BENCH_SECONDS (default 60), BENCH_PERIOD (default 10); BENCH_QUICK=1:
# 6 s of 2 s periods.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_RUN=${BENCH_SECONDS:-60}
PERIOD=${BENCH_PERIOD:-10}
if is_on "${BENCH_QUICK:-}"; then
	SECONDS_RUN=6 PERIOD=2
fi
[ "$(id -u)" -eq 0 ] || die "recording system-wide needs root"
need_dcprof
need python3
need protoc
# the receivers' python: one that imports google.protobuf (Debian's
# python3-protobuf; a version manager's python3 first in PATH may lack it)
PY=
for p in python3 /usr/bin/python3; do
	"$p" -c 'import google.protobuf' 2>/dev/null && PY=$p && break
done
[ -n "$PY" ] ||
	die "the OTLP receiver needs python3-protobuf (scripts/install-deps.sh)"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time) for the peak RSS"
bench_init
export DCPROF_CACHE_DIR=
TOOLS=$TOP/tests/tools
mkdir -p "$TMP/pb"
protoc --proto_path="$TOP/proto" --python_out="$TMP/pb" \
	"$TOP/proto/otlp_profiles.proto" || die "protoc failed"
start_busy

# receiver KIND: starts KIND's receiver into $TMP/recv-KIND, sets URL
receiver() {
	local port=$TMP/port-$1
	case $1 in
	pyroscope) start_bg "$PY" "$TOOLS/push_receiver.py" "$TMP/recv-$1" \
		"$port" '{"mode": "pyroscope"}' ;;
	parca) start_bg "$PY" "$TOOLS/push_receiver.py" "$TMP/recv-$1" \
		"$port" '{"mode": "parca"}' ;;
	otlp) start_bg "$PY" "$TOOLS/otlp_receiver.py" "$TMP/recv-$1" \
		"$port" "$TMP/pb" '{}' ;;
	esac
	wait_file "$port" 10 || die "the $1 receiver did not start"
	case $1 in
	pyroscope) URL=http://127.0.0.1:$(cat "$port") ;;
	parca) URL=parca+http://127.0.0.1:$(cat "$port") ;;
	otlp) URL=otlp+http://127.0.0.1:$(cat "$port") ;;
	esac
}

periods=$((SECONDS_RUN / PERIOD))
say "$SECONDS_RUN s of $PERIOD s periods, -a -g -F 99, on $(cpu_model)"
printf '%-10s %12s %12s %10s %10s %8s %10s\n' push "MB/hour" "KB/period" \
	"requests" "CPU ms/per" "CPU %" "peak RSS"
for kind in none pyroscope parca otlp; do
	args=()
	if [ "$kind" != none ]; then
		receiver "$kind"
		args=(--push "$URL")
	fi
	recorder /usr/bin/time -f %M -o "$TMP/rss-$kind" "$DCPROF" record -a -g \
		-F 99 --continuous "$TMP/d-$kind" --period "$PERIOD" \
		--duration "$SECONDS_RUN" "${args[@]}" 2>"$TMP/err-$kind" ||
		die "'record --push $kind' failed: $(tail -3 "$TMP/err-$kind")"
	bytes=0 requests=0
	if [ "$kind" != none ]; then
		read -r bytes requests < <(python3 - "$TMP/recv-$kind" <<'PY'
import glob, json, sys
n = b = 0
for f in glob.glob(sys.argv[1] + "/[0-9][0-9][0-9][0-9].json"):
    r = json.load(open(f))
    if r.get("verdict") == "taken":
        n += 1
        b += r["len"]
print(b, n)
PY
		)
		[ "$requests" -gt 0 ] || die "the $kind receiver took nothing"
	fi
	printf '%-10s %12s %12s %10s %10s %8s %7s MB\n' "$kind" \
		"$(div "$((bytes * 3600))" "$((SECONDS_RUN * 1000000))")" \
		"$(div "$bytes" "$((periods * 1000))")" "$requests" \
		"$(div "$CPU_MS" "$periods" %.1f)" \
		"$(div "$((CPU_MS * 100))" "$((SECONDS_RUN * 1000))" %.3f)" \
		"$(div "$(cat "$TMP/rss-$kind")" 1024 %.1f)"
	stop_bg
	start_busy
done
say "the OpenTelemetry eBPF profiler's own budget: at most 1% CPU, 250 MB"
