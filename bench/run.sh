#!/bin/bash
# `make bench`: the benches one after the other, each printing its markdown
# tables on stdout. bench/record.sh compares dcprof record with perf record;
# bench/collect.sh (when present) measures the collection iterator;
# bench/report.sh compares dcprof report with perf report; bench/proof.sh
# checks accuracy, attribution, lost samples and slowdown against perf.
# Exits non-zero if any bench failed, after running them all.
# To stay within minutes, the report bench records 30 s and 2 min here;
# BENCH_FULL=1 keeps its own default of 30 s and 5 min (about 17 minutes).
set -u
cd "$(dirname "$0")/.." || exit 1
if [ -z "${BENCH_FULL:-}" ] || [ "$BENCH_FULL" = 0 ]; then
	export BENCH_REPORT_DURATIONS=${BENCH_REPORT_DURATIONS:-30 120}
fi
fail=0
for b in bench/record.sh bench/collect.sh bench/unwind.sh bench/flamegraph.sh \
	bench/report.sh bench/proof.sh; do
	[ -e "$b" ] || continue
	echo "## $(basename "$b" .sh)"
	echo
	if ! bash "$b"; then
		echo "run.sh: $b failed" >&2
		fail=1
	fi
	echo
done
exit $fail
