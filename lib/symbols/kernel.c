// SPDX-License-Identifier: MIT
/*
 * The running kernel's layout: where its text and each module sit, so that
 * kernel instruction pointers become (cookie, offset) like user ones do.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildid_internal.h"
#include "grow.h"
#include "kallsyms_internal.h"
#include "log_internal.h"
#include "symbolize_internal.h"

/* The build id from a sysfs notes file (raw ELF notes); 0 when unreadable
 * or absent. */
static int read_notes_build_id(const char *path, uint8_t id[DCP_BUILD_ID_MAX])
{
	uint8_t buf[4096];
	size_t len = 0;
	ssize_t r;
	int fd, n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (len < sizeof(buf)) {
		r = read(fd, buf + len, sizeof(buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	n = dcp_build_id_from_notes(buf, len, id);
	return n > 0 ? n : 0;
}

/*
 * The address of _text; 0 when it was not found. It is among the first
 * lines of /proc/kallsyms, so the read stops there: the kernel formats the
 * file line by line as it is read, and the whole of it costs tens of
 * milliseconds (the symbolizer reads it all, once, only when kernel frames
 * were sampled).
 */
static int read_text_start(uint64_t *text)
{
	char line[512];
	FILE *f;

	*text = 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return dcp_error(errno, "cannot open '/proc/kallsyms': %s",
				 strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct dcp_kallsyms_line l;

		if (dcp_kallsyms_parse_line(line, &l) && l.name_len == 5 &&
		    memcmp(l.name, "_text", 5) == 0) {
			*text = l.addr;
			break;
		}
	}
	fclose(f);
	return 0;
}

static int module_cmp(const void *a, const void *b)
{
	const struct dcp_kernel_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int load_modules(struct dcp_kernel_layout *k,
			struct dcp_cookie_table *cookies)
{
	size_t cap = 0, hidden = 0;
	char line[4096];
	FILE *f;

	f = fopen("/proc/modules", "re");
	if (!f) {
		/* A kernel built without module support has no such file. */
		if (errno == ENOENT)
			return 0;
		return dcp_error(errno, "cannot open '/proc/modules': %s",
				 strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		struct dcp_kernel_module *m;
		struct dcp_file_id id;
		char name[64], path[128 + 64];
		uint64_t size, addr;
		int64_t cookie;
		int n;

		if (sscanf(line, "%63s %" SCNu64 " %*s %*s %*s %" SCNx64, name,
			   &size, &addr) != 3)
			continue;
		if (addr == 0) {
			hidden++;
			continue;
		}
		m = dcp_grow(k->modules, &cap, k->nr_modules + 1, sizeof(*m));
		if (!m) {
			fclose(f);
			return dcp_error(ENOMEM,
					 "cannot load kernel modules: %s",
					 strerror(ENOMEM));
		}
		k->modules = m;
		memset(&id, 0, sizeof(id));
		snprintf(path, sizeof(path),
			 "/sys/module/%s/notes/.note.gnu.build-id", name);
		n = read_notes_build_id(path, id.build_id);
		id.build_id_size = (uint8_t)n;
		cookie = dcp_cookie_table_intern_special(
			cookies, DCP_COOKIE_KIND_MODULE, name, &id);
		if (cookie < 0) {
			fclose(f);
			return (int)cookie;
		}
		m = &k->modules[k->nr_modules++];
		memset(m, 0, sizeof(*m));
		m->start = addr;
		m->end = addr + size;
		m->cookie = (uint32_t)cookie;
		snprintf(m->name, sizeof(m->name), "%s", name);
		memcpy(m->build_id, id.build_id, id.build_id_size);
		m->build_id_size = id.build_id_size;
	}
	fclose(f);
	if (hidden)
		dcp_log(DCP_LOG_WARN,
			"%zu kernel modules have hidden addresses "
			"(kernel.kptr_restrict): their frames stay unattributed",
			hidden);
	qsort(k->modules, k->nr_modules, sizeof(*k->modules), module_cmp);
	return 0;
}

int dcp_kernel_layout_load(struct dcp_kernel_layout *k,
			   struct dcp_cookie_table *cookies)
{
	struct dcp_file_id id;
	uint64_t text;
	int64_t cookie;
	int n, err;

	memset(k, 0, sizeof(*k));
	err = read_text_start(&text);
	if (err < 0)
		return err;

	memset(&id, 0, sizeof(id));
	n = read_notes_build_id("/sys/kernel/notes", id.build_id);
	id.build_id_size = (uint8_t)n;
	cookie = dcp_cookie_table_intern_special(
		cookies, DCP_COOKIE_KIND_KERNEL, "[kernel.kallsyms]", &id);
	if (cookie < 0)
		return (int)cookie;
	k->kernel_cookie = (uint32_t)cookie;

	if (text == 0)
		return dcp_error(
			EPERM, "kernel addresses are hidden: '/proc/kallsyms' "
			       "shows no address for '_text' (lower "
			       "kernel.kptr_restrict or run with CAP_SYSLOG)");
	k->text_start = text;

	err = load_modules(k, cookies);
	if (err < 0) {
		dcp_kernel_layout_free(k);
		k->kernel_cookie = (uint32_t)cookie;
		k->text_start = text;
		return err;
	}
	return 0;
}

void dcp_kernel_layout_free(struct dcp_kernel_layout *k)
{
	if (!k)
		return;
	free(k->modules);
	k->modules = NULL;
	k->nr_modules = 0;
}

uint32_t dcp_kernel_layout_resolve(const struct dcp_kernel_layout *k,
				   uint64_t ip, uint64_t *offset)
{
	size_t lo = 0, hi = k->nr_modules;

	/* The last module starting at or below ip is the only candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->modules[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && ip < k->modules[lo - 1].end) {
		*offset = ip - k->modules[lo - 1].start;
		return k->modules[lo - 1].cookie;
	}
	*offset = ip - k->text_start;
	return k->kernel_cookie;
}
