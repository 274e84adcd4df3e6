// SPDX-License-Identifier: MIT
/*
 * The collection through the kernel: the bpf_iter programs of
 * task_iter.bpf.c walk the tasks (iter/task) and their executable mappings
 * (iter/task_vma) and write fixed binary records (iter_record.h) into the
 * iterator's file. This file reads that file with the caller's buffer size
 * (the kernel resumes where the last read stopped), adds what the kernel
 * does not give a BPF iterator (a mapped file's whole path, its build id:
 * through /proc/PID/map_files, as the /proc walk does) and turns each into
 * the perf-layout FORK/COMM/MMAP2 records the /proc walk (lib/core/
 * collect*.c) writes, whole records only per read.
 *
 * The records' conversion is iter_convert.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dcprof/dcprof.h"
#include "api_internal.h"
#include "log_internal.h"
#include "records_internal.h"

#ifdef DCPROF_NO_BPF

DCPROF_API struct dcp_collection_bpf *
dcp_collection_bpf_open(enum dcp_collection_kind kind,
			const struct dcp_collection_opts *opts)
{
	(void)kind;
	(void)opts;
	return dcp_error_null(ENOTSUP, "the BPF collection was not built: %s",
			      DCPROF_NO_BPF_REASON);
}

DCPROF_API ssize_t dcp_collection_bpf_read(struct dcp_collection_bpf *c,
					   void *buf, size_t size,
					   size_t *needed)
{
	(void)c;
	(void)buf;
	(void)size;
	(void)needed;
	return dcp_error(ENOTSUP, "the BPF collection was not built");
}

DCPROF_API const struct dcp_collection_stats *
dcp_collection_bpf_get_stats(const struct dcp_collection_bpf *c)
{
	(void)c;
	return NULL;
}

DCPROF_API void dcp_collection_bpf_close(struct dcp_collection_bpf *c)
{
	(void)c;
}

#else /* !DCPROF_NO_BPF */

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "iter_internal.h"
#include "libbpf_log.h"
#include "task_iter.skel.h"

/* ---- the iterators ------------------------------------------------------ */

static void close_iter(struct dcp_collection_bpf *c)
{
	if (c->iter_fd >= 0)
		close(c->iter_fd);
	c->iter_fd = -1;
	if (c->link_fd >= 0)
		close(c->link_fd);
	c->link_fd = -1;
	c->in.len = 0;
	c->in_pos = 0;
}

static int open_iter(struct dcp_collection_bpf *c, uint32_t tgid)
{
	LIBBPF_OPTS(bpf_link_create_opts, o);
	union bpf_iter_link_info li;
	int prog, ret;

	prog = c->phase == PHASE_EXE   ? c->progs.exe :
	       c->phase == PHASE_TASKS ? c->progs.task :
					 c->progs.vma;
	memset(&li, 0, sizeof(li));
	if (tgid) {
		li.task.pid = tgid; /* the threads (vmas) of one process */
		o.iter_info = &li;
		o.iter_info_len = sizeof(li);
	}
	c->link_fd = bpf_link_create(prog, 0, BPF_TRACE_ITER, &o);
	if (c->link_fd < 0) {
		ret = -errno;
		c->link_fd = -1;
		if (tgid && (ret == -ESRCH || ret == -ENOENT))
			return GONE;
		return dcp_error(ret, "cannot attach the BPF task iterator: %s",
				 strerror(-ret));
	}
	c->iter_fd = bpf_iter_create(c->link_fd);
	if (c->iter_fd < 0) {
		ret = c->iter_fd;
		c->iter_fd = -1;
		if (tgid && (ret == -ESRCH || ret == -ENOENT))
			return GONE;
		return dcp_error(ret, "cannot create the BPF task iterator: %s",
				 strerror(-ret));
	}
	c->target_seen = 0;
	return 0;
}

/*
 * The walk is a sequence of iterators: for the whole system, the exe walk
 * and the tasks walk (tasks kind) or the maps walk; for a pid list, the
 * same for each listed process in turn. Step to the next one; -errno when
 * a listed process still there had no task in the walk (a kernel may
 * hide a process from its iterators, as one VM's kernel hides its init).
 */
static int advance(struct dcp_collection_bpf *c)
{
	bool listed = c->targets != NULL;

	if (listed && c->phase != PHASE_EXE && !c->target_seen) {
		uint32_t pid = c->targets[c->next_target];

		if (dcp_iter_process_gone(pid))
			c->stats.tasks_vanished++; /* no longer there */
		else if (c->kind == DCP_COLLECTION_TASKS)
			return dcp_error(EPERM,
					 "process %" PRIu32
					 " exists, but the kernel's task "
					 "iterator does not show it",
					 pid);
	}
	if (c->phase == PHASE_EXE) {
		c->phase = PHASE_TASKS;
		return 0;
	}
	if (!listed || ++c->next_target == c->nr_targets)
		c->phase = PHASE_DONE;
	else if (c->kind == DCP_COLLECTION_TASKS)
		c->phase = PHASE_EXE;
	return 0;
}

