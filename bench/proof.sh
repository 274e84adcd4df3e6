#!/bin/bash
# Proof bench: dcprof and perf side by side, in one run, one recorder at a
# time, on workloads whose answer is known:
#
# 1. Accuracy: tests/workloads/split.c burns about 50/30/20% of its CPU
#    time in three functions (slices measured on its own thread CPU clock)
#    and prints the CPU time each really took; each profiler records it as
#    a command; error in percentage points against that measured truth.
# 2. Attribution: (a) a process that ran before the system-wide recording
#    began (tests/workloads/spin.c): share of its samples in its own binary
#    and function; (b) a fork/exec storm (tests/workloads/storm.c: hundreds
#    of short-lived processes a second, each burning a few ms in
#    storm_child_burn of its own binary), recorded as a command and
#    system-wide: share of the storm's samples in the right binary and
#    function, [unknown] share, and samples against the children's CPU time.
# 3. Lost samples, system-wide, one spin burner per CPU, at 10 kHz and at
#    the kernel's maximum rate (/proc/sys/kernel/perf_event_max_sample_rate,
#    read again before each recording: the kernel may lower it): samples
#    taken, lost, throttle events.
# 4. Slowdown: bench/workloads/units.c (one thread per CPU doing fixed
#    chunks of work for a fixed time) alone, under dcprof record -a and under
#    perf record -a, at 999 Hz, without and with -g: chunks/s, median of the
#    runs (the order of the modes rotates), slowdown against alone.
#
# perf records with -B and its perf.data has the kernel's false build-id
# flag cleared before perf script reads it (see "perf and the build-id
# flag" in docs/PERFORMANCE.md). Prints markdown tables on stdout, progress
# on stderr. About 3 minutes with the defaults.
#
# Environment:
#   BENCH_FREQ=999             frequency of rows 1, 2 and 4
#   BENCH_ACC_SECONDS=15       CPU seconds of split per recording
#   BENCH_ACC_RUNS=1           recordings of split per profiler (pooled)
#   BENCH_ATTR_SECONDS=5       seconds of the system-wide recording of 2a
#   BENCH_STORM_CHILDREN=1000  children of the storm (2b)
#   BENCH_STORM_BURN_MS=2      CPU ms each child burns
#   BENCH_LOST_SECONDS=5       seconds of each recording of row 3
#   BENCH_LOST_RATES="10000 max"  rates of row 3 ("max": the kernel's maximum)
#   BENCH_SLOW_SECONDS=4       seconds of each run of the slowdown workload
#   BENCH_SLOW_RUNS=3          runs of each mode of row 4
#   BENCH_QUICK=1              1 s of everything at 99 Hz, a storm of 100
#                              children, row 3 at 999 Hz only
#   BENCH_KEEP=1               keep the temporary directory (its path is printed)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
ACC_SECONDS=${BENCH_ACC_SECONDS:-$(by_mode 15 1)}
ATTR_SECONDS=${BENCH_ATTR_SECONDS:-$(by_mode 5 1)}
STORM_CHILDREN=${BENCH_STORM_CHILDREN:-$(by_mode 1000 100)}
LOST_SECONDS=${BENCH_LOST_SECONDS:-$(by_mode 5 1)}
SLOW_SECONDS=${BENCH_SLOW_SECONDS:-$(by_mode 4 1)}
SLOW_RUNS=${BENCH_SLOW_RUNS:-$(by_mode 3 1)}
ACC_RUNS=${BENCH_ACC_RUNS:-1}
STORM_BURN_MS=${BENCH_STORM_BURN_MS:-2}
LOST_RATES=${BENCH_LOST_RATES:-$(by_mode "10000 max" 999)}
MAX_RATE_FILE=/proc/sys/kernel/perf_event_max_sample_rate

