// SPDX-License-Identifier: MIT
/*
 * The collection through the kernel: the records of the task iterators
 * (iter_record.h) turned into the perf-layout FORK/COMM/MMAP2 records the
 * /proc walk (lib/core/collect*.c) writes, byte for byte: start times as
 * /proc's stat has them, whole paths and build ids through
 * /proc/PID/map_files (bpf_d_path() refuses the iterator's vma), the
 * kernel's s_dev split into major and minor, the regions named as
 * /proc/PID/maps names them. A process's mappings are gathered before they
 * are handed over: when it exits before its files are looked up, all of
 * them are dropped and it counts as vanished, as in the /proc walk.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "cookie_internal.h"
#include "iter_internal.h"
#include "log_internal.h"
#include "records_internal.h"

/* The task's start as the /proc walk computes it from stat's field 22. */
static uint64_t start_ns(const struct dcp_collection_bpf *c, uint64_t boot_ns)
{
	uint64_t tick = 1000000000ull / (uint64_t)c->clk_tck;
	uint64_t boot = boot_ns / tick * tick;

	return boot > c->boot_minus_mono ? boot - c->boot_minus_mono : 0;
}

/* Append a zeroed injected record of size bytes to b. */
static void *record_new(struct dcp_collection_bpf *c, struct dcp_coll_buf *b,
			uint32_t type, uint16_t misc, size_t size, uint32_t pid,
			uint32_t tid)
{
	return dcp_coll_buf_record(b, c->time, type, misc, size, pid, tid);
}

static int append(struct dcp_coll_buf *dst, const void *p, size_t n)
{
	int ret = dcp_coll_buf_reserve(dst, n);

	if (ret < 0)
		return ret;
	memcpy(dst->p + dst->len, p, n);
	dst->len += n;
	return 0;
}

/* ---- file identities ---------------------------------------------------- */

