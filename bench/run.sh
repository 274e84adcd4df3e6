#!/bin/bash
# `make bench`: the benches one after the other, each printing its markdown
# tables on stdout: bench/record.sh compares dcprof record with perf record;
# bench/collect.sh measures the collection iterator; bench/unwind.sh DWARF
# unwinding; bench/flamegraph.sh flame graphs and exports; bench/report.sh
# compares dcprof report with perf report; bench/proof.sh checks accuracy,
# attribution, lost samples and slowdown against perf. Exits non-zero if any
# bench failed, after running them all; says on stderr how long each took.
#
# About 7 minutes on the 2-CPU VM of docs/PERFORMANCE.md (at most 8),
# with shorter runs than the benches' own defaults, and with the report
# bench timing its reports on the -g recordings the record bench made
# (passed through the directory BENCH_RECORDINGS) instead of recording the
# same workload again:
#   record.sh      main recordings of 20 s; output size at 5, 20 and 60 s
#                  (60 s with -g only)                       about 4 min 50 s
#   collect.sh     best of 1 (RUNS=1)                        about 25 s
#   unwind.sh      6 s recordings                            about 30 s
#   flamegraph.sh  5 s recording, best of 3                  about 20 s
#   report.sh      reports on the record bench's 20 s and 60 s
#                  recordings, best of 3                     about 15 s
#   proof.sh       accuracy on 6 s of split, attribution over 3 s and a
#                  storm of 500 children, lost samples over 2 s, slowdown
#                  of 1.5 s runs (3 of each mode)            about 1 min 25 s
# BENCH_FULL=1 runs every bench with its own defaults instead (record.sh:
# 30 s, and the output size at 5, 20 and 60 s with and without -g;
# report.sh: 30 s, shared, and 5 min; proof.sh: 15 s of split, a storm of
# 1,000...): about half an hour, by the benches' own figures.
#
# BENCH_QUICK=1 runs every bench/*.sh instead, each in its quick mode (as
# briefly as it runs, through its code: by_mode in bench/lib.sh), builds.sh
# and stripped.sh comparing this build with itself unless BASE_DCPROF
# names another: what CI runs, so that no bench rots; its figures are not
# for reading. A variable set here
# (BENCH_DURATION, BENCH_GROWTH, BENCH_GROWTH_NO_G, RUNS, SECONDS_REC,
# BENCH_REPORT_DURATIONS, BENCH_ACC_SECONDS, BENCH_ATTR_SECONDS,
# BENCH_STORM_CHILDREN, BENCH_LOST_SECONDS, BENCH_SLOW_SECONDS) that is set
# in the environment keeps its value; BENCH_DURATION then applies to both
# record.sh and unwind.sh, RUNS to both collect.sh and flamegraph.sh.
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$TOP" || exit 1

# The -g recordings of record.sh, for report.sh.
if [ -z "${BENCH_RECORDINGS:-}" ]; then
	BENCH_RECORDINGS=$(mktemp -d "${TMPDIR:-/tmp}/dcprof-bench-recordings.XXXXXX") ||
		die "cannot make a temporary directory"
	trap 'rm -rf "$BENCH_RECORDINGS"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi
export BENCH_RECORDINGS

# The settings of each bench (VAR=value), unless BENCH_FULL or BENCH_QUICK.
declare -A SETTINGS
if ! is_on "${BENCH_FULL:-}" && ! is_on "${BENCH_QUICK:-}"; then
	SETTINGS[record]="BENCH_DURATION=${BENCH_DURATION:-20}
BENCH_GROWTH=${BENCH_GROWTH:-5 20 60}
BENCH_GROWTH_NO_G=${BENCH_GROWTH_NO_G:-${BENCH_GROWTH:-5 20}}"
	SETTINGS[collect]="RUNS=${RUNS:-1}"
	SETTINGS[unwind]="BENCH_DURATION=${BENCH_DURATION:-6}"
	SETTINGS[flamegraph]="RUNS=${RUNS:-3}
SECONDS_REC=${SECONDS_REC:-5}"
	SETTINGS[report]="BENCH_REPORT_DURATIONS=${BENCH_REPORT_DURATIONS:-20 60}"
	SETTINGS[proof]="BENCH_ACC_SECONDS=${BENCH_ACC_SECONDS:-6}
BENCH_ATTR_SECONDS=${BENCH_ATTR_SECONDS:-3}
BENCH_STORM_CHILDREN=${BENCH_STORM_CHILDREN:-500}
BENCH_LOST_SECONDS=${BENCH_LOST_SECONDS:-2}
BENCH_SLOW_SECONDS=${BENCH_SLOW_SECONDS:-1.5}"
fi

# The benches, in order: report.sh after record.sh, whose recordings it
# reads. Quick: all of them, and the build compared with itself.
if is_on "${BENCH_QUICK:-}"; then
	names=()
	for b in bench/*.sh; do
		case $b in bench/lib.sh | bench/run.sh) continue ;; esac
		names+=("$(basename "$b" .sh)")
	done
	export BASE_DCPROF=${BASE_DCPROF:-$DCPROF}
else
	names=(record collect unwind flamegraph report proof)
fi

fail=0
t_all=$SECONDS
for name in "${names[@]}"; do
	b=bench/$name.sh
	[ -e "$b" ] || continue
	echo "## $name"
	echo
	settings=()
	if [ -n "${SETTINGS[$name]:-}" ]; then
		mapfile -t settings <<<"${SETTINGS[$name]}"
		say "$name.sh with ${settings[*]}"
	fi
	# builds.sh compares two builds: the one to compare with first
	args=()
	[ "$name" = builds ] && args=("$BASE_DCPROF")
	t0=$SECONDS
	if ! env ${settings[@]+"${settings[@]}"} bash "$b" ${args[@]+"${args[@]}"}; then
		say "$b failed"
		fail=1
	fi
	say "$name.sh took $((SECONDS - t0)) s"
	echo
done
say "all benches took $((SECONDS - t_all)) s"
exit $fail
