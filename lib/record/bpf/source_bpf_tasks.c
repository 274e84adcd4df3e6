// SPDX-License-Identifier: MIT
/*
 * The BPF record source's task side (see source_bpf_internal.h): fork,
 * exec and exit from the BPF ring buffer replayed as perf's records (exits
 * after the next count drain), the program of each exec named and pinned
 * and its maps read at once, maps read from /proc when a frame needs them,
 * files pinned through /proc/PID/map_files, JIT code named from perf-map
 * files, as the ring backend does.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collect_internal.h"
#include "log_internal.h"
#include "records_internal.h"
#include "recorder.lskel.h"
#include "source_bpf_internal.h"

static int read_maps(struct bpf_source *bs, struct dcp_process *p);

/* ---- task events into perf's records ------------------------------------ */

static void fill_trailer(struct dcp_sample_id *sid, uint32_t pid, uint32_t tid,
			 uint64_t time)
{
	memset(sid, 0, sizeof(*sid));
	sid->pid = pid;
	sid->tid = tid;
	sid->time = time;
}

static int take_task(struct bpf_source *bs, uint32_t type,
		     const struct dcp_bpf_event *e)
{
	struct {
		struct dcp_task_record t;
		struct dcp_sample_id sid;
	} rec;

	memset(&rec, 0, sizeof(rec));
	rec.t.header.type = type;
	rec.t.header.size = sizeof(rec);
	rec.t.pid = e->pid;
	rec.t.ppid = e->ppid;
	rec.t.tid = e->tid;
	rec.t.ptid = e->ptid;
	rec.t.time = e->time;
	fill_trailer(&rec.sid, e->pid, e->tid, e->time);
	if (type == PERF_RECORD_EXIT) {
		struct dcp_task_record *x = bs->exits;

		if (bs->nr_exits == bs->cap_exits) {
			size_t cap = bs->cap_exits ? 2 * bs->cap_exits : 64;

			x = realloc(bs->exits, cap * sizeof(*x));
			if (!x)
				return dcp_error(ENOMEM, "out of memory");
			bs->exits = x;
			bs->cap_exits = cap;
		}
		bs->exits[bs->nr_exits++] = rec.t;
		return 0;
	}
	return dcp_recorder_take_record(bs->r, e->time, &rec.t.header,
					sizeof(rec));
}

int dcp_bpf_probe_python(struct bpf_source *bs, uint32_t pid, size_t nr_maps)
{
	struct dcp_bpf_py_proc py;
	int ret;

	if (!bs->python || !pid)
		return 0;
	ret = dcp_python_probe(bs->python, pid, nr_maps, &py);
	if (ret <= 0)
		return ret;
	if (bpf_map_update_elem(bs->skel->maps.py_procs.map_fd, &pid, &py,
				BPF_ANY))
		dcp_log(DCP_LOG_INFO,
			"cannot walk the Python frames of process %" PRIu32
			": %s",
			pid, strerror(errno));
	return 0;
}

static void forget_maps(struct bpf_source *bs, uint32_t pid)
{
	/* a Python process gone, or running another program */
	if (dcp_python_forget(bs->python, pid) == 1)
		bpf_map_delete_elem(bs->skel->maps.py_procs.map_fd, &pid);
	if (bs->maps_tried[pid % MAPS_TRIED] == pid)
		bs->maps_tried[pid % MAPS_TRIED] = 0;
	if (bs->maps_read[pid % MAPS_TRIED] == pid)
		bs->maps_read[pid % MAPS_TRIED] = 0;
}

/* Before an exec empties its process's maps: kept for earlier samples. */
static void keep_pre_exec(struct bpf_source *bs, const struct dcp_bpf_event *e)
{
	struct dcp_process *p =
		dcp_process_table_find(bs->r->procs, (pid_t)e->pid);
	struct pre_exec *x = &bs->pre_exec[e->pid % PRE_EXEC_SLOTS];
	struct dcp_map *maps;

	if (!p || !p->nr_maps || !e->exec_id || (bs->r->targeted && !p->target))
		return;
	maps = malloc(p->nr_maps * sizeof(*maps));
	if (!maps)
		return; /* its earlier samples stay unattributed, counted */
	memcpy(maps, p->maps, p->nr_maps * sizeof(*maps));
	free(x->maps);
	x->maps = maps;
	x->nr_maps = p->nr_maps;
	x->pid = e->pid;
	x->exec_id = e->exec_id;
	x->drain_gen = bs->drain_gen;
	memcpy(x->comm, p->comm, sizeof(x->comm));
}

