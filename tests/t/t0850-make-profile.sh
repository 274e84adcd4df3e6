#!/bin/bash
# make profile (the README's first command) on a busy system: the report
# it prints is the top 25 rows, not the hundreds of a whole system, and a
# line says how to see all of them (issue 41: about 520 rows scrolled by).
. "$(dirname "$0")/test-lib.sh"
need make gcc
need_perf_events

# a few hundred functions: one short-lived process per command
for ((i = 0; i < 40; i++)); do ls /usr/bin >/dev/null; done &
make -C "$TOP" --no-print-directory -s BUILD="$BUILD" profile DURATION=1 \
	>"$TMP/out" 2>"$TMP/err" || die "make profile failed: $(tail -c 600 "$TMP/err")"
wait
rows=$(grep -cv '^#\|^make profile:\|^ *Samples ' "$TMP/out")
all=$("$DCPROF" report -i "$BUILD/profile.data" | grep -cv '^#\|^ *Samples ')
echo "make profile: $rows rows of $all; $(grep '^make profile:' "$TMP/out")"
[ "$rows" -le 25 ] || die "make profile printed $rows rows"
[ "$rows" -eq 25 ] || [ "$rows" -eq "$all" ] ||
	die "make profile printed $rows rows of $all"
grep -q "^make profile: the top 25 rows; all of them: .*dcprof report -i .*profile.data$" "$TMP/out" ||
	die "no line says how to see every row: $(tail -3 "$TMP/out")"
pass