need_dcprof
need "$PERF" "no '$PERF' in PATH: this bench compares with perf (Debian: apt-get install linux-perf)"
"$PERF" version >/dev/null 2>&1 || die "'$PERF' does not run: $("$PERF" version 2>&1 | head -1)"
need python3 "python3 is needed to read perf.data and the reports"
need "$CC" "no C compiler '$CC' to build the workloads"
[ -r "$MAX_RATE_FILE" ] || die "cannot read $MAX_RATE_FILE"
bench_init

# The workloads, as the tests build them (frame pointers for -g).
for w in tests/workloads/split tests/workloads/storm tests/workloads/spin \
	bench/workloads/units; do
	compile "${w##*/}" -O1 -g -fno-omit-frame-pointer -Wl,--build-id \
		"$TOP/$w.c" -lpthread
	[ -x "$TMP/${w##*/}" ] || die "the workload build left no $TMP/${w##*/}"
done

# Every reading of perf script's output and of dcprof's JSON, in one helper
# (perf.data itself is read by perf_data, bench/lib.sh):
#   perf-rows SCRIPT.TXT    `perf script -F comm,pid,ip,sym,dso` output to
#                           rows "comm<TAB>pid<TAB>file<TAB>symbol<TAB>n"
#   dc-rows REPORT.JSON     the same from dcprof report --format json
#                           --sort comm,pid,file,symbol
#   accuracy LABEL ROWS TRUTH...
#                           one table row per profiler: shares of split
#                           against the truth it printed (TRUTH: its lines)
#   preexisting ROWS PID BINARY
#   storm ROWS PARENT BINARY CHILDREN_CPU_US CHILDREN BURN_MS FREQ
#   dc-stats REPORT.JSON    prints: samples lost_records lost_samples throttle
#                           unattributed
cat >"$TMP/proof.py" <<'PY'
import collections, json, re, sys

def norm(sym):
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    sym = re.sub(r"@.*$", "", sym)
    sym = re.sub(r"\.(part|constprop|isra|cold|lto_priv)(\.\d+)?$", "", sym)
    return sym

def read_rows(path):
    rows = []
    for line in open(path, encoding="latin-1"):
        comm, pid, file, sym, n = line.rstrip("\n").split("\t")
        rows.append((comm, int(pid), file, sym, int(n)))
    return rows

def write_rows(counter):
    for (comm, pid, file, sym), n in sorted(counter.items()):
        sys.stdout.write("%s\t%d\t%s\t%s\t%d\n" % (comm, pid, file, sym, n))

def pct(a, b):
    return "%.2f%%" % (100.0 * a / b) if b else "-"

cmd = sys.argv[1]
if cmd == "perf-rows":
    # "  comm  pid  ip  sym (dso)"; comm may hold spaces, sym may be missing
    pat = re.compile(r"^\s*(.*?)\s+(\d+)\s+([0-9a-f]+)\s+(.*?)\s*\((.*)\)\s*$")
    c = collections.Counter()
    for line in open(sys.argv[2], encoding="latin-1"):
        m = pat.match(line)
        if not m:
            continue
        comm, pid, _, sym, dso = m.groups()
        c[(comm, int(pid), dso, norm(sym) or "[unknown]")] += 1
    write_rows(c)
elif cmd == "dc-rows":
    d = json.load(open(sys.argv[2], encoding="latin-1"))
    c = collections.Counter()
    for r in d["rows"]:
        c[(r["comm"], r.get("pid", 0), r["file"], norm(r["symbol"]))] += r["samples"]
    assert sum(c.values()) == d["total"], "rows do not add up to the total"
    write_rows(c)
elif cmd == "dc-stats":
    s = json.load(open(sys.argv[2], encoding="latin-1"))["stats"]
    print(s["samples"], s["lost_records"], s["lost_samples"], s["throttle_events"],
          s["samples_unattributed"])