/* Open the walk's next iterator: 1, 0 at the end, or -errno. */
static int next_iter(struct dcp_collection_bpf *c)
{
	int ret;

	for (;;) {
		if (c->iter_fd >= 0) {
			close_iter(c);
			ret = dcp_iter_flush_process(c);
			if (ret < 0)
				return ret;
			ret = advance(c);
			if (ret < 0)
				return ret;
		}
		if (c->targets && c->next_target == c->nr_targets)
			c->phase = PHASE_DONE;
		if (c->phase == PHASE_DONE)
			return 0;
		if (c->phase == PHASE_EXE) {
			c->exe.len = 0;
			c->nr_exes = 0;
			c->last_exe_tgid = 0;
		}
		ret = open_iter(c, c->targets ? c->targets[c->next_target] : 0);
		if (ret == GONE) {
			/* skip the listed process: counted once */
			c->stats.tasks_vanished++;
			c->phase = c->kind == DCP_COLLECTION_TASKS ?
					   PHASE_TASKS :
					   PHASE_MAPS;
			c->target_seen = 1;
			ret = advance(c);
			if (ret < 0)
				return ret;
			continue;
		}
		return ret < 0 ? ret : 1;
	}
}

/* Read the iterator once (size bytes at most) and convert what is whole. */
static int fill(struct dcp_collection_bpf *c, size_t size)
{
	ssize_t n;
	int ret;

	if (c->iter_fd < 0) {
		ret = next_iter(c);
		if (ret <= 0)
			return ret;
	}
	if (c->in_pos) {
		memmove(c->in.p, c->in.p + c->in_pos, c->in.len - c->in_pos);
		c->in.len -= c->in_pos;
		c->in_pos = 0;
	}
	ret = dcp_coll_buf_reserve(&c->in, size);
	if (ret < 0)
		return ret;
	do
		n = read(c->iter_fd, c->in.p + c->in.len, size);
	while (n < 0 && errno == EINTR);
	c->kernel_reads++;
	if (n < 0)
		return dcp_error(errno, "cannot read the BPF task iterator: %s",
				 strerror(errno));
	if (n == 0) {
		if (c->in.len)
			return dcp_error(EINVAL, "the BPF task iterator ended "
						 "in the middle of a record");
		ret = next_iter(c);
		return ret < 0 ? ret : 1;
	}
	c->in.len += (size_t)n;
	while (c->in.len - c->in_pos >= sizeof(struct dcp_iter_hdr)) {
		const struct dcp_iter_hdr *h =
			(const void *)(c->in.p + c->in_pos);

		if (h->size < sizeof(*h) || h->size % 8)
			return dcp_error(EINVAL, "malformed record from the "
						 "BPF task iterator");
		if (h->size > c->in.len - c->in_pos)
			break;
		ret = dcp_iter_convert(c, h);
		if (ret < 0)
			return ret;
		c->in_pos += h->size;
	}
	return 1;
}

/* The kernel walk's refill, read with the caller's buffer size. */
static int bpf_refill(void *ctx, size_t size)
{
	struct dcp_collection_bpf *c = ctx;
	int ret;

	if (c->phase == PHASE_DONE)
		return 0;
	ret = fill(c, size);
	if (ret < 0) {
		c->phase = PHASE_DONE;
		close_iter(c);
	}
	return ret;
}

DCPROF_API ssize_t dcp_collection_bpf_read(struct dcp_collection_bpf *c,
					   void *buf, size_t size,
					   size_t *needed)
{
	if (!c)
		return dcp_error(EINVAL, "collection read: no buffer");
	return dcp_coll_queue_read(&c->q, &c->stats, buf, size, needed,
				   bpf_refill, c);
}

/* ---- opening ------------------------------------------------------------ */

/* The gate area ([vsyscall]) every process shows in its maps. */
static void find_vsyscall(struct dcp_collection_bpf *c)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perms[5];

		if (!strstr(line, "[vsyscall]") ||
		    sscanf(line, "%llx-%llx %4s", &s, &e, perms) != 3 ||
		    perms[2] != 'x')
			continue;
		c->vsyscall = true;
		c->vsys_start = s;
		c->vsys_end = e;
		c->vsys_prot = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
			       (perms[1] == 'w' ? PROT_WRITE : 0);
	}
	fclose(f);
}

/* The thread group of a listed pid (a tid is accepted). */
static int resolve_target(pid_t pid, uint32_t *tgid)
{
	char path[48], line[256];
	FILE *f;
	int ret = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return dcp_error(ESRCH, "no process with pid %d", (int)pid);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			*tgid = (uint32_t)strtoul(line + 5, NULL, 10);
			ret = *tgid ? 0 : -ESRCH;
			break;
		}
	fclose(f);
	if (ret < 0)
		return dcp_error(ESRCH, "no process with pid %d", (int)pid);
	return 0;
}

