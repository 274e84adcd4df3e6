// SPDX-License-Identifier: MIT
/*
 * The collection iterator against processes the test creates: stopped
 * children give a quiescent set, killed ones the defined races.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "buildid_internal.h"
#include "collect_internal.h"
#include "cookie_internal.h"
#include "records_internal.h"

#define MiB (1u << 20)

/* ---- children --------------------------------------------------------- */

struct kid_opts {
	int threads; /* besides the main thread */
	int file_maps; /* 1-page r-x maps of our own executable */
	int anon_maps; /* separate anonymous r-x pages */
	const char *comm;
	const char *noid_file; /* mapped r-x shared: a file with no build id */
};

static int kid_named; /* threads of this child that set their name */

static void *kid_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "kid-t%d", (int)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
	__atomic_add_fetch(&kid_named, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void kid_main(const struct kid_opts *o)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (o->comm)
		prctl(PR_SET_NAME, o->comm);
	fd = open("/proc/self/exe", O_RDONLY);
	for (int i = 0; i < o->file_maps; i++)
		if (mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			 0) == MAP_FAILED)
			_exit(3);
	close(fd);
	if (o->anon_maps) {
		/* mprotect splits one reservation into separate maps */
		char *p = mmap(NULL, 2 * o->anon_maps * page, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(3);
		for (int i = 0; i < o->anon_maps; i++)
			mprotect(p + 2 * i * page, page, PROT_READ | PROT_EXEC);
	}
	if (o->noid_file) {
		fd = open(o->noid_file, O_RDONLY);
		if (fd < 0 || mmap(NULL, page, PROT_READ | PROT_EXEC,
				   MAP_SHARED, fd, 0) == MAP_FAILED)
			_exit(3);
		close(fd);
	}
	for (int i = 0; i < o->threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, kid_thread, (void *)(intptr_t)i))
			_exit(3);
	}
	/* let the threads name themselves before the stop */
	while (__atomic_load_n(&kid_named, __ATOMIC_SEQ_CST) < o->threads)
		usleep(500);
	raise(SIGSTOP);
	for (;;)
		pause();
}

/* A child stopped by itself once set up: quiescent until killed. */
static pid_t spawn_kid(const struct kid_opts *o)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		kid_main(o);
	assert_int_equal(waitpid(pid, &status, WUNTRACED), pid);
	assert_true(WIFSTOPPED(status));
	return pid;
}