elif cmd == "accuracy":
    # (label, rows, truth) triples; everything the recorded command sampled
    # counts; the truth is the CPU time split measured in each function,
    # summed over the runs, over its whole CPU time
    funcs = ["work_fifty", "work_thirty", "work_twenty"]
    nominal = [50.0, 30.0, 20.0]
    args = sys.argv[2:]
    for label, path, tpath in zip(args[0::3], args[1::3], args[2::3]):
        by = collections.Counter()
        for comm, pid, file, sym, n in read_rows(path):
            by[sym] += n
        ns = collections.Counter()
        for line in open(tpath):
            f = line.split()
            if f[:1] == ["split:"]:
                for k, v in zip(f[1::2], f[2::2]):
                    ns[k] += int(v)
        if not ns["total_ns"]:
            sys.exit("split printed no truth in %s" % tpath)
        truth = [100.0 * ns[f + "_ns"] / ns["total_ns"] for f in funcs]
        total = sum(by.values())
        shares = [100.0 * by[f] / total if total else 0 for f in funcs]
        err = max(abs(s - t) for s, t in zip(shares, truth))
        errn = max(abs(s - t) for s, t in zip(shares, nominal))
        # one standard deviation of a binomial share at this sample count,
        # for the largest function: the noise floor of the error
        p = truth[0] / 100.0
        sd = 100.0 * (p * (1 - p) / total) ** 0.5 if total else 0
        print("| %s | %d | %s | %.2f%% (%.2f%%) | %.2f | %.2f | %.2f |" % (
            label, total,
            " | ".join("%.2f%% (%.2f%%)" % (s, t) for s, t in zip(shares, truth)),
            100.0 - sum(shares), 100.0 - sum(truth), err, sd, errn))
elif cmd == "preexisting":
    rows, pid, binary = read_rows(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    mine = [r for r in rows if r[1] == pid]
    total = sum(r[4] for r in mine)
    right = sum(r[4] for r in mine if r[2] == binary and r[3] == "spin_forever")
    binary_other = sum(r[4] for r in mine if r[2] == binary and r[3] != "spin_forever")
    unknown = sum(r[4] for r in mine if r[2] == "[unknown]" or r[3] in ("[unknown]", "[unresolved]"))
    kernel = sum(r[4] for r in mine if r[2].startswith("[kernel"))
    comms = sorted(set(r[0] for r in mine))
    print("%d | %s | %s | %s | %s | %s" % (total, pct(right, total),
          pct(binary_other, total), pct(kernel, total), pct(unknown, total),
          ", ".join(comms)))
elif cmd == "storm":
    rows, parent, binary = read_rows(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    cpu_us, children, burn_ms, freq = (float(x) for x in sys.argv[5:9])
    storm = [r for r in rows if r[0] in ("storm", "storm-parent") and r[1] != parent]
    total = sum(r[4] for r in storm)
    burn = sum(r[4] for r in storm if r[2] == binary and r[3] == "storm_child_burn")
    in_binary = sum(r[4] for r in storm if r[2] == binary)
    # where a child legitimately runs: its binary, the loader, libc, vdso, kernel
    legit = lambda f: (f == binary or f.startswith("[kernel") or f == "[vdso]"
                       or "/ld-linux" in f or "/libc.so" in f)
    wrong = sum(r[4] for r in storm if not legit(r[2]))
    unknown = sum(r[4] for r in storm if r[2] == "[unknown]" or r[3] in ("[unknown]", "[unresolved]"))
    # the storm binary's code: what landed there, plus what should have
    right_share = pct(burn, in_binary + wrong)
    exp_all = cpu_us * freq / 1e6
    exp_burn = children * burn_ms * freq / 1000.0
    print("%d | %.0f | %s | %d | %.0f | %s | %s | %s | %s" % (
        total, exp_all, pct(total, exp_all), burn, exp_burn,
        pct(burn, exp_burn), right_share, pct(unknown, total), pct(wrong, total)))
PY
PY_HELPER=$TMP/proof.py
proof() { python3 "$PY_HELPER" "$@"; }

# Reads perf.data $1 back as rows ($1.rows) through perf script, after
# clearing the false build-id flags (their number goes to $1.cleared).
perf_rows() {
	local f=$1
	perf_data clear "$f" >"$f.counts" || die "cannot clear the MMAP2 flags of $f"
	awk '{ print $7 }' "$f.counts" >"$f.cleared"
	"$PERF" script -i "$f" -F comm,pid,ip,sym,dso >"$f.script" \
		2>"$f.script.err" || die "perf script failed on $f: $(tail -c 300 "$f.script.err")"
	proof perf-rows "$f.script" >"$f.rows" || die "cannot read perf script of $f"
}

# Reads dcprof profile $1 back as rows ($1.rows) and its report ($1.json).
dc_rows() {
	local f=$1
	"$DCPROF" report -i "$f" --format json --sort comm,pid,file,symbol \
		>"$f.json" 2>"$f.report.err" ||
		die "dcprof report failed on $f: $(cat "$f.report.err")"
	proof dc-rows "$f.json" >"$f.rows" || die "cannot read the report of $f"
}

# Runs a recorder command line, its stdout and stderr to $1.out and $1.err.
run_rec() {
	local base=$1
	shift
	recorder "$@" >"$base.out" 2>"$base.err" ||
		die "failed ($?): $* : $(tail -c 400 "$base.err")"
}

perf_rec() { # BASE [perf record args...]: perf record -B -e cpu-clock
	local base=$1
	shift
	run_rec "$base" perf_record -o "$base" "$@"
}

# Steal time: the hypervisor running something else on this VM's CPUs.
# cpu-clock fires on the guest's clock, so samples fall in stolen time too,
# while the CPU time the kernel accounts to tasks leaves it out; and a
# stolen stretch longer than the period gives one sample, not several.
# ticks prints "steal total" (the cpu line of /proc/stat); steal_pct the
# share of steal between two of those.
ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }
steal_pct() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		if (y[2] > x[2]) printf "%.1f%%", 100 * (y[1] - x[1]) / (y[2] - x[2]); else print "-" }'
}

