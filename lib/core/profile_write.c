// SPDX-License-Identifier: MIT
/*
 * Writing a profile file: the working file a recorder flushes into (each
 * flush one write of the chunks that changed, then fdatasync), and the
 * compact file that replaces it when recording ends, written beside it
 * and renamed over it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "format_internal.h"
#include "log_internal.h"
#include "profile_encode_internal.h"
#include "profile_internal.h"

struct dcp_profile_writer {
	char *path;
	int fd;
	int err; /* first write error: no more flushes after one */
	bool finished;
	uint64_t created_ns;
	/* bytes of whole chunks in the working file, and the recording's
	 * length at its last flush: what a failed flush falls back to */
	uint64_t size;
	uint64_t flushed_duration_ns;
	/* Strings and stacks below these ids are in the working file. */
	size_t strings_written, stacks_written, threads_written;
	size_t cgroups_written;
	struct dcp_emitter em;
};

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move an existing output aside, as perf does with perf.data.old. */
static int move_old(const char *path)
{
	struct stat st;
	char *old;
	int ret = 0;

	if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0;
		return dcp_error(errno, "cannot create '%s': %s", path,
				 strerror(errno));
	}
	/* A symlink is renamed itself, never followed; anything but a file
	 * or a link (a directory given by mistake) is left alone. */
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return dcp_error(
			S_ISDIR(st.st_mode) ? EISDIR : EEXIST,
			"cannot create '%s': %s", path,
			strerror(S_ISDIR(st.st_mode) ? EISDIR : EEXIST));
	if (asprintf(&old, "%s.old", path) < 0)
		return dcp_error(ENOMEM, "out of memory");
	if (rename(path, old) < 0)
		ret = dcp_error(errno, "cannot rename '%s' to '%s': %s", path,
				old, strerror(errno));
	free(old);
	return ret;
}

static bool is_disk_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/*
 * Blocks kept allocated past the working file's end (not part of it), so
 * that the chunk saying the disk was full still fits once it is: a flush
 * is written only once the blocks for it and for this room beyond it are
 * allocated, so that no flush eats the room. File systems without
 * fallocate go without.
 */
#define TRAILER_ROOM 8192

/* Room for bytes past the file's end: 0 (or no fallocate), or -errno. */
static int reserve_room(struct dcp_profile_writer *w, uint64_t bytes)
{
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->size,
		      (off_t)bytes) == 0)
		return 0;
	if (errno == EOPNOTSUPP || errno == ENOSYS) {
		dcp_log(DCP_LOG_DEBUG, "'%s': no room kept past its end: %s",
			w->path, strerror(errno));
		return 0;
	}
	return -errno;
}

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

struct dcp_profile_writer *dcp_profile_writer_open(const char *path)
{
	struct dcp_profile_writer *w;
	struct dcp_enc_buf hdr = { 0 };
	int ret, err;

	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	w->fd = -1;
	w->em.level = DCP_ZSTD_LEVEL_FLUSH;
	w->created_ns = realtime_ns();
	ret = move_old(path);
	if (ret < 0)
		goto fail;
	w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (w->fd < 0) {
		ret = dcp_error(errno, "cannot create '%s': %s", path,
				strerror(errno));
		goto fail;
	}
	/* The header first, so that even a recorder killed before its
	 * first flush leaves a file that opens (empty). */
	dcp_enc_put_header(&hdr, 0, w->created_ns);
	if (hdr.oom)
		ret = -ENOMEM;
	else {
		dcp_enc_seal_header(&hdr, 0);
		ret = write_all(w->fd, hdr.p, sizeof(struct dcp_fmt_header));
		w->size = sizeof(struct dcp_fmt_header);
	}
	dcp_enc_buf_free(&hdr);
	if (ret < 0) {
		ret = dcp_error(ret, "cannot write '%s': %s", path,
				strerror(-ret));
		unlink(path);
		goto fail;
	}
	/* a disk too full for this is full at the first flush */
	reserve_room(w, TRAILER_ROOM);
	return w;
fail:
	err = ret;
	dcp_profile_writer_free(w);
	errno = -err;
	return NULL;
}

/*
 * After a failed flush: the file is cut back to its last whole flush, so
 * that no torn chunk reads as a crash, and, when the disk was full, a META
 * chunk of that flush's length saying so is appended in the room the torn
 * bytes freed (else the file ends at that flush, as a killed recorder's).
 */
