#!/bin/bash
# dcprof collect --backend bpf: the kernel's task and task_vma iterators
# give the same records as the /proc walk for a stopped set of processes,
# through buffers of 128 B, 4 KiB and 1 MiB (a small one taking more reads),
# for a pid list and in the whole-system walk; a listed process that exits
# mid-walk is counted as vanished (made deterministic through the library:
# killed between two reads); as an unprivileged user it fails with one
# line and status 1.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 readelf setpriv
need_root

# the kernel must load the iterators: on these machines it does
if ! "$DCPROF" collect --backend bpf -p $$ >/dev/null 2>"$TMP/probe"; then
	grep -q "was not built" "$TMP/probe" && [ -z "${CI:-}" ] &&
		skip "$(cat "$TMP/probe")"
	die "the BPF collection does not work: $(cat "$TMP/probe")"
fi

# A three-thread process and three processes with four extra executable
# maps each, at short paths (their exe records fit in 128 B).
SHORT=$(mktemp -d /tmp/dcpXXXX)
trap 'rm -rf "$SHORT"; _cleanup' EXIT
W=$(build_workload collect_threads)
cp "$W" "$SHORT/w"
spawn "$SHORT/w"
TPID=$SPAWNED
wait_stopped "$TPID"
cp "$(build_workload collect_maps)" "$SHORT/m"
M=$SHORT/m
spawn "$M" 3 4 "$TMP/pids"
MPID=$SPAWNED
wait_file "$TMP/pids"
CHILDREN=$(cat "$TMP/pids")
PIDS="$TPID,$MPID,$CHILDREN"

reads() { sed -n 's/.* in \([0-9]*\) reads.*/\1/p' "$TMP/err"; }

# tasks: the same records, in the same order, at every buffer size
expect_exit 0 "$DCPROF" collect -p "$PIDS" --buffer 1M
cp "$TMP/out" "$TMP/tasks.proc"
[ "$(grep -c "^fork  pid $TPID " "$TMP/tasks.proc")" -eq 3 ] ||
	die "the /proc walk does not show 3 threads: $(cat "$TMP/tasks.proc")"
for size in 128 4k 1M; do
	expect_exit 0 "$DCPROF" collect --backend bpf -p "$PIDS" --buffer $size
	diff -u "$TMP/tasks.proc" "$TMP/out" >"$TMP/diff" ||
		die "tasks through the kernel at $size differ (- proc, + bpf):
$(cat "$TMP/diff")"
	grep -qE "^[0-9]+ records in [0-9]+ reads, 0 tasks vanished\$" \
		"$TMP/err" || die "no summary line: $(cat "$TMP/err")"
	eval "reads_$size=$(reads)"
done
# shellcheck disable=SC2154
[ "$reads_128" -gt "$reads_4k" ] && [ "$reads_4k" -ge "$reads_1M" ] ||
	die "reads: $reads_128 at 128 B, $reads_4k at 4 KiB, $reads_1M at 1 MiB"
echo "tasks: $reads_128 reads at 128 B, $reads_4k at 4 KiB, $reads_1M at 1 MiB"

# maps: the same, every executable mapping with its cookie and build id;
# at 128 B neither walk can hold libc's record: both say so, alike
expect_exit 0 "$DCPROF" collect --kind maps -p "$PIDS" --buffer 1M
cp "$TMP/out" "$TMP/maps.proc"
BID=$(readelf -n "$M" | awk '/Build ID/ { print $3 }')
[ "$(grep -c "build-id $BID path $M\$" "$TMP/maps.proc")" -ge 15 ] ||
	die "the /proc walk misses the mapped workload: $(cat "$TMP/maps.proc")"
expect_exit 1 "$DCPROF" collect --kind maps -p "$PIDS" --buffer 128
cp "$TMP/err" "$TMP/err.proc"
expect_exit 1 "$DCPROF" collect --kind maps --backend bpf -p "$PIDS" --buffer 128
cmp -s "$TMP/err" "$TMP/err.proc" ||
	die "at 128 B: '$(cat "$TMP/err")', the /proc walk: '$(cat "$TMP/err.proc")'"
