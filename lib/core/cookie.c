// SPDX-License-Identifier: MIT
/*
 * The cookie table: file identities and named regions to small integers,
 * their paths, --only marks, dirty tracking for flushes and pinning fds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "api_internal.h"
#include "buildid_internal.h"
#include "cookie_internal.h"
#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"

/* Far above any real profile; guards against absurd numbers in a file. */
#define MAX_COOKIES (1u << 24)

struct cookie {
	enum dcp_cookie_kind kind;
	bool present; /* false: a hole left by out-of-order inserts */
	bool marked;
	bool dirty;
	bool pin_tried;
	int fd;
	/* Owned. Display name of specials; for files, shown until the first
	 * path is known. */
	char *name;
	struct dcp_file_id id;
	char **paths;
	size_t nr_paths, cap_paths;
	uint64_t samples;
	uint64_t fp_breaks; /* user stacks whose FP chain broke after it */
	uint32_t period; /* queued for this period's file (new_period) */
};

struct dcp_cookie_table {
	struct cookie *c;
	size_t n, cap;
	/* Present cookies by key; allocated with the first one. */
	struct dcp_index index;
	struct dcp_file_id *marks;
	size_t nr_marks, cap_marks;
	/* Queue of dirty cookies: dirty[head .. nr_dirty) not yet taken. */
	uint32_t *dirty;
	size_t nr_dirty, cap_dirty, dirty_head;
	uint32_t period; /* dcp_cookie_table_new_period() calls */
	size_t max_pinned; /* 0: no bound */
	uint64_t pins_refused;
};

/* What a cookie is looked up by: file identity, or (kind, name). */
struct key {
	enum dcp_cookie_kind kind;
	const char *name;
	const struct dcp_file_id *id;
};

static uint64_t hash_key(const struct key *k)
{
	const struct dcp_file_id *id = k->id;

	if (k->kind != DCP_COOKIE_KIND_FILE)
		return dcp_hash_mix(k->kind, dcp_hash_fnv1a_str(k->name, NULL));
	if (id->build_id_size)
		return dcp_hash_fmix64(dcp_hash_fnv1a(
			DCP_FNV_OFFSET, id->build_id, id->build_id_size));
	return dcp_hash_mix(
		dcp_hash_mix((uint64_t)id->dev_major << 32 | id->dev_minor,
			     id->ino),
		id->ino_generation);
}

static struct key cookie_key(const struct cookie *c)
{
	struct key k = { .kind = c->kind, .name = c->name, .id = &c->id };

	return k;
}

static bool key_equal(const struct cookie *c, const struct key *k)
{
	if (c->kind != k->kind)
		return false;
	if (k->kind == DCP_COOKIE_KIND_FILE)
		return dcp_file_id_equal(&c->id, k->id);
	return strcmp(c->name, k->name) == 0;
}

/* Only present FILE cookies and named specials are indexed. */
static bool indexable(const struct cookie *c)
{
	return c->present && c->kind != DCP_COOKIE_KIND_UNKNOWN &&
	       (c->kind == DCP_COOKIE_KIND_FILE || c->name);
}

static uint64_t cookie_hash_of(const void *ctx, uint32_t cookie)
{
	const struct dcp_cookie_table *t = ctx;
	struct key k = cookie_key(&t->c[cookie]);

	return hash_key(&k);
}

/* The cookie indexed under k (hash h), else -1; *end gets its slot, else
 * the free slot where k would go. */
static int64_t index_find(const struct dcp_cookie_table *t, const struct key *k,
			  uint64_t h, size_t *end)
{
	size_t pos;
	uint32_t cookie;

	dcp_index_for_each(&t->index, h, pos, cookie) {
		if (key_equal(&t->c[cookie], k)) {
			*end = pos;
			return cookie;
		}
	}
	*end = pos;
	return -1;
}

static int64_t index_lookup(const struct dcp_cookie_table *t,
			    const struct key *k)
{
	size_t pos;

	if (!t->index.slots)
		return -1;
	return index_find(t, k, hash_key(k), &pos);
}

