// SPDX-License-Identifier: MIT
/*
 * The BPF record source's unwind tables: the kernel's walk (unwind.bpf.h)
 * asks for the table of each file it meets without one (unwind_wanted),
 * as do the mapping events; at polls, this builds the file's table from
 * its .eh_frame (lib/unwind/unwind_table.c), or reads it from the symbol
 * cache, and writes it into the rows and pages arrays through a mapping
 * of the part it fills, within the memory set at the start
 * (--unwind-memory). Until a file has its table, its frames are walked by
 * frame pointers (counted).
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
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "grow.h"
#include "log_internal.h"
#include "source_bpf_internal.h"
#include "unwind_table_internal.h"
#include "recorder.lskel.h"

/* the share of the memory given to the pages index: an entry (8 bytes)
 * per 4 KiB of code, against about 12 bytes a row and a row every 16 to
 * 32 bytes of code */
#define PAGES_SHARE 16

void dcp_bpf_unwind_size(struct bpf_source *bs, bool on, uint64_t memory)
{
	struct bpf_unwind *u = &bs->unwind;
	uint64_t pages_bytes;

	u->on = on;
	/* no cache until dcp_bpf_unwind_start(): a failed load frees none */
	u->cache.dir_fd = -1;
	bs->skel->rodata->unwind_tables = on;
	bs->skel->rodata->keep_ranges = on;
	bs->skel->rodata->unwind_targeted = on && bs->r->targeted;
	if (!on)
		return;
	if (!memory)
		memory = DCP_BPF_UNWIND_MEMORY_DEFAULT;
	pages_bytes = memory / PAGES_SHARE;
	u->pages_cap =
		(uint32_t)(pages_bytes / sizeof(struct dcp_bpf_unwind_page));
	u->rows_cap =
		(uint32_t)((memory - pages_bytes) / DCP_BPF_UNWIND_ROW_STRIDE);
	if (!u->pages_cap)
		u->pages_cap = 1;
	if (!u->rows_cap)
		u->rows_cap = 1;
	bs->skel->maps.unwind_pages.max_entries = u->pages_cap;
	bs->skel->maps.unwind_rows.max_entries = u->rows_cap;
}

/*
 * n elements of elem bytes from src (src_stride apart) into the BPF array
 * behind fd (stride bytes apart), from element first on, through a
 * mapping of a window of the array at a time: the pages of a mapping of
 * an array all count in the recorder's resident set while it is mapped,
 * so a large table written through one mapping would raise the
 * recorder's peak by its size.
 */
#define WINDOW_BYTES (256u << 10)

static int copy_to_array(int fd, size_t first, size_t stride, const void *src,
			 size_t src_stride, size_t elem, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t per_window = WINDOW_BYTES / stride;
	const char *from = src;

	for (size_t i = 0; i < n; i += per_window) {
		size_t k = n - i < per_window ? n - i : per_window;
		size_t off = (first + i) * stride;
		size_t map_off = off & ~(page - 1);
		size_t len =
			(off + k * stride - map_off + page - 1) & ~(page - 1);
		char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 fd, (off_t)map_off);

		if (map == MAP_FAILED)
			return dcp_error(errno,
					 "cannot map the unwind tables: %s",
					 strerror(errno));
		for (size_t j = 0; j < k; j++)
			memcpy(map + (off - map_off) + j * stride,
			       from + (i + j) * src_stride, elem);
		munmap(map, len);
	}
	return 0;
}

/*
 * The file the kernel asked for, through the process that maps it, else
 * the identity cache's hold of it: fd, or -errno (neither has it: the next
 * walk asks again).
 */
