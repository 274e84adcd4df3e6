#!/bin/bash
# Stripped-code bench (issue 17, docs/SYMBOLS.md "Functions without
# names"): a recording of stripped programs, Debian's own `sort` and `xz`
# (liblzma: .dynsym only) on generated input and tests/workloads/split.c
# built without -g and stripped with `strip -s`, all three run one after
# the other by one driver script, recorded as a command by this build of
# dcprof, by the previous build (BASE_DCPROF) and by perf, one at a time.
# Prints:
#   1. the closing symbolization: the wall time and the CPU time
#      (user+sys: on a loaded machine the steadier of the two) of
#      `dcprof report --resymbolize -i F` (every address named again from
#      the files, the FDE tables read where no symbol covers an address)
#      with each build on the same recording, median of BENCH_RESYM_RUNS
#      runs alternating the builds (the issue's target: no more than 10%
#      slower than the previous build), on three recordings: this build's
#      (the stored names are FDE names), the previous build's (stored as
#      [unresolved]: this build names them now) and one of this build with
#      `--only` each stripped file (no kernel or libc frames: the kernel's
#      symbols, read again from /proc/kallsyms, take most of the time of
#      the other two); beside `dcprof report -i F` (the stored names, no
#      file read);
#   2. recorder CPU: the recorder's own user+sys time (the CPU of its
#      children, as bash's `times` reports it, less the driver's own
#      `times`: the workload's CPU), samples of the workload, per 1k samples;
#   3. unnamed rows, per stripped file and tool: rows the report shows for
#      the file and the share of its samples in rows that name no function.
#      perf: `perf report --sort dso,sym` shows an address no symbol covers
#      as its own row, `[.] 0x...` (unnamed); dcprof: `[unresolved]` (one
#      row per file, the previous build) and per-address `FILE+0xOFFSET`
#      names (OFFSET no FDE's start: no FDE covers the address) are
#      unnamed; `FILE+0xSTART` at an FDE's start (checked against
#      `readelf --debug-dump=frames`) names a function, as symbols do.
# Markdown tables on stdout, progress on stderr. About 2 minutes (four
# recordings of some 10 s of CPU each, the unrecorded warm-up run, the
# report runs).
#
# Environment:
#   BASE_DCPROF=PATH        the previous build's dcprof (e.g.
#                           /tmp/base-build/dcprof); unset: its column is
#                           left out, with a message
#   BENCH_FREQ=999          sampling frequency of the three recorders
#   BENCH_SORT_LINES=3000000  lines sorted by sort (about 100 MB)
#   BENCH_XZ_MB=3           MB of those lines compressed by xz -6 -T1
#   BENCH_SPLIT_SECONDS=3   CPU seconds of the stripped split workload
#   BENCH_RESYM_RUNS=5      runs of each report per build and recording
#                           (median; the runs are printed too)
#   BENCH_QUICK=1           100,000 lines, 1 MB for xz, 1 s of split, 99 Hz,
#                           one run of each report
#   BENCH_KEEP=1            keep the temporary directory
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
LINES=${BENCH_SORT_LINES:-$(by_mode 3000000 100000)}
XZ_MB=${BENCH_XZ_MB:-$(by_mode 3 1)}
SPLIT_SECONDS=${BENCH_SPLIT_SECONDS:-$(by_mode 3 1)}
RUNS=${BENCH_RESYM_RUNS:-$(by_mode 5 1)}
BASE=${BASE_DCPROF:-}

need_dcprof
need "$PERF" "no '$PERF' in PATH"
need sort "sort (coreutils) is recorded"
need xz "xz (xz-utils) is recorded"
need strip "strip (binutils) makes the stripped test program"
need readelf "readelf (binutils) lists the FDEs"
need python3 "python3 reads the reports"
if [ -z "$BASE" ]; then
	say "BASE_DCPROF is not set: the previous build's column is left out (BASE_DCPROF=/path/to/old/dcprof to compare)"