load_start=$(load_avg)
tasks_start=$(nprocs)
max_rate_start=$(cat "$MAX_RATE_FILE")

# --- 1. Accuracy ---------------------------------------------------------
acc_args=()
first=dcprof second=perf
for run in $(seq 1 "$ACC_RUNS"); do
	for tool in $first $second; do
		f=$TMP/acc-$tool-$run.data
		say "accuracy: $tool record -- split $ACC_SECONDS (run $run)"
		if [ "$tool" = dcprof ]; then
			run_rec "$f" "$DCPROF" record -F "$FREQ" -o "$f" -- \
				"$TMP/split" "$ACC_SECONDS" --truth
			dc_rows "$f"
		else
			perf_rec "$f" -F "$FREQ" -- "$TMP/split" "$ACC_SECONDS" --truth
			perf_rows "$f"
		fi
	done
	t=$first first=$second second=$t
done
for tool in dcprof perf; do
	cat "$TMP"/acc-$tool-*.data.rows >"$TMP/acc-$tool.rows"
	cat "$TMP"/acc-$tool-*.data.out >"$TMP/acc-$tool.truth"
	acc_args+=("$tool" "$TMP/acc-$tool.rows" "$TMP/acc-$tool.truth")
done
proof accuracy "${acc_args[@]}" >"$TMP/acc.table" || die "accuracy analysis failed"

# --- 2a. A process that ran before recording -----------------------------
say "attribution: a process running before the recording"
start_bg "$TMP/spin" "$TMP/spin.ready" >/dev/null
SPIN_PID=$BG_LAST
wait_file "$TMP/spin.ready" 5 || die "the spin workload did not start"
sleep 0.5
f=$TMP/pre-dcprof.data
say "attribution: dcprof record -a for $ATTR_SECONDS s"
t0=$(ticks)
run_rec "$f" "$DCPROF" record -a -F "$FREQ" --duration "$ATTR_SECONDS" -o "$f"
steal_pct "$t0" "$(ticks)" >"$f.steal"
f=$TMP/pre-perf.data
say "attribution: perf record -a for $ATTR_SECONDS s"
t0=$(ticks)
perf_rec "$f" -F "$FREQ" -a -- sleep "$ATTR_SECONDS"
steal_pct "$t0" "$(ticks)" >"$f.steal"
stop_bg
dc_rows "$TMP/pre-dcprof.data"
perf_rows "$TMP/pre-perf.data"
for tool in dcprof perf; do
	echo "| $tool | $(proof preexisting "$TMP/pre-$tool.data.rows" "$SPIN_PID" \
		"$TMP/spin") | $(cat "$TMP/pre-$tool.data.steal") |" ||
		die "analysis of 2a failed"
