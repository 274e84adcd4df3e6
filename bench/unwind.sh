#!/bin/bash
# DWARF unwinding bench: dcprof record --call-graph dwarf and
# perf record --call-graph dwarf + perf report, side by side in one run, one
# recorder at a time, on the same workload keeping both CPUs busy: two
# processes built with -fomit-frame-pointer (main -> shared library ->
# callbacks; qsort of libc -> comparison function).
#
# Prints one markdown table: samples, lost, output size, CPU of each
# recorder (and of perf report, which is where perf unwinds) per 1,000
# samples, truncated stacks, and the agreement of the top 20 call paths of
# the workload with perf's: the share of the workload's samples whose path
# matches, summed as min(dcprof share, perf share) over perf's top 20.
#
# Environment:
#   BENCH_DURATION=30   seconds of each recording (BENCH_QUICK=1: 1)
#   BENCH_FREQ=999      sampling frequency of both (BENCH_QUICK=1: 99)
#   BENCH_KEEP=1        keep the temporary directory (its path is printed)
#   BUILD=build, DCPROF=$BUILD/dcprof, PERF=perf, CC=cc
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FREQ=${BENCH_FREQ:-$(by_mode 999 99)}
DURATION=${BENCH_DURATION:-$(by_mode 30 1)}

need_dcprof
need "$PERF" "no '$PERF' in PATH"
need python3 "python3 is needed"
bench_init

W=$TOP/tests/workloads
compile libdcpwork.so -O1 -g -fomit-frame-pointer -shared -fPIC \
	-Wl,--build-id "$W/unwind_lib.c"
compile unwind_main -O1 -g -fomit-frame-pointer -Wl,--build-id \
	"$W/unwind_main.c" -L"$TMP" -ldcpwork -Wl,-rpath,"$TMP"
compile folded -O1 -g -I"$TOP/include" "$TOP/tests/tools/folded.c" \
	-L"$BUILD" -ldcprof -Wl,-rpath,"$BUILD"

say "workload: unwind_main cb and unwind_main qsort, one per CPU"
start_bg "$TMP/unwind_main" cb 100000
start_bg "$TMP/unwind_main" qsort 100000
sleep 1

say "warming up"
"$DCPROF" record -a --call-graph dwarf -F "$FREQ" --duration 2 \
	-o "$TMP/warm.data" 2>/dev/null || die "dcprof record failed"

say "dcprof record --call-graph dwarf for $DURATION s"
recorder "$DCPROF" record -a --call-graph dwarf -F "$FREQ" \
	--duration "$DURATION" -o "$TMP/dc.data" 2>"$TMP/dc.err" ||
	die "dcprof record failed: $(cat "$TMP/dc.err")"
echo "$CPU_MS" >"$TMP/dc.cpu"
"$DCPROF" report -i "$TMP/dc.data" --format json --limit 1 >"$TMP/dc.json" ||
	die "dcprof report failed"
"$TMP/folded" -u "$TMP/dc.data" >"$TMP/dc.folded" || die "folded failed"

# perf record -B (see perf_record in bench/lib.sh).
say "perf record --call-graph dwarf for $DURATION s"
recorder perf_record --call-graph dwarf -F "$FREQ" -a -o "$TMP/perf.data" \
	-- sleep "$DURATION" 2>"$TMP/perf.err" ||
	die "perf record failed: $(tail -c 400 "$TMP/perf.err")"
echo "$CPU_MS" >"$TMP/perf.cpu"
# perf report aborts on the MMAP2 records the kernel flags as carrying a
# build id: the flag is cleared first (see perf_data in bench/lib.sh).
read -r _ _ _ _ _ _ cleared < <(perf_data clear "$TMP/perf.data") ||
	die "cannot clear the MMAP2 flags of perf.data"
say "cleared the build-id flag of $cleared MMAP2 records"
say "perf report"
recorder sh -c "'$PERF' report -i '$TMP/perf.data' --stdio \
	>'$TMP/perf.report' 2>/dev/null" || die "perf report failed"
echo "$CPU_MS" >"$TMP/perfrep.cpu"
say "perf script (for the call paths; not counted)"
"$PERF" script -i "$TMP/perf.data" --no-inline -F comm,ip,sym,dso \
	>"$TMP/perf.script" 2>/dev/null || die "perf script failed"
"$PERF" report --stats -i "$TMP/perf.data" >"$TMP/perf.stats" 2>/dev/null

python3 - "$TMP" "$DURATION" "$FREQ" <<'PY'
import json, re, sys, os
tmp, duration, freq = sys.argv[1], sys.argv[2], sys.argv[3]
rd = lambda n: open(os.path.join(tmp, n)).read()
dc = json.load(open(os.path.join(tmp, "dc.json")))
st = dc["stats"]
dc_cpu = int(rd("dc.cpu"))
perf_cpu = int(rd("perf.cpu"))
rep_cpu = int(rd("perfrep.cpu"))
m = re.search(r"^\s*SAMPLE events:\s+(\d+)", rd("perf.stats"), re.M)
perf_samples = int(m.group(1)) if m else 0
m = re.search(r"Total Lost Samples:\s+(\d+)", rd("perf.report"))
perf_lost = int(m.group(1)) if m else 0
dc_bytes = os.path.getsize(os.path.join(tmp, "dc.data"))
perf_bytes = os.path.getsize(os.path.join(tmp, "perf.data"))