static void end_working_file(struct dcp_profile_writer *w,
			     const struct dcp_profile_meta *meta, int err)
{
	struct dcp_emitter *em = &w->em;
	struct dcp_profile_meta m;

	if (!meta || !is_disk_full(err)) {
		if (ftruncate(w->fd, (off_t)w->size) == 0)
			fdatasync(w->fd);
		return;
	}
	m = *meta;
	m.duration_ns = w->flushed_duration_ns;
	m.disk_full = true;
	em->out.len = 0;
	em->out.oom = em->raw.oom = em->z.oom = false;
	dcp_emit_meta(em, &m);
	/* over the torn bytes, into the blocks kept for it */
	if (em->out.oom || em->raw.oom ||
	    pwrite_all(w->fd, em->out.p, em->out.len, w->size) < 0 ||
	    ftruncate(w->fd, (off_t)(w->size + em->out.len)) < 0 ||
	    fdatasync(w->fd) < 0) {
		if (ftruncate(w->fd, (off_t)w->size) == 0)
			fdatasync(w->fd);
		return;
	}
	w->size += em->out.len;
}

int dcp_profile_writer_flush(struct dcp_profile_writer *w,
			     const struct dcp_profile_meta *meta,
			     struct dcp_cookie_table *cookies,
			     struct dcp_aggregate *agg,
			     const struct dcp_profile_stats *stats)
{
	struct dcp_emitter *em = &w->em;
	int ret;

	if (w->finished)
		return dcp_error(EINVAL, "cannot write '%s': already finished",
				 w->path);
	if (w->err)
		return dcp_error(w->err, "cannot write '%s': %s", w->path,
				 strerror(-w->err));
	em->out.len = 0;
	em->out.oom = em->raw.oom = em->z.oom = false;
	em->level = DCP_ZSTD_LEVEL_FLUSH;
	/* Order matters to a reader of a torn file: everything a record
	 * refers to (cookies, strings, stacks) comes before it. */
	if (meta)
		dcp_emit_meta(em, meta);
	if (cookies)
		dcp_emit_dirty_cookies(em, cookies);
	if (agg) {
		dcp_emit_strings(em, agg, w->strings_written);
		dcp_emit_stacks(em, DCP_FMT_CHUNK_STACKS, agg,
				w->stacks_written, NULL);
		dcp_emit_cgroups(em, agg, w->cgroups_written);
		dcp_emit_threads(em, DCP_FMT_CHUNK_THREADS, agg,
				 w->threads_written);
		dcp_emit_rows(em, DCP_FMT_CHUNK_ROWS, agg, true, NULL);
		dcp_emit_off_cpu_rows(em, DCP_FMT_CHUNK_OFF_CPU_ROWS, agg, true,
				      NULL);
		dcp_emit_lives(em, agg, true);
	}
	if (stats)
		dcp_emit_stats(em, stats);

	/* Dirty cookies were taken: a failed flush cannot be redone, so any
	 * failure ends the working file (finish still writes everything). */
	if (em->out.oom || em->raw.oom)
		ret = -ENOMEM;
	else
		ret = reserve_room(w, em->out.len + TRAILER_ROOM);
	if (ret == 0)
		ret = write_all(w->fd, em->out.p, em->out.len);
	if (ret == 0 && fdatasync(w->fd) < 0)
		ret = -errno;
	if (ret < 0) {
		w->err = ret;
		end_working_file(w, meta, ret);
		return dcp_error(
			ret, "cannot write '%s': %s%s", w->path, strerror(-ret),
			is_disk_full(ret) ? " (the disk is full)" : "");
	}
	w->size += em->out.len;
	if (meta)
		w->flushed_duration_ns = meta->duration_ns;
	if (agg) {
		w->strings_written = dcp_aggregate_nr_strings(agg);
		w->stacks_written = dcp_aggregate_nr_stacks(agg);
		w->threads_written = dcp_aggregate_nr_threads(agg);
		w->cgroups_written = dcp_aggregate_nr_cgroups(agg);
		dcp_aggregate_mark_flushed(agg);
	}
	/* A big first flush need not pin its memory for the whole run. */
	if (em->out.cap > (16u << 20)) {
		dcp_enc_buf_free(&em->out);
		dcp_enc_buf_free(&em->z);
	}
	return 0;
}

/* The directory entry of a rename is durable only once its directory is. */
static void sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (!copy)
		return;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