# the smallest buffer that holds every record, as the /proc walk finds it
need_bytes=128
while ! "$DCPROF" collect --kind maps -p "$PIDS" --buffer $need_bytes \
	>/dev/null 2>"$TMP/err"; do
	new=$(sed -n 's/.*next record of \([0-9]*\) bytes$/\1/p' "$TMP/err")
	[ -n "$new" ] && [ "$new" -gt "$need_bytes" ] ||
		die "no record size in '$(cat "$TMP/err")'"
	need_bytes=$new
done
for size in "$need_bytes" 4k 1M; do
	expect_exit 0 "$DCPROF" collect --kind maps --backend bpf -p "$PIDS" \
		--buffer "$size"
	diff -u "$TMP/maps.proc" "$TMP/out" >"$TMP/diff" ||
		die "maps through the kernel at $size differ (- proc, + bpf):
$(cat "$TMP/diff")"
	eval "mreads_$size=$(reads)"
done
# shellcheck disable=SC2154
[ "$(eval echo "\$mreads_$need_bytes")" -gt "$mreads_4k" ] ||
	die "a $need_bytes-byte buffer took no more reads than 4 KiB"
# JSON too
for b in proc bpf; do
	expect_exit 0 "$DCPROF" collect --kind maps --backend $b -p "$PIDS" \
		--format json
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(json.dumps(d["records"], sort_keys=True))' "$TMP/out" >"$TMP/json.$b" ||
		die "invalid JSON ($b)"
done
cmp -s "$TMP/json.proc" "$TMP/json.bpf" || die "JSON records differ"

# the whole-system walks agree on these processes: the maps walk in the
# same order, the tasks walk (every thread by tid in the kernel) as a set;
# cookie numbers, given in order of first sight, depend on the processes
# that came and went between the two walks and are left out
re="^[a-z0-9]+ +pid ($(echo "$PIDS" | tr , '|')) "
for kind in tasks maps; do
	expect_exit 0 "$DCPROF" collect --kind $kind --buffer 4k
	grep -E "$re" "$TMP/out" | sed 's/ cookie [0-9]*//' >"$TMP/all.proc"
	expect_exit 0 "$DCPROF" collect --kind $kind --backend bpf --buffer 4k
	grep -E "$re" "$TMP/out" | sed 's/ cookie [0-9]*//' >"$TMP/all.bpf"
	[ -s "$TMP/all.proc" ] || die "the whole-system $kind walk misses them"
	if [ $kind = tasks ]; then
		sort "$TMP/all.proc" -o "$TMP/all.proc"
		sort "$TMP/all.bpf" -o "$TMP/all.bpf"
	fi
	diff -u "$TMP/all.proc" "$TMP/all.bpf" >"$TMP/diff" ||
		die "whole-system $kind walks differ (- proc, + bpf):
$(cat "$TMP/diff")"
done

# a listed process killed between two reads: vanished, none of its records
gcc -std=gnu11 -Wall -Werror $SAN_CFLAGS -I"$TOP/include" -o "$TMP/vanish" \
	-x c - -L"$BUILD" -ldcprof -Wl,-rpath,"$BUILD" <<'C' ||
#include <dcprof/dcprof.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* usage: vanish proc|bpf tasks|maps N BUF; prints the records, those of
 * the child killed after the first read, and tasks_vanished */