elif [ ! -x "$BASE" ]; then
	die "BASE_DCPROF='$BASE' is not an executable"
fi
bench_init
# Every name derived from the files, as on a first recording: no symbol
# cache (with one, --resymbolize would read names back instead).
export DCPROF_CACHE_DIR=

SORT=$(readlink -f "$(command -v sort)")
XZ=$(readlink -f "$(command -v xz)")
LZMA=$(ldd "$XZ" | awk '$1 ~ /^liblzma\.so/ { print $3 }')
[ -n "$LZMA" ] || die "xz does not load a liblzma"
LZMA=$(readlink -f "$LZMA")
compile split -O2 "$TOP/tests/workloads/split.c"
strip -s "$TMP/split" || die "strip -s failed"
SPLIT=$TMP/split
FILES=("$SORT" "$XZ" "$LZMA" "$SPLIT")
for f in "${FILES[@]}"; do
	readelf -SW "$f" | grep -q ' \.symtab ' &&
		say "warning: $f has a .symtab (not stripped): its figures say little"
done

say "generating $LINES lines"
awk -v n="$LINES" 'BEGIN {
	srand(1)
	for (i = 0; i < n; i++)
		printf "%d %x %.6f\n", int(rand() * 1e9), int(rand() * 2^31), rand() * 1e6
}' >"$TMP/lines.txt" || die "cannot write the input"
head -c "$((XZ_MB * 1000000))" "$TMP/lines.txt" >"$TMP/xz.in"

# The workload: sort (two numeric keys, C locale: its own code, not libc's
# memcmp), xz, split; its own CPU to the file given as $1.
cat >"$TMP/drive.sh" <<EOF
#!/bin/bash
LC_ALL=C "$SORT" --parallel=1 -S 512M -T "$TMP" -k3,3n -k1,1n \\
	-o /dev/null "$TMP/lines.txt" || exit 1
"$XZ" -T1 -6 -c "$TMP/xz.in" >/dev/null || exit 1
"$SPLIT" $SPLIT_SECONDS || exit 1
times >"\$1"
EOF
chmod +x "$TMP/drive.sh"

# CPU ms of all four fields of a `times` output (self and children).
times_ms() {
	awk 'function secs(t,   m) {
		m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t);
		sub(/s$/, "", t); return m * 60 + t
	}
	{ s += secs($1) + secs($2) } END { printf "%.0f", s * 1000 }' "$1"
}

load_start=$(load_avg)
say "warm-up: the workload alone"
"$TMP/drive.sh" "$TMP/alone.times" || die "the workload failed"
WORK_ALONE=$(times_ms "$TMP/alone.times")

# record NAME COMMAND...: the workload recorded by COMMAND (its output file
# and arguments included); sets REC_CPU[NAME] (the recorder's own CPU) and
# WORK_CPU[NAME] (the workload's).
declare -A REC_CPU WORK_CPU
record() {
	local name=$1
	shift
	say "recording with $name"
	recorder "$@" -- "$TMP/drive.sh" "$TMP/$name.times" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" ||
		die "$name failed: $(tail -c 400 "$TMP/$name.err")"
	WORK_CPU[$name]=$(times_ms "$TMP/$name.times")
	REC_CPU[$name]=$((CPU_MS - WORK_CPU[$name]))
}
record new "$DCPROF" record -F "$FREQ" -o "$TMP/new.data"
[ -n "$BASE" ] && record base "$BASE" record -F "$FREQ" -o "$TMP/base.data"
record perf perf_record -F "$FREQ" -o "$TMP/perf.data"
record only "$DCPROF" record -F "$FREQ" -o "$TMP/only.data" \
	--only "$SORT" --only "$XZ" --only "$LZMA" --only "$SPLIT"
perf_data clear "$TMP/perf.data" >"$TMP/perf.counts" ||
	die "cannot read '$TMP/perf.data'"

