// SPDX-License-Identifier: MIT
/*
 * The recorder's cgroups. The kernel names a sample's cgroup by an id
 * (the cgroup directory's kernfs node, which name_to_handle_at() returns
 * as its handle); paths are learned from PERF_RECORD_CGROUP where the
 * ring has it and otherwise from a walk of the hierarchy, done again when
 * a sample comes from a cgroup not seen yet (a cgroup made after the last
 * walk), at most every RESCAN_NS.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "aggregate_internal.h"
#include "cgroup_internal.h"
#include "grow.h"
#include "hash.h"
#include "index.h"
#include "log_internal.h"

#include "dcprof/dcprof.h"

/* a new cgroup id looks the hierarchy over at most this often; an id a
 * walk did not find (a cgroup gone already, or out of this mount's
 * view), at most this often again */
#define RESCAN_NS 20000000ull
#define RESCAN_UNFOUND_NS 1000000000ull
#define MAX_DEPTH 32
/* a runtime's metadata file read for the container's name, at most */
#define MAX_METADATA (1u << 20)

struct cgroup_entry {
	uint64_t id;
	char *path; /* NULL: not found in the hierarchy */
	char *name; /* the runtime's name of the container, or NULL */
	uint32_t agg_id; /* 0: not interned in the current aggregate */
	bool kept;
	bool scanned_since; /* not found by a walk made after its first sight */
};

struct dcp_cgroup_table {
	char *root;
	struct cgroup_entry *entries;
	size_t nr, cap;
	struct dcp_index index;
	char **filter; /* paths from the root, "/a/b" */
	size_t nr_filter;
	uint64_t last_scan;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t entry_hash_of(const void *ctx, uint32_t i)
{
	return dcp_hash_fmix64(
		((const struct dcp_cgroup_table *)ctx)->entries[i].id);
}

/* id's entry; NULL with *free_pos the slot a new one takes. */
static struct cgroup_entry *find_at(struct dcp_cgroup_table *t, uint64_t id,
				    size_t *free_pos)
{
	uint64_t h = dcp_hash_fmix64(id);
	size_t pos;
	uint32_t i;

	dcp_index_for_each(&t->index, h, pos, i) {
		if (t->entries[i].id == id)
			return &t->entries[i];
	}
	*free_pos = pos;
	return NULL;
}

static struct cgroup_entry *find(struct dcp_cgroup_table *t, uint64_t id)
{
	size_t pos;

	return find_at(t, id, &pos);
}

static bool filter_keeps(const struct dcp_cgroup_table *t, const char *path)
{
	if (!t->nr_filter)
		return true;
	for (size_t i = 0; path && i < t->nr_filter; i++) {
		size_t n = strlen(t->filter[i]);

		/* the root's "/" keeps every path */
		if (n == 1 || (!strncmp(path, t->filter[i], n) &&
			       (path[n] == '/' || !path[n])))
			return true;
	}
	return false;
}

/*
 * The name docker keeps for a container ("Name":"/NAME" in its
 * config.v2.json), read where the daemon's files are readable.
 */
static char *docker_name(const char *container_id)
{
	char path[160], *buf, *name = NULL, *s, *e;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path),
		 "/var/lib/docker/containers/%s/config.v2.json", container_id);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(MAX_METADATA + 1);
	n = buf ? read(fd, buf, MAX_METADATA) : -1;
	close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	s = strstr(buf, "\"Name\":\"");
	if (s) {
		s += 8;
		if (*s == '/')
			s++;
		e = strchr(s, '"');
		if (e && e > s && e - s < 256)
			name = strndup(s, (size_t)(e - s));
	}
	free(buf);
	return name;
}

static char *runtime_name(const char *path)
{
	struct dcp_cgroup_names n = { .sz = sizeof(n) };

	if (dcp_cgroup_parse_path(path, &n) || !n.container_id[0])
		return NULL;
	if (!strcmp(n.runtime, "docker"))
		return docker_name(n.container_id);
	return NULL;
}

