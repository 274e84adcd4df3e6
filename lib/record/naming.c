// SPDX-License-Identifier: MIT
/*
 * The snapshots' naming thread: the addresses a snapshot has not named
 * yet go to a thread of their own, so that reading files and DWARF
 * (hundreds of milliseconds for a session's new code) never holds up the
 * recorder's draining. A batch carries copies of what it needs (each
 * object's identity and paths, a duplicate of its pinned handle): the
 * recorder goes on changing its cookie table meanwhile. The thread names
 * into a table of its own, merged into the snapshots' table by the
 * recorder's thread once the batch is done.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "log_internal.h"
#include "recorder_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"

/* One object of a batch and the offsets to name in it. */
struct naming_object {
	struct dcp_cookie_info info; /* name and paths point to copies */
	char *name;
	char **paths;
	int fd; /* a duplicate of the pinned handle, or -1 */
	uint64_t *offsets;
	size_t n;
};

struct naming_batch {
	struct naming_object *objects;
	size_t nr, cap;
};

struct dcp_naming {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake; /* a batch to name, or quit */
	pthread_cond_t done; /* the batch is named */
	struct naming_batch *work; /* handed over, not yet taken */
	bool busy; /* a batch is handed over and not done */
	bool quit;
	/* the thread's own, untouched by the recorder's thread while busy */
	struct dcp_symbolizer *symbolizer;
	struct dcp_symtab *named;
	uint64_t naming_ns, last_naming_ns;
	/* the symbolizer's, copied under the lock after each batch */
	struct dcp_symbolizer_kept_stats kept;
};

static void object_release(struct naming_object *o)
{
	for (size_t i = 0; i < o->info.nr_paths; i++)
		free(o->paths[i]);
	free(o->paths);
	free(o->name);
	free(o->offsets);
	if (o->fd >= 0)
		close(o->fd);
}

static void batch_free(struct naming_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nr; i++)
		object_release(&b->objects[i]);
	free(b->objects);
	free(b);
}

static void *naming_main(void *arg)
{
	struct dcp_naming *nm = arg;

	pthread_mutex_lock(&nm->lock);
	for (;;) {
		struct naming_batch *b;
		uint64_t t0;

		while (!nm->work && !nm->quit)
			pthread_cond_wait(&nm->wake, &nm->lock);
		if (nm->quit)
			break;
		b = nm->work;
		nm->work = NULL;
		pthread_mutex_unlock(&nm->lock);

		t0 = dcp_now_ns(CLOCK_MONOTONIC);
		for (size_t i = 0; i < b->nr; i++) {
			struct naming_object *o = &b->objects[i];

			/* an object that cannot be read is not an error */
			dcp_symbolizer_resolve(nm->symbolizer, &o->info, o->fd,
					       o->offsets, o->n, nm->named);
		}
		batch_free(b);
		dcp_symbolizer_page_out(nm->symbolizer);

		pthread_mutex_lock(&nm->lock);
		dcp_symbolizer_kept_stats(nm->symbolizer, &nm->kept);
		nm->last_naming_ns = dcp_now_ns(CLOCK_MONOTONIC) - t0;
		nm->naming_ns += nm->last_naming_ns;
		nm->busy = false;
		pthread_cond_broadcast(&nm->done);
	}
	pthread_mutex_unlock(&nm->lock);
	return NULL;
}

/*
 * The thread keeps files open between batches: each batch names a few new
 * addresses of the same objects, and reading a file's DWARF tables again
 * at every batch would be most of its time at high rates.
 */
struct dcp_naming *dcp_naming_new(const struct dcp_kernel_layout *kernel,
				  size_t max_files, size_t max_bytes)
{
	struct dcp_naming *nm = calloc(1, sizeof(*nm));
	int ret;

	if (!nm)
		return dcp_error_null(ENOMEM, "out of memory");
	pthread_mutex_init(&nm->lock, NULL);
	pthread_cond_init(&nm->wake, NULL);
	pthread_cond_init(&nm->done, NULL);
	nm->named = dcp_symtab_new();
	nm->symbolizer = dcp_symbolizer_new(kernel);
	if (!nm->named || !nm->symbolizer) {
		dcp_naming_free(nm);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	dcp_symbolizer_keep_files(nm->symbolizer, max_files);
	dcp_symbolizer_keep_bytes(nm->symbolizer, max_bytes);
	ret = pthread_create(&nm->thread, NULL, naming_main, nm);
	if (ret) {
		dcp_naming_free(nm);
		return dcp_error_null(ret, "cannot start the naming thread");
	}
	nm->started = true;
	return nm;
}

void dcp_naming_free(struct dcp_naming *nm)
{
	if (!nm)
		return;
	if (nm->started) {
		pthread_mutex_lock(&nm->lock);
		nm->quit = true;
		pthread_cond_signal(&nm->wake);
		pthread_mutex_unlock(&nm->lock);
		pthread_join(nm->thread, NULL);
	}
	batch_free(nm->work);
	dcp_symbolizer_free(nm->symbolizer);
	dcp_symtab_free(nm->named);
	pthread_cond_destroy(&nm->done);
	pthread_cond_destroy(&nm->wake);
	pthread_mutex_destroy(&nm->lock);
	free(nm);
}

struct naming_batch *dcp_naming_batch_new(void)
{
	struct naming_batch *b = calloc(1, sizeof(*b));

	return b ? b : dcp_error_null(ENOMEM, "out of memory");
}

static char *dup_or_null(const char *s, bool *failed)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*failed = true;
	return d;
}