# timed COMMAND...: runs it, with the redirections of the call, and sets
# MS to its wall time and CPU to its user+sys time (both in ms; `times` of
# a subshell gives the CPU of its children: the command); returns its
# status.
timed() {
	local t0 t1 rc
	t0=$EPOCHREALTIME
	(
		"$@"
		rc=$?
		times >"$TMP/.cpu"
		exit $rc
	)
	rc=$?
	t1=$EPOCHREALTIME
	MS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
	CPU=$(sed -n 2p "$TMP/.cpu" | awk '
		function secs(t,   m) {
			m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t);
			sub(/s$/, "", t); return m * 60 + t
		}
		{ printf "%.0f", (secs($1) + secs($2)) * 1000 }')
	return $rc
}

# The closing symbolization: each build on the same recordings, the
# builds alternating run by run (which goes first alternating too).
median() {
	tr ' ' '\n' | grep . | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
declare -A MSRUNS CPURUNS
builds=(new)
[ -n "$BASE" ] && builds=(base new)
say "timing report --resymbolize, $RUNS runs per build and recording"
for ((i = 0; i < RUNS; i++)); do
	for rec in new base only; do
		[ -e "$TMP/$rec.data" ] || continue
		order=("${builds[@]}")
		# the other build first every other round
		[ $((i % 2)) = 1 ] && [ -n "$BASE" ] && order=(new base)
		for b in "${order[@]}"; do
			bin=$DCPROF
			[ "$b" = base ] && bin=$BASE
			timed "$bin" report --resymbolize -i "$TMP/$rec.data" \
				>"$TMP/resym.out" 2>"$TMP/resym.err" ||
				die "$bin report --resymbolize failed: $(cat "$TMP/resym.err")"
			MSRUNS[resym-$rec-$b]+="$MS "
			CPURUNS[resym-$rec-$b]+="$CPU "
			[ "$i" = 0 ] && grep '^# resymbolized' "$TMP/resym.out" \
				>"$TMP/resym-$rec-$b.line"
			timed "$bin" report -i "$TMP/$rec.data" >/dev/null \
				2>"$TMP/plain.err" ||
				die "$bin report failed: $(cat "$TMP/plain.err")"
			MSRUNS[plain-$rec-$b]+="$MS "
			CPURUNS[plain-$rec-$b]+="$CPU "
		done
	done
done
load_end=$(load_avg)

# The rows of each tool's report for the stripped files.
"$DCPROF" report -i "$TMP/new.data" --format json --sort file,symbol \
	>"$TMP/new.json" || die "dcprof report failed"
if [ -n "$BASE" ]; then
	"$BASE" report -i "$TMP/base.data" --format json --sort file,symbol \
		>"$TMP/base.json" || die "the previous build's report failed"
fi
"$PERF" report -i "$TMP/perf.data" --stdio -q --sort dso,sym \
	-F sample,dso,sym -t '|' >"$TMP/perf.rows" 2>"$TMP/perf.report.err" ||
	die "perf report failed: $(tail -c 300 "$TMP/perf.report.err")"
# Each file's FDE starts (pc_begin) and PT_LOAD segments.
for f in "${FILES[@]}"; do
	b=$(basename "$f")
	readelf --debug-dump=frames "$f" 2>/dev/null |
		sed -n 's/.* FDE .* pc=\([0-9a-f]*\)\.\..*/\1/p' >"$TMP/$b.fdes"
	readelf -lW "$f" | awk '$1 == "LOAD" { print $2, $3, $5 }' >"$TMP/$b.loads"
done

# unnamed TOOL REPORT: per file, "tool file samples rows unnamed_rows
# unnamed_samples fde_rows" (dcprof: samples and rows of its JSON report;
# perf: of its report's rows).
cat >"$TMP/unnamed.py" <<'PY'
import json, re, sys
tool, report, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
files = sys.argv[4:]

def fdes(base):
    return {int(l, 16) for l in open("%s/%s.fdes" % (tmp, base)) if l.strip()}

def loads(base):
    return [tuple(int(x, 16) for x in l.split())
            for l in open("%s/%s.loads" % (tmp, base))]

rows = {}  # file -> [(symbol, samples)]
if tool == "perf":
    for l in open(report):
        f = [x.strip() for x in l.split("|")]
        if len(f) < 3 or not f[0].isdigit():
            continue
        rows.setdefault(f[1], []).append((f[2].split("] ", 1)[-1], int(f[0])))
else:
    for r in json.load(open(report))["rows"]:
        rows.setdefault(r["file"].rsplit("/", 1)[-1], []).append(
            (r["symbol"], r["samples"]))
for path in files:
    base = path.rsplit("/", 1)[-1]
    mine = rows.get(base, [])
    starts, segs = fdes(base), loads(base)
    samples = sum(s for _, s in mine)
    unnamed = unnamed_rows = fde_rows = 0
    for sym, s in mine:
        if tool == "perf":
            bad = re.fullmatch(r"0x[0-9a-f]+", sym) is not None
        else:
            bad = sym == "[unresolved]"
            m = re.fullmatch(re.escape(base) + r"\+0x([0-9a-f]+)", sym)
            if m:
                off = int(m.group(1), 16)
                v = [off - o + va for o, va, n in segs if o <= off < o + n]
                if v and v[0] in starts:
                    fde_rows += 1
                else:
                    bad = True
        if bad:
            unnamed += s
            unnamed_rows += 1
    print(tool, base, samples, len(mine), unnamed_rows, unnamed, fde_rows)
PY
{
	python3 "$TMP/unnamed.py" dcprof "$TMP/new.json" "$TMP" "${FILES[@]}" |
		sed 's/^dcprof/new/'
	[ -n "$BASE" ] &&
		python3 "$TMP/unnamed.py" dcprof "$TMP/base.json" "$TMP" "${FILES[@]}" |
		sed 's/^dcprof/base/'
	python3 "$TMP/unnamed.py" perf "$TMP/perf.rows" "$TMP" "${FILES[@]}"
} >"$TMP/unnamed" || die "cannot read the reports"

# --- Tables ----------------------------------------------------------------

label() {
	case $1 in
	new) echo "dcprof (this build)" ;;
	base) echo "dcprof (previous build)" ;;
	perf) echo "perf" ;;
	esac
}
samples_of() { # TOOL: the workload's samples
	case $1 in
	perf) awk '{ print $1 }' "$TMP/perf.counts" ;;
	*) python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stats"]["samples_kept"])' \
		"$TMP/$1.json" ;;
	esac
}