static void kill_kid(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void kill_kids(pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (size_t i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
}

/* ---- reading a collection ------------------------------------------------ */

struct out {
	char *p;
	size_t len, cap;
};

static void out_add(struct out *o, const void *p, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = (o->len + n) * 2;
		o->p = realloc(o->p, o->cap);
		assert_non_null(o->p);
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

/*
 * Every record framed, aligned, of a kind we write, injected, with a sane
 * trailer; the trailer time (when the collection was opened) is zeroed so
 * that walks can be compared.
 */
static size_t check_records(char *p, size_t len, size_t *largest)
{
	size_t pos = 0, n = 0;

	while (pos < len) {
		struct perf_event_header *h = (void *)(p + pos);
		struct dcp_sample_id *sid;
		struct dcp_record_view v;

		assert_true(len - pos >= sizeof(*h));
		assert_true(h->size >= sizeof(*h) + sizeof(*sid));
		assert_int_equal(h->size % 8, 0);
		assert_true(h->size <= len - pos);
		assert_true(h->misc & DCP_RECORD_MISC_INJECTED);
		assert_int_equal(dcp_record_decode(h, len - pos, &v), 0);
		assert_true(v.type == PERF_RECORD_FORK ||
			    v.type == PERF_RECORD_COMM ||
			    v.type == PERF_RECORD_MMAP2);
		assert_true(v.injected);
		sid = (void *)(p + pos + h->size - sizeof(*sid));
		assert_int_equal(sid->pid, v.pid);
		assert_int_equal(sid->tid, v.tid);
		assert_int_equal(sid->cpu, (uint32_t)-1);
		assert_int_equal(sid->id, 0);
		assert_true(sid->time > 0);
		sid->time = 0;
		if (largest && h->size > *largest)
			*largest = h->size;
		pos += h->size;
		n++;
	}
	return n;
}

struct walk {
	struct out out;
	struct dcp_collection_stats stats;
	uint64_t syscalls;
	size_t calls;
	size_t largest;
};

/*
 * Read a whole collection through a buffer of size bytes (0: as small as
 * possible, i.e. 8 bytes and then exactly what -ENOSPC says is needed).
 */
static void walk_opts(enum dcp_collection_kind kind,
		      const struct dcp_collection_opts *opts, size_t size,
		      struct walk *w)
{
	struct dcp_collection *c = dcp_collection_open(kind, opts);
	size_t cap = size ? size : 8;
	char *buf = malloc(cap < 65536 ? 65536 : cap);

	memset(w, 0, sizeof(*w));
	assert_non_null(c);
	assert_non_null(buf);
	for (;;) {
		size_t needed = 0, try = size ? size : 8;
		ssize_t r = dcp_collection_read(c, buf, try, &needed);

		w->calls++;
		if (r == -ENOSPC && !size) {
			assert_true(needed > try);
			assert_true(needed <= 65536);
			r = dcp_collection_read(c, buf, needed, NULL);
			assert_int_equal(r, needed);
			w->calls++;
		}
		if (r < 0)
			fail_msg("read with %zu bytes: %s", try,
				 dcp_last_error());
		if (r == 0)
			break;
		assert_true((size_t)r <= try || !size);
		out_add(&w->out, buf, (size_t)r);
	}
	assert_int_equal(dcp_collection_read(c, buf, cap, NULL), 0);
	w->calls++;
	w->stats = *dcp_collection_get_stats(c);
	w->syscalls = dcp_collection_syscalls(c);
	assert_int_equal(w->stats.records,
			 check_records(w->out.p, w->out.len, &w->largest));
	assert_int_equal(w->stats.bytes, w->out.len);
	assert_int_equal(w->stats.reads, w->calls);
	dcp_collection_close(c);
	free(buf);
}

static void walk(enum dcp_collection_kind kind, const pid_t *pids, size_t n,
		 size_t size, struct walk *w)
{
	struct dcp_collection_opts opts = {
		.sz = sizeof(opts),
		.pids = pids,
		.nr_pids = n,
	};

	walk_opts(kind, &opts, size, w);
}

static void walk_free(struct walk *w)
{
	free(w->out.p);
	w->out.p = NULL;
}

/* Call fn for each record of a walk's output. */
#define for_each_record(w, v)                                   \
	for (size_t _pos = 0;                                   \
	     _pos < (w)->out.len &&                             \
	     dcp_record_decode((void *)((w)->out.p + _pos),     \
			       (w)->out.len - _pos, &(v)) == 0; \
	     _pos += ((struct perf_event_header *)((w)->out.p + _pos))->size)

static bool is_kid(const pid_t *pids, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if ((uint32_t)pids[i] == pid)
			return true;
	return false;
}

/* ---- quiescent processes: any buffer size gives the same records --------- */

#define NR_KIDS 20

static void same_through_any_buffer(enum dcp_collection_kind kind,
				    const pid_t *kids, size_t n)
{
	struct walk ref, w;
	size_t sizes[8];

	walk(kind, kids, n, MiB, &ref);
	assert_true(ref.stats.records > 0);
	assert_true(ref.largest > 0);
	sizes[0] = ref.largest; /* exactly the largest record */
	sizes[1] = ref.largest + 8;
	sizes[2] = 2 * ref.largest - 8;
	sizes[3] = 1000;
	sizes[4] = 4096;
	sizes[5] = 65536;
	sizes[6] = MiB - 1;
	sizes[7] = 0; /* the minimum: each record in a buffer of its size */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		if (sizes[i] && sizes[i] < ref.largest)
			continue;
		walk(kind, kids, n, sizes[i], &w);
		assert_int_equal(w.out.len, ref.out.len);
		assert_memory_equal(w.out.p, ref.out.p, ref.out.len);
		assert_int_equal(w.stats.records, ref.stats.records);
		assert_int_equal(w.stats.tasks, ref.stats.tasks);
		assert_int_equal(w.stats.maps, ref.stats.maps);
		assert_int_equal(w.stats.tasks_vanished, 0);
		/* the work does not depend on the buffer size */
		assert_int_equal(w.syscalls, ref.syscalls);
		if (sizes[i] <= 4096)
			assert_true(w.stats.reads > ref.stats.reads);
		walk_free(&w);
	}
	walk_free(&ref);
}

static void test_buffer_sizes(void **state)
{
	struct kid_opts o = { .threads = 2, .file_maps = 3, .anon_maps = 2 };
	pid_t kids[NR_KIDS];

	for (int i = 0; i < NR_KIDS; i++)
		kids[i] = spawn_kid(&o);
	same_through_any_buffer(DCP_COLLECTION_TASKS, kids, NR_KIDS);
	same_through_any_buffer(DCP_COLLECTION_MAPS, kids, NR_KIDS);
	kill_kids(kids, NR_KIDS);
}

/* ---- what the records say ------------------------------------------------- */

static void read_self_build_id(uint8_t id[DCP_BUILD_ID_MAX], int *size)
{
	*size = dcp_build_id_read_path("/proc/self/exe", id);
	assert_true(*size > 0);
}

static void test_tasks_content(void **state)
{
	struct kid_opts o = { .threads = 2, .comm = "kid-main" };
	uint8_t bid[DCP_BUILD_ID_MAX];
	char exe[PATH_MAX];
	int forks = 0, comms = 0, maps = 0, bid_size;
	uint32_t last_fork_tid = 0;
	struct dcp_record_view v;
	struct walk w;
	pid_t kid = spawn_kid(&o);
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = 0;
	read_self_build_id(bid, &bid_size);
	walk(DCP_COLLECTION_TASKS, &kid, 1, MiB, &w);
	for_each_record(&w, v)
	{
		assert_int_equal(v.pid, kid);
		switch (v.type) {
		case PERF_RECORD_FORK:
			forks++;
			last_fork_tid = v.tid;
			assert_true(v.time > 0);
			if (v.tid == (uint32_t)kid) {
				assert_int_equal(forks, 1); /* leader first */
				assert_int_equal(v.ppid, getpid());
				assert_int_equal(v.ptid, getpid());
			} else {
				assert_int_equal(v.ppid, kid);
				assert_int_equal(v.ptid, kid);
			}
			break;
		case PERF_RECORD_COMM:
			comms++;
			/* each FORK is followed by its task's COMM */
			assert_int_equal(v.tid, last_fork_tid);
			assert_false(v.comm_exec);
			if (v.tid == (uint32_t)kid)
				assert_string_equal(v.comm, "kid-main");
			else
				assert_memory_equal(v.comm, "kid-t", 5);
			break;
		case PERF_RECORD_MMAP2:
			maps++;
			assert_string_equal(v.filename, exe);
			assert_int_equal(v.id.build_id_size, bid_size);
			assert_memory_equal(v.id.build_id, bid, bid_size);
			assert_true(v.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			assert_int_equal(v.prot, PROT_READ | PROT_EXEC);
			break;
		}
	}
	assert_int_equal(forks, 3);
	assert_int_equal(comms, 3);
	assert_int_equal(maps, 1);
	assert_int_equal(w.stats.tasks, 3);
	assert_int_equal(w.stats.maps, 1);
	walk_free(&w);
	kill_kid(kid);
}

static void *idle_thread(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	pause();
	return NULL;
}

/* A thread id stands for its process; a pid listed twice is walked once. */
static void test_tid_and_duplicates(void **state)
{
	pthread_t t;
	int tid = 0, forks = 0;
	pid_t list[3];
	struct dcp_record_view v;
	struct walk w;

	assert_int_equal(pthread_create(&t, NULL, idle_thread, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	list[0] = tid;
	list[1] = getpid();
	list[2] = tid;
	walk(DCP_COLLECTION_TASKS, list, 3, MiB, &w);
	for_each_record(&w, v)
	{
		assert_int_equal(v.pid, getpid());
		if (v.type == PERF_RECORD_FORK)
			forks++;
	}
	assert_int_equal(forks, 2);
	walk_free(&w);
	pthread_cancel(t);
	pthread_join(t, NULL);
}

static void test_maps_content(void **state)
{
	char noid[] = "/tmp/dcp-collect-XXXXXX";
	struct kid_opts o = { .file_maps = 3, .anon_maps = 2 };
	uint8_t bid[DCP_BUILD_ID_MAX];
	int bid_size, fd, self = 0, anon = 0, vdso = 0, plain = 0;
	unsigned int gen = 0;
	struct dcp_record_view v;
	struct stat st;
	struct walk w;
	pid_t kid;

	fd = mkstemp(noid);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an elf file\n", 16), 16);
	assert_int_equal(fstat(fd, &st), 0);
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) < 0)
		gen = 0;
	close(fd);
	o.noid_file = noid;
	read_self_build_id(bid, &bid_size);
	kid = spawn_kid(&o);
	walk(DCP_COLLECTION_MAPS, &kid, 1, MiB, &w);
	for_each_record(&w, v)
	{
		assert_int_equal(v.type, PERF_RECORD_MMAP2);
		assert_int_equal(v.pid, kid);
		assert_int_equal(v.tid, kid);
		assert_true(v.prot & PROT_EXEC);
		assert_true(v.len > 0);
		if (!strcmp(v.filename, "//anon")) {
			anon++;
			assert_int_equal(v.region, DCP_COOKIE_KIND_ANON);
			assert_int_equal(v.id.ino, 0);
			assert_int_equal(v.prot, PROT_READ | PROT_EXEC);
		} else if (!strcmp(v.filename, "[vdso]")) {
			vdso++;
			assert_int_equal(v.region, DCP_COOKIE_KIND_VDSO);
		} else if (!strcmp(v.filename, noid)) {
			plain++;
			assert_false(v.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			assert_int_equal(v.id.build_id_size, 0);
			assert_int_equal(v.id.dev_major, major(st.st_dev));
			assert_int_equal(v.id.dev_minor, minor(st.st_dev));
			assert_int_equal(v.id.ino, st.st_ino);
			assert_int_equal(v.id.ino_generation, gen);
			assert_int_equal(v.flags, MAP_SHARED);
			assert_int_equal(v.pgoff, 0);
		} else if (v.len == (uint64_t)sysconf(_SC_PAGESIZE) &&
			   v.pgoff == 0 && v.id.build_id_size == bid_size &&
			   !memcmp(v.id.build_id, bid, bid_size)) {
			self++; /* one of the extra maps of our executable */
			assert_true(v.misc & PERF_RECORD_MISC_MMAP_BUILD_ID);
			assert_int_equal(v.flags, MAP_PRIVATE);
		}
	}
	assert_int_equal(anon, 2);
	assert_int_equal(vdso, 1);
	assert_int_equal(plain, 1);
	assert_int_equal(self, 3);
	assert_int_equal(w.stats.maps, w.stats.records);
	walk_free(&w);
	kill_kid(kid);
	unlink(noid);
}

/* --only shrinks the collection: unmarked files go, special regions stay */
static void test_only_marked(void **state)
{
	struct kid_opts o = { .file_maps = 2, .anon_maps = 1 };
	struct dcp_cookie_table *t = dcp_cookie_table_new();
	struct dcp_collection_opts opts = { .sz = sizeof(opts),
					    .nr_pids = 1,
					    .cookies = t,
					    .only_marked = true };
	uint8_t bid[DCP_BUILD_ID_MAX];
	int bid_size, files = 0, specials = 0;
	char exe[PATH_MAX];
	struct dcp_record_view v;
	struct walk all, w;
	pid_t kid = spawn_kid(&o);

	assert_non_null(t);
	assert_non_null(realpath("/proc/self/exe", exe));
	assert_int_equal(dcp_cookie_table_mark_arg(t, exe), 0);
	read_self_build_id(bid, &bid_size);
	opts.pids = &kid;
	walk(DCP_COLLECTION_MAPS, &kid, 1, MiB, &all);
	walk_opts(DCP_COLLECTION_MAPS, &opts, 4096, &w);
	for_each_record(&w, v)
	{
		if (v.region == DCP_COOKIE_KIND_FILE) {
			files++;
			assert_int_equal(v.id.build_id_size, bid_size);
			assert_memory_equal(v.id.build_id, bid, bid_size);
		} else {
			specials++;
		}
	}
	assert_true(files >= 3); /* the executable's own map and ours */
	assert_true(specials >= 2); /* [vdso] and the anonymous page */
	assert_true(w.stats.maps_skipped_unmarked > 0); /* libc, ld.so */
	assert_int_equal(w.stats.maps + w.stats.maps_skipped_unmarked,
			 all.stats.maps);
	walk_free(&w);
	walk_free(&all);

	/* without a table nothing is marked */
	opts.cookies = NULL;
	walk_opts(DCP_COLLECTION_MAPS, &opts, 4096, &w);
	for_each_record(&w, v)
		assert_int_not_equal(v.region, DCP_COOKIE_KIND_FILE);
	assert_true(w.stats.records >= 2);
	walk_free(&w);
	dcp_cookie_table_free(t);
	kill_kid(kid);
}

/* ---- races ---------------------------------------------------------------- */

static bool set_last_pid(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%d", (int)pid) > 0;
	return fclose(f) == 0 && ok;
}

/*
 * Processes of the pid list that exit before the walk reaches them are
 * counted, not errors; a pid reused by a new process is not its
 * predecessor: it is counted as vanished too.
 */
static void test_vanished(void **state)
{
	struct kid_opts o = { .threads = 1 };
	struct dcp_collection_opts opts = { .sz = sizeof(opts) };
	struct dcp_collection *c;
	pid_t kids[10], reused = -1;
	char buf[4096];
	struct walk w = { 0 };
	struct dcp_record_view v;
	ssize_t r;

	for (int i = 0; i < 10; i++)
		kids[i] = spawn_kid(&o);
	opts.pids = kids;
	opts.nr_pids = 10;
	c = dcp_collection_open(DCP_COLLECTION_TASKS, &opts);
	assert_non_null(c);
	r = dcp_collection_read(c, buf, 64, NULL); /* one FORK record */
	assert_int_equal(r, 64);
	out_add(&w.out, buf, (size_t)r);
	/* kids 5..9 exit; 9's pid goes to a new process if we can make it */
	for (int i = 5; i < 10; i++)
		kill_kid(kids[i]);
	/* start times come in clock ticks: the successor must start in a
	 * later tick than its predecessor to be told apart */
	usleep(30000);
	if (set_last_pid(kids[9] - 1)) {
		struct kid_opts q = { 0 };

		reused = spawn_kid(&q);
		if (reused != kids[9]) {
			kill_kid(reused);
			reused = -1;
		}
	}
	while ((r = dcp_collection_read(c, buf, sizeof(buf), NULL)) > 0)
		out_add(&w.out, buf, (size_t)r);
	assert_int_equal(r, 0);
	w.stats = *dcp_collection_get_stats(c);
	assert_int_equal(w.stats.tasks_vanished, 5);
	assert_int_equal(w.stats.tasks, 10); /* 5 kids, 2 threads each */
	check_records(w.out.p, w.out.len, NULL);
	for_each_record(&w, v) assert_true(is_kid(kids, 5, v.pid));
	if (reused < 0)
		print_message("pid reuse not forced (ns_last_pid), checked "
			      "only as an exit\n");
	else
		kill_kid(reused);
	dcp_collection_close(c);
	walk_free(&w);
	kill_kids(kids, 5);
}

static volatile sig_atomic_t churn_stop;

static void churn_on_term(int sig)
{
	churn_stop = 1;
}

static void *churn_thread(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/* Create short-lived processes, some with a thread, until SIGTERM. */
static pid_t start_churn(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGTERM, churn_on_term);
	signal(SIGCHLD, SIG_DFL);
	for (unsigned int i = 0; !churn_stop; i++) {
		pid_t k = fork();

		if (k == 0) {
			pthread_t t;

			if (i % 3 == 0)
				pthread_create(&t, NULL, churn_thread, NULL);
			usleep(i % 7 * 300);
			_exit(0);
		}
		if (k > 0 && i % 2)
			kill(k, SIGKILL); /* die at any point */
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (i % 16 == 0)
			usleep(200);
	}
	while (wait(NULL) > 0)
		;
	_exit(0);
}

static int cmp_task(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static void test_churn(void **state)
{
	struct dcp_collection_opts opts = { .sz = sizeof(opts) };
	uint64_t vanished = 0;
	pid_t churn = start_churn();

	for (int round = 0; round < 12; round++) {
		enum dcp_collection_kind kind =
			round % 2 ? DCP_COLLECTION_MAPS : DCP_COLLECTION_TASKS;
		struct dcp_record_view v;
		uint64_t *tasks = NULL;
		size_t nr = 0, cap = 0;
		struct walk w;

		/* the smallest buffers: the most reads, the widest races */
		walk_opts(kind, &opts, 0, &w);
		vanished += w.stats.tasks_vanished;
		for_each_record(&w, v)
		{
			if (v.type != PERF_RECORD_FORK)
				continue;
			if (nr == cap) {
				cap = cap ? 2 * cap : 1024;
				tasks = realloc(tasks, cap * sizeof(*tasks));
				assert_non_null(tasks);
			}
			tasks[nr++] = (uint64_t)v.pid << 32 | v.tid;
		}
		assert_int_equal(nr, w.stats.tasks);
		if (nr)
			qsort(tasks, nr, sizeof(*tasks), cmp_task);
		for (size_t i = 1; i < nr; i++)
			if (tasks[i] == tasks[i - 1])
				fail_msg("task %u/%u injected twice",
					 (unsigned)(tasks[i] >> 32),
					 (unsigned)tasks[i]);
		if (kind == DCP_COLLECTION_TASKS)
			assert_true(nr > 0);
		free(tasks);
		walk_free(&w);
	}
	kill(churn, SIGTERM);
	assert_int_equal(waitpid(churn, NULL, 0), churn);
	print_message("churn: %llu tasks vanished in 12 walks\n",
		      (unsigned long long)vanished);
}

/*
 * A maps read racing with changes is never half old, half new: a child
 * slides a window of 100 executable pages upwards through its address
 * space (maps page i, then unmaps page i - 100), so that any consistent
 * view holds 100 or 101 pages in a row; a torn one would show a hole or
 * another count. Every walk must show a window, or skip the process whole.
 */
#define RACE_BASE 0x200000000ul
#define RACE_END (RACE_BASE + (1ul << 44))
#define RACE_W 100

static void race_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = open("/proc/self/exe", O_RDONLY);

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (unsigned long i = 0;; i++) {
		if (mmap((char *)RACE_BASE + 2 * i * page, page,
			 PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
			 0) == MAP_FAILED)
			_exit(3);
		if (i >= RACE_W)
			munmap((char *)RACE_BASE + 2 * (i - RACE_W) * page,
			       page);
	}
}

static void test_maps_race(void **state)
{
	uint64_t rereads = 0, skipped = 0;
	long page = sysconf(_SC_PAGESIZE);
	pid_t kid = fork();

	assert_true(kid >= 0);
	if (kid == 0)
		race_child();
	usleep(20000);
	for (int i = 0; i < 300; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, n = 0;
		struct dcp_record_view v;
		struct walk w;

		walk(DCP_COLLECTION_MAPS, &kid, 1, 65536, &w);
		for_each_record(&w, v)
		{
			uint64_t idx;

			if (v.addr < RACE_BASE || v.addr >= RACE_END)
				continue;
			idx = (v.addr - RACE_BASE) / (2 * page);
			lo = idx < lo ? idx : lo;
			hi = idx > hi ? idx : hi;
			n++;
		}
		rereads += w.stats.maps_reread;
		if (w.stats.records == 0)
			skipped++; /* never held still: skipped whole */
		else if ((n != RACE_W && n != RACE_W + 1) || hi - lo + 1 != n)
			fail_msg("walk %d: torn maps: %llu pages over %llu", i,
				 (unsigned long long)n,
				 (unsigned long long)(hi - lo + 1));
		walk_free(&w);
	}
	kill_kid(kid);
	print_message("maps race: %llu rereads, %llu of 300 walks skipped\n",
		      (unsigned long long)rereads, (unsigned long long)skipped);
}

/* ---- bad input -------------------------------------------------------------- */

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void test_bad_input(void **state)
{
	struct dcp_collection_opts opts = { .sz = sizeof(opts), .nr_pids = 1 };
	struct dcp_collection *c;
	char buf[256], msg[64];
	size_t needed = 0;
	pid_t pid = dead_pid(), self = getpid(), zero = 0;

	opts.pids = &pid;
	errno = 0;
	assert_null(dcp_collection_open(DCP_COLLECTION_TASKS, &opts));
	assert_int_equal(errno, ESRCH);
	snprintf(msg, sizeof(msg), "no process with pid %d", (int)pid);
	assert_string_equal(dcp_last_error(), msg);

	opts.pids = &zero;
	assert_null(dcp_collection_open(DCP_COLLECTION_MAPS, &opts));
	assert_int_equal(errno, EINVAL);
	opts.pids = NULL;
	assert_null(dcp_collection_open(DCP_COLLECTION_MAPS, &opts));
	assert_int_equal(errno, EINVAL);
	assert_null(dcp_collection_open((enum dcp_collection_kind)7, NULL));
	assert_int_equal(errno, EINVAL);

	opts.pids = &self;
	c = dcp_collection_open(DCP_COLLECTION_TASKS, &opts);
	assert_non_null(c);
	assert_int_equal(dcp_collection_read(c, buf, 0, &needed), -EINVAL);
	assert_non_null(strstr(dcp_last_error(), "0 bytes"));
	/* a FORK record is 64 bytes: 63 cannot hold it, and say so */
	assert_int_equal(dcp_collection_read(c, buf, 63, &needed), -ENOSPC);
	assert_int_equal(needed, 64);
	assert_non_null(strstr(dcp_last_error(), "64 bytes"));
	assert_int_equal(dcp_collection_read(c, buf, 8, NULL), -ENOSPC);
	/* the record was kept: the next read starts with it */
	assert_int_equal(dcp_collection_read(c, buf, 64, &needed), 64);
	assert_int_equal(((struct perf_event_header *)buf)->type,
			 PERF_RECORD_FORK);
	assert_int_equal(((struct dcp_task_record *)buf)->tid, self);
	dcp_collection_close(c);
	dcp_collection_close(NULL);
}

/*
 * An unreadable /proc entry: an unprivileged process may list a root
 * process, but not read its maps. A listed pid is an error that names the
 * file; the system-wide walk skips what it may not read.
 */
static void test_unreadable(void **state)
{
	struct kid_opts o = { 0 };
	pid_t kid, probe;
	int status;

	if (geteuid() != 0)
		skip();
	kid = spawn_kid(&o);
	probe = fork();
	assert_true(probe >= 0);
	if (probe == 0) {
		struct dcp_collection_opts opts = { .sz = sizeof(opts),
						    .pids = &kid,
						    .nr_pids = 1 };
		struct dcp_collection *c;
		char buf[65536], want[64];
		ssize_t r;

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		c = dcp_collection_open(DCP_COLLECTION_MAPS, &opts);
		if (!c)
			_exit(11);
		r = dcp_collection_read(c, buf, sizeof(buf), NULL);
		snprintf(want, sizeof(want),
			 "cannot read '/proc/%d/maps': Permission denied",
			 (int)kid);
		if (r != -EACCES || strcmp(dcp_last_error(), want)) {
			fprintf(stderr, "got %zd '%s'\n", r, dcp_last_error());
			_exit(12);
		}
		dcp_collection_close(c);
		c = dcp_collection_open(DCP_COLLECTION_TASKS, &opts);
		if (!c ||
		    dcp_collection_read(c, buf, sizeof(buf), NULL) != -EACCES)
			_exit(13);
		dcp_collection_close(c);
		/* everything: our own maps, no error for the rest */
		for (int k = 1; k <= 2; k++) {
			uint64_t total = 0;

			c = dcp_collection_open(k, NULL);
			if (!c)
				_exit(14);
			while ((r = dcp_collection_read(c, buf, sizeof(buf),
							NULL)) > 0)
				total += (uint64_t)r;
			if (r < 0 || total == 0)
				_exit(15);
			dcp_collection_close(c);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(probe, &status, 0), probe);
	kill_kid(kid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- scale ------------------------------------------------------------------ */

/* forking 2,000 sanitized processes takes minutes: fewer there */
#if defined(__SANITIZE_ADDRESS__)
#define SCALE_KIDS 200
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALE_KIDS 200
#endif
#endif
#ifndef SCALE_KIDS
#define SCALE_KIDS 2000
#endif
#define SCALE_MAPS 50

/*
 * 2,000 processes with 50 executable maps each: the same records through
 * buffers of one record, 4 KiB and 1 MiB, and the same /proc work for
 * them: the work per record does not grow as the buffer shrinks.
 */
static void test_scale(void **state)
{
	struct kid_opts o = { .file_maps = SCALE_MAPS };
	pid_t *kids = calloc(SCALE_KIDS, sizeof(*kids));
	struct walk big, w;
	size_t sizes[2] = { 0, 4096 };

	assert_non_null(kids);
	for (int i = 0; i < SCALE_KIDS; i++)
		kids[i] = spawn_kid(&o);
	walk(DCP_COLLECTION_MAPS, kids, SCALE_KIDS, MiB, &big);
	assert_true(big.stats.maps >= SCALE_KIDS * SCALE_MAPS);
	assert_int_equal(big.stats.tasks_vanished, 0);
	sizes[0] = big.largest;
	for (int i = 0; i < 2; i++) {
		walk(DCP_COLLECTION_MAPS, kids, SCALE_KIDS, sizes[i], &w);
		assert_int_equal(w.stats.records, big.stats.records);
		assert_int_equal(w.out.len, big.out.len);
		assert_memory_equal(w.out.p, big.out.p, big.out.len);
		assert_int_equal(w.syscalls, big.syscalls);
		print_message(
			"scale: %llu records, %zu-byte buffer: %llu reads, "
			"%.3f /proc syscalls per record\n",
			(unsigned long long)w.stats.records, sizes[i],
			(unsigned long long)w.stats.reads,
			(double)w.syscalls / (double)w.stats.records);
		walk_free(&w);
	}
	walk(DCP_COLLECTION_TASKS, kids, SCALE_KIDS, 0, &w);
	assert_int_equal(w.stats.tasks, SCALE_KIDS);
	walk_free(&w);
	walk_free(&big);
	kill_kids(kids, SCALE_KIDS);
	free(kids);
}

/* ---- the decoder ------------------------------------------------------------ */

static void test_decode(void **state)
{
	uint64_t raw[32] = { 0 };
	struct dcp_mmap2_record *m = (void *)raw;
	struct dcp_comm_record *cr = (void *)raw;
	struct dcp_record_view v;
	size_t size = sizeof(*m) + 16 + sizeof(struct dcp_sample_id);

	m->header.type = PERF_RECORD_MMAP2;
	m->header.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;
	m->header.size = (uint16_t)size;
	m->pid = 7;
	m->tid = 8;
	m->addr = 0x1000;
	m->len = 0x2000;
	m->build_id_size = 20;
	memset(m->build_id, 0xab, 20);
	strcpy(m->filename, "/bin/true");
	assert_int_equal(dcp_record_decode(&m->header, sizeof(raw), &v), 0);
	assert_false(v.injected);
	assert_int_equal(v.id.build_id_size, 20);
	assert_int_equal(v.id.build_id[19], 0xab);
	assert_string_equal(v.filename, "/bin/true");
	assert_int_equal(v.region, DCP_COOKIE_KIND_FILE);
	assert_ptr_equal(v.sample_id, (char *)raw + size - 32);

	/* bigger than what is there, not 8-aligned, too short */
	assert_int_equal(dcp_record_decode(&m->header, size - 8, &v), -EINVAL);
	m->header.size = (uint16_t)(size - 4);
	assert_int_equal(dcp_record_decode(&m->header, sizeof(raw), &v),
			 -EINVAL);
	m->header.size = sizeof(*m);
	assert_int_equal(dcp_record_decode(&m->header, sizeof(raw), &v),
			 -EINVAL);
	/* a filename that runs into the trailer */
	m->header.size = (uint16_t)size;
	memset(m->filename, 'x', 16);
	assert_int_equal(dcp_record_decode(&m->header, sizeof(raw), &v),
			 -EINVAL);
	/* a build id size the layout cannot hold */
	strcpy(m->filename, "/bin/true");
	m->build_id_size = 21;
	assert_int_equal(dcp_record_decode(&m->header, sizeof(raw), &v),
			 -EINVAL);

	memset(raw, 0, sizeof(raw));
	cr->header.type = PERF_RECORD_COMM;
	cr->header.misc = PERF_RECORD_MISC_COMM_EXEC | DCP_RECORD_MISC_INJECTED;
	cr->header.size = sizeof(*cr) + 8 + 32;
	strcpy(cr->comm, "bash");
	assert_int_equal(dcp_record_decode(&cr->header, sizeof(raw), &v), 0);
	assert_string_equal(v.comm, "bash");
	assert_true(v.comm_exec);
	assert_true(v.injected);
	cr->header.type = PERF_RECORD_SAMPLE;
	assert_int_equal(dcp_record_decode(&cr->header, sizeof(raw), &v),
			 -ENOTSUP);

	assert_int_equal(dcp_record_region("[vdso]"), DCP_COOKIE_KIND_VDSO);
	assert_int_equal(dcp_record_region("[vsyscall]"),
			 DCP_COOKIE_KIND_VSYSCALL);
	assert_int_equal(dcp_record_region("//anon"), DCP_COOKIE_KIND_ANON);
	assert_int_equal(dcp_record_region("[anon:jit]"), DCP_COOKIE_KIND_ANON);
	assert_int_equal(dcp_record_region("/lib/libc.so.6 (deleted)"),
			 DCP_COOKIE_KIND_FILE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_tasks_content),
		cmocka_unit_test(test_tid_and_duplicates),
		cmocka_unit_test(test_maps_content),
		cmocka_unit_test(test_only_marked),
		cmocka_unit_test(test_buffer_sizes),
		cmocka_unit_test(test_vanished),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_maps_race),
		cmocka_unit_test(test_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