/* id's entry with its path (NULL: unknown), replacing an unknown one. */
static int add(struct dcp_cgroup_table *t, uint64_t id, const char *path)
{
	size_t pos;
	struct cgroup_entry *e = find_at(t, id, &pos);
	int ret;

	if (e && (e->path || !path))
		return 0;
	if (!e) {
		if (t->nr >= DCP_INDEX_MAX_ID)
			return -ENOMEM;
		e = dcp_grow(t->entries, &t->cap, t->nr + 1,
			     sizeof(*t->entries));
		if (!e)
			return -ENOMEM;
		t->entries = e;
		ret = dcp_index_add(&t->index, pos, dcp_hash_fmix64(id),
				    (uint32_t)t->nr, entry_hash_of, t);
		if (ret < 0)
			return ret;
		e = &t->entries[t->nr++];
		memset(e, 0, sizeof(*e));
		e->id = id;
	}
	if (path) {
		e->path = strdup(path);
		if (!e->path)
			return -ENOMEM;
		e->name = runtime_name(path);
		/* a cgroup seen before its path was: interned again */
		e->agg_id = 0;
	}
	e->kept = filter_keeps(t, e->path);
	return 0;
}

/* The kernel's id of a cgroup directory (at dirfd/name): 0 when none. */
static uint64_t cgroup_id_at(int dirfd, const char *name)
{
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = { .h.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(dirfd, name, &fh.h, &mount_id, 0) < 0 ||
	    fh.h.handle_bytes != sizeof(uint64_t))
		return 0;
	return fh.id;
}

static int scan_dir(struct dcp_cgroup_table *t, int dirfd, char *path,
		    size_t len, size_t cap, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		uint64_t id;
		int fd;

		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    len + 1 + n >= cap)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		id = cgroup_id_at(dirfd, de->d_name);
		if (id)
			ret = add(t, id, path);
		if (ret || depth >= MAX_DEPTH)
			continue;
		fd = openat(dirfd, de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			ret = scan_dir(t, fd, path, len + 1 + n, cap,
				       depth + 1);
	}
	path[len] = '\0';
	closedir(d);
	return ret;
}

/* Every cgroup of the hierarchy: 0 or -ENOMEM. */
static int scan(struct dcp_cgroup_table *t)
{
	char path[4096] = "";
	uint64_t id;
	int fd, ret;

	t->last_scan = now_ns();
	id = cgroup_id_at(AT_FDCWD, t->root);
	if (id && (ret = add(t, id, "/")) < 0)
		return ret;
	fd = open(t->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	return scan_dir(t, fd, path, 0, sizeof(path), 0);
}

/* The first cgroup2 mount of /proc/self/mounts: NULL when none. */
static char *find_root(void)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[4096], dir[4096], type[64];
	char *root = NULL;

	if (!f)
		return NULL;
	while (!root && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %4095s %63s", dir, type) == 2 &&
		    !strcmp(type, "cgroup2"))
			root = strdup(dir);
	fclose(f);
	return root;
}

static int take_filter(struct dcp_cgroup_table *t, const char *const *filter,
		       size_t nr)
{
	struct stat st;
	char *full, *f;
	size_t n;

	t->filter = calloc(nr ? nr : 1, sizeof(*t->filter));
	if (!t->filter)
		return dcp_error(ENOMEM, "out of memory");
	for (size_t i = 0; i < nr; i++) {
		const char *p = filter[i];

		while (*p == '/')
			p++;
		if (asprintf(&f, "/%s", p) < 0)
			return dcp_error(ENOMEM, "out of memory");
		t->filter[t->nr_filter++] = f;
		n = strlen(f);
		while (n > 1 && f[n - 1] == '/')
			f[--n] = '\0';
		if (strstr(f, "/..") || asprintf(&full, "%s%s", t->root, f) < 0)
			return dcp_error(EINVAL, "bad cgroup path '%s'",
					 filter[i]);
		n = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
		free(full);
		if (!n)
			return dcp_error(ENOENT,
					 "no cgroup '%s' in the cgroup v2 "
					 "hierarchy at %s",
					 filter[i], t->root);
	}
	return 0;
}

