#!/bin/bash
# The BPF backend against the ring backend and perf record, side by side in
# one run (issue 14): dcprof record --backend bpf, dcprof record --backend
# perf and perf record, each -a -g -F 999 for BENCH_DURATION seconds (default
# 20) on the busy workload (BURNERS processes burning CPU, a short-lived
# process every CHURN_MS ms). Prints a markdown table: samples, the
# recorder's CPU (user + system of the process), the BPF program's own run
# time (kernel.bpf_stats_enabled=1, run_time_ns of dcprof's perf_event
# program), their sum per 1,000 samples and against perf's, and the bytes
# read from the kernel per sample (bpf: count map batches, stack copies,
# task events and statistics, as the recorder counts them; perf: perf.data
# bytes per sample, the records it copies out, which the ring backend also
# reads). The BPF backend runs twice: user frames as plain addresses named
# from the process's maps in user space (the default), and named by build id
# in the kernel (DCPROF_BPF_FRAMES=buildid). bpftrace's profile:hz:999 with
# kernel and user stacks, the in-kernel-counting peer, runs too when it is
# installed. perf, the ring backend and the BPF backend (address frames)
# also record BENCH_SHORT seconds (default 5): the difference between
# their two runs is the CPU that grows with the samples, per 1,000
# samples, and what is left of the long run the cost of starting and
# finishing, which a longer recording spreads thinner. Needs root (BPF, -a).
# BENCH_QUICK=1: recordings of 2 s and 1 s at 99 Hz.
set -u
BENCH=bpf
# shellcheck source=bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_dcprof
need "$PERF" python3
[ "$(id -u)" -eq 0 ] || die "needs root (the BPF backend and -a)"
DURATION=${BENCH_DURATION:-$(by_mode 20 2)}
FREQ=$(by_mode 999 99)
SHORT=${BENCH_SHORT:-$(by_mode 5 1)}
bench_init

STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
trap 'sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"; bench_cleanup' EXIT

start_busy

row() { # NAME SAMPLES CPU_MS BPF_NS BYTES PERF_PER_K
	local per_k
	per_k=$(awk -v c="$3" -v b="$4" -v s="$2" \
		'BEGIN { if (s > 0) printf "%.2f", (c + b / 1e6) * 1000 / s; else print "-" }')
	echo "$per_k" >"$TMP/$1.perk"
	printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" \
		"$(awk -v b="$4" 'BEGIN { printf "%.0f", b / 1e6 }')" "$per_k" \
		"$( [ -n "$6" ] && div "$per_k" "$6" || echo -)" "$5"
}

# bpf_run FRAMES SECONDS NAME: the BPF backend (DCPROF_BPF_FRAMES=FRAMES)
# as the recorder; CPU_MS, and from its -v lines in $TMP/NAME.err: BPF_S
# (samples), BPF_B (bytes read from the kernel), BPF_N (the program's ns)
bpf_run() {
	DCPROF_BPF_FRAMES=$1 recorder "$DCPROF" record --backend bpf -v -a -g \
		-F "$FREQ" --duration "$2" -o "$TMP/$3.data" >/dev/null 2>"$TMP/$3.err" ||
		die "dcprof --backend bpf ($1, $2 s) failed: $(tail -3 "$TMP/$3.err")"
	read -r BPF_S BPF_B BPF_N < <(sed -n \
		's/^dcprof: bpf: \([0-9]*\) samples counted.*, \([0-9]*\) bytes read.*for \([0-9]*\) ns$/\1 \2 \3/p' \
		"$TMP/$3.err")
	[ -n "${BPF_N:-}" ] || die "no bpf figures in: $(grep 'bpf:' "$TMP/$3.err")"
}

# ring_run SECONDS NAME: the ring backend as the recorder; CPU_MS, RING_S
ring_run() {
	recorder "$DCPROF" record --backend perf -a -g -F "$FREQ" --duration "$1" \
		-o "$TMP/$2.data" >/dev/null 2>"$TMP/$2.err" ||
		die "dcprof --backend perf ($1 s) failed: $(tail -3 "$TMP/$2.err")"
	RING_S=$(sed -n 's/^dcprof: \([0-9]*\) samples:.*/\1/p' "$TMP/$2.err")
}

# perf_run SECONDS NAME: perf record as the recorder; CPU_MS, PERF_S
perf_run() {
	recorder perf_record -a -g -F "$FREQ" -o "$TMP/$2.perf" -- sleep "$1" \
		>/dev/null 2>"$TMP/$2.err" || die "perf record ($1 s) failed: $(tail -3 "$TMP/$2.err")"
	PERF_S=$(perf_data "$TMP/$2.perf" | cut -d' ' -f1)
}

say "short runs ($SHORT s): bpf backend (address frames), ring backend, perf record"
bpf_run ip "$SHORT" short-bpf
SHORT_IP_C=$CPU_MS SHORT_IP_S=$BPF_S SHORT_IP_N=$BPF_N
ring_run "$SHORT" short-ring
SHORT_RING_C=$CPU_MS SHORT_RING_S=$RING_S
perf_run "$SHORT" short
SHORT_PERF_C=$CPU_MS SHORT_PERF_S=$PERF_S

say "bpf backend, user frames named by build id (DCPROF_BPF_FRAMES=buildid), $DURATION s"
bpf_run buildid "$DURATION" bpf
BID_CPU=$CPU_MS BID_SAMPLES=$BPF_S BID_BYTES=$BPF_B BID_NS=$BPF_N