# One name per function for both tools: no offsets, symbol versions, gcc
# clone suffixes, glibc's internal-alias prefixes or _impl variants.
def norm(sym):
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    sym = re.sub(r"@.*$", "", sym)
    sym = re.sub(r"\.(part|constprop|isra|cold)\.?\d*", "", sym)
    sym = sym.lstrip("_")
    sym = re.sub(r"^GI_+", "", sym)
    sym = re.sub(r"_impl$", "", sym)
    return sym

# call paths of the workload, root first, user frames
def dc_paths():
    paths = {}
    for line in open(os.path.join(tmp, "dc.folded")):
        stack, count = line.rsplit(" ", 1)
        f = stack.split(";")
        if f[0] != "unwind_main":
            continue
        key = ";".join(norm(x) for x in f[1:])
        paths[key] = paths.get(key, 0) + int(count)
    return paths

def perf_paths():
    paths = {}
    comm, frames = None, []
    def flush():
        if comm == "unwind_main":
            key = ";".join(reversed(frames))
            paths[key] = paths.get(key, 0) + 1
    for line in open(os.path.join(tmp, "perf.script"), errors="replace"):
        if not line.strip():
            continue
        if not line[0].isspace():
            flush()
            comm, frames = line.split()[0], []
            continue
        parts = line.split()
        if len(parts) < 3:
            continue
        dso = parts[-1]
        if "kernel.kallsyms" in dso or dso.startswith("([kernel"):
            continue
        frames.append(norm(" ".join(parts[1:-1])))
    flush()
    return paths

dp, pp = dc_paths(), perf_paths()
dt, pt = sum(dp.values()) or 1, sum(pp.values()) or 1
top = sorted(pp.items(), key=lambda kv: -kv[1])[:20]
agree = sum(min(100.0 * c / pt, 100.0 * dp.get(k, 0) / dt) for k, c in top)
top_share = sum(100.0 * c / pt for k, c in top)
# the same on the workload's own functions only (libc aliases differ)
own = {"main", "unwind_lib_run", "cb_seventy", "cb_thirty", "compare",
       "thread_cpu_ns"}
def own_paths(paths):
    out = {}
    for k, c in paths.items():
        kk = ";".join(x for x in k.split(";") if x in own)
        out[kk] = out.get(kk, 0) + c
    return out
do, po = own_paths(dp), own_paths(pp)
otop = sorted(po.items(), key=lambda kv: -kv[1])[:20]
oagree = sum(min(100.0 * c / pt, 100.0 * do.get(k, 0) / dt) for k, c in otop)

def per_k(cpu, n):
    return "%.0f ms" % (1000.0 * cpu / n) if n else "-"

dc_samples = st["samples"]
trunc = st["unwind_truncated_stack_end"] + st["unwind_truncated_no_cfi"] + st["unwind_truncated_other"]
print("### DWARF call graphs: %s s at %s Hz, -a, 2 busy CPUs (nofp workload)" % (duration, freq))
print()
print("| | dcprof record --call-graph dwarf | perf record --call-graph dwarf | perf report |")
print("|---|---:|---:|---:|")
print("| samples | %d | %d | |" % (dc_samples, perf_samples))
print("| lost | %d | %d | |" % (st["lost_samples"] + st["lost_records"], perf_lost))
print("| output | %d bytes | %d bytes | |" % (dc_bytes, perf_bytes))
print("| size ratio | 1 | %.0fx | |" % (perf_bytes / max(dc_bytes, 1)))
print("| CPU | %d ms | %d ms | %d ms |" % (dc_cpu, perf_cpu, rep_cpu))
print("| CPU per 1,000 samples | %s | %s | %s (record + report: %s) |" % (
    per_k(dc_cpu, dc_samples), per_k(perf_cpu, perf_samples),
    per_k(rep_cpu, perf_samples), per_k(perf_cpu + rep_cpu, perf_samples)))
print("| truncated stacks | %d (end of copy %d, no CFI %d, other %d) | | |" % (
    trunc, st["unwind_truncated_stack_end"], st["unwind_truncated_no_cfi"], st["unwind_truncated_other"]))
print("| workload samples | %d | %d | |" % (dt, pt))
print("| top-20 path agreement (all user frames) | %.1f%% of %.1f%% | | |" % (agree, top_share))
print("| top-20 path agreement (workload functions) | %.1f%% | | |" % oagree)
print()
print("Top call paths of the workload (perf share, dcprof share):")
print()
for k, c in top[:8]:
    print("- `%s`: %.1f%% / %.1f%%" % (k[-110:], 100.0 * c / pt, 100.0 * dp.get(k, 0) / dt))
PY