echo "### Stripped code: sort, xz and a strip -s program"
echo
echo "Workload, one driver script recorded as a command: \`LC_ALL=C sort --parallel=1 -S 512M -k3,3n -k1,1n\` on $LINES generated lines ($(($(stat -c %s "$TMP/lines.txt") / 1000000)) MB), \`xz -T1 -6\` on the first $XZ_MB MB of them, tests/workloads/split.c (\`-O2\`, \`strip -s\`) for $SPLIT_SECONDS s; $WORK_ALONE ms of CPU alone."
echo "Commands: \`dcprof record -F $FREQ -o F -- DRIVER\` (this build: $DCPROF${BASE:+; previous build: $BASE}), \`perf record -B -e cpu-clock -F $FREQ -o F -- DRIVER\`; no symbol cache (DCPROF_CACHE_DIR empty)."
echo "Files: ${FILES[*]}."
echo "Machine: $NCPU CPUs ($(cpu_model)), kernel $(uname -r); $("$PERF" --version). Load average (1, 5, 15 min) at the start: $load_start, at the end: $load_end."
echo
echo "#### Closing symbolization: \`dcprof report --resymbolize -i F\`, each build on the same recording, median of $RUNS runs"
echo
if [ -z "$BASE" ]; then
	echo "(No previous build: BASE_DCPROF was not set.)"
	echo