struct dcp_cgroup_table *dcp_cgroup_table_new(const char *const *filter,
					      size_t nr_filter)
{
	struct dcp_cgroup_table *t = calloc(1, sizeof(*t));
	int ret;

	if (!t || dcp_index_init(&t->index, 64) < 0) {
		free(t);
		return dcp_error_null(ENOMEM, "out of memory");
	}
	t->root = find_root();
	if (!t->root) {
		dcp_cgroup_table_free(t);
		return dcp_error_null(ENOENT,
				      "no cgroup v2 hierarchy is "
				      "mounted: samples carry no cgroup");
	}
	ret = take_filter(t, filter, nr_filter);
	if (!ret)
		ret = scan(t);
	if (ret) {
		dcp_cgroup_table_free(t);
		errno = -ret;
		return NULL;
	}
	return t;
}

void dcp_cgroup_table_free(struct dcp_cgroup_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr; i++) {
		free(t->entries[i].path);
		free(t->entries[i].name);
	}
	for (size_t i = 0; i < t->nr_filter; i++)
		free(t->filter[i]);
	free(t->filter);
	free(t->entries);
	dcp_index_free(&t->index);
	free(t->root);
	free(t);
}

size_t dcp_cgroup_table_nr_filter(const struct dcp_cgroup_table *t)
{
	return t->nr_filter;
}

int dcp_cgroup_table_filter_fds(const struct dcp_cgroup_table *t, int *fds,
				size_t max)
{
	char *full;
	size_t i;

	for (i = 0; i < t->nr_filter && i < max; i++) {
		if (asprintf(&full, "%s%s", t->root, t->filter[i]) < 0)
			fds[i] = -1;
		else
			fds[i] = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(full);
		if (fds[i] < 0) {
			int err = errno;

			while (i--)
				close(fds[i]);
			return dcp_error(err, "cannot open cgroup '%s': %s",
					 t->filter[i], strerror(err));
		}
	}
	return (int)i;
}

int dcp_cgroup_table_learn_record(struct dcp_cgroup_table *t,
				  const struct perf_event_header *h)
{
	const char *path = (const char *)(h + 1) + sizeof(uint64_t);
	uint64_t id;

	if (h->size <= sizeof(*h) + sizeof(id) ||
	    !memchr(path, '\0', h->size - sizeof(*h) - sizeof(id)))
		return 0;
	memcpy(&id, h + 1, sizeof(id));
	return add(t, id, path);
}

int64_t dcp_cgroup_table_intern(struct dcp_cgroup_table *t,
				struct dcp_aggregate *agg, uint64_t id,
				bool *kept)
{
	struct dcp_agg_cgroup c = { .kernel_id = id,
				    .name_id = DCP_AGG_NO_STRING };
	struct cgroup_entry *e;
	int64_t s;
	int ret;

	*kept = !t->nr_filter;
	if (!id)
		return 0;
	e = find(t, id);
	if ((!e || !e->path) &&
	    now_ns() - t->last_scan >=
		    (e && e->scanned_since ? RESCAN_UNFOUND_NS : RESCAN_NS)) {
		ret = scan(t);
		if (ret)
			return dcp_error(ret, "out of memory");
		e = find(t, id);
		if (e && !e->path)
			e->scanned_since = true;
	}
	if (!e) {
		ret = add(t, id, NULL);
		if (ret)
			return dcp_error(ret, "out of memory");
		e = find(t, id);
	}
	*kept = e->kept;
	if (e->agg_id)
		return e->agg_id;
	/* a cgroup gone before a walk found it keeps its id alone */
	s = dcp_aggregate_intern_string(agg, e->path ? e->path : "");
	if (s < 0)
		return s;
	c.path_id = (uint32_t)s;
	if (e->name) {
		s = dcp_aggregate_intern_string(agg, e->name);
		if (s < 0)
			return s;
		c.name_id = (uint32_t)s;
	}
	s = dcp_aggregate_intern_cgroup(agg, &c);
	if (s > 0)
		e->agg_id = (uint32_t)s;
	return s;
}

void dcp_cgroup_table_new_aggregate(struct dcp_cgroup_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		t->entries[i].agg_id = 0;
}