bool dcp_bpf_pre_exec_view(struct bpf_source *bs, const struct dcp_process *p,
			   uint32_t exec_id, struct dcp_process *view)
{
	const struct pre_exec *x =
		&bs->pre_exec[(uint32_t)p->pid % PRE_EXEC_SLOTS];

	/* exec ids only grow: an older one was sampled before the exec */
	if (!x->maps || x->pid != (uint32_t)p->pid ||
	    (exec_id && (int32_t)(exec_id - x->exec_id) >= 0))
		return false;
	*view = *p;
	view->maps = x->maps;
	view->nr_maps = view->cap_maps = x->nr_maps;
	memcpy(view->comm, x->comm, sizeof(view->comm));
	return true;
}

void dcp_bpf_pre_exec_expire(struct bpf_source *bs, bool all)
{
	for (size_t i = 0; i < PRE_EXEC_SLOTS; i++) {
		struct pre_exec *x = &bs->pre_exec[i];

		if (x->maps && (all || bs->drain_gen - x->drain_gen > 2)) {
			free(x->maps);
			x->maps = NULL;
		}
	}
}

/* A second descriptor of an open file, for the identity cache to hold. */
static int dup_exe(void *ctx)
{
	int fd = fcntl(*(const int *)ctx, F_DUPFD_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

/* The kernel need not wake us for this program's next exec. */
static void note_known_exec(struct bpf_source *bs,
			    const struct dcp_bpf_event *e)
{
	struct dcp_bpf_file_key k = { .ino = e->ino, .dev = e->dev };
	uint8_t one = 1;

	/* a full map only means wake-ups, as before */
	if (e->ino)
		bpf_map_update_elem(bs->skel->maps.known_execs.map_fd, &k, &one,
				    BPF_ANY);
}

/*
 * A path as the kernel prints a mapped file's (readlink of /proc/PID/exe
 * or map_files), " (deleted)" taken off when the file open as fd has no
 * name left: a file whose name really ends so keeps it.
 */
static void drop_deleted_mark(char *path, size_t len, int fd)
{
	struct stat st;

	if (len > 10 && !strcmp(path + len - 10, " (deleted)") && fd >= 0 &&
	    !fstat(fd, &st) && st.st_nlink == 0)
		path[len - 10] = 0;
}

/*
 * The program a process just executed, named and pinned from the path the
 * kernel saw, so that a process gone before the next drain still has its
 * binary named (its frames carry the build id).
 */
static int pin_exec(struct bpf_source *bs, const struct dcp_bpf_event *e,
		    const char *given)
{
	char exe[64], path[DCP_BPF_PATH_LEN + 16];
	const struct dcp_file_id *id;
	uint32_t pid = e->pid;
	struct stat st;
	int64_t cookie;
	ssize_t len;
	int fd, ret;

	/* a program run again, held by the identity cache (the kernel's
	 * event names its file): known and pinned already, with nothing to
	 * open; the /proc opens below were a quarter of the recorder's CPU
	 * with 20 execs a second */
	id = e->ino ? dcp_ident_cache_find(&bs->idents, e->dev >> 20,
					   e->dev & 0xfffff, e->ino) :
		      NULL;
	cookie = id && id->build_id_size ?
			 dcp_cookie_table_find_file(bs->r->cookies, id) :
			 -1;
	if (cookie > 0 &&
	    dcp_cookie_table_pin_tried(bs->r->cookies, (uint32_t)cookie)) {
		note_known_exec(bs, e); /* pinned by the walk, or a mapping */
		return 0;
	}
	/* the process's own executable: a relative or /proc/self path in the
	 * event would name another file here */
	snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	len = readlink(exe, path, sizeof(path) - 1);
	if (fd < 0 && given[0] == '/')
		fd = open(given, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (len > 0) {
		path[len] = 0;
		drop_deleted_mark(path, (size_t)len, fd);
	} else {
		snprintf(path, sizeof(path), "%s", given);
	}
	/* a program run again is known by (device, inode): its build id is
	 * read once while the identity cache holds it */
	if (fstat(fd, &st) < 0) {
		close(fd);
		return 0;
	}
	ret = dcp_ident_cache_get(&bs->idents, major(st.st_dev),
				  minor(st.st_dev), st.st_ino, dup_exe, &fd,
				  &id);
	if (ret < 0 || !id->build_id_size || !path[0]) {
		close(fd); /* without a build id, frames name it by address */
		return ret < 0 ? ret : 0;
	}
	cookie = dcp_recorder_file_cookie(bs->r, id, path);
	if (cookie < 0) {
		close(fd);
		return (int)cookie;
	}
	dcp_bpf_name_file(bs,
			  (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev)),
			  st.st_ino, cookie);
	if (dcp_cookie_table_pin_tried(bs->r->cookies, (uint32_t)cookie)) {
		close(fd);
		return 0;
	}
	dcp_cookie_table_set_pin_tried(bs->r->cookies, (uint32_t)cookie);
	/* the cookie table owns fd from here, failure or not */
	if (dcp_cookie_table_pin(bs->r->cookies, (uint32_t)cookie, fd) == 0)
		bs->r->stats.files_pinned++;
	/* the file the kernel named (not another the path now leads to) is
	 * held by (device, inode): the next exec takes the fast path */
	if (st.st_ino == e->ino && major(st.st_dev) == e->dev >> 20 &&
	    minor(st.st_dev) == (e->dev & 0xfffff))
		note_known_exec(bs, e);
	return 0;
}

static int take_exec(struct bpf_source *bs, const struct dcp_bpf_event *e)
{
	/* COMM (exec): header, pid, tid, the name padded to 8, trailer */
	union {
		struct dcp_comm_record c;
		unsigned char bytes[sizeof(struct dcp_comm_record) +
				    DCP_BPF_COMM_LEN +
				    sizeof(struct dcp_sample_id)];
		uint64_t align;
	} rec;
	const size_t comm_at = sizeof(struct dcp_comm_record);
	struct dcp_sample_id sid;
	int ret;

	memset(&rec, 0, sizeof(rec));
	rec.c.header.type = PERF_RECORD_COMM;
	rec.c.header.misc = PERF_RECORD_MISC_COMM_EXEC;
	rec.c.header.size = sizeof(rec.bytes);
	rec.c.pid = e->pid;
	rec.c.tid = e->tid;
	memcpy(rec.bytes + comm_at, e->comm, DCP_BPF_COMM_LEN - 1);
	fill_trailer(&sid, e->pid, e->tid, e->time);
	memcpy(rec.bytes + comm_at + DCP_BPF_COMM_LEN, &sid, sizeof(sid));
	forget_maps(bs, e->pid);
	keep_pre_exec(bs, e);
	ret = dcp_recorder_take_record(bs->r, e->time, &rec.c.header,
				       sizeof(rec.bytes));
	if (!ret) {
		char path[DCP_BPF_PATH_LEN];

		memcpy(path, e->path, sizeof(path));
		path[sizeof(path) - 1] = 0;
		ret = pin_exec(bs, e, path);
		/* an interpreter's Python frames from its first samples on */
		if (!ret && dcp_python_interpreter_name(path))
			ret = dcp_bpf_probe_python(bs, e->pid, SIZE_MAX);
	}
	/*
	 * The new program's maps: the kernel sends its own mappings (the
	 * program, its loader) right after this event; without mapping
	 * events, read now from /proc, so that its frames are named even if
	 * it has exited by the next drain.
	 */
	if (!ret && !bs->mapping_events) {
		struct dcp_process *p =
			dcp_process_table_find(bs->r->procs, (pid_t)e->pid);

		if (p && (!bs->r->targeted || p->target))
			ret = read_maps(bs, p);
	}
	return ret;
}

/* ---- executable mappings from the kernel -------------------------------- */

struct mapped {
	uint32_t pid;
	uint64_t start, end;
};

int dcp_bpf_open_mapping(uint32_t pid, uint64_t start, uint64_t end)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, start, end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int open_mapped_file(void *ctx)
{
	const struct mapped *m = ctx;

	return dcp_bpf_open_mapping(m->pid, m->start, m->end);
}

/* cookie's file held open through mapping m, once (the cookie table owns
 * the descriptor, and closes it on failure too). */
static void pin_mapped(struct bpf_source *bs, uint32_t cookie, struct mapped *m)
{
	struct dcp_recorder *r = bs->r;
	int fd;

	if (dcp_cookie_table_pin_tried(r->cookies, cookie))
		return;
	dcp_cookie_table_set_pin_tried(r->cookies, cookie);
	fd = open_mapped_file(m);
	if (fd >= 0 && dcp_cookie_table_pin(r->cookies, cookie, fd) == 0)
		r->stats.files_pinned++;
	else if (fd < 0)
		r->stats.files_unpinned++;
}

/* The path the cookie is known by, else the one the mapping shows. */
static bool mapped_path(struct bpf_source *bs, uint32_t cookie,
			const struct mapped *m, char *buf, size_t size)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	char link[96];
	ssize_t n;
	int fd;

	if (!dcp_cookie_table_lookup(bs->r->cookies, cookie, &info) &&
	    info.nr_paths && strlen(info.paths[0]) < size) {
		strcpy(buf, info.paths[0]);
		return true;
	}
	snprintf(link, sizeof(link), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 m->pid, m->start, m->end);
	n = readlink(link, buf, size - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	fd = open(link, O_RDONLY | O_CLOEXEC);
	drop_deleted_mark(buf, (size_t)n, fd);
	if (fd >= 0)
		close(fd);
	return buf[0] == '/';
}

void dcp_bpf_name_file(struct bpf_source *bs, uint32_t dev, uint64_t ino,
		       int64_t cookie)
{
	struct dcp_bpf_file_key k = { .ino = ino, .dev = dev }, next;
	int fd = bs->skel->maps.file_cookies.map_fd;
	uint32_t c = (uint32_t)cookie;

	if (!bs->unwind.on)
		return;
	if (bs->named_resets != bs->idents.resets) {
		struct dcp_bpf_file_key vdso = { .ino = DCP_BPF_VDSO_INO };

		while (!bpf_map_get_next_key(fd, NULL, &next))
			bpf_map_delete_elem(fd, &next);
		/* the vdso's name is no file's: it stays */
		bpf_map_update_elem(fd, &vdso, &bs->r->cookie_vdso, BPF_ANY);
		bs->named_resets = bs->idents.resets;
	}
	if (cookie <= 0 || cookie > DCP_BPF_NAMED_COOKIE_MAX ||
	    !dcp_ident_cache_find(&bs->idents, dev >> 20, dev & 0xfffff, ino))
		return;
	/* a full map: the file's frames stay addresses, named here */
	bpf_map_update_elem(fd, &k, &c, BPF_ANY);
}

struct forget_ctx {
	struct bpf_source *bs;
	const struct dcp_cookie_set *needed;
};

/* Whether the identity cache keeps holding the file of id; a file let go
 * is no longer named by the kernel, whose key (device, inode) another
 * file may take once nothing holds this one. */
static bool file_needed(const struct dcp_file_id *id, void *ctx)
{
	struct forget_ctx *f = ctx;
	struct bpf_source *bs = f->bs;
	int64_t cookie = dcp_cookie_table_find_file(bs->r->cookies, id);
	struct dcp_bpf_file_key k = {
		.ino = id->ino, .dev = id->dev_major << 20 | id->dev_minor
	};

	if (cookie > 0 && dcp_cookie_set_has(f->needed, (uint32_t)cookie))
		return true;
	if (bs->unwind.on)
		bpf_map_delete_elem(bs->skel->maps.file_cookies.map_fd, &k);
	return false;
}

size_t dcp_bpf_forget(struct dcp_source *s, const struct dcp_cookie_set *needed)
{
	struct bpf_source *bs = (struct bpf_source *)s;
	struct forget_ctx f = { bs, needed };

	return dcp_ident_cache_release(&bs->idents, file_needed, &f);
}

void dcp_bpf_need(struct dcp_source *s, struct dcp_cookie_set *needed)
{
	struct bpf_source *bs = (struct bpf_source *)s;

	if (bs->python)
		dcp_python_need(bs->python, needed);
}

void dcp_bpf_name_ranges(struct bpf_source *bs, uint32_t pid,
			 const struct dcp_bpf_ranges *rs)
{
	for (uint32_t i = 0; i < rs->nr && i < DCP_BPF_MAX_RANGES; i++) {
		const struct dcp_bpf_range *g = &rs->r[i];
		struct mapped m = { pid, g->start, g->end };
		const struct dcp_file_id *id;
		int64_t cookie;

		if (g->ino == DCP_BPF_VDSO_INO ||
		    dcp_ident_cache_get(&bs->idents, g->dev >> 20,
					g->dev & 0xfffff, g->ino,
					open_mapped_file, &m, &id) ||
		    !id->build_id_size)
			continue;
		/* the start-up walk's records made its cookie, with its path */
		cookie = dcp_cookie_table_find_file(bs->r->cookies, id);
		if (cookie <= 0)
			continue;
		/* pinned now: its named frames never read the maps that a
		 * pin would go through */
		pin_mapped(bs, (uint32_t)cookie, &m);
		dcp_bpf_name_file(bs, g->dev, g->ino, cookie);
	}
}

/*
 * An executable mapping the kernel reported: an MMAP2 record with the
 * file's build id, when the identity cache has it (held open: its inode is
 * that file) or the file can still be opened through the process. Else the
 * process's maps are read from /proc when a frame needs them, as before.
 * The vdso (no file) is an MMAP2 record of "[vdso]", as perf's.
 */
static int take_mmap(struct bpf_source *bs, const struct dcp_bpf_mmap_event *e)
{
	struct dcp_recorder *r = bs->r;
	struct mapped m = { e->pid, e->start, e->start + e->len };
	struct dcp_process *p = dcp_process_table_find(r->procs, (pid_t)e->pid);
	const struct dcp_file_id *id = NULL;
	bool vdso = e->type == DCP_BPF_EVENT_VDSO;
	union {
		struct dcp_mmap2_record m;
		_Alignas(
			8) unsigned char bytes[sizeof(struct dcp_mmap2_record) +
					       384 +
					       sizeof(struct dcp_sample_id)];
	} rec;
	char path[384];
	size_t name_space, size;
	int64_t cookie = 0;
	int ret;

	if (!vdso && !e->ino) {
		/* anonymous executable memory: maps read before it miss it
		 * (maps_complete()); read again when a frame needs them */
		if (bs->maps_read[e->pid % MAPS_TRIED] == e->pid)
			bs->maps_read[e->pid % MAPS_TRIED] = 0;
		return 0;
	}
	if (!vdso)
		dcp_bpf_unwind_want(bs, e->pid, e->start, e->start + e->len,
				    e->ino, e->dev);
	if (!p || (r->targeted && !p->target))
		return 0;
	if (vdso) {
		strcpy(path, "[vdso]");
	} else {
		ret = dcp_ident_cache_get(&bs->idents, e->dev >> 20,
					  e->dev & 0xfffff, e->ino,
					  open_mapped_file, &m, &id);
		if (ret)
			return ret;
		cookie = id->build_id_size ?
				 dcp_recorder_file_cookie(r, id, NULL) :
				 0;
		if (cookie < 0)
			return (int)cookie;
		dcp_bpf_name_file(bs, e->dev, e->ino, cookie);
		if (!cookie || !mapped_path(bs, (uint32_t)cookie, &m, path,
					    sizeof(path))) {
			/* named from /proc when a frame needs it: maps read
			 * before it no longer hold every executable mapping
			 * (maps_complete()), or its frames stay [unknown] */
			if (bs->maps_read[e->pid % MAPS_TRIED] == e->pid)
				bs->maps_read[e->pid % MAPS_TRIED] = 0;
			bs->mmaps_unnamed++;
			return 0;
		}
	}
	name_space = (strlen(path) + 8) & ~(size_t)7;
	size = sizeof(rec.m) + name_space + sizeof(struct dcp_sample_id);
	memset(&rec, 0, size);
	rec.m.header.type = PERF_RECORD_MMAP2;
	rec.m.header.misc = PERF_RECORD_MISC_USER;
	rec.m.header.size = (uint16_t)size;
	rec.m.pid = e->pid;
	rec.m.tid = e->tid;
	rec.m.addr = e->start;
	rec.m.len = e->len;
	rec.m.pgoff = vdso ? 0 : e->pgoff;
	if (id) {
		rec.m.header.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		rec.m.build_id_size = id->build_id_size;
		memcpy(rec.m.build_id, id->build_id, id->build_id_size);
	}
	rec.m.prot = PROT_EXEC | (e->flags & 1 ? PROT_READ : 0);
	rec.m.flags = e->flags & 8 ? MAP_SHARED : MAP_PRIVATE; /* VM_SHARED */
	strcpy(rec.m.filename, path);
	fill_trailer((struct dcp_sample_id *)(rec.bytes + size -
					      sizeof(struct dcp_sample_id)),
		     e->pid, e->tid, e->time);
	bs->mmaps_named++;
	if (cookie)
		pin_mapped(bs, (uint32_t)cookie, &m);
	return dcp_recorder_take_record(r, e->time, &rec.m.header, size);
}

int dcp_bpf_on_event(void *ctx, void *data, size_t size)
{
	struct bpf_source *bs = ctx;
	const struct dcp_bpf_event *e = data;

	bs->bytes_read += size;
	if (size >= sizeof(struct dcp_bpf_py_code_event) &&
	    e->type == DCP_BPF_EVENT_PY_CODE) {
		const struct dcp_bpf_py_code_event *c = data;

		return dcp_python_note_code(bs->python, c->pid, c->code);
	}
	if (size >= sizeof(struct dcp_bpf_mmap_event) &&
	    (e->type == DCP_BPF_EVENT_MMAP || e->type == DCP_BPF_EVENT_VDSO))
		return take_mmap(bs, data);
	if (size < DCP_BPF_TASK_EVENT_SIZE)
		return 0;
	switch (e->type) {
	case DCP_BPF_EVENT_FORK:
		return take_task(bs, PERF_RECORD_FORK, e);
	case DCP_BPF_EVENT_EXIT:
		return take_task(bs, PERF_RECORD_EXIT, e);
	case DCP_BPF_EVENT_EXEC:
		return size < sizeof(*e) ? 0 : take_exec(bs, e);
	}
	return 0;
}

int dcp_bpf_apply_exits(struct bpf_source *bs, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct {
			struct dcp_task_record t;
			struct dcp_sample_id sid;
		} rec;

		rec.t = bs->exits[i];
		fill_trailer(&rec.sid, rec.t.pid, rec.t.tid, rec.t.time);
		if (rec.t.tid == rec.t.pid)
			forget_maps(bs, rec.t.pid);
		ret = dcp_recorder_take_record(bs->r, rec.t.time, &rec.t.header,
					       sizeof(rec));
	}
	bs->nr_exits -= n;
	if (n && bs->nr_exits)
		memmove(bs->exits, bs->exits + n,
			bs->nr_exits * sizeof(*bs->exits));
	return ret;
}

/* ---- a process's maps, read from /proc when first needed ----------------- */

static int read_maps_now(struct bpf_source *bs, struct dcp_process *p);

static int read_maps(struct bpf_source *bs, struct dcp_process *p)
{
	if (bs->maps_tried[(uint32_t)p->pid % MAPS_TRIED] == (uint32_t)p->pid)
		return 0;
	bs->maps_tried[(uint32_t)p->pid % MAPS_TRIED] = (uint32_t)p->pid;
	if (p->nr_maps)
		return 0;
	return read_maps_now(bs, p);
}

static int read_maps_now(struct bpf_source *bs, struct dcp_process *p)
{
	struct dcp_collection_opts copts = {
		.sz = sizeof(copts),
		.pids = &p->pid,
		.nr_pids = 1,
		.cookies = bs->r->cookies,
	};
	struct dcp_collection *c;
	unsigned char buf[64 * 1024];
	ssize_t n;
	int ret = 0;

	c = dcp_collection_open(DCP_COLLECTION_MAPS, &copts);
	if (!c)
		return 0; /* gone: its frames keep what the kernel named */
	bs->maps_read[(uint32_t)p->pid % MAPS_TRIED] = (uint32_t)p->pid;
	dcp_collection_for_recorder(c, &bs->idents);
	while (!ret && (n = dcp_collection_read(c, buf, sizeof(buf), NULL)) > 0)
		for (ssize_t off = 0; off < n && !ret;) {
			const struct perf_event_header *h =
				(const void *)(buf + off);

			ret = dcp_recorder_take_record(bs->r, 0, h, h->size);
			off += h->size;
		}
	dcp_collection_close(c);
	return ret;
}

static void pin_map(struct bpf_source *bs, const struct dcp_process *p,
		    const struct dcp_map *map)
{
	struct dcp_recorder *r = bs->r;
	char path[96];
	int fd;

	dcp_cookie_table_set_pin_tried(r->cookies, map->cookie);
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 p->pid, map->start, map->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r->stats.files_unpinned++;
		return;
	}
	if (dcp_cookie_table_pin(r->cookies, map->cookie, fd) == 0)
		r->stats.files_pinned++;
}