/* Index cookie under its key unless that key already names another. */
static int index_add(struct dcp_cookie_table *t, uint32_t cookie)
{
	struct key k = cookie_key(&t->c[cookie]);
	uint64_t h = hash_key(&k);
	size_t pos;

	if (!t->index.slots && dcp_index_init(&t->index, 64) < 0)
		return dcp_error(ENOMEM, "cannot grow the cookie index");
	if (index_find(t, &k, h, &pos) >= 0)
		return 0;
	if (dcp_index_add(&t->index, pos, h, cookie, cookie_hash_of, t) < 0)
		return dcp_error(ENOMEM, "cannot grow the cookie index");
	return 0;
}

static void index_remove(struct dcp_cookie_table *t, uint32_t cookie)
{
	struct key k = cookie_key(&t->c[cookie]);
	size_t pos;

	if (!t->index.slots || !indexable(&t->c[cookie]))
		return;
	if (index_find(t, &k, hash_key(&k), &pos) == cookie)
		dcp_index_remove(&t->index, pos, cookie_hash_of, t);
}

static int dirty_push(struct dcp_cookie_table *t, uint32_t cookie)
{
	struct cookie *c = &t->c[cookie];

	if (c->dirty) {
		c->period = t->period;
		return 0;
	}
	if (t->nr_dirty == t->cap_dirty) {
		uint32_t *d = dcp_grow(t->dirty, &t->cap_dirty, t->nr_dirty + 1,
				       sizeof(*d));

		if (!d)
			return dcp_error(ENOMEM, "out of memory");
		t->dirty = d;
	}
	t->dirty[t->nr_dirty++] = cookie;
	c->dirty = true;
	c->period = t->period;
	return 0;
}

