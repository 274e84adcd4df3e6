// SPDX-License-Identifier: MIT
/*
 * JIT perf maps (/tmp/perf-PID.map): opened safely for a privileged
 * recorder, parsed into a sorted table, and searched by address.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "log_internal.h"
#include "perfmap_internal.h"

#define PERFMAP_MAX_BYTES (256u << 20)

/* A hex number with an optional 0x, then at least one blank. */
static bool parse_hex(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (++digits > 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits || p == end || (*p != ' ' && *p != '\t'))
		return false;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*pp = p;
	*v = x;
	return true;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct dcp_perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void dcp_perfmap_free(struct dcp_perfmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m->max_end);
	free(m->names);
	free(m);
}

struct dcp_perfmap *dcp_perfmap_parse(const char *text, size_t len)
{
	struct dcp_perfmap *m = calloc(1, sizeof(*m));
	const char *p = text, *end = text + len;
	size_t cap = 0, nlen = 0;

	if (!m)
		goto nomem;
	/* Names are copied into one block, NUL-terminated: never larger
	 * than the text plus one byte per line. */
	m->names = malloc(len + 1);
	if (!m->names)
		goto nomem;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *name_end;
		uint64_t start, size;
		struct dcp_perfmap_entry *e;

		if (!eol)
			eol = end;
		name_end = eol;
		while (name_end > q &&
		       (name_end[-1] == '\r' || name_end[-1] == ' ' ||
			name_end[-1] == '\t'))
			name_end--;
		if (!parse_hex(&q, name_end, &start) ||
		    !parse_hex(&q, name_end, &size) || q >= name_end ||
		    size == 0 || start + size < start ||
		    memchr(q, '\0', (size_t)(name_end - q))) {
			if (eol > p)
				m->skipped++;
			p = eol + 1;
			continue;
		}
		e = dcp_grow_from(m->e, &cap, m->n + 1, sizeof(*m->e), 256);
		if (!e)
			goto nomem;
		m->e = e;
		e = &m->e[m->n];
		e->start = start;
		e->size = size;
		e->seq = (uint32_t)m->n;
		/* an offset for now: names may still move */
		e->name = (const char *)(uintptr_t)nlen;
		memcpy(m->names + nlen, q, (size_t)(name_end - q));
		nlen += (size_t)(name_end - q);
		m->names[nlen++] = '\0';
		m->n++;
		p = eol + 1;
	}
	for (size_t i = 0; i < m->n; i++)
		m->e[i].name = m->names + (uintptr_t)m->e[i].name;
	if (m->n) {
		qsort(m->e, m->n, sizeof(*m->e), entry_cmp);
		m->max_end = malloc(m->n * sizeof(*m->max_end));
		if (!m->max_end)
			goto nomem;
		for (size_t i = 0; i < m->n; i++) {
			uint64_t e = m->e[i].start + m->e[i].size;

			m->max_end[i] = i && m->max_end[i - 1] > e ?
						m->max_end[i - 1] :
						e;
		}
	}
	return m;
nomem:
	dcp_perfmap_free(m);
	return dcp_error_null(ENOMEM, "cannot read a perf map: %s",
			      strerror(ENOMEM));
}

struct dcp_perfmap *dcp_perfmap_read_fd(int fd)
{
	size_t cap = 1 << 16, len = 0;
	struct dcp_perfmap *m;
	char *buf = malloc(cap);
	int err;

	if (!buf)
		return dcp_error_null(ENOMEM, "cannot read a perf map: %s",
				      strerror(ENOMEM));
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb;

			if (cap >= PERFMAP_MAX_BYTES)
				break;
			nb = dcp_grow(buf, &cap, len + 1, 1);
			if (!nb) {
				free(buf);
				return dcp_error_null(
					ENOMEM, "cannot read a perf map: %s",
					strerror(ENOMEM));
			}
			buf = nb;
		}
		r = pread(fd, buf + len, cap - len, (off_t)len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			free(buf);
			return dcp_error_null(err, "cannot read a perf map: %s",
					      strerror(err));
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	m = dcp_perfmap_parse(buf, len);
	free(buf);
	return m;
}

const struct dcp_perfmap_entry *dcp_perfmap_lookup(const struct dcp_perfmap *m,
						   uint64_t addr)
{
	const struct dcp_perfmap_entry *best = NULL;
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries before lo start at or below addr; walk back while one of
	 * them may still reach past it. */
	for (size_t j = lo; j > 0 && m->max_end[j - 1] > addr; j--) {
		const struct dcp_perfmap_entry *e = &m->e[j - 1];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

int dcp_perfmap_open_path(const char *path, uid_t owner)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ELOOP ? EPERM : errno;
		return dcp_error(err, "cannot open '%s': %s", path,
				 errno == ELOOP ? "it is a symbolic link" :
						  strerror(err));
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return dcp_error(err, "cannot stat '%s': %s", path,
				 strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return dcp_error(EPERM, "'%s' is not a regular file", path);
	}
	if (st.st_uid != owner && st.st_uid != 0) {
		close(fd);
		return dcp_error(EPERM,
				 "'%s' belongs to uid %u, not to the process's "
				 "user (uid %u) or root: ignored",
				 path, (unsigned)st.st_uid, (unsigned)owner);
	}
	return fd;
}

int dcp_perfmap_open_for(pid_t pid, uid_t owner)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return dcp_perfmap_open_path(path, owner);
}