static bool is_file_cookie(const struct dcp_recorder *r, uint32_t cookie)
{
	return cookie != DCP_COOKIE_UNKNOWN && cookie != r->cookie_anon &&
	       cookie != r->cookie_vdso && cookie != r->cookie_vsyscall;
}

/* A file first seen: pinned through a mapping of it in p, if p has one. */
int dcp_bpf_pin_cookie(struct bpf_source *bs, struct dcp_process *p,
		       uint32_t cookie)
{
	int ret = read_maps(bs, p);

	if (ret)
		return ret;
	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].cookie == cookie) {
			pin_map(bs, p, &p->maps[i]);
			break;
		}
	return 0;
}

/*
 * Whether an address in none of p's maps can be in none of its executable
 * mappings: read from /proc since its exec, every mapping of a file made
 * since then sent by the kernel (anonymous executable memory too, which
 * undoes the read), and no JIT code (which mprotect(2) can make executable
 * without an event: known from an anonymous executable map, or from a perf
 * map, whose code may have been mapped after the maps were read). Such an
 * address is a frame pointer chain's garbage, not worth a read.
 */
static bool maps_complete(struct bpf_source *bs, struct dcp_process *p)
{
	if (!bs->mapping_events ||
	    bs->kernel_counts[DCP_BPF_STAT_LOST_EVENTS] ||
	    bs->maps_read[(uint32_t)p->pid % MAPS_TRIED] != (uint32_t)p->pid)
		return false;
	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].cookie == bs->r->cookie_anon)
			return false;
	return !dcp_samples_jit_cookie(bs->r, p);
}