bool dcp_iter_process_gone(uint32_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%" PRIu32, pid);
	return access(path, F_OK) < 0 && errno == ENOENT;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

struct open_vma_ctx {
	const char *map_files, *path;
	uint32_t maj, min;
	uint64_t ino;
};

/* The mapped file through map_files, else by path when it is still it. */
static int open_vma_file(void *ctx)
{
	struct open_vma_ctx *o = ctx;
	int fd = open(o->map_files, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 || o->path[0] != '/' || ends_with(o->path, " (deleted)"))
		return fd;
	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !dcp_ident_fd_is(fd, o->maj, o->min, o->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * The identity of the file a vma record maps: build id, else device,
 * inode and generation, as the /proc walk reads them. The kernel's s_dev
 * is major << 20 | minor.
 */
static int file_ident(struct dcp_collection_bpf *c, const char *map_files,
		      const struct dcp_iter_vma *v, const char *path,
		      const struct dcp_file_id **out)
{
	struct open_vma_ctx o = { map_files, path, v->dev >> 20,
				  v->dev & 0xfffff, v->ino };

	return dcp_ident_cache_get(&c->idents, o.maj, o.min, o.ino,
				   open_vma_file, &o, out);
}

/* ---- records ------------------------------------------------------------ */

static int emit_mmap2(struct dcp_collection_bpf *c, struct dcp_coll_buf *b,
		      uint32_t pid, uint64_t start, uint64_t end,
		      uint64_t pgoff, uint32_t prot, uint32_t flags,
		      const struct dcp_file_id *id, const char *name)
{
	struct dcp_mmap2_record *m;
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (id && id->build_id_size)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	m = record_new(c, b, PERF_RECORD_MMAP2, misc,
		       sizeof(*m) + dcp_coll_str_space(name) +
			       sizeof(struct dcp_sample_id),
		       pid, pid);
	if (!m)
		return -ENOMEM;
	m->pid = pid;
	m->tid = pid;
	m->addr = start;
	m->len = end - start;
	m->pgoff = pgoff;
	if (id && id->build_id_size) {
		m->build_id_size = id->build_id_size;
		memcpy(m->build_id, id->build_id, id->build_id_size);
	} else if (id) {
		m->maj = id->dev_major;
		m->min = id->dev_minor;
		m->ino = id->ino;
		m->ino_generation = id->ino_generation;
	}
	m->prot = prot;
	m->flags = flags;
	strcpy(m->filename, name);
	return 0;
}

/*
 * One vma record into b as MMAP2 (skipped when marks apply and its file is
 * not marked). Returns 0, or GONE when the process exited before its file
 * could be looked up, or a negative errno.
 */
static int convert_vma(struct dcp_collection_bpf *c, struct dcp_coll_buf *b,
		       const struct dcp_iter_vma *v, const char *dname,
		       bool marks)
{
	const struct dcp_file_id *id = NULL;
	uint32_t prot = PROT_EXEC, flags;
	char map_files[80];
	const char *name;
	ssize_t n;
	int ret;

	if (v->vm_flags & VM_READ)
		prot |= PROT_READ;
	if (v->vm_flags & VM_WRITE)
		prot |= PROT_WRITE;
	flags = v->vm_flags & VM_MAYSHARE ? MAP_SHARED : MAP_PRIVATE;
	switch (v->region) {
	case DCP_ITER_REGION_FILE:
		break;
	case DCP_ITER_REGION_VDSO:
		return emit_mmap2(c, b, v->tgid, v->start, v->end, v->pgoff,
				  prot, flags, NULL, "[vdso]");
	case DCP_ITER_REGION_HEAP:
		return emit_mmap2(c, b, v->tgid, v->start, v->end, v->pgoff,
				  prot, flags, NULL, "[heap]");
	case DCP_ITER_REGION_STACK:
		return emit_mmap2(c, b, v->tgid, v->start, v->end, v->pgoff,
				  prot, flags, NULL, "[stack]");
	default:
		return emit_mmap2(c, b, v->tgid, v->start, v->end, v->pgoff,
				  prot, flags, NULL, "//anon");
	}
	/* the whole path: what /proc/PID/maps shows, from the same d_path */
	snprintf(map_files, sizeof(map_files),
		 "/proc/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, v->tgid,
		 (uint64_t)v->start, (uint64_t)v->end);
	n = readlink(map_files, c->link_buf, PATH_MAX - 1);
	if (n > 0) {
		c->link_buf[n] = 0;
		name = c->link_buf;
	} else {
		if (dcp_iter_process_gone(v->tgid))
			return GONE;
		/* unmapped since the kernel walked it: the name we have */
		name = dname[0] ? dname : "//anon";
	}
	if (dcp_record_region(name) == DCP_COOKIE_KIND_FILE) {
		ret = file_ident(c, map_files, v, name, &id);
		if (ret < 0)
			return ret;
		if (marks && c->only_marked &&
		    !dcp_cookie_table_id_is_marked(c->cookies, id)) {
			c->stats.maps_skipped_unmarked++;
			return 0;
		}
	}
	return emit_mmap2(c, b, v->tgid, v->start, v->end, v->pgoff, prot,
			  flags, id, name);
}

int dcp_iter_flush_process(struct dcp_collection_bpf *c)
{
	int ret = 0;

	if (!c->pend_tgid)
		return 0;
	if (c->pend_gone) {
		c->stats.tasks_vanished++;
	} else {
		if (c->vsyscall)
			ret = emit_mmap2(c, &c->pend, c->pend_tgid,
					 c->vsys_start, c->vsys_end, 0,
					 c->vsys_prot, MAP_PRIVATE, NULL,
					 "[vsyscall]");
		if (ret == 0)
			ret = append(&c->q.out, c->pend.p, c->pend.len);
	}
	c->pend.len = 0;
	c->pend_tgid = 0;
	c->pend_gone = false;
	return ret;
}

static const struct exe_entry *find_exe(const struct dcp_collection_bpf *c,
					uint32_t tgid)
{
	size_t lo = 0, hi = c->nr_exes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->exes[mid].tgid == tgid)
			return &c->exes[mid];
		if (c->exes[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int exe_record(struct dcp_collection_bpf *c,
		      const struct dcp_iter_vma *v, const char *dname)
{
	struct exe_entry *e;
	size_t off = c->exe.len;
	int ret;

	/* the first executable mapping of the main executable only */
	if (v->tgid == c->last_exe_tgid)
		return 0;
	c->last_exe_tgid = v->tgid;
	/* as the /proc walk: the executable's map whether marked or not */
	ret = convert_vma(c, &c->exe, v, dname, false);
	if (ret == GONE)
		return 0; /* the tasks walk will not see it either */
	if (ret < 0 || c->exe.len == off)
		return ret;
	if (c->nr_exes == c->exes_cap) {
		size_t cap = c->exes_cap ? c->exes_cap * 2 : 256;

		e = realloc(c->exes, cap * sizeof(*e));
		if (!e)
			return dcp_error(ENOMEM, "out of memory");
		c->exes = e;
		c->exes_cap = cap;
	}
	/* the walk goes by increasing pid: the array stays sorted */
	c->exes[c->nr_exes].tgid = v->tgid;
	c->exes[c->nr_exes].off = off;
	c->nr_exes++;
	return 0;
}

static int task_records(struct dcp_collection_bpf *c,
			const struct dcp_iter_task *t)
{
	struct dcp_task_record *f;
	struct dcp_comm_record *r;
	const struct exe_entry *e;
	uint32_t ppid = t->tid == t->tgid ? t->ppid : t->tgid;
	char comm[COMM_MAX];

	memcpy(comm, t->comm, sizeof(comm));
	comm[COMM_MAX - 1] = 0;
	f = record_new(c, &c->q.out, PERF_RECORD_FORK, 0,
		       sizeof(*f) + sizeof(struct dcp_sample_id), t->tgid,
		       t->tid);
	if (!f)
		return -ENOMEM;
	f->pid = t->tgid;
	f->ppid = ppid;
	f->tid = t->tid;
	f->ptid = ppid;
	f->time = start_ns(c, t->start_boottime);
	r = record_new(c, &c->q.out, PERF_RECORD_COMM, 0,
		       sizeof(*r) + dcp_coll_str_space(comm) +
			       sizeof(struct dcp_sample_id),
		       t->tgid, t->tid);
	if (!r)
		return -ENOMEM;
	r->pid = t->tgid;
	r->tid = t->tid;
	strcpy(r->comm, comm);
	if (t->tid != t->tgid || !(e = find_exe(c, t->tgid)))
		return 0;
	return append(
		&c->q.out, c->exe.p + e->off,
		((const struct perf_event_header *)(c->exe.p + e->off))->size);
}

int dcp_iter_convert(struct dcp_collection_bpf *c, const struct dcp_iter_hdr *h)
{
	const struct dcp_iter_vma *v = (const void *)h;
	char dname[DCP_ITER_NAME_MAX];
	int ret;

	c->target_seen++;
	if (h->kind == DCP_ITER_TASK) {
		if (h->size < sizeof(struct dcp_iter_task))
			goto bad;
		return task_records(c, (const void *)h);
	}
	if (h->kind != DCP_ITER_VMA || h->size < sizeof(*v) ||
	    v->path_len > h->size - sizeof(*v) ||
	    v->path_len > DCP_ITER_NAME_MAX)
		goto bad;
	memcpy(dname, v + 1, v->path_len);
	dname[v->path_len ? v->path_len - 1 : 0] = 0;
	if (c->phase == PHASE_EXE)
		return exe_record(c, v, dname);
	if (v->tgid != c->pend_tgid) {
		ret = dcp_iter_flush_process(c);
		if (ret < 0)
			return ret;
		c->pend_tgid = v->tgid;
	}
	if (c->pend_gone)
		return 0;
	ret = convert_vma(c, &c->pend, v, dname, true);
	if (ret == GONE) {
		c->pend_gone = true;
		return 0;
	}
	return ret;
bad:
	return dcp_error(EINVAL,
			 "malformed record of %u bytes from the BPF "
			 "task iterator",
			 (unsigned)h->size);
}

#endif /* DCPROF_NO_BPF */
