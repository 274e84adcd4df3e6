#!/bin/bash
# What recording each sample's cgroup costs, on a machine of many cgroups:
# BENCH_CGROUPS (default 50) cgroups made under the cgroup v2 hierarchy,
# each running a quiet service (bench/workloads/svc.c), beside the busy
# workload, recorded -a -g at 999 Hz with cgroups (the default) and with
# --no-cgroups, alternating run by run in one run of the script, on each
# backend. Prints the medians of bytes per kept sample (the compact file)
# and of the recorder's CPU per 1,000 samples, and their ratio on/off.
#   bench/cgroups.sh
# BENCH_RUNS (default 5) recordings per setting and backend, BENCH_SECONDS
# (default 10); BENCH_QUICK=1: 1 run of 3 s each, 10 cgroups.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${BENCH_RUNS:-5}
SECONDS_EACH=${BENCH_SECONDS:-10}
NR_CGROUPS=${BENCH_CGROUPS:-50}
if is_on "${BENCH_QUICK:-}"; then
	RUNS=1 SECONDS_EACH=3 NR_CGROUPS=10
fi
[ "$(id -u)" -eq 0 ] || die "recording system-wide needs root"
need_dcprof
CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG" ] || die "no cgroup v2 hierarchy is mounted"
bench_init
export DCPROF_CACHE_DIR=
BASE=$CG/dcprof-bench.$$

remove_cgroups() {
	stop_bg
	find "$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	bench_cleanup
}
trap remove_cgroups EXIT

# Each cgroup's process (bench/workloads/svc.c): a millisecond of CPU
# every tenth of a second, so that every cgroup has samples of its own
# while the 50 take half a CPU.
compile svc -O2 -g "$TOP/bench/workloads/svc.c"
for ((i = 0; i < NR_CGROUPS; i++)); do
	d=$BASE/system.slice/svc$i.service
	mkdir -p "$d" || die "cannot make cgroups under $CG"
	start_bg sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2"' sh "$d" \
		"$TMP/svc"
done
start_busy
say "$NR_CGROUPS cgroups under $BASE, $RUNS runs of $SECONDS_EACH s each"

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

declare -A bps cpk
for backend in bpf perf; do
	for ((i = 0; i < RUNS; i++)); do
		order="on off"
		[ $((i % 2)) -eq 1 ] && order="off on"
		for which in $order; do
			f=$TMP/$backend-$which.data
			flag=
			[ "$which" = off ] && flag=--no-cgroups
			# shellcheck disable=SC2086 # the flag, or none
			recorder "$DCPROF" record --backend "$backend" -a -g \
				-F 999 --duration "$SECONDS_EACH" $flag -o "$f" \
				2>/dev/null || die "'record --backend $backend $flag' failed"
			kept=$("$DCPROF" report -i "$f" --format json --limit 0 |
				python3 -c 'import json, sys; print(json.load(sys.stdin)["stats"]["samples_kept"])') ||
				die "cannot read '$f'"
			[ "$kept" -gt 0 ] || die "no samples kept in '$f'"
			bps[$backend-$which]+="$(div "$(stat -c %s "$f")" "$kept") "
			cpk[$backend-$which]+="$(div "$((CPU_MS * 1000))" "$kept") "
		done
	done
done

printf '%-8s %-28s %10s %10s %8s\n' backend measure on off on/off
for backend in bpf perf; do
	for m in bps cpk; do
		declare -n v=$m
		on=$(tr ' ' '\n' <<<"${v[$backend-on]}" | grep . | median)
		off=$(tr ' ' '\n' <<<"${v[$backend-off]}" | grep . | median)
		label="bytes per sample"
		[ "$m" = cpk ] && label="recorder CPU ms / 1000 smp"
		printf '%-8s %-28s %10s %10s %8s\n' "$backend" "$label" "$on" \
			"$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')"
		unset -n v
	done
done
