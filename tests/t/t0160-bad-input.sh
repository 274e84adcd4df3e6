#!/bin/bash
# Bad input: corrupt, truncated, foreign, empty and missing files given to
# report and cookies; unknown options; a dead pid; a refused
# perf_event_open; an unwritable output path; --value off-cpu or wall of a
# profile recorded without --off-cpu (report, export and flamegraph:
# before, an empty table, or CPU time titled wall-clock, and status 0; its
# --threads view shows no off-CPU figures, not zeros); record --off-cpu
# with an event that does not count time. Each is a non-zero exit without a crash
# (< 128), one error line naming its subject, and a failed recording never
# touches an earlier profile at its output path.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

# a finished profile to damage
GOOD=$TMP/good.data
expect_exit 0 "$DCPROF" record -o "$GOOD" -- sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done'
size=$(stat -c %s "$GOOD")
[ "$size" -gt 200 ] || die "the profile is only $size bytes"

# corrupt: flip 16 bytes in the middle
cp "$GOOD" "$TMP/corrupt.data"
python3 - "$TMP/corrupt.data" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
mid = len(b) // 2
for i in range(mid, mid + 16):
    b[i] ^= 0xff
open(p, "wb").write(b)
PY
head -c $((size / 2)) "$GOOD" >"$TMP/truncated.data"
: >"$TMP/empty.data"
cp /bin/ls "$TMP/foreign.data"

for f in corrupt truncated foreign empty missing; do
	for cmd in report cookies; do
		"$DCPROF" $cmd -i "$TMP/$f.data" >"$TMP/out" 2>"$TMP/err"
		rc=$?
		[ "$rc" -ne 0 ] || die "$cmd of a $f file exited 0"
		[ "$rc" -lt 128 ] || die "$cmd of a $f file crashed ($rc)"
		one_line_error
		grep -qF "$TMP/$f.data" "$TMP/err" ||
			die "$cmd: the error does not name the $f file: $(cat "$TMP/err")"
	done
done

# off-CPU time asked of a profile without it: said, and no output written
for value in off-cpu wall; do
	for cmd in "report" "export --format folded -o $TMP/v.folded" \
		"flamegraph -o $TMP/v.html"; do
		expect_exit 1 "$DCPROF" $cmd --value $value -i "$GOOD"
		one_line_error
		grep -q "recorded without --off-cpu.*--value $value" "$TMP/err" ||
			die "$cmd --value $value: $(cat "$TMP/err")"
		grep -qF "$GOOD" "$TMP/err" ||
			die "$cmd: the error does not name the file"
	done
done
[ ! -e "$TMP/v.folded" ] && [ ! -e "$TMP/v.html" ] ||
	die "--value off-cpu of a CPU profile left an output file"
expect_exit 0 "$DCPROF" report --value cpu -i "$GOOD"
expect_exit 0 "$DCPROF" report --threads -i "$GOOD"
grep -q "recorded without --off-cpu: the time off the CPU is not known" \
	"$TMP/out" || die "--threads of a CPU profile does not say it: $(head -12 "$TMP/out")"
awk '$1 ~ /^[0-9]+$/ && ($4 != "-" || $5 != "-" || $6 != "-") { bad = 1 }
	END { exit bad }' "$TMP/out" ||
	die "--threads of a CPU profile shows off-CPU figures: $(tail -3 "$TMP/out")"
expect_exit 0 "$DCPROF" report --threads --format json -i "$GOOD"
[ "$(json_get "$TMP/out" "sorted(set(t['interruptible_ms'] for t in d['threads']))")" = '[null]' ] ||
	die "--threads JSON of a CPU profile has off-CPU figures"
expect_exit 2 "$DCPROF" record --off-cpu -e page-faults -o "$TMP/pf.data" -- true
grep -q "must count time" "$TMP/err" ||
	die "record --off-cpu -e page-faults: $(cat "$TMP/err")"
[ ! -e "$TMP/pf.data" ] || die "record --off-cpu -e page-faults wrote a file"

# unknown options are usage errors
expect_exit 2 "$DCPROF" record --no-such-option
expect_exit 2 "$DCPROF" report --no-such-option
expect_exit 2 "$DCPROF" cookies --no-such-option
expect_exit 2 "$DCPROF" report --sort nonsense
expect_exit 2 "$DCPROF" report --format xml
expect_exit 2 "$DCPROF" record -F lots -- true
# numbers that are not (nan matched every row, inf none)
for v in nan inf -1 abc; do
	expect_exit 2 "$DCPROF" report -i "$GOOD" --percent-limit "$v"
done

# failing recordings: exit 1, one line, and the earlier profile kept as is
T=$TMP/target.data
cp "$GOOD" "$T"
failing_record() { # WHAT ARGS...
	local what=$1
	shift
	expect_exit 1 "$DCPROF" record -o "$T" "$@"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] ||
		die "$what: expected one line: $(cat "$TMP/err")"
	cmp -s "$T" "$GOOD" || die "$what: the earlier profile changed"
	[ -e "$T.old" ] && die "$what: the earlier profile was moved to .old"
	ls "$T".tmp.* >/dev/null 2>&1 && die "$what: a temporary file is left"
	return 0
}
true &
DEAD=$!
wait $DEAD
failing_record "dead pid" -p "$DEAD"
grep -q "$DEAD" "$TMP/err" || die "dead pid: not named: $(cat "$TMP/err")"
failing_record "pid 999999" -p 999999
# perf_event_open refused: cycles has no PMU on these machines; where it
# does, a frequency beyond the kernel's maximum is refused everywhere
if "$DCPROF" record -e cycles -o "$TMP/probe.data" -- true \
	>/dev/null 2>&1; then
	echo "note: this machine has a PMU; -e cycles not tried"
else
	failing_record "-e cycles" -e cycles -- true
fi
failing_record "-F 1000000" -F 1000000 -- true
failing_record "-F 1000000 -a" -F 1000000 -a --duration 1
failing_record "--only /nonexistent" --only "$TMP/nonexistent" -- true

# an unwritable output path
expect_exit 1 "$DCPROF" record -o /proc/nonexistent/x -- true
one_line_error
grep -q "/proc/nonexistent/x" "$TMP/err" || die "unwritable: $(cat "$TMP/err")"
# a read-only directory (0500): root writes anywhere, so as root the
# recorder runs without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (setpriv
# drops them from the bounding set; it keeps what perf_event_open needs)
mkdir "$TMP/ro" && cp "$GOOD" "$TMP/ro/p.data" && chmod 0500 "$TMP/ro"
no_dac=()
if [ "$(id -u)" -eq 0 ]; then
	need setpriv
	no_dac=(setpriv --bounding-set=-dac_override,-dac_read_search --)
fi
expect_exit 1 "${no_dac[@]}" "$DCPROF" record -o "$TMP/ro/p.data" -- true
one_line_error
grep -q "$TMP/ro/p.data" "$TMP/err" || die "read-only dir: $(cat "$TMP/err")"
cmp -s "$TMP/ro/p.data" "$GOOD" || die "read-only dir: profile changed"

# a command that cannot run leaves the earlier profile at its path
"$DCPROF" record -o "$T" -- "$TMP/no-such-command" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "missing command: exit $rc"
one_line_error
cmp -s "$T" "$GOOD" || die "missing command: the earlier profile at '$T' changed"

pass