done >"$TMP/pre.table"

# --- 2b. A fork/exec storm -----------------------------------------------
: >"$TMP/storm.table"
first=dcprof second=perf
for mode in cmd all; do
	a=
	[ $mode = all ] && a=-a
	for tool in $first $second; do
		f=$TMP/storm-$tool-$mode.data
		say "attribution: $tool record ${a:+$a }-- storm $STORM_CHILDREN $STORM_BURN_MS"
		t0=$(ticks)
		if [ "$tool" = dcprof ]; then
			run_rec "$f" "$DCPROF" record $a -F "$FREQ" -o "$f" -- \
				"$TMP/storm" "$STORM_CHILDREN" "$STORM_BURN_MS"
		else
			perf_rec "$f" -F "$FREQ" $a -- "$TMP/storm" \
				"$STORM_CHILDREN" "$STORM_BURN_MS"
		fi
		steal=$(steal_pct "$t0" "$(ticks)")
		read -r _ _ parent _ cpu_us _ wall_us < <(grep '^storm: parent' "$f.out") ||
			true
		[ -n "${wall_us:-}" ] || die "storm printed no summary: $(cat "$f.out" "$f.err")"
		if [ "$tool" = dcprof ]; then dc_rows "$f"; else perf_rows "$f"; fi
		rate=$(awk -v n="$STORM_CHILDREN" -v us="$wall_us" 'BEGIN { printf "%.0f", n * 1e6 / us }')
		echo "| $tool | ${a:-command} | $rate/s | $(proof storm "$f.rows" "$parent" \
			"$TMP/storm" "$cpu_us" "$STORM_CHILDREN" "$STORM_BURN_MS" \
			"$FREQ") | $steal |" >>"$TMP/storm.table" || die "analysis of 2b failed"
		wall_us=
	done
	t=$first first=$second second=$t
done

# --- 3. Lost samples -----------------------------------------------------
say "lost samples: $NCPU burners"
for _ in $(seq 1 "$NCPU"); do
	start_bg "$TMP/spin" >/dev/null
done
sleep 0.5
: >"$TMP/lost.table"
first=dcprof second=perf
for want in $LOST_RATES; do
	for tool in $first $second; do
		before=$(cat "$MAX_RATE_FILE")
		if [ "$want" = max ]; then
			freq=$before
		else
			freq=$((want < before ? want : before))
		fi
		f=$TMP/lost-$tool-$want.data
		say "lost samples: $tool record -a -F $freq for $LOST_SECONDS s"
		t0=$(ticks)
		if [ "$tool" = dcprof ]; then
			run_rec "$f" "$DCPROF" record -a -F "$freq" \
				--duration "$LOST_SECONDS" -o "$f"
			steal=$(steal_pct "$t0" "$(ticks)")
			"$DCPROF" report -i "$f" --format json --limit 1 >"$f.json" ||
				die "dcprof report failed on $f"
			read -r samples lrec lsamp thr unattr < <(proof dc-stats "$f.json")
			unthr=-
		else
			perf_rec "$f" -F "$freq" -a -- sleep "$LOST_SECONDS"
			steal=$(steal_pct "$t0" "$(ticks)")
			read -r samples lrec lsamp thr unthr _ < <(perf_data "$f")
			unattr=-
		fi
		[ -n "${samples:-}" ] || die "no sample count for $f"
		after=$(cat "$MAX_RATE_FILE")
		expected=$((NCPU * freq * LOST_SECONDS))
		echo "| $want | $tool | $freq | $before → $after | $samples | $expected | $(awk -v a="$samples" -v b="$expected" 'BEGIN { printf "%.1f%%", 100 * a / b }') | $lrec + $lsamp | $thr / $unthr | $unattr | $steal |" >>"$TMP/lost.table"
		samples=
	done
	t=$first first=$second second=$t
