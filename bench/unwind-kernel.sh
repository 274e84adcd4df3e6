#!/bin/bash
# Full stacks of Debian's own programs, built without frame pointers:
# python3, perl, xz, gzip and sqlite3 running side by side, recorded -a -g
# by each recorder in turn, one at a time, on the same mix:
#   bpf-cold    dcprof --backend bpf -g, tables built during the recording
#               (an empty symbol cache)
#   bpf-warm    the same, tables read from the cache the first run filled
#   bpf-fp      dcprof --backend bpf --call-graph fp
#   ring-dwarf  dcprof --backend perf --call-graph dwarf
#   perf-g      perf record -g
#   perf-dwarf  perf record --call-graph dwarf
# Prints a markdown table per recorder: the share of each program's samples
# whose user stack reaches its root (main, __libc_start_call_main, _start,
# start_thread, clone3, or a stripped program's _start, named after its
# file, under __libc_start_main), the output size, the recorder's CPU per
# 1,000 samples and its peak RSS, the BPF program's run time per sample;
# and for the tables: files, kernel memory, build time per MB of CFI.
#
# Environment:
#   BENCH_DURATION=10   seconds of each recording (BENCH_QUICK=1: 1)
#   BENCH_FREQ=999      sampling frequency of every recorder (BENCH_QUICK=1: 99)
#   BENCH_KEEP=1        keep the temporary directory (its path is printed)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf
set -u
BENCH=unwind-kernel
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
DURATION=${BENCH_DURATION:-$(by_mode 10 1)}
need_dcprof
need "$PERF"
need xz
need gzip
need sqlite3
need perl
[ -x /usr/bin/python3 ] || die "Debian's /usr/bin/python3 is not installed"
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend and -a)"
bench_init
head -c 40000000 /dev/urandom >"$TMP/random"

# the mix: each program busy for the recording and a second either side
# (the quick mode: a second before), started before each recorder so that
# its CPU time is the recorder's own
MIX=$((DURATION + $(by_mode 2 1)))
cat >"$TMP/mix.sh" <<SH
/usr/bin/python3 -c 'import time
t = time.time()
def f(n): return sum(i * i for i in range(n))
while time.time() - t < $MIX: f(10000)' &
perl -e '\$t = time; while (time - \$t < $MIX) { \$s = join(",", map { \$_ * 2 } 1..2000); \$s =~ s/2/3/g }' &
(trap 'kill \$c; exit' TERM; while :; do xz -9 -c <"$TMP/random" >/dev/null & c=\$!; wait \$c; done) & x=\$!
(trap 'kill \$c; exit' TERM; while :; do gzip -9 -c <"$TMP/random" >/dev/null & c=\$!; wait \$c; done) & g=\$!
(trap 'kill \$c; exit' TERM; while :; do sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*), sum(x * x % 7) FROM c;' >/dev/null & c=\$!; wait \$c; done) & q=\$!
sleep $MIX
kill \$x \$g \$q
wait
SH

# whole.py FOLDED: per program, the share of samples whose stack is whole
cat >"$TMP/whole.py" <<'PY'
import sys
roots = ("main", "__libc_start_call_main", "_start", "start_thread", "clone3")
progs = ("python3", "perl", "xz", "gzip", "sqlite3")
n = dict.fromkeys(progs, 0)
w = dict.fromkeys(progs, 0)
for line in open(sys.argv[1]):
    stack, count = line.rsplit(" ", 1)
    f = [x for x in stack.split(";") if not x.endswith(("_[k]", "_[i]"))]
    comm, f = f[0], [x for x in f[1:] if x != "[truncated]"]
    if comm not in n:
        continue
    n[comm] += int(count)
    if f and (f[0] in roots or (len(f) > 2 and f[2] == "__libc_start_call_main")):
        w[comm] += int(count)
print(" | ".join("%.1f%%" % (100.0 * w[p] / n[p]) if n[p] else "-" for p in progs))
PY