/*
 * An address the kernel could not name: looked up in p's maps. A leaf (the
 * address the task was interrupted at) was executable then, whatever
 * maps_complete() says: code made executable by mprotect(2) sends no event.
 */
int dcp_bpf_map_frame(struct bpf_source *bs, struct dcp_process *p,
		      uint64_t addr, bool leaf, struct dcp_frame *f)
{
	struct dcp_recorder *r = bs->r;
	const struct dcp_map *map;
	int ret = bs->pre_exec_view ? 0 : read_maps(bs, p);

	if (ret)
		return ret;
	map = dcp_process_map_find(p, addr);
	if (!map && !bs->pre_exec_view && (leaf || !maps_complete(bs, p))) {
		/* mapped since its maps were read (JIT code, a library
		 * loaded later): read them again, once per drain */
		uint32_t h = (uint32_t)p->pid % MAPS_TRIED;

		if (bs->reread_pid[h] != (uint32_t)p->pid ||
		    bs->reread_gen[h] != bs->drain_gen) {
			bs->reread_pid[h] = (uint32_t)p->pid;
			bs->reread_gen[h] = bs->drain_gen;
			ret = read_maps_now(bs, p);
			if (ret)
				return ret;
			map = dcp_process_map_find(p, addr);
		}
	}
	f->flags = 0;
	if (!map) {
		f->cookie = DCP_COOKIE_UNKNOWN;
		f->offset = addr;
		r->stats.frames_unattributed++;
		return 0;
	}
	f->cookie = map->cookie;
	f->offset = addr - map->start + map->pgoff;
	if (map->cookie == r->cookie_anon) {
		uint32_t jit = dcp_samples_jit_cookie(bs->r, p);

		if (jit)
			f->cookie = jit; /* offsets stay absolute addresses */
		return 0;
	}
	if (is_file_cookie(r, map->cookie) && !bs->pre_exec_view &&
	    !dcp_cookie_table_pin_tried(r->cookies, map->cookie))
		pin_map(bs, p, map);
	return 0;
}

#endif