done
stop_bg

# --- 4. Slowdown ---------------------------------------------------------
MODES=(alone dcprof dcprof-g perf perf-g)
for run in $(seq 1 "$SLOW_RUNS"); do
	n=${#MODES[@]}
	for k in $(seq 0 $((n - 1))); do
		# rotate: run r starts with mode r-1
		mode=${MODES[$(((k + run - 1) % n))]}
		f=$TMP/slow-$mode-$run.data
		g=
		case $mode in *-g) g=-g ;; esac
		say "slowdown: $mode, run $run"
		t0=$(ticks)
		case $mode in
		alone) "$TMP/units" "$SLOW_SECONDS" >"$f.out" 2>"$f.err" ||
			die "units failed: $(cat "$f.err")" ;;
		dcprof*) run_rec "$f" "$DCPROF" record -a -F "$FREQ" $g -o "$f" -- \
			"$TMP/units" "$SLOW_SECONDS" ;;
		perf*) perf_rec "$f" -F "$FREQ" -a $g -- "$TMP/units" "$SLOW_SECONDS" ;;
		esac
		v=$(sed -n 's/^units: .* \([0-9.]*\) chunks\/s$/\1/p' "$f.out")
		[ -n "$v" ] || die "units printed no rate in $mode run $run: $(cat "$f.out")"
		t1=$(ticks)
		echo "$v" >>"$TMP/slow-$mode.rates"
		echo "$v ($(steal_pct "$t0" "$t1"))" >>"$TMP/slow-$mode.runs"
		# the rate per second the hypervisor left to this machine
		awk -v v="$v" -v a="$t0" -v b="$t1" 'BEGIN {
			split(a, x, " "); split(b, y, " "); f = 0
			if (y[2] > x[2]) f = (y[1] - x[1]) / (y[2] - x[2])
			printf "%.1f\n", f < 1 ? v / (1 - f) : v }' >>"$TMP/slow-$mode.corrected"
		rm -f "$f" # only the rate is needed
	done
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
base=$(median "$TMP/slow-alone.rates")
cbase=$(median "$TMP/slow-alone.corrected")
slowdown() { awk -v m="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f%%", 100 * (b - m) / b; else print "-" }'; }