int main(int argc, char **argv)
{
	struct dcp_collection_opts o = { .sz = sizeof(o) };
	const struct dcp_collection_stats *st;
	static unsigned long long buf[1 << 14];
	int n, bpf, status, gone = 0;
	enum dcp_collection_kind kind;
	pid_t pids[16];
	size_t size;
	void *c;

	if (argc != 5 || (n = atoi(argv[3])) < 2 || n > 16)
		return 2;
	bpf = !strcmp(argv[1], "bpf");
	kind = strcmp(argv[2], "maps") ? DCP_COLLECTION_TASKS :
					 DCP_COLLECTION_MAPS;
	size = strtoul(argv[4], NULL, 10);
	if (size > sizeof(buf))
		return 2;
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return 1;
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			raise(SIGSTOP);
			for (;;)
				pause();
		}
		if (waitpid(pids[i], &status, WUNTRACED) != pids[i])
			return 1;
	}
	o.pids = pids;
	o.nr_pids = (size_t)n;
	c = bpf ? (void *)dcp_collection_bpf_open(kind, &o) :
		  (void *)dcp_collection_open(kind, &o);
	if (!c) {
		fprintf(stderr, "vanish: %s\n", dcp_last_error());
		return 1;
	}
	for (int reads = 0;; reads++) {
		ssize_t got = bpf ? dcp_collection_bpf_read(c, buf, size, NULL) :
				    dcp_collection_read(c, buf, size, NULL);

		if (got < 0) {
			fprintf(stderr, "vanish: %s\n", dcp_last_error());
			return 1;
		}
		if (got == 0)
			break;
		for (ssize_t pos = 0; pos < got;) {
			struct dcp_collection_record r = { .sz = sizeof(r) };
			int len = dcp_collection_record_decode(
				(char *)buf + pos, (size_t)(got - pos), NULL, &r);

			if (len <= 0)
				return 1;
			gone += r.pid == (uint32_t)pids[n - 1];
			pos += len;
		}
		if (reads == 0) {
			kill(pids[n - 1], SIGKILL);
			waitpid(pids[n - 1], &status, 0);
		}
	}
	st = bpf ? dcp_collection_bpf_get_stats(c) : dcp_collection_get_stats(c);
	printf("%llu %d %llu\n", (unsigned long long)st->records, gone,
	       (unsigned long long)st->tasks_vanished);
	for (int i = 0; i < n - 1; i++)
		kill(pids[i], SIGKILL);
	return 0;
}
C
	die "cannot build the vanish program"
for kind in tasks maps; do
	for b in proc bpf; do
		"${SAN_PRELOAD[@]}" "$TMP/vanish" $b $kind 3 200 >"$TMP/v.$b" ||
			die "vanish $b $kind failed"
		read -r recs gone vanished <"$TMP/v.$b"
		[ "$gone" -eq 0 ] && [ "$vanished" -eq 1 ] && [ "$recs" -gt 0 ] ||
			die "$b $kind: $recs records, $gone of the killed child, $vanished vanished"
	done
	cmp -s "$TMP/v.proc" "$TMP/v.bpf" ||
		die "$kind: /proc walk '$(cat "$TMP/v.proc")', kernel '$(cat "$TMP/v.bpf")'"
done

# A listed process that the kernel's task iterator does not show is said,
# not left out silently (before: "0 records ... 0 tasks vanished", status
# 0). On a kernel that hides its init from root (/proc/1/exe refused, as on
# this project's VMs) the iterator skips it too; elsewhere it is listed.
if readlink /proc/1/exe >/dev/null 2>&1; then
	expect_exit 0 "$DCPROF" collect --backend bpf -p 1
	grep -q '^fork  pid 1 tid 1 ' "$TMP/out" ||
		die "collect -p 1 lists no task of init: $(head -3 "$TMP/out")"
else
	expect_exit 1 "$DCPROF" collect --backend bpf -p 1
	one_line_error
	grep -q "process 1 exists, but the kernel's task iterator does not show it" \
		"$TMP/err" || die "collect -p 1 of a hidden init: $(cat "$TMP/err")"
fi

# refusal: an unprivileged user gets one line and status 1, no records
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_nobody test -x "$DCPROF" || die "user nobody cannot run '$DCPROF'"
expect_exit 1 as_nobody "$DCPROF" collect --backend bpf
one_line_error
grep -q "needs root" "$TMP/err" || die "refusal: $(cat "$TMP/err")"
[ -s "$TMP/out" ] && die "the refused walk printed records"
expect_exit 1 as_nobody "$DCPROF" collect --backend bpf --kind maps
one_line_error
# and bad backends are usage errors
expect_exit 2 "$DCPROF" collect --backend ebpf
expect_exit 2 "$DCPROF" collect --backend

pass
