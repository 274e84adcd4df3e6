#!/bin/bash
# The collection: records per second and system calls per record for
# N stopped processes x M executable maps, through several buffer sizes;
# then the time to inject every process of the system (dcprof collect
# --kind tasks + --kind maps, what the recorder injects) side by side with
# perf's own synthesis of the same processes ('perf bench internals
# synthesize', one thread) and with a whole 'perf record -a -- true'.
# Prints markdown tables.
#   usage: bench/collect.sh [NxM ...]      (default: 500x50 2000x50;
#                                           BENCH_QUICK=1: 50x5)
#   env:   RUNS (best of, default 3; BENCH_QUICK=1: 1), BENCH_KEEP=1
#          (keep the temporary directory), BUILD (build dir, default
#          ./build), DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -eu
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNS=${RUNS:-$(by_mode 3 1)}
CONFIGS=("$@")
# shellcheck disable=SC2207 # the words of the default
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=($(by_mode "500x50 2000x50" 50x5))
need_dcprof
bench_init
compile collect_maps -O1 "$TOP/tests/workloads/collect_maps.c"
# the library alone, in process, as perf's synthesis benchmark is
cat >"$TMP/walk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collect_internal.h"
/* walk KIND BUFFER RUNS [PIDS]: best time of RUNS whole walks */
int main(int argc, char **argv)
{
	enum dcp_collection_kind kind = strcmp(argv[1], "maps") ? DCP_COLLECTION_TASKS : DCP_COLLECTION_MAPS;
	size_t size = strtoul(argv[2], NULL, 10), nr = 0;
	int runs = atoi(argv[3]);
	pid_t *pids = calloc(65536, sizeof(*pids));
	struct dcp_collection_opts o = { .sz = sizeof(o) };
	double best = 1e30;
	const struct dcp_collection_stats *st = NULL;
	uint64_t sc = 0;
	char *buf = malloc(size);

	for (char *p = argc > 4 ? argv[4] : NULL; p && *p; p += strspn(p, ","))
		pids[nr++] = (pid_t)strtol(p, &p, 10);
	o.pids = nr ? pids : NULL;
	o.nr_pids = nr;
	for (int r = 0; r < runs; r++) {
		struct timespec a, b;
		struct dcp_collection *c;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &a);
		c = dcp_collection_open(kind, &o);
		if (!c)
			return fprintf(stderr, "%s\n", dcp_last_error()), 1;
		while ((n = dcp_collection_read(c, buf, size, NULL)) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (n < 0)
			return fprintf(stderr, "%s\n", dcp_last_error()), 1;
		double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
		if (ms < best)
			best = ms;
		static struct dcp_collection_stats keep;
		keep = *dcp_collection_get_stats(c);
		st = &keep;
		sc = dcp_collection_syscalls(c);
		dcp_collection_close(c);
	}
	printf("%llu %llu %.3f %llu %llu\n", (unsigned long long)st->records,
	       (unsigned long long)st->reads, best, (unsigned long long)sc,
	       (unsigned long long)st->tasks_vanished);
	return 0;
}
C
# shellcheck disable=SC2046 # pkg-config's words
# collect_internal.h (the count of /proc system calls) is lib/core's, on
# lib/base's helpers
compile walk -O2 -D_GNU_SOURCE -I"$TOP/include" -I"$TOP/lib/base" \
	-I"$TOP/lib/core" "$TMP/walk.c" \
	"$BUILD/libdcprof.a" $(pkg-config --libs libelf libdw zlib libzstd) -lpthread
have_strace=$(command -v strace || true)
have_perf=$(command -v "$PERF" || true)

# system calls made by a command, all of them, start-up included
syscalls() {
	[ -n "$have_strace" ] || { echo "-"; return; }
	strace -f -c -o "$TMP/strace" "$@" >/dev/null 2>&1
	awk '$NF == "total" { print $4 }' "$TMP/strace"
}

rate() { awk -v n="$1" -v ms="$2" 'BEGIN { if (ms > 0) printf "%.0f", n / ms * 1000; else print "-" }'; }

walk() { "$TMP/walk" "$@"; }