static int open_wanted(struct bpf_source *bs, const struct dcp_bpf_file_key *k,
		       const struct dcp_bpf_unwind_want *w)
{
	int fd = dcp_bpf_open_mapping(w->pid, w->start, w->end);

	/* the process that asked is gone (a short one, or the end of the
	 * recording): the file the identity cache holds, if it does */
	if (fd < 0)
		return dcp_ident_cache_dup(&bs->idents, k->dev >> 20,
					   k->dev & 0xfffff, k->ino);

	/* s_dev is major << 20 | minor */
	if (fd >= 0 &&
	    !dcp_ident_fd_is(fd, k->dev >> 20, k->dev & 0xfffff, k->ino)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * Table t into the arrays, indexed by page: *f says where, and the file's
 * key k is kept among the tables placed. -ENOSPC when the memory left,
 * with the tables not in use evicted, cannot hold it.
 */
static int place_table(struct bpf_source *bs, const struct dcp_bpf_file_key *k,
		       const struct dcp_unwind_table *t,
		       struct dcp_bpf_unwind_file *f)
{
	struct bpf_unwind *u = &bs->unwind;
	struct dcp_bpf_unwind_page *pages;
	struct unwind_placed placed = { .key = *k }, *pl;
	uint64_t base, last, nr_pages;
	size_t r = 0;
	int ret;

	if (!t->nr_rows)
		return -ENODATA;
	base = t->rows[0].off >> DCP_BPF_UNWIND_PAGE_SHIFT;
	last = t->rows[t->nr_rows - 1].off >> DCP_BPF_UNWIND_PAGE_SHIFT;
	nr_pages = last - base + 1;
	if (t->nr_rows > UINT32_MAX || nr_pages > UINT32_MAX)
		return -ENOSPC;
	pl = dcp_grow(u->placed, &u->cap_placed, u->nr_placed + 1, sizeof(*pl));
	if (!pl)
		return dcp_error(ENOMEM, "out of memory");
	u->placed = pl;
	pages = malloc(nr_pages * sizeof(*pages));
	if (!pages)
		return dcp_error(ENOMEM, "out of memory");
	ret = dcp_bpf_unwind_take_room(bs, (uint32_t)t->nr_rows,
				       (uint32_t)nr_pages, &placed);
	if (ret) {
		free(pages);
		return ret;
	}
	for (uint64_t p = 0; p < nr_pages; p++) {
		uint64_t start = (base + p) << DCP_BPF_UNWIND_PAGE_SHIFT;
		uint64_t end = start + (1u << DCP_BPF_UNWIND_PAGE_SHIFT);
		size_t first, next;

		/* the row in force at the page's start, then those in it */
		while (r + 1 < t->nr_rows && t->rows[r + 1].off <= start)
			r++;
		first = r;
		next = r;
		while (next < t->nr_rows && t->rows[next].off < end)
			next++;
		if (next - first > DCP_BPF_UNWIND_PAGE_ROWS) {
			ret = -E2BIG;
			break;
		}
		pages[p].first_row = (uint32_t)(placed.rows.start + first);
		pages[p].nr_rows = (uint32_t)(next > first ? next - first : 1);
	}
	if (!ret)
		ret = copy_to_array(u->rows_fd, placed.rows.start,
				    DCP_BPF_UNWIND_ROW_STRIDE, t->rows,
				    sizeof(*t->rows), sizeof(*t->rows),
				    t->nr_rows);
	if (!ret)
		ret = copy_to_array(u->pages_fd, placed.pages.start,
				    sizeof(*pages), pages, sizeof(*pages),
				    sizeof(*pages), nr_pages);
	free(pages);
	if (ret)
		goto give_back;
	f->first_page = placed.pages.start;
	f->nr_pages = (uint32_t)nr_pages;
	f->page_base = base;
	/* new: not evicted before a walk has had the time to use it */
	f->last_used = dcp_now_ns(CLOCK_MONOTONIC);
	u->placed[u->nr_placed++] = placed;
	u->rows_used += placed.rows.len;
	u->tables++;
	u->table_bytes += dcp_bpf_unwind_placed_bytes(&placed);
	return 0;
give_back:
	if (dcp_bpf_unwind_give_back(u, &placed))
		return -ENOMEM;
	return ret;
}

/* Table t, just built, to be stored in the cache as name when no table
 * waits (the store's fsync must not delay one); true: t is taken. */
static bool keep_for_cache(struct bpf_unwind *u, const char *name,
			   struct dcp_unwind_table *t)
{
	struct pending_store *p;

	if (u->cache.dir_fd < 0)
		return false;
	p = dcp_grow(u->stores, &u->cap_stores, u->nr_stores + 1, sizeof(*p));
	if (!p)
		return false;
	u->stores = p;
	p = &u->stores[u->nr_stores++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->t = *t;
	return true;
}

/* The oldest table waiting for the cache, stored. */
static void store_one(struct bpf_unwind *u)
{
	struct pending_store *p = &u->stores[0];

	dcp_unwind_table_store(&u->cache, p->name, &p->t);
	dcp_unwind_table_free(&p->t);
	memmove(u->stores, u->stores + 1, --u->nr_stores * sizeof(*u->stores));
}

/* a refused file is asked for again this long after */
#define RETRY_NS (10 * 1000000000ull)

static void retry_later(struct bpf_unwind *u, const struct dcp_bpf_file_key *k)
{
	struct unwind_retry *r = dcp_grow(u->retries, &u->cap_retries,
					  u->nr_retries + 1, sizeof(*r));

	if (!r)
		return; /* walked by frame pointers for the rest */
	u->retries = r;
	u->retries[u->nr_retries++] = (struct unwind_retry){
		.key = *k, .after_ns = dcp_now_ns(CLOCK_MONOTONIC) + RETRY_NS
	};
}

/* The refused files whose time has come leave unwind_files: the next
 * walk that meets one asks for its table again. */
static void retry_refused(struct bpf_unwind *u)
{
	uint64_t now;
	size_t i, kept = 0;

	if (!u->nr_retries)
		return;
	now = dcp_now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < u->nr_retries; i++) {
		if (u->retries[i].after_ns > now)
			u->retries[kept++] = u->retries[i];
		else
			bpf_map_delete_elem(u->files_fd, &u->retries[i].key);
	}
	u->nr_retries = kept;
}

/* One file's table built and published; 0 also when it has none (the
 * kernel is told, and walks its frames by frame pointers). */
static int build_one(struct bpf_source *bs, const struct dcp_bpf_file_key *k,
		     int fd, off_t size, bool build)
{
	struct bpf_unwind *u = &bs->unwind;
	struct dcp_bpf_unwind_file f = { 0 };
	struct dcp_unwind_table t = { 0 };
	uint64_t t0 = dcp_now_ns(CLOCK_MONOTONIC); /* then its time */
	char name[DCP_UNWIND_CACHE_NAME];
	bool cached;
	int ret;

	ret = dcp_unwind_table_for_fd(fd, &u->cache, build, &t, &cached, name);
	if (ret == -ENOENT && !build)
		return ret;
	t0 = dcp_now_ns(CLOCK_MONOTONIC) - t0;
	u->build_ns += t0;
	if (!cached && size > 0) {
		u->built_ns += t0;
		u->built_bytes += (uint64_t)size;
	}
	dcp_log(DCP_LOG_DEBUG,
		"unwind table of %u:%llu: %zu rows, %s in %.1f ms", k->dev,
		k->ino, t.nr_rows, cached ? "read" : "built", (double)t0 / 1e6);
	u->from_cache += cached;
	if (!ret) {
		u->cfi_bytes += t.eh_frame_bytes;
		ret = place_table(bs, k, &t, &f);
	}
	if (ret == -ENOSPC) {
		u->refused++;
		retry_later(u, k);
	} else if (ret) {
		u->failed++;
		dcp_log(DCP_LOG_DEBUG, "no unwind table for a file (%s)",
			strerror(-ret));
	}
	if (!cached && name[0] && t.nr_rows && keep_for_cache(u, name, &t))
		memset(&t, 0, sizeof(t));
	dcp_unwind_table_free(&t);
	if (bpf_map_update_elem(u->files_fd, k, &f, BPF_ANY))
		return dcp_error(errno, "cannot add an unwind table: %s",
				 strerror(errno));
	return 0;
}

/*
 * The vdso's table, placed before any walk needs it: the vdso has no file
 * for a walk to ask for. Without one (no room, no CFI) its frames are
 * walked by frame pointers, and its entry says so.
 */
static int place_vdso(struct bpf_source *bs)
{
	struct bpf_unwind *u = &bs->unwind;
	const struct dcp_bpf_file_key k = { .ino = DCP_BPF_VDSO_INO };
	struct dcp_bpf_unwind_file f = { 0 };
	struct dcp_unwind_table t;
	int ret;

	ret = dcp_unwind_table_build_vdso(&t);
	if (!ret)
		ret = place_table(bs, &k, &t, &f);
	dcp_unwind_table_free(&t);
	if (ret) {
		u->failed++;
		dcp_log(DCP_LOG_DEBUG, "no unwind table for the vdso (%s)",
			strerror(-ret));
	}
	if (bpf_map_update_elem(u->files_fd, &k, &f, BPF_ANY))
		return dcp_error(errno, "cannot add an unwind table: %s",
				 strerror(errno));
	/* its frames named by the walks, as user space names them: offsets
	 * from the vdso's start, under its cookie (nothing to pin) */
	dcp_cookie_table_set_pin_tried(bs->r->cookies, bs->r->cookie_vdso);
	bpf_map_update_elem(bs->skel->maps.file_cookies.map_fd, &k,
			    &bs->r->cookie_vdso, BPF_ANY);
	return 0;
}

int dcp_bpf_unwind_start(struct bpf_source *bs)
{
	struct bpf_unwind *u = &bs->unwind;

	if (!u->on)
		return 0;
	if (dcp_bpf_unwind_space_init(u))
		return -ENOMEM;
	dcp_cache_open(&u->cache);
	u->files_fd = bs->skel->maps.unwind_files.map_fd;
	u->targets_fd = bs->skel->maps.unwind_targets.map_fd;
	u->wanted_fd = bs->skel->maps.unwind_wanted.map_fd;
	u->rows_fd = bs->skel->maps.unwind_rows.map_fd;
	u->pages_fd = bs->skel->maps.unwind_pages.map_fd;
	return place_vdso(bs);
}

/*
 * The processes recorded (-p, a command) not yet in the kernel's
 * unwind_targets, put in: their walks ask for tables, and the fork
 * program adds their children.
 */
static void send_targets(struct bpf_source *bs)
{
	struct bpf_unwind *u = &bs->unwind;
	const struct dcp_recorder *r = bs->r;
	uint32_t one = 1;

	for (; u->targets_sent < r->nr_roots; u->targets_sent++) {
		uint32_t tgid = (uint32_t)r->roots[u->targets_sent];

		bpf_map_update_elem(u->targets_fd, &tgid, &one, BPF_ANY);
	}
}

/* pid is a child of the recorder's: a command not started yet, which
 * maps what the recorder maps until its exec. */
static bool is_own_child(struct bpf_source *bs, uint32_t pid)
{
	struct dcp_process *p =
		dcp_process_table_find(bs->r->procs, (pid_t)pid);

	return p && p->ppid == getpid();
}

/* pid is one of the processes recorded (every one without targets). */
static bool is_target(struct bpf_source *bs, uint32_t pid)
{
	struct dcp_process *p;

	if (!bs->r->targeted)
		return true;
	p = dcp_process_table_find(bs->r->procs, (pid_t)pid);
	return p && p->target;
}

void dcp_bpf_unwind_want(struct bpf_source *bs, uint32_t pid, uint64_t start,
			 uint64_t end, uint64_t ino, uint32_t dev)
{
	struct bpf_unwind *u = &bs->unwind;
	struct dcp_bpf_file_key k = { .ino = ino, .dev = dev };
	struct dcp_bpf_unwind_want w = { .pid = pid,
					 .start = start,
					 .end = end };

	/* already asked for, or built: refused by the flag, or skipped by
	 * dcp_bpf_unwind_work(); asked for by another process, taken over
	 * by a recorded one, which goes first; a process not recorded
	 * needs no table */
	if (u->on && ino != DCP_BPF_VDSO_INO &&
	    (!bs->r->targeted || is_target(bs, pid)))
		bpf_map_update_elem(u->wanted_fd, &k, &w,
				    is_target(bs, pid) ? BPF_ANY : BPF_NOEXIST);
}

/* a build's cost before one was measured: a quiet machine's */
#define BUILD_NS_PER_BYTE 3

/*
 * Whether building a file of size bytes should end before deadline_ns (0:
 * none), by what this recording's builds took a byte: a build cannot be
 * stopped half way, and a poll must return by its deadline (the end of a
 * --duration among them).
 */
static bool fits_before(const struct bpf_unwind *u, off_t size,
			uint64_t deadline_ns)
{
	uint64_t per_byte = u->built_bytes ? u->built_ns / u->built_bytes :
					     BUILD_NS_PER_BYTE;

	if (!deadline_ns)
		return true;
	return dcp_now_ns(CLOCK_MONOTONIC) + (uint64_t)size * per_byte <=
	       deadline_ns;
}

/* A file asked for, open, its size, and whether a recorded process (-p,
 * a command) asked. */
struct wanted_file {
	struct dcp_bpf_file_key key;
	int fd;
	off_t size;
	bool target;
};

static int by_need(const void *a, const void *b)
{
	const struct wanted_file *x = a, *y = b;

	if (x->target != y->target)
		return x->target ? -1 : 1;
	return (x->size > y->size) - (x->size < y->size);
}

#define WORK_BATCH 64

/*
 * The files asked for, smallest first: a program's own files are usually
 * small beside libc and the interpreters, and its stacks need all of them;
 * the sooner most are built, the fewer samples are walked without them.
 * The recorded processes' files go first: the others' samples are
 * dropped.
 */
int dcp_bpf_unwind_work(struct bpf_source *bs, uint64_t deadline_ns,
			size_t max_tables)
{
	size_t built = 0;
	struct bpf_unwind *u = &bs->unwind;
	struct wanted_file files[WORK_BATCH];
	struct dcp_bpf_file_key k, next;
	struct dcp_bpf_unwind_want w;
	struct dcp_bpf_unwind_file f;
	size_t n = 0, i;
	struct stat st;
	int ret = 0;

	if (!u->on)
		return 0;
	send_targets(bs);
	retry_refused(u);
	while (n < WORK_BATCH &&
	       !bpf_map_get_next_key(u->wanted_fd, n ? &k : NULL, &next)) {
		k = next;
		if (bpf_map_lookup_elem(u->wanted_fd, &k, &w))
			continue;
		files[n].key = k;
		/* built already, or gone: nothing to build */
		files[n].fd = bpf_map_lookup_elem(u->files_fd, &k, &f) ?
				      open_wanted(bs, &k, &w) :
				      -1;
		files[n].size = files[n].fd >= 0 && !fstat(files[n].fd, &st) ?
					st.st_size :
					0;
		files[n].target = is_target(bs, w.pid);
		n++;
	}
	qsort(files, n, sizeof(*files), by_need);
	for (i = 0; i < n; i++) {
		if (!ret && files[i].fd >= 0 &&
		    (!max_tables || built < max_tables) &&
		    fits_before(u, files[i].size, deadline_ns)) {
			built++;
			ret = build_one(bs, &files[i].key, files[i].fd,
					files[i].size, true);
			bpf_map_delete_elem(u->wanted_fd, &files[i].key);
		} else if (files[i].fd < 0) {
			bpf_map_delete_elem(u->wanted_fd, &files[i].key);
		}
		if (files[i].fd >= 0)
			close(files[i].fd);
	}
	if (ret)
		return ret;
	/* no table waits: one built table into the cache */
	if (!n && u->nr_stores)
		store_one(u);
	return 0;
}

/*
 * Before sampling begins: the tables of the files the processes map now,
 * read from the cache, so that their first samples are walked whole; a
 * file the cache does not hold is asked for, built at the polls, unless a
 * recorded process (-p) maps it: it is built now, the few files of the
 * processes asked for being worth the wait. Reading and building stop at
 * deadline_ns (the recording's start waits for it); what is left is
 * asked for as well.
 */
int dcp_bpf_unwind_preload(struct bpf_source *bs, uint64_t deadline_ns)
{
	struct bpf_unwind *u = &bs->unwind;
	int fd = bs->skel->maps.proc_ranges.map_fd, ret = 0;
	struct dcp_bpf_ranges *rs;
	struct dcp_bpf_unwind_file f;
	uint32_t pid, next;
	bool first = true, build;

	if (!u->on)
		return 0;
	send_targets(bs);
	rs = malloc(sizeof(*rs));
	if (!rs)
		return dcp_error(ENOMEM, "out of memory");
	while (!ret && !bpf_map_get_next_key(fd, first ? NULL : &pid, &next)) {
		first = false;
		pid = next;
		/* the other processes' samples are dropped: no table */
		if (bs->r->targeted &&
		    (!is_target(bs, pid) || is_own_child(bs, pid)))
			continue;
		build = bs->r->targeted;
		if (bpf_map_lookup_elem(fd, &pid, rs))
			continue;
		dcp_bpf_name_ranges(bs, pid, rs);
		if (!build && u->cache.dir_fd < 0)
			continue;
		for (uint32_t i = 0; i < rs->nr && i < DCP_BPF_MAX_RANGES;
		     i++) {
			const struct dcp_bpf_range *r = &rs->r[i];
			struct dcp_bpf_file_key k = { .ino = r->ino,
						      .dev = r->dev };
			struct dcp_bpf_unwind_want w = { .pid = pid,
							 .start = r->start,
							 .end = r->end };
			int file;

			if (!bpf_map_lookup_elem(u->files_fd, &k, &f) ||
			    !bpf_map_lookup_elem(u->wanted_fd, &k, &w))
				continue;
			file = dcp_now_ns(CLOCK_MONOTONIC) < deadline_ns ?
				       open_wanted(bs, &k, &w) :
				       -ETIME;
			if (file >= 0) {
				struct stat st;

				ret = build_one(bs, &k, file,
						fstat(file, &st) ? 0 :
								   st.st_size,
						build);
				close(file);
				if (ret == -ENOENT)
					ret = 0;
				else if (!ret)
					continue;
			}
			bpf_map_update_elem(u->wanted_fd, &k, &w, BPF_NOEXIST);
		}
	}
	free(rs);
	return ret;
}

/*
 * When recording stops: the tables still asked for, built for the cache
 * (stored by dcp_bpf_unwind_free()), so that the next recording has them
 * before its first sample; a busy machine may not have let the recorder
 * build a large one while sampling. Bounded by FINISH_MS.
 */
#define FINISH_MS 10000

int dcp_bpf_unwind_finish(struct bpf_source *bs)
{
	struct bpf_unwind *u = &bs->unwind;

	if (!u->on || u->cache.dir_fd < 0)
		return 0;
	return dcp_bpf_unwind_work(
		bs, dcp_now_ns(CLOCK_MONOTONIC) + FINISH_MS * 1000000ull, 0);
}

void dcp_bpf_unwind_free(struct bpf_source *bs)
{
	struct bpf_unwind *u = &bs->unwind;

	while (u->nr_stores)
		store_one(u);
	free(u->stores);
	u->stores = NULL;
	dcp_bpf_unwind_space_free(u);
	free(u->retries);
	u->retries = NULL;
	if (u->on)
		dcp_cache_close(&u->cache);
}

#endif