# perf_folded PERF.DATA: perf script's stacks as folded lines, root first
perf_folded() {
	"$PERF" script -F comm,ip,sym -i "$1" 2>/dev/null | python3 -c '
import sys
out = {}
comm, frames = None, []
def flush():
    if comm is not None:
        key = ";".join([comm] + frames[::-1])
        out[key] = out.get(key, 0) + 1
for line in sys.stdin:
    if not line.strip():
        continue
    if not line[0].isspace():
        flush()
        comm, frames = line.split()[0], []
        continue
    parts = line.split(None, 1)
    frames.append(parts[1].strip() if len(parts) > 1 else "[unknown]")
flush()
for k, v in out.items():
    print(k, v)
'
}

MODES=(bpf-cold bpf-warm bpf-fp ring-dwarf perf-g perf-dwarf)
mkdir -p "$TMP/cache"
chmod 700 "$TMP/cache"
rows=()
for mode in "${MODES[@]}"; do
	say "$mode"
	f=$TMP/$mode
	out=$f.data
	sh "$TMP/mix.sh" &
	mix=$!
	sleep 1
	case $mode in
	bpf-cold | bpf-warm | bpf-fp | ring-dwarf)
		backend=bpf
		cg=-g
		[ "$mode" = bpf-fp ] && cg="--call-graph fp"
		[ "$mode" = ring-dwarf ] && backend=perf && cg="--call-graph dwarf"
		# shellcheck disable=SC2086
		DCPROF_CACHE_DIR=$TMP/cache recorder /usr/bin/time -f "%M" -o "$f.rss" \
			"$DCPROF" record -v --backend "$backend" -a $cg -F "$FREQ" \
			--duration "$DURATION" -o "$out" >"$f.out" 2>"$f.err" ||
			die "$mode failed: $(tail -2 "$f.err")"
		"$DCPROF" export -i "$out" --format folded -o "$f.folded" ||
			die "cannot export $mode"
		samples=$("$DCPROF" report -i "$out" --format json |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["samples"])')
		bpf=$(sed -n 's/.*the program ran \([0-9]*\) times for \([0-9]*\) ns.*/\1 \2/p' "$f.err" |
			awk '$1 { printf "%.2f", $2 / $1 / 1000 }')
		;;
	perf-g | perf-dwarf)
		cg=-g
		[ "$mode" = perf-dwarf ] && cg="--call-graph dwarf"
		# shellcheck disable=SC2086
		recorder /usr/bin/time -f "%M" -o "$f.rss" \
			"$PERF" record -B -e cpu-clock -a $cg -F "$FREQ" -o "$out" \
			-- sleep "$DURATION" >"$f.out" 2>"$f.err" ||
			die "$mode failed: $(tail -2 "$f.err")"
		perf_folded "$out" >"$f.folded"
		samples=$(awk '{ s += $NF } END { print s }' "$f.folded")
		bpf=-
		;;
	esac
	wait "$mix"
	size=$(stat -c %s "$out")
	rss=$(tail -1 "$f.rss")
	shares=$(python3 "$TMP/whole.py" "$f.folded")
	rows+=("| $mode | $shares | $size | $(div "$((CPU_MS * 1000))" "$samples" %.0f) | $((rss / 1024)) | $bpf |")
	if [ "$mode" = bpf-cold ] || [ "$mode" = bpf-warm ]; then
		tables=$(grep 'unwind tables' "$f.err" | sed 's/^dcprof: bpf: //')
		echo "$mode: $tables" >>"$TMP/tables"
	fi
done

echo
echo "Machine: $(nproc) CPUs ($(cpu_model)), kernel $(uname -r); the mix for $DURATION s at $FREQ Hz, -a; load $(load_avg)."
echo
echo "| recorder | python3 | perl | xz | gzip | sqlite3 | output bytes | recorder CPU ms / 1,000 samples | peak RSS MB | BPF µs / sample |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
echo
sed 's/^/- /' "$TMP/tables"