static void cookie_clear(struct cookie *c)
{
	size_t i;

	for (i = 0; i < c->nr_paths; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->name);
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Make room for cookies 0 .. n-1; new ones are holes. */
static int table_reserve(struct dcp_cookie_table *t, size_t n)
{
	size_t i;

	if (n > MAX_COOKIES)
		return dcp_error(EINVAL, "cookie %zu out of range", n - 1);
	if (n > t->cap) {
		struct cookie *c = dcp_grow(t->c, &t->cap, n, sizeof(*c));

		if (!c)
			return dcp_error(ENOMEM, "out of memory");
		t->c = c;
	}
	for (i = t->n; i < n; i++) {
		memset(&t->c[i], 0, sizeof(t->c[i]));
		t->c[i].fd = -1;
	}
	if (n > t->n)
		t->n = n;
	return 0;
}

/* 0 when path was already known, 1 when added. */
static int add_path(struct cookie *c, const char *path)
{
	size_t i;
	char *copy;

	for (i = 0; i < c->nr_paths; i++)
		if (strcmp(c->paths[i], path) == 0)
			return 0;
	if (c->nr_paths == c->cap_paths) {
		/* Most files are seen under one or two paths. */
		char **p = dcp_grow_from(c->paths, &c->cap_paths,
					 c->nr_paths + 1, sizeof(*p), 2);

		if (!p)
			return dcp_error(ENOMEM, "out of memory");
		c->paths = p;
	}
	copy = strdup(path);
	if (!copy)
		return dcp_error(ENOMEM, "out of memory");
	c->paths[c->nr_paths++] = copy;
	return 1;
}

static bool mark_matches(const struct dcp_file_id *mark,
			 const struct dcp_file_id *id)
{
	if (mark->build_id_size && id->build_id_size)
		return mark->build_id_size == id->build_id_size &&
		       memcmp(mark->build_id, id->build_id,
			      id->build_id_size) == 0;
	if (!mark->ino || !id->ino)
		return false;
	return mark->dev_major == id->dev_major &&
	       mark->dev_minor == id->dev_minor && mark->ino == id->ino &&
	       (!mark->ino_generation || !id->ino_generation ||
		mark->ino_generation == id->ino_generation);
}

bool dcp_cookie_table_id_is_marked(const struct dcp_cookie_table *t,
				   const struct dcp_file_id *id)
{
	size_t i;

	for (i = 0; i < t->nr_marks; i++)
		if (mark_matches(&t->marks[i], id))
			return true;
	return false;
}

DCPROF_API struct dcp_cookie_table *dcp_cookie_table_new(void)
{
	struct dcp_cookie_table *t = calloc(1, sizeof(*t));

	if (!t)
		return dcp_error_null(ENOMEM, "out of memory");
	if (table_reserve(t, 1) < 0)
		goto fail;
	t->c[0].present = true;
	t->c[0].kind = DCP_COOKIE_KIND_UNKNOWN;
	t->c[0].name = strdup("[unknown]");
	if (!t->c[0].name || dirty_push(t, 0) < 0)
		goto fail;
	return t;
fail:
	dcp_cookie_table_free(t);
	return dcp_error_null(ENOMEM, "out of memory");
}

DCPROF_API void dcp_cookie_table_free(struct dcp_cookie_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		cookie_clear(&t->c[i]);
	free(t->c);
	dcp_index_free(&t->index);
	free(t->marks);
	free(t->dirty);
	free(t);
}

static char *file_fallback_name(const struct dcp_file_id *id)
{
	char buf[2 * DCP_BUILD_ID_MAX + 64];

	if (id->build_id_size) {
		char hex[2 * DCP_BUILD_ID_MAX + 1];

		snprintf(
			buf, sizeof(buf), "[buildid:%s]",
			dcp_build_id_hex(id->build_id, id->build_id_size, hex));
	} else {
		snprintf(buf, sizeof(buf),
			 "[inode:%" PRIu32 ":%" PRIu32 ":%" PRIu64 "]",
			 id->dev_major, id->dev_minor, id->ino);
	}
	return strdup(buf);
}

/* Append a new present cookie and index it; its number or -errno. */
static int64_t cookie_new(struct dcp_cookie_table *t, enum dcp_cookie_kind kind,
			  const char *name, const struct dcp_file_id *id)
{
	uint32_t n = (uint32_t)t->n;
	struct cookie *c;
	int ret;

	ret = table_reserve(t, t->n + 1);
	if (ret < 0)
		return ret;
	c = &t->c[n];
	c->kind = kind;
	if (id)
		c->id = *id;
	c->name = name ? strdup(name) : file_fallback_name(&c->id);
	if (!c->name) {
		t->n--;
		return dcp_error(ENOMEM, "out of memory");
	}
	c->present = true;
	c->marked = dcp_cookie_table_id_is_marked(t, &c->id);
	ret = index_add(t, n);
	if (ret == 0)
		ret = dirty_push(t, n);
	if (ret < 0) {
		index_remove(t, n);
		cookie_clear(c);
		t->n--;
		return ret;
	}
	return n;
}

int64_t dcp_cookie_table_intern_file(struct dcp_cookie_table *t,
				     const struct dcp_file_id *id,
				     const char *path)
{
	struct key k = { .kind = DCP_COOKIE_KIND_FILE, .id = id };
	int64_t cookie;
	int ret;

	if (!id || id->build_id_size > DCP_BUILD_ID_MAX)
		return dcp_error(EINVAL, "invalid file identity");
	cookie = index_lookup(t, &k);
	if (cookie < 0) {
		cookie = cookie_new(t, DCP_COOKIE_KIND_FILE, NULL, id);
		if (cookie < 0)
			return cookie;
	}
	if (!path)
		return cookie;
	ret = add_path(&t->c[cookie], path);
	if (ret < 0)
		return ret;
	if (ret > 0) {
		ret = dirty_push(t, (uint32_t)cookie);
		if (ret < 0)
			return ret;
	}
	return cookie;
}

int64_t dcp_cookie_table_find_file(const struct dcp_cookie_table *t,
				   const struct dcp_file_id *id)
{
	struct key k = { .kind = DCP_COOKIE_KIND_FILE, .id = id };

	return index_lookup(t, &k);
}

static const char *default_special_name(enum dcp_cookie_kind kind)
{
	switch (kind) {
	case DCP_COOKIE_KIND_KERNEL:
		return "[kernel.kallsyms]";
	case DCP_COOKIE_KIND_ANON:
		return "[anon:exec]";
	case DCP_COOKIE_KIND_VDSO:
		return "[vdso]";
	case DCP_COOKIE_KIND_VSYSCALL:
		return "[vsyscall]";
	case DCP_COOKIE_KIND_JIT:
		return "[jit]";
	case DCP_COOKIE_KIND_IDLE:
		return "[idle]";
	default:
		return NULL;
	}
}

int64_t dcp_cookie_table_intern_special(struct dcp_cookie_table *t,
					enum dcp_cookie_kind kind,
					const char *name,
					const struct dcp_file_id *id)
{
	struct key k = { .kind = kind };
	int64_t cookie;

	if (kind == DCP_COOKIE_KIND_UNKNOWN)
		return DCP_COOKIE_UNKNOWN;
	if (kind == DCP_COOKIE_KIND_FILE ||
	    (unsigned)kind > DCP_COOKIE_KIND_IDLE)
		return dcp_error(EINVAL, "cookie kind %d is not special",
				 (int)kind);
	if (id && id->build_id_size > DCP_BUILD_ID_MAX)
		return dcp_error(EINVAL, "invalid build id size %u",
				 id->build_id_size);
	if (!name)
		name = default_special_name(kind);
	if (!name)
		return dcp_error(EINVAL, "a kernel module needs a name");
	k.name = name;
	cookie = index_lookup(t, &k);
	if (cookie >= 0) {
		struct cookie *c = &t->c[cookie];

		/* A build id learned later completes the entry. */
		if (id && id->build_id_size && !c->id.build_id_size) {
			c->id = *id;
			c->marked = c->marked ||
				    dcp_cookie_table_id_is_marked(t, id);
			return dirty_push(t, (uint32_t)cookie) < 0 ? -ENOMEM :
								     cookie;
		}
		return cookie;
	}
	return cookie_new(t, kind, name, id);
}

int dcp_cookie_table_insert(struct dcp_cookie_table *t,
			    const struct dcp_cookie_info *info)
{
	struct cookie fresh = { .fd = -1 };
	struct cookie *c;
	size_t i;
	int ret;

	if (info->build_id_size > DCP_BUILD_ID_MAX)
		return dcp_error(EINVAL,
				 "cookie %" PRIu32 ": invalid build id size %u",
				 info->cookie, info->build_id_size);
	if ((unsigned)info->kind > DCP_COOKIE_KIND_IDLE)
		return dcp_error(EINVAL, "cookie %" PRIu32 ": unknown kind %d",
				 info->cookie, (int)info->kind);
	fresh.present = true;
	fresh.kind = info->kind;
	fresh.marked = info->marked;
	fresh.samples = info->samples;
	dcp_file_id_from_info(&fresh.id, info);
	if (info->name)
		fresh.name = strdup(info->name);
	else if (info->kind == DCP_COOKIE_KIND_FILE)
		fresh.name = file_fallback_name(&fresh.id);
	else if (info->kind == DCP_COOKIE_KIND_UNKNOWN)
		fresh.name = strdup("[unknown]");
	else
		fresh.name = strdup(default_special_name(info->kind) ?
					    default_special_name(info->kind) :
					    "[module]");
	if (!fresh.name)
		goto nomem;
	for (i = 0; i < info->nr_paths; i++) {
		if (info->paths[i] && add_path(&fresh, info->paths[i]) < 0)
			goto nomem;
	}

	ret = table_reserve(t, (size_t)info->cookie + 1);
	if (ret < 0) {
		cookie_clear(&fresh);
		return ret;
	}
	c = &t->c[info->cookie];
	if (c->present) {
		index_remove(t, info->cookie);
		/* The handle belongs to the object, not to this record. */
		fresh.fd = c->fd;
		fresh.pin_tried = c->pin_tried;
		c->fd = -1;
	}
	fresh.dirty = c->dirty;
	cookie_clear(c);
	*c = fresh;
	if (indexable(c) && index_add(t, info->cookie) < 0)
		return -ENOMEM;
	return dirty_push(t, info->cookie);
nomem:
	cookie_clear(&fresh);
	return dcp_error(ENOMEM, "out of memory");
}

int dcp_cookie_table_mark_id(struct dcp_cookie_table *t,
			     const struct dcp_file_id *id)
{
	size_t i;

	if (id->build_id_size > DCP_BUILD_ID_MAX)
		return dcp_error(EINVAL, "invalid build id size %u",
				 id->build_id_size);
	if (!id->build_id_size && !id->ino)
		return dcp_error(EINVAL, "a mark needs a build id or an inode");
	if (t->nr_marks == t->cap_marks) {
		struct dcp_file_id *m =
			dcp_grow_from(t->marks, &t->cap_marks, t->nr_marks + 1,
				      sizeof(*m), 4);

		if (!m)
			return dcp_error(ENOMEM, "out of memory");
		t->marks = m;
	}
	t->marks[t->nr_marks++] = *id;
	for (i = 0; i < t->n; i++) {
		struct cookie *c = &t->c[i];

		if (c->present && !c->marked && mark_matches(id, &c->id))
			c->marked = true;
	}
	return 0;
}

int dcp_cookie_table_mark_arg(struct dcp_cookie_table *t, const char *arg)
{
	struct dcp_file_id id = { 0 };
	struct stat st;
	int ret;

	if (stat(arg, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return dcp_error(EINVAL, "'%s' is not a regular file",
					 arg);
		/* Marking by inode too covers files without a build id and
		 * maps reported without one. */
		id.dev_major = major(st.st_dev);
		id.dev_minor = minor(st.st_dev);
		id.ino = st.st_ino;
		ret = dcp_build_id_read_path(arg, id.build_id);
		if (ret > 0)
			id.build_id_size = (uint8_t)ret;
		else if (ret < 0 && ret != -ENOEXEC)
			dcp_log(DCP_LOG_WARN,
				"cannot read the build id of '%s', "
				"marking it by inode only: %s",
				arg, dcp_last_error());
		return dcp_cookie_table_mark_id(t, &id);
	}
	ret = dcp_build_id_parse_hex(arg, id.build_id);
	if (ret > 0) {
		id.build_id_size = (uint8_t)ret;
		return dcp_cookie_table_mark_id(t, &id);
	}
	return dcp_error(EINVAL, "'%s' is neither a file nor a build id", arg);
}

bool dcp_cookie_table_has_marks(const struct dcp_cookie_table *t)
{
	return t->nr_marks > 0;
}

static const struct cookie *get(const struct dcp_cookie_table *t,
				uint32_t cookie)
{
	if (cookie >= t->n || !t->c[cookie].present)
		return NULL;
	return &t->c[cookie];
}

bool dcp_cookie_table_has(const struct dcp_cookie_table *t, uint32_t cookie)
{
	return get(t, cookie) != NULL;
}

bool dcp_cookie_table_is_marked(const struct dcp_cookie_table *t,
				uint32_t cookie)
{
	const struct cookie *c = get(t, cookie);

	return c && c->marked;
}

void dcp_cookie_table_add_samples(struct dcp_cookie_table *t, uint32_t cookie,
				  uint64_t n)
{
	if (get(t, cookie))
		t->c[cookie].samples += n;
}

void dcp_cookie_table_new_period(struct dcp_cookie_table *t)
{
	t->period++;
	for (size_t i = 0; i < t->n; i++) {
		t->c[i].samples = 0;
		t->c[i].fp_breaks = 0;
	}
}

int dcp_cookie_table_want(struct dcp_cookie_table *t, uint32_t cookie)
{
	if (!get(t, cookie) || t->c[cookie].period == t->period)
		return 0;
	return dirty_push(t, cookie) < 0 ? -ENOMEM : 0;
}

uint64_t dcp_cookie_table_add_fp_breaks(struct dcp_cookie_table *t,
					uint32_t cookie, uint64_t n)
{
	return get(t, cookie) ? (t->c[cookie].fp_breaks += n) : 0;
}

int dcp_cookie_table_pin(struct dcp_cookie_table *t, uint32_t cookie, int fd)
{
	struct cookie *c;

	if (!get(t, cookie)) {
		if (fd >= 0)
			close(fd);
		return dcp_error(ENOENT, "no cookie %" PRIu32, cookie);
	}
	c = &t->c[cookie];
	c->pin_tried = true;
	if (c->fd >= 0) {
		if (fd >= 0 && fd != c->fd)
			close(fd);
		return 0;
	}
	if (fd >= 0 && t->max_pinned &&
	    dcp_cookie_table_nr_pinned(t) >= t->max_pinned) {
		close(fd);
		t->pins_refused++;
		return -EMFILE;
	}
	c->fd = fd;
	return 0;
}

void dcp_cookie_table_set_max_pinned(struct dcp_cookie_table *t, size_t max)
{
	t->max_pinned = max;
}

uint64_t dcp_cookie_table_pins_refused(const struct dcp_cookie_table *t)
{
	return t->pins_refused;
}

int dcp_cookie_table_pinned_fd(const struct dcp_cookie_table *t,
			       uint32_t cookie)
{
	const struct cookie *c = get(t, cookie);

	return c ? c->fd : -1;
}

bool dcp_cookie_table_pin_tried(const struct dcp_cookie_table *t,
				uint32_t cookie)
{
	const struct cookie *c = get(t, cookie);

	return c && c->pin_tried;
}

void dcp_cookie_table_set_pin_tried(struct dcp_cookie_table *t, uint32_t cookie)
{
	if (get(t, cookie))
		t->c[cookie].pin_tried = true;
}

size_t dcp_cookie_table_unpin_unneeded(struct dcp_cookie_table *t,
				       const struct dcp_cookie_set *needed)
{
	size_t closed = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct cookie *c = &t->c[i];

		if (!c->present || dcp_cookie_set_has(needed, (uint32_t)i))
			continue;
		if (c->fd >= 0) {
			close(c->fd);
			c->fd = -1;
			closed++;
		}
		c->pin_tried = false;
	}
	return closed;
}

size_t dcp_cookie_table_nr_pinned(const struct dcp_cookie_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->c[i].present && t->c[i].fd >= 0;
	return n;
}

size_t dcp_cookie_table_take_dirty(struct dcp_cookie_table *t, uint32_t *out,
				   size_t max)
{
	size_t n = t->nr_dirty - t->dirty_head, i;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		uint32_t cookie = t->dirty[t->dirty_head + i];

		out[i] = cookie;
		t->c[cookie].dirty = false;
	}
	t->dirty_head += n;
	if (t->dirty_head == t->nr_dirty)
		t->dirty_head = t->nr_dirty = 0;
	return n;
}