fi
named() { # REC BUILD: "N named addresses, M before" of its first run
	sed -n 's/.*: \([0-9]* named addresses, [0-9]* before\).*/\1/p' \
		"$TMP/resym-$1-$2.line" 2>/dev/null
}
# med KIND REC BUILD: the median of those runs, "-" without them
med() {
	local -n runs=$1
	if [ -n "${runs[$2-$3]:-}" ]; then median <<<"${runs[$2-$3]}"; else echo -; fi
}
echo "| recording F | wall ms, previous / this | this / previous (target ≤ 1.10) | CPU ms, previous / this | this / previous | \`report -i F\` (stored names) CPU ms, previous / this | addresses named by this build |"
echo "|---|---:|---:|---:|---:|---:|---|"
for rec in new base only; do
	[ -e "$TMP/$rec.data" ] || continue
	case $rec in
	new) what="this build's (FDE names stored)" ;;
	base) what="the previous build's (\`[unresolved]\` stored)" ;;
	only) what="this build's with \`--only\` the four files (no kernel frames)" ;;
	esac
	wn=$(med MSRUNS "resym-$rec" new) wo=$(med MSRUNS "resym-$rec" base)
	cn=$(med CPURUNS "resym-$rec" new) co=$(med CPURUNS "resym-$rec" base)
	echo "| $what | $wo / $wn | $(div "$wn" "$wo") | $co / $cn | $(div "$cn" "$co") | $(med CPURUNS "plain-$rec" base) / $(med CPURUNS "plain-$rec" new) | $(named "$rec" new) |"
done
echo
echo "Runs of \`report --resymbolize\`, wall ms (CPU ms):"
for rec in new base only; do
	[ -e "$TMP/$rec.data" ] || continue
	for b in "${builds[@]}"; do
		# shellcheck disable=SC2086 # lists of numbers
		echo "- $rec.data, $(label "$b"): $(paste -d' ' <(tr ' ' '\n' <<<"${MSRUNS[resym-$rec-$b]}" | grep .) <(tr ' ' '\n' <<<"${CPURUNS[resym-$rec-$b]}" | grep .) | awk '{ printf "%s%s (%s)", sep, $1, $2; sep = ", " }')"
	done
done
echo
echo "#### Recorder CPU"
echo
echo "| recorder | samples | workload CPU ms | recorder CPU ms | recorder CPU ms / 1k samples |"
echo "|---|---:|---:|---:|---:|"
for t in new base perf; do
	[ -n "${REC_CPU[$t]:-}" ] || continue
	s=$(samples_of "$t")
	echo "| $(label $t) | $s | ${WORK_CPU[$t]} | ${REC_CPU[$t]} | $(div "$((REC_CPU[$t] * 1000))" "$s" %.1f) |"
done
echo
echo "#### Samples in unnamed rows, per stripped file"
echo
echo "| file | recorder | samples | rows | unnamed rows | samples in unnamed rows | functions named by FDE |"
echo "|---|---|---:|---:|---:|---:|---:|"
for f in "${FILES[@]}"; do
	b=$(basename "$f")
	for t in new base perf; do
		awk -v t="$t" -v b="$b" -v l="$(label "$t")" '$1 == t && $2 == b {
			fde = (t == "perf") ? "-" : $7
			printf "| %s | %s | %d | %d | %d | %d (%s) | %s |\n", b, l, $3, $4, $5, $6,
				($3 > 0) ? sprintf("%.1f%%", 100 * $6 / $3) : "-", fde }' "$TMP/unnamed"
	done
done
for t in new base perf; do
	awk -v t="$t" -v l="$(label "$t")" '$1 == t { s += $3; r += $4; ur += $5; u += $6; f += $7; n++ }
		END { if (n) printf "| all four | %s | %d | %d | %d | %d (%s) | %s |\n", l, s, r, ur, u,
			(s > 0) ? sprintf("%.1f%%", 100 * u / s) : "-", (t == "perf") ? "-" : f }' "$TMP/unnamed"
done