# --- Tables --------------------------------------------------------------
echo "### Accuracy, attribution, lost samples, slowdown"
echo
echo "Machine: $NCPU CPUs ($(cpu_model)), kernel $(uname -r); $("$PERF" --version); perf_event_max_sample_rate $max_rate_start at the start, $(cat "$MAX_RATE_FILE") at the end."
echo "Load average (1, 5, 15 min) at the start: $load_start, at the end: $(load_avg); $tasks_start processes at the start."
echo "Steal: the share of CPU time the hypervisor took from this machine's CPUs during a recording (/proc/stat); cpu-clock samples fall in it too, and the CPU time the kernel accounts to tasks leaves it out."
echo
echo "#### 1. Accuracy: split (50/30/20% of its CPU time), $ACC_RUNS × $ACC_SECONDS s at $FREQ Hz"
echo
echo "Commands: \`dcprof record -F $FREQ -o F -- split $ACC_SECONDS\`, \`perf record -B -e cpu-clock -F $FREQ -o F -- split $ACC_SECONDS\`. Each cell: the share of all the samples of the command (the share of split's CPU time the function really took, measured by split). Max error: the largest difference over the three functions, in percentage points; noise: one standard deviation of work_fifty's share at this sample count."
echo
echo "| profiler | samples | work_fifty | work_thirty | work_twenty | elsewhere | max error, pp | noise, pp | max error against 50/30/20, pp |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
cat "$TMP/acc.table"
echo
echo "#### 2a. A process running before the recording: spin, $ATTR_SECONDS s, -a at $FREQ Hz"
echo
echo "Commands: \`dcprof record -a -F $FREQ --duration $ATTR_SECONDS -o F\`, \`perf record -B -e cpu-clock -F $FREQ -a -o F -- sleep $ATTR_SECONDS\`; shares of the samples of spin's pid (spin burns one CPU: about $((FREQ * ATTR_SECONDS)) samples)."
echo
echo "| profiler | samples of spin | spin / spin_forever | spin / other symbol | kernel | [unknown] | comm | steal |"
echo "|---|---:|---:|---:|---:|---:|---|---:|"
cat "$TMP/pre.table"
echo
echo "#### 2b. A fork/exec storm: $STORM_CHILDREN children × $STORM_BURN_MS ms in storm_child_burn, at $FREQ Hz"
echo
echo "Commands: \`dcprof record [-a] -F $FREQ -o F -- storm $STORM_CHILDREN $STORM_BURN_MS\`, \`perf record -B -e cpu-clock -F $FREQ [-a] -o F -- storm $STORM_CHILDREN $STORM_BURN_MS\`."
echo "Children's samples: every sample of a storm pid but the parent's; expected from their CPU time (getrusage in the parent) × $FREQ Hz. Right binary and function: samples in (storm, storm_child_burn) over the samples in the storm binary plus those in no file a child runs (binary, loader, libc, vdso, kernel)."
echo
echo "| profiler | recording | children/s | children's samples | expected | sampled | in storm_child_burn | expected ($STORM_CHILDREN × $STORM_BURN_MS ms) | sampled | right binary and function | [unknown] | in a wrong file | steal |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
cat "$TMP/storm.table"
echo
echo "#### 3. Lost samples: $NCPU busy CPUs, -a, $LOST_SECONDS s"
echo
echo "Commands: \`dcprof record -a -F HZ --duration $LOST_SECONDS -o F\`, \`perf record -B -e cpu-clock -F HZ -a -o F -- sleep $LOST_SECONDS\`; HZ is the rate asked, or the kernel's maximum (read before each recording) if lower. Expected: CPUs × HZ × seconds. Lost records are records of any kind (samples, and the MMAP2/COMM/FORK records that attribute them); unattributed: dcprof's samples in no known mapping (perf's would need perf script over every sample, not done here)."
echo
echo "| rate asked | profiler | HZ | max_sample_rate before → after | samples | expected | taken | lost (records + samples) | throttle / unthrottle events | unattributed | steal |"
echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
cat "$TMP/lost.table"
echo
echo "#### 4. Slowdown: units ($NCPU threads, $SLOW_SECONDS s), median of $SLOW_RUNS runs"
echo
echo "Commands: \`units $SLOW_SECONDS\`, \`dcprof record -a -F $FREQ [-g] -o F -- units $SLOW_SECONDS\`, \`perf record -B -e cpu-clock -F $FREQ -a [-g] -o F -- units $SLOW_SECONDS\`."
echo
echo "Slowdown: 1 - median / median alone. Corrected: each run's chunks/s divided by the share of CPU time the hypervisor left (1 - steal), then the same."
echo
echo "| mode | chunks/s, each run (steal) | median | slowdown | corrected median | corrected slowdown |"
echo "|---|---|---:|---:|---:|---:|"
for mode in "${MODES[@]}"; do
	m=$(median "$TMP/slow-$mode.rates")
	runs=$(paste -sd';' "$TMP/slow-$mode.runs" | sed 's/;/, /g')
	c=$(median "$TMP/slow-$mode.corrected")
	echo "| $mode | $runs | $m | $(slowdown "$m" "$base") | $c | $(slowdown "$c" "$cbase") |"
done
cleared=$(cat "$TMP"/*.data.cleared 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
if [ "$cleared" -gt 0 ]; then
	echo
	echo "The false build-id flag was cleared on $cleared MMAP2 records of perf's files before perf script read them (another build-id recorder ran at the same time)."
fi