static int load(struct dcp_collection_bpf *c)
{
	int ret;

	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return dcp_error(ENOTSUP,
				 "the BPF collection cannot load: the kernel "
				 "has no BTF (/sys/kernel/btf/vmlinux)");
	libbpf_set_print(dcp_libbpf_log);
	c->skel = task_iter_bpf__open();
	if (!c->skel) {
		ret = -errno;
		goto fail;
	}
	ret = task_iter_bpf__load(c->skel);
	if (ret == 0) {
		c->progs.exe = bpf_program__fd(c->skel->progs.dcp_iter_exe);
		c->progs.task = bpf_program__fd(c->skel->progs.dcp_iter_task);
		c->progs.vma = bpf_program__fd(c->skel->progs.dcp_iter_vma);
		return 0;
	}
fail:
	if (ret == -EPERM || ret == -EACCES)
		return dcp_error(
			EPERM,
			"the BPF collection cannot load its task iterators: "
			"%s (it needs root, or CAP_BPF, CAP_PERFMON and "
			"CAP_SYS_ADMIN)",
			strerror(-ret));
	return dcp_error(
		ret ? ret : EINVAL,
		"the BPF collection cannot load its task iterators: %s",
		strerror(ret ? -ret : EINVAL));
}

static struct dcp_collection_bpf *
open_collection(enum dcp_collection_kind kind,
		const struct dcp_collection_opts *o,
		const struct dcp_iter_programs *progs)
{
	struct dcp_collection_opts opts = { 0 };
	struct dcp_collection_bpf *c;
	int ret;

	ret = dcp_coll_opts_copy(kind, o, &opts);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return dcp_error_null(ENOMEM, "out of memory");
	c->kind = kind;
	c->iter_fd = -1;
	c->link_fd = -1;
	c->phase = kind == DCP_COLLECTION_TASKS ? PHASE_EXE : PHASE_MAPS;
	c->only_marked = opts.only_marked;
	c->cookies = opts.cookies;
	/* time and start times exactly as the /proc walk has them */
	dcp_coll_clock_init(&c->clk_tck, &c->time, &c->boot_minus_mono);
	c->link_buf = malloc(PATH_MAX);
	if (!c->link_buf) {
		ret = dcp_error(ENOMEM, "out of memory");
		goto fail;
	}
	if (c->only_marked && !c->cookies) {
		c->cookies = dcp_cookie_table_new();
		if (!c->cookies) {
			ret = -errno;
			goto fail;
		}
		c->own_cookies = true;
	}
	if (opts.pids) {
		c->targets = calloc(opts.nr_pids ? opts.nr_pids : 1,
				    sizeof(*c->targets));
		if (!c->targets) {
			ret = dcp_error(ENOMEM, "out of memory");
			goto fail;
		}
		for (size_t i = 0; i < opts.nr_pids; i++) {
			uint32_t tgid;
			bool dup = false;

			if (opts.pids[i] <= 0) {
				ret = dcp_error(EINVAL, "invalid pid %d",
						(int)opts.pids[i]);
				goto fail;
			}
			ret = resolve_target(opts.pids[i], &tgid);
			if (ret < 0)
				goto fail;
			for (size_t j = 0; j < c->nr_targets && !dup; j++)
				dup = c->targets[j] == tgid;
			if (!dup)
				c->targets[c->nr_targets++] = tgid;
		}
	}
	find_vsyscall(c);
	if (progs)
		c->progs = *progs;
	else if ((ret = load(c)) < 0)
		goto fail;
	return c;
fail:
	dcp_collection_bpf_close(c);
	errno = -ret;
	return NULL;
}

DCPROF_API struct dcp_collection_bpf *
dcp_collection_bpf_open(enum dcp_collection_kind kind,
			const struct dcp_collection_opts *opts)
{
	return open_collection(kind, opts, NULL);
}

struct dcp_collection_bpf *
dcp_collection_bpf_open_programs(enum dcp_collection_kind kind,
				 const struct dcp_collection_opts *opts,
				 const struct dcp_iter_programs *progs)
{
	return open_collection(kind, opts, progs);
}

DCPROF_API const struct dcp_collection_stats *
dcp_collection_bpf_get_stats(const struct dcp_collection_bpf *c)
{
	return &c->stats;
}

DCPROF_API void dcp_collection_bpf_close(struct dcp_collection_bpf *c)
{
	if (!c)
		return;
	if (c->kernel_reads)
		dcp_log(DCP_LOG_DEBUG,
			"BPF collection: %" PRIu64 " reads of the kernel's "
			"iterators for %" PRIu64 " reads",
			c->kernel_reads, c->stats.reads);
	close_iter(c);
	task_iter_bpf__destroy(c->skel);
	if (c->own_cookies)
		dcp_cookie_table_free(c->cookies);
	free(c->targets);
	free(c->in.p);
	dcp_coll_queue_free(&c->q);
	free(c->pend.p);
	free(c->exe.p);
	free(c->exes);
	dcp_ident_cache_free(&c->idents);
	free(c->link_buf);
	free(c);
}

#endif /* DCPROF_NO_BPF */
