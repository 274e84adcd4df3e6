#!/bin/bash
# Two builds of dcprof side by side on the same workload, in one run:
# recorder CPU (-a -g at 999 Hz for BENCH_SECONDS, the busy workload) and
# report time (flat, --children, --tree caller) on the profile the first
# build wrote, alternating the builds run by run and printing medians and
# the ratio new/old. Meant for "within noise of before" after a change that
# should not change speed:
#   bench/builds.sh OLD_DCPROF [NEW_DCPROF]   (NEW defaults to build/dcprof)
# BENCH_RUNS (default 3) recordings per build, BENCH_SECONDS (default 10),
# BENCH_REPORT_ROUNDS (default 10) rounds of the reports; BENCH_RECORD_ARGS
# adds record options (e.g. "--backend bpf"). BENCH_QUICK=1: one recording
# of 1 s per build, one round.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OLD=${1:?usage: bench/builds.sh OLD_DCPROF [NEW_DCPROF]}
NEW=${2:-$DCPROF}
RUNS=${BENCH_RUNS:-$(by_mode 3 1)}
SECONDS_EACH=${BENCH_SECONDS:-$(by_mode 10 1)}
ROUNDS=${BENCH_REPORT_ROUNDS:-$(by_mode 10 1)}
[ -x "$OLD" ] || die "no '$OLD'"
[ -x "$NEW" ] || die "no '$NEW'"
[ "$(id -u)" -eq 0 ] || die "recording system-wide needs root"
bench_init
export DCPROF_CACHE_DIR=
start_busy

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

declare -A cpu
for ((i = 0; i < RUNS; i++)); do
	order="old new"
	[ $((i % 2)) -eq 1 ] && order="new old"
	for which in $order; do
		bin=$OLD
		[ "$which" = new ] && bin=$NEW
		# shellcheck disable=SC2086 # the options' words
		recorder "$bin" record -a -g -F 999 --duration "$SECONDS_EACH" \
			${BENCH_RECORD_ARGS:-} -o "$TMP/$which.data" 2>/dev/null ||
			die "'$bin record' failed"
		cpu[$which]+="$CPU_MS "
	done
done

# Report time: each build reads the old build's profile, ROUNDS alternating
# rounds of the three views, wall-clock ms per view.
report_ms() {
	local bin=$1 t0 t1
	shift
	t0=$(date +%s%N)
	"$bin" report -i "$TMP/old.data" "$@" >/dev/null 2>&1 ||
		die "'$bin report $*' failed"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}

printf '%-24s %12s %12s %9s\n' measure old new new/old
o=$(tr ' ' '\n' <<<"${cpu[old]}" | grep . | median)
n=$(tr ' ' '\n' <<<"${cpu[new]}" | grep . | median)
printf '%-24s %10s ms %10s ms %9s\n' "recorder CPU (median)" "$o" "$n" \
	"$(awk -v a="$o" -v b="$n" 'BEGIN { printf "%.2f", b / a }')"
for view in "" "--children" "--tree caller"; do
	ro="" rn=""
	for ((i = 0; i < ROUNDS; i++)); do
		# shellcheck disable=SC2086 # the view's words
		ro+="$(report_ms "$OLD" $view) "
		# shellcheck disable=SC2086
		rn+="$(report_ms "$NEW" $view) "
	done
	o=$(tr ' ' '\n' <<<"$ro" | grep . | median)
	n=$(tr ' ' '\n' <<<"$rn" | grep . | median)
	printf '%-24s %9s us %9s us %9s\n' "report ${view:-flat}" "$o" "$n" \
		"$(awk -v a="$o" -v b="$n" 'BEGIN { printf "%.2f", b / a }')"
done