DCPROF_API size_t dcp_cookie_table_size(const struct dcp_cookie_table *t)
{
	return t->n;
}

DCPROF_API bool dcp_cookie_is_python(const struct dcp_cookie_info *info)
{
	return info->kind == DCP_COOKIE_KIND_JIT && info->name &&
	       !strncmp(info->name, DCP_PYTHON_COOKIE_PREFIX,
			strlen(DCP_PYTHON_COOKIE_PREFIX));
}

DCPROF_API int dcp_cookie_table_lookup(const struct dcp_cookie_table *t,
				       uint32_t cookie,
				       struct dcp_cookie_info *out)
{
	const struct cookie *c = get(t, cookie);
	struct dcp_cookie_info ci, *info = &ci;

	if (!DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_cookie_info, out);
	if (!c)
		return dcp_error(ENOENT, "no cookie %" PRIu32, cookie);
	memset(info, 0, sizeof(*info));
	info->cookie = cookie;
	info->kind = c->kind;
	info->name = c->kind == DCP_COOKIE_KIND_FILE && c->nr_paths ?
			     c->paths[0] :
			     c->name;
	memcpy(info->build_id, c->id.build_id, c->id.build_id_size);
	info->build_id_size = c->id.build_id_size;
	info->dev_major = c->id.dev_major;
	info->dev_minor = c->id.dev_minor;
	info->ino = c->id.ino;
	info->ino_generation = c->id.ino_generation;
	info->paths = (const char *const *)c->paths;
	info->nr_paths = c->nr_paths;
	info->marked = c->marked;
	info->samples = c->samples;
	dcp_sz_copy(out, info, sizeof(*info));
	return 0;
}
