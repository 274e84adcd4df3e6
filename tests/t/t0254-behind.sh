#!/bin/bash
# exclusive: measures how far behind top falls at 10 kHz, which the machine's load changes
# How far the live view is behind the kernel (dcp_snapshot_info.behind_ns,
# top's "behind"): a program on libdcprof records a spinning process at
# 10 kHz on every CPU, polls for half a second (caught up: under 0.5 s
# behind), then reads nothing for 3 s while the rings, made large enough
# to lose nothing, fill: after one poll the snapshot must say it is 1 to
# 4.5 s behind (a poll's work is bounded, so one cannot take in 3 s of
# samples), then polled again it catches up (under 0.2 s behind within
# 20 s) with nothing lost. Before, nothing said so: the view only showed
# fewer samples a second. (A snapshot drains the source while it waits
# for the names of new addresses, and catches up a 3 s backlog in about
# 0.1 s: hence the spinner alone, whose few addresses are named in the
# first half second, so that the snapshot after the pause waits for no
# names; a kernel path first seen in the pause still can be: one CI run
# read 0.000 s so, and the pause is then made once more.) A caller built with the struct's
# first version (a smaller sz) still gets its snapshot, and its memory past
# that sz is left alone; a smaller sz still is refused; the same for the
# stats struct given to dcp_recorder_finish() before samples_other_idle.
# top's JSON carries behind_ms.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events

SPIN=$(build_workload spin)
spawn "$SPIN" "$TMP/ready"
spinner=$SPAWNED
wait_file "$TMP/ready"

cat >"$TMP/behind.c" <<'C'
#include <dcprof/dcprof.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(c)                                                          \
	do {                                                              \
		if (!(c)) {                                               \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, \
				__LINE__, #c, dcp_last_error());           \
			return 1;                                         \
		}                                                         \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double behind_s(struct dcp_recorder *r)
{
	struct dcp_snapshot_info info = { .sz = sizeof(info) };

	if (!dcp_recorder_snapshot(r, &info))
		return -1;
	return (double)info.behind_ns / 1e9;
}

int main(int argc, char **argv)
{
	struct dcp_recorder_opts o = { .sz = sizeof(o) };
	/* the stats as a program built before samples_other_idle has them */
	union {
		struct dcp_profile_stats s;
		unsigned char raw[sizeof(struct dcp_profile_stats)];
	} st;
	/* the struct as a program built before behind_ns has it */
	struct {
		size_t sz;
		uint64_t fields[4];
		uint64_t past;
	} old = { .sz = offsetof(struct dcp_snapshot_info, behind_ns),
		  .past = 0x5a5a5a5a };
	struct dcp_recorder *r;
	double t, polled, paused, caught = -1;
	int tries;

	CHECK(argc == 3);
	o.output = argv[1];
	o.sample_freq = 10000;
	o.mmap_pages = 2048; /* 8 MiB a CPU: 3 s of samples, none lost */
	o.backend = DCP_BACKEND_PERF;
	r = dcp_recorder_new(&o);
	CHECK(r);
	CHECK(dcp_recorder_add_pid(r, atoi(argv[2])) == 0);
	for (t = now_s(); now_s() < t + 0.5;)
		CHECK(dcp_recorder_poll(r, 50) >= 0);
	polled = behind_s(r);
	CHECK(polled >= 0);
	/* a snapshot with names to wait for (a kernel path first seen in the
	 * pause) drains while it waits and catches up: then once more, when
	 * they are known */
	for (tries = 1;; tries++) {
		sleep(3);
		CHECK(dcp_recorder_poll(r, 0) >= 0);
		paused = behind_s(r);
		CHECK(paused >= 0);
		caught = -1;
		for (t = now_s(); now_s() < t + 20;) {
			double b;

			CHECK(dcp_recorder_poll(r, 50) >= 0);
			b = behind_s(r);
			CHECK(b >= 0);
			if (b < 0.2) {
				caught = now_s() - t;
				break;
			}
		}
		if (paused >= 1.0 || tries == 2)
			break;
	}
	CHECK(dcp_recorder_snapshot(r, (struct dcp_snapshot_info *)&old));
	CHECK(old.past == 0x5a5a5a5a);
	old.sz -= sizeof(uint64_t);
	errno = 0;
	CHECK(!dcp_recorder_snapshot(r, (struct dcp_snapshot_info *)&old) &&
	      errno == EINVAL);
	memset(&st, 0x5a, sizeof(st));
	st.s.sz = offsetof(struct dcp_profile_stats, samples_other_idle) - 1;
	errno = 0;
	CHECK(dcp_recorder_finish(r, &st.s) == -EINVAL && errno == EINVAL);
	st.s.sz++;
	CHECK(dcp_recorder_finish(r, &st.s) == 0);
	CHECK(st.s.samples_other_idle == 0x5a5a5a5a5a5a5a5aull);
	dcp_recorder_free(r);
	printf("%.3f %.3f %.3f %llu %llu %d\n", polled, paused, caught,
	       (unsigned long long)(st.s.lost_records + st.s.lost_samples),
	       (unsigned long long)st.s.samples, tries);
	return 0;
}
C
gcc -std=gnu11 -Wall -Wextra -Werror $SAN_CFLAGS -I"$TOP/include" \
	-o "$TMP/behind" "$TMP/behind.c" -L"$BUILD" -ldcprof \
	-Wl,-rpath,"$BUILD" || die "cannot build a program against libdcprof.so"
"$TMP/behind" "$TMP/behind.data" "$spinner" >"$TMP/behind.out" \
	2>"$TMP/behind.err" ||
	die "the recording program failed: $(tail -3 "$TMP/behind.err")"
read -r polled paused caught lost samples tries <"$TMP/behind.out"
echo "behind: ${polled} s polled, ${paused} s after 3 s unread and one poll" \
	"(pause $tries), caught up in ${caught} s; ${samples} samples, ${lost} lost"
python3 - "$polled" "$paused" "$caught" "$lost" <<'PY' || die "the behind figure is wrong"
import sys
polled, paused, caught = map(float, sys.argv[1:4])
lost = int(sys.argv[4])
assert polled < 0.5, "%.3f s behind while polled" % polled
assert 1.0 <= paused <= 4.5, "%.3f s behind after 3 s unread" % paused
assert 0 <= caught <= 20, "not caught up in 20 s"
assert lost == 0, "%d lost: the rings were to hold it all" % lost
PY

# top's intervals say it too
expect_exit 0 "$DCPROF" top --stdio -a --iterations 2 --format json
python3 - "$TMP/out" <<'PY' || die "top's JSON has no behind_ms"
import json, sys
ivs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("top: behind_ms %s" % [i["behind_ms"] for i in ivs])
assert len(ivs) == 2 and all(0 <= i["behind_ms"] < 1000 for i in ivs)
PY
pass
