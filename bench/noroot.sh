#!/bin/bash
# Without root: `dcprof record -g -- CMD` against `perf record -g -- CMD`,
# both as the same unprivileged user (a user created for the run and
# removed at exit, when run as root; else the current user), on the busy
# workload for BENCH_SECONDS (default 10) at 999 Hz, one recorder at a
# time, in one run: output size, the size ratio perf/dcprof, and the
# recorder's own CPU (the recorder's and its children's CPU less the
# workload's own, which the wrapper that runs it measures).
# "dcprof" keeps its symbol cache in the user's home, filled by one
# unmeasured recording first (the steady state of a developer who records
# more than once, as in bench/record.sh); "dcprof-cold" records with the
# cache off and inflates the compressed debug files of libc6-dbg (when
# installed) every time. perf symbolizes nothing while recording.
#   bench/noroot.sh     (BENCH_RUNS, default 1, runs of each;
#                        BENCH_QUICK=1: 1 s recordings)
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECONDS_EACH=${BENCH_SECONDS:-$(by_mode 10 1)}
RUNS=${BENCH_RUNS:-1}
need_dcprof
need "$PERF" "perf is needed for the comparison"
bench_init
chmod 711 "$TMP"
U=$TMP/u
mkdir -p "$U/home"

if [ "$(id -u)" -eq 0 ]; then
	NAME=dcpbench$$
	useradd -M -d "$U/home" -s /bin/false "$NAME" ||
		die "cannot create a user"
	trap 'pkill -KILL -u "$NAME" 2>/dev/null; userdel "$NAME" 2>/dev/null; bench_cleanup' EXIT
	as_user() { setpriv --reuid="$NAME" --regid="$(id -g "$NAME")" \
		--clear-groups env HOME="$U/home" "$@"; }
else
	as_user() { "$@"; }
fi

# wrap SECONDS OUT CMD...: runs CMD for SECONDS, then writes the CPU
# milliseconds of CMD and what it waited for to OUT.
cat >"$TMP/wrap.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *f;
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[3], argv + 3);
		_exit(127);
	}
	sleep(atoi(argv[1]));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	getrusage(RUSAGE_CHILDREN, &ru);
	f = fopen(argv[2], "w");
	fprintf(f, "%ld\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
				    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000);
	return fclose(f) != 0;
}
C
$CC -O2 -o "$U/wrap" "$TMP/wrap.c" || die "cannot build the wrapper"
compile busy -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls \
	"$TOP/bench/workloads/busy.c" -lm
cp "$TMP/busy" "$U/busy"
[ "$(id -u)" -ne 0 ] || chown -R "$NAME:" "$U"
say "paranoid $(cat /proc/sys/kernel/perf_event_paranoid), $NCPU CPUs, $SECONDS_EACH s, $BURNERS burners, churn every $CHURN_MS ms"

CACHE=$U/home/.cache/dcprof
run() { # NAME RECORDER-ARGS...: sets SIZE and REC_MS
	local name=$1
	shift
	recorder as_user "$@" -- "$U/wrap" "$SECONDS_EACH" "$U/$name.cpu" \
		"$U/busy" "$BURNERS" "$CHURN_MS" >/dev/null 2>"$TMP/$name.err" ||
		die "$name failed: $(tail -3 "$TMP/$name.err")"
	SIZE=$(stat -c %s "$U/$name.data")
	REC_MS=$((CPU_MS - $(cat "$U/$name.cpu")))
}

DC=("$DCPROF" record -g -F 999 -e cpu-clock)
as_user mkdir -p -m 700 "$CACHE" || die "cannot make $CACHE"
say "warm-up: one unmeasured dcprof recording fills $CACHE"
run warmup env DCPROF_CACHE_DIR="$CACHE" "${DC[@]}" -o "$U/warmup.data"
printf '%-11s %12s %12s\n' recorder "size (bytes)" "CPU (ms)"
for ((i = 0; i < RUNS; i++)); do
	say "load average $(load_avg)"
	run dcprof env DCPROF_CACHE_DIR="$CACHE" "${DC[@]}" \
		-o "$U/dcprof.data"
	d_size=$SIZE d_ms=$REC_MS
	grep -q 'per-task events' "$TMP/dcprof.err" ||
		say "note: dcprof did not fall back to per-task events (privileged user?)"
	run cold env DCPROF_CACHE_DIR= "${DC[@]}" -o "$U/cold.data"
	c_size=$SIZE c_ms=$REC_MS
	run perf "$PERF" record -B -g -F 999 -e cpu-clock -o "$U/perf.data"
	p_size=$SIZE p_ms=$REC_MS
	printf '%-11s %12d %12d\n' dcprof "$d_size" "$d_ms" dcprof-cold \
		"$c_size" "$c_ms" perf "$p_size" "$p_ms"
	awk -v d="$d_size" -v c="$c_size" -v p="$p_size" -v dm="$d_ms" \
		-v cm="$c_ms" -v pm="$p_ms" 'BEGIN {
		printf "size perf/dcprof %.1fx (cold %.1fx); ", p / d, p / c
		printf "recorder CPU dcprof/perf %.2f (cold %.2f)\n",
			(pm > 0 ? dm / pm : 0), (pm > 0 ? cm / pm : 0) }'
done