echo "## The collection of N stopped processes x M exec maps (--kind maps, pid list)"
echo
echo "kernel $(uname -r), $(nproc) CPUs; best of $RUNS. 'library': open, read"
echo "to the end, close, in process; /proc syscalls counted by the library."
echo "'command': 'dcprof collect --kind maps -p PIDS --buffer B >/dev/null',"
echo "start-up and text output included; syscalls by strace -f -c, all of them."
echo
echo "| N x M | buffer | records | reads | library ms | records/s | /proc syscalls/record | command ms | command syscalls/record |"
echo "|---|---|---|---|---|---|---|---|---|"
declare -A SYSTEM
for cfg in "${CONFIGS[@]}"; do
	n=${cfg%x*} m=${cfg#*x}
	rm -f "$TMP/pids"
	start_bg "$TMP/collect_maps" "$n" "$m" "$TMP/pids"
	wait_file "$TMP/pids" 60 || die "workload did not start"
	pids=$(cat "$TMP/pids")
	# the smallest buffer that holds every record
	small=64
	until "$DCPROF" collect --kind maps -p "$pids" --buffer $small >/dev/null 2>"$TMP/err"; do
		small=$(sed -n 's/.*next record of \([0-9]*\) bytes$/\1/p' "$TMP/err")
		[ -n "$small" ] || die "$(cat "$TMP/err")"
	done
	for buf in "$small" 4096 65536 1048576; do
		read -r recs reads lms psc _ < <(walk maps "$buf" "$RUNS" "$pids")
		cms=$(best_ms "$RUNS" "$DCPROF" collect --kind maps -p "$pids" --buffer "$buf")
		sc=$(syscalls "$DCPROF" collect --kind maps -p "$pids" --buffer "$buf")
		label=$buf
		[ "$buf" = "$small" ] && label="$buf (1 record)"
		echo "| $n x $m | $label | $recs | $reads | $lms | $(rate "$recs" "$lms") | $(div "$psc" "$recs") | $cms | $(div "$sc" "$recs") |"
	done

	# every process of the system, as the recorder injects them
	nproc_now=$(nprocs)
	read -r r_tasks _ l_tasks _ < <(walk tasks 65536 "$RUNS")
	read -r r_maps _ l_maps _ < <(walk maps 65536 "$RUNS")
	c_tasks=$(best_ms "$RUNS" "$DCPROF" collect --kind tasks)
	c_maps=$(best_ms "$RUNS" "$DCPROF" collect --kind maps)
	perf_synth=- perf_events=- perf_record=-
	if [ -n "$have_perf" ]; then
		"$PERF" bench internals synthesize --mt -m 1 -M 1 -I "$RUNS" \
			>"$TMP/perf" 2>&1 || true
		perf_synth=$(awk '/Average synthesis took/ { printf "%.3f", $4 / 1000 }' "$TMP/perf")
		perf_events=$(awk '/Average num. events/ { printf "%d", $4 }' "$TMP/perf")
		perf_record=$(best_ms "$RUNS" "$PERF" record -q -a -o "$TMP/perf.data" -- true || echo -)
	fi
	sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
	SYSTEM[$cfg]="| $cfg | $nproc_now | $((r_tasks + r_maps)) | $(sum "$l_tasks" "$l_maps") | $(sum "$c_tasks" "$c_maps") | ${perf_events:--} | ${perf_synth:--} | $perf_record |"

	stop_bg
done

echo
echo "## Injecting every process of the system: dcprof vs perf's synthesis"
echo
echo "With the workload above running. dcprof: tasks + maps walks of all"
echo "processes (library in process, and the two commands). perf: 'perf bench"
echo "internals synthesize --mt -m 1 -M 1' (its synthesis of all processes, in"
echo "process, one thread), and a whole 'perf record -a -- true'."
echo
echo "| workload | processes | dcprof records | dcprof library ms | dcprof commands ms | perf events | perf synthesis ms | perf record -a ms |"
echo "|---|---|---|---|---|---|---|---|"
for cfg in "${CONFIGS[@]}"; do
	echo "${SYSTEM[$cfg]}"
done