static int write_compact(const char *path, uint64_t created_ns,
			 const struct dcp_profile_meta *meta,
			 const struct dcp_cookie_table *cookies,
			 const struct dcp_aggregate *agg,
			 const struct dcp_symtab *symbols,
			 const struct dcp_profile_stats *stats,
			 bool used_cookies)
{
	struct dcp_emitter em = { .level = DCP_ZSTD_LEVEL_FINAL };
	struct dcp_write_order order = { 0 };
	char *tmp = NULL;
	int fd = -1, ret;

	if (agg && dcp_write_order_build(&order, agg) < 0) {
		ret = dcp_error(ENOMEM, "cannot write '%s': out of memory",
				path);
		goto out;
	}
	dcp_enc_put_header(&em.out, DCP_FMT_COMPLETE, created_ns);
	if (meta)
		dcp_emit_meta(&em, meta);
	if (cookies)
		dcp_emit_all_cookies(&em, cookies, used_cookies ? agg : NULL);
	if (agg) {
		dcp_emit_strings(&em, agg, 0);
		dcp_emit_stacks(&em, DCP_FMT_CHUNK_STACKS, agg, 0, &order);
		dcp_emit_cgroups(&em, agg, 0);
		dcp_emit_threads(&em, DCP_FMT_CHUNK_THREADS, agg, 0);
		dcp_emit_rows(&em, DCP_FMT_CHUNK_ROWS, agg, false, &order);
		dcp_emit_off_cpu_rows(&em, DCP_FMT_CHUNK_OFF_CPU_ROWS, agg,
				      false, &order);
		dcp_emit_lives(&em, agg, false);
	}
	if (symbols) {
		dcp_emit_symbols(&em, DCP_FMT_CHUNK_SYMBOLS, symbols);
		dcp_emit_symbol_details(&em, DCP_FMT_CHUNK_SYMBOL_DETAILS,
					symbols);
	}
	if (agg && symbols)
		dcp_emit_summary(&em, agg, symbols, &order);
	if (stats)
		dcp_emit_stats(&em, stats);
	dcp_emit_end(&em);
	if (em.out.oom || em.raw.oom) {
		ret = dcp_error(ENOMEM, "cannot write '%s': out of memory",
				path);
		goto out;
	}
	dcp_enc_seal_header(&em.out, em.out.len);

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		ret = dcp_error(ENOMEM, "out of memory");
		goto out;
	}
	/* mkostemp: O_CREAT|O_EXCL (never follows a link), mode 0600 */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = dcp_error(errno, "cannot create '%s': %s", tmp,
				strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	ret = write_all(fd, em.out.p, em.out.len);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (ret == 0 && close(fd) < 0)
		ret = -errno;
	fd = -1;
	if (ret < 0) {
		ret = dcp_error(ret, "cannot write '%s': %s", tmp,
				strerror(-ret));
		goto out;
	}
	if (rename(tmp, path) < 0) {
		ret = dcp_error(errno, "cannot rename '%s' to '%s': %s", tmp,
				path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	sync_dir(path);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	dcp_enc_buf_free(&em.out);
	dcp_enc_buf_free(&em.raw);
	dcp_enc_buf_free(&em.z);
	ZSTD_freeCCtx(em.zstd);
	dcp_write_order_free(&order);
	return ret;
}

int dcp_profile_write_compact(const char *path, uint64_t created_ns,
			      const struct dcp_profile_meta *meta,
			      const struct dcp_cookie_table *cookies,
			      const struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats)
{
	return write_compact(path, created_ns, meta, cookies, agg, symbols,
			     stats, false);
}

int dcp_profile_write_period(const char *path, uint64_t created_ns,
			     const struct dcp_profile_meta *meta,
			     const struct dcp_cookie_table *cookies,
			     const struct dcp_aggregate *agg,
			     const struct dcp_symtab *symbols,
			     const struct dcp_profile_stats *stats)
{
	return write_compact(path, created_ns, meta, cookies, agg, symbols,
			     stats, true);
}

int dcp_profile_writer_finish(struct dcp_profile_writer *w,
			      const struct dcp_profile_meta *meta,
			      struct dcp_cookie_table *cookies,
			      struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats)
{
	int ret = dcp_profile_write_compact(w->path, w->created_ns, meta,
					    cookies, agg, symbols, stats);

	if (ret < 0 && is_disk_full(ret) && !w->err) {
		/* no room for the compact copy: the working file takes the
		 * last flush, if that fits, and says the disk was full */
		char why[512];

		snprintf(why, sizeof(why), "%s", dcp_last_error());
		if (dcp_profile_writer_flush(w, meta, cookies, agg, stats) ==
		    0) {
			w->err = ret;
			end_working_file(w, meta, ret);
		}
		return dcp_error(ret, "%s", why);
	}
	if (ret < 0)
		return ret;
	/* The working file's inode is gone from the path now. */
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->finished = true;
	return 0;
}

void dcp_profile_writer_free(struct dcp_profile_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	dcp_enc_buf_free(&w->em.out);
	dcp_enc_buf_free(&w->em.raw);
	ZSTD_freeCCtx(w->em.zstd);
	dcp_enc_buf_free(&w->em.z);
	free(w->path);
	free(w);
}