int dcp_naming_batch_add(struct naming_batch *b,
			 const struct dcp_cookie_info *ci, int pinned_fd,
			 const uint64_t *offsets, size_t n)
{
	struct naming_object *o, *objects;
	bool failed = false;

	objects = dcp_grow(b->objects, &b->cap, b->nr + 1, sizeof(*objects));
	if (!objects)
		return dcp_error(ENOMEM, "out of memory");
	b->objects = objects;
	o = &objects[b->nr];
	memset(o, 0, sizeof(*o));
	o->info = *ci;
	o->info.nr_paths = 0;
	o->fd = pinned_fd >= 0 ? dup(pinned_fd) : -1;
	o->name = dup_or_null(ci->name, &failed);
	o->paths = calloc(ci->nr_paths ? ci->nr_paths : 1, sizeof(*o->paths));
	o->offsets = malloc((n ? n : 1) * sizeof(*o->offsets));
	if (!o->paths || !o->offsets)
		failed = true;
	for (size_t i = 0; !failed && i < ci->nr_paths; i++) {
		o->paths[i] = dup_or_null(ci->paths[i], &failed);
		if (!failed)
			o->info.nr_paths++;
	}
	if (failed) {
		object_release(o);
		return dcp_error(ENOMEM, "out of memory");
	}
	memcpy(o->offsets, offsets, n * sizeof(*offsets));
	o->n = n;
	o->info.name = o->name;
	o->info.paths = (const char *const *)o->paths;
	b->nr++;
	return 0;
}

void dcp_naming_batch_free(struct naming_batch *b)
{
	batch_free(b);
}

/*
 * Move what the thread named into out, when it is idle; its table starts
 * empty again. Called by the recorder's thread with the lock held.
 */
static int take_named(struct dcp_naming *nm, struct dcp_symtab *out)
{
	size_t count = dcp_symtab_count(nm->named);
	struct dcp_symtab *fresh;

	if (nm->busy || !count)
		return 0;
	for (size_t i = 0; i < count; i++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		uint32_t cookie;
		uint64_t offset;
		int ret;

		dcp_symtab_entry(nm->named, i, &cookie, &offset, &sym);
		ret = dcp_symtab_copy(out, nm->named, cookie, offset);
		if (ret < 0)
			return ret;
	}
	fresh = dcp_symtab_new();
	if (!fresh)
		return dcp_error(ENOMEM, "out of memory");
	dcp_symtab_free(nm->named);
	nm->named = fresh;
	return 0;
}

int dcp_naming_submit(struct dcp_naming *nm, struct naming_batch *b)
{
	pthread_mutex_lock(&nm->lock);
	if (nm->busy) {
		pthread_mutex_unlock(&nm->lock);
		return dcp_error(EBUSY, "a batch is being named");
	}
	nm->work = b;
	nm->busy = true;
	pthread_cond_signal(&nm->wake);
	pthread_mutex_unlock(&nm->lock);
	return 0;
}

bool dcp_naming_busy(struct dcp_naming *nm)
{
	bool busy;

	pthread_mutex_lock(&nm->lock);
	busy = nm->busy;
	pthread_mutex_unlock(&nm->lock);
	return busy;
}

int dcp_naming_wait(struct dcp_naming *nm, uint64_t timeout_ns,
		    struct dcp_symtab *out)
{
	struct timespec until;
	int ret;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(timeout_ns / 1000000000ull);
	until.tv_nsec += (long)(timeout_ns % 1000000000ull);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&nm->lock);
	while (nm->busy)
		if (pthread_cond_timedwait(&nm->done, &nm->lock, &until) ==
		    ETIMEDOUT)
			break;
	ret = take_named(nm, out);
	pthread_mutex_unlock(&nm->lock);
	return ret;
}

size_t dcp_naming_forget(struct dcp_naming *nm,
			 const struct dcp_cookie_set *needed)
{
	size_t closed = 0;

	pthread_mutex_lock(&nm->lock);
	/* the symbolizer is the thread's while it names */
	if (!nm->busy) {
		closed = dcp_symbolizer_drop_unneeded(nm->symbolizer, needed);
		dcp_symbolizer_kept_stats(nm->symbolizer, &nm->kept);
	}
	pthread_mutex_unlock(&nm->lock);
	return closed;
}

void dcp_naming_kept_stats(struct dcp_naming *nm,
			   struct dcp_symbolizer_kept_stats *st)
{
	pthread_mutex_lock(&nm->lock);
	*st = nm->kept;
	pthread_mutex_unlock(&nm->lock);
}

void dcp_naming_times(struct dcp_naming *nm, uint64_t *total_ns,
		      uint64_t *last_ns)
{
	pthread_mutex_lock(&nm->lock);
	*total_ns = nm->naming_ns;
	*last_ns = nm->last_naming_ns;
	pthread_mutex_unlock(&nm->lock);
}