say "bpf backend, user frames as addresses (the default), $DURATION s"
bpf_run ip "$DURATION" bpfip
IP_CPU=$CPU_MS IP_SAMPLES=$BPF_S IP_BYTES=$BPF_B IP_NS=$BPF_N

say "ring backend, $DURATION s"
ring_run "$DURATION" ring
RING_CPU=$CPU_MS RING_SAMPLES=$RING_S

BT_CPU= BT_NS= BT_SAMPLES=
if command -v bpftrace >/dev/null; then
	say "bpftrace profile:hz:$FREQ with kernel and user stacks, $DURATION s"
	bpftrace_record "$DURATION" "profile:hz:$FREQ { @[kstack, ustack, comm] = count(); }
		interval:s:$DURATION { exit(); }" "$TMP/bpftrace.out" &&
		BT_CPU=$CPU_MS BT_NS=$BPF_NS BT_SAMPLES=$(sed -n 's/^.*\]: \([0-9]*\)$/\1/p' \
			"$TMP/bpftrace.out" | awk '{ s += $1 } END { print s + 0 }')
else
	say "bpftrace is not installed: its row is left out (apt-get install bpftrace)"
fi

say "perf record, $DURATION s"
perf_run "$DURATION" perf
PERF_CPU=$CPU_MS PERF_SAMPLES=$PERF_S
PERF_BYTES=$(div "$(stat -c %s "$TMP/perf.perf")" "$PERF_SAMPLES" %.0f)

echo
echo "Machine: $(nproc) CPUs ($(cpu_model)), kernel $(uname -r); $BURNERS burners + a short-lived process every $CHURN_MS ms; -a -g -F $FREQ, $DURATION s each; load $(load_avg)."
echo
echo "| recorder | samples | recorder CPU ms | BPF run ms | CPU per 1,000 samples (ms) | x perf | bytes from the kernel per sample |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row perf "$PERF_SAMPLES" "$PERF_CPU" 0 "$PERF_BYTES" ""
PERF_PERK=$(cat "$TMP/perf.perk")
row "dcprof ring" "$RING_SAMPLES" "$RING_CPU" 0 "(perf's records)" "$PERF_PERK"
row "dcprof bpf, build-id frames" "$BID_SAMPLES" "$BID_CPU" "$BID_NS" \
	"$(div "$BID_BYTES" "$BID_SAMPLES" %.0f)" "$PERF_PERK"
row "dcprof bpf (address frames)" "$IP_SAMPLES" "$IP_CPU" "$IP_NS" \
	"$(div "$IP_BYTES" "$IP_SAMPLES" %.0f)" "$PERF_PERK"
[ -n "$BT_CPU" ] && row "bpftrace (in-kernel counts)" "$BT_SAMPLES" "$BT_CPU" "$BT_NS" \
	"-" "$PERF_PERK"
echo
echo "BPF program: $(div "$BID_NS" "$BID_SAMPLES" %.0f) ns per sample with build-id frames, $(div "$IP_NS" "$IP_SAMPLES" %.0f) ns with address frames."

# grows NAME S1 C1 N1 S2 C2 N2 [PERF_SLOPE]: a row of the second table: the
# CPU (recorder + BPF run time, ms) per 1,000 samples between the short
# run (S1 samples, C1 ms, N1 ns) and the long one, and the long run's rest
grows() {
	local slope fixed
	slope=$(awk -v s1="$2" -v c1="$3" -v n1="$4" -v s2="$5" -v c2="$6" -v n2="$7" \
		'BEGIN { if (s2 > s1) printf "%.2f", ((c2 + n2 / 1e6) - (c1 + n1 / 1e6)) * 1000 / (s2 - s1); else print "-" }')
	fixed=$(awk -v sl="$slope" -v s2="$5" -v c2="$6" -v n2="$7" \
		'BEGIN { if (sl != "-") printf "%.0f", c2 + n2 / 1e6 - sl * s2 / 1000; else print "-" }')
	echo "$slope" >"$TMP/$1.slope"
	printf '| %s | %s, %s ms | %s, %s ms | %s | %s | %s |\n' "$1" "$2" \
		"$(awk -v c="$3" -v n="$4" 'BEGIN { printf "%.0f", c + n / 1e6 }')" "$5" \
		"$(awk -v c="$6" -v n="$7" 'BEGIN { printf "%.0f", c + n / 1e6 }')" "$slope" \
		"$( [ -n "${8:-}" ] && div "$slope" "$8" || echo -)" "$fixed"
}
echo
echo "What grows with the samples: each recorder $SHORT s and $DURATION s (recorder CPU + BPF run time); the difference per 1,000 samples, and the rest of the long run (starting and finishing). perf's own work per sample in the kernel (copying call chains into its ring) is not perf's CPU; the BPF programs' is dcprof's."
echo
echo "| recorder | $SHORT s: samples, CPU | $DURATION s: samples, CPU | ms per 1,000 samples between | x perf | rest of the $DURATION s run (ms) |"
echo "|---|---:|---:|---:|---:|---:|"
grows perf "$SHORT_PERF_S" "$SHORT_PERF_C" 0 "$PERF_SAMPLES" "$PERF_CPU" 0
PERF_SLOPE=$(cat "$TMP/perf.slope")
grows "dcprof ring" "$SHORT_RING_S" "$SHORT_RING_C" 0 "$RING_SAMPLES" "$RING_CPU" 0 "$PERF_SLOPE"
grows "dcprof bpf (address frames)" "$SHORT_IP_S" "$SHORT_IP_C" "$SHORT_IP_N" \
	"$IP_SAMPLES" "$IP_CPU" "$IP_NS" "$PERF_SLOPE"
