// SPDX-License-Identifier: MIT
/*
 * record --off-cpu with -p or -a on the perf ring: the threads already
 * off the CPU when recording begins (a hung one, a daemon's idle worker)
 * have no switch-out to come, so their waits would never be charged. They
 * are found in /proc: a thread's state (stat: S, D or I), its kernel
 * stack (stack: "name+0xoff/0xsize" lines, root only), turned into
 * addresses through /proc/kallsyms (read before, at the source's start:
 * 60 ms that would otherwise lie between the scan and the recording's
 * start), and the user ip of the system call it waits in (syscall). The
 * tracker charges each from the scan as if switched out then; a
 * switch-out of before that still in the rings gives it its whole stack.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "hash.h"
#include "index.h"
#include "kallsyms_internal.h"
#include "log_internal.h"
#include "off_cpu_internal.h"
#include "recorder_internal.h"

/* Kernel frames kept of a thread found waiting. */
#define SEED_MAX_FRAMES 64u

struct seed_frame {
	uint64_t name; /* the hash of its function's name */
	uint64_t offset;
};

struct seed_thread {
	uint32_t pid, tid, state;
	uint64_t user_ip; /* 0: not known */
	uint32_t first, nr; /* its frames */
};

struct seed {
	struct seed_thread *threads;
	size_t nr_threads, cap_threads;
	struct seed_frame *frames;
	size_t nr_frames, cap_frames;
};

/* A kernel text symbol: the hash of its name, its address. */
struct kernel_name {
	uint64_t hash;
	uint64_t addr;
};

/*
 * The kernel's text symbols, by the top byte of their names' hashes in
 * KERNEL_NAME_BUCKETS arrays: a name is looked for in about 500 of the
 * 120,000 (once: struct name_memo). Neither sorted nor hashed whole at
 * the start: either cost a tenth of the recorder's start with --off-cpu;
 * nor resolved in one pass over them all after the scan: 2 ms between
 * the scan and the recording's start.
 */
#define KERNEL_NAME_BUCKETS 256u

struct kernel_name_bucket {
	struct kernel_name *names;
	size_t nr, cap;
};

struct dcp_kernel_names {
	struct kernel_name_bucket buckets[KERNEL_NAME_BUCKETS];
};

/* path into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((size_t)len < size - 1 &&
	       (n = read(fd, buf + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	return len;
}

/* The frames of a stack file's text: "[<0>] name+0xoff/0xsize" lines. */
static int add_frames(struct seed *s, struct seed_thread *th, char *text)
{
	char *line, *save = NULL;

	th->first = (uint32_t)s->nr_frames;
	for (line = strtok_r(text, "\n", &save);
	     line && th->nr < SEED_MAX_FRAMES;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = strchr(line, ']'), *plus;
		struct seed_frame *f;
		void *p;

		if (!name)
			continue;
		name++;
		while (*name == ' ')
			name++;
		plus = strstr(name, "+0x");
		if (!plus || plus == name)
			continue;
		p = dcp_grow(s->frames, &s->cap_frames, s->nr_frames + 1,
			     sizeof(*s->frames));
		if (!p)
			return -ENOMEM;
		s->frames = p;
		f = &s->frames[s->nr_frames];
		f->offset = strtoull(plus + 3, NULL, 16);
		f->name = dcp_hash_fnv1a(DCP_FNV_OFFSET, name,
					 (size_t)(plus - name));
		s->nr_frames++;
		th->nr++;
	}
	return 0;
}

/* The user ip of the system call a thread waits in: the last field of
 * /proc/.../syscall ("running" or "-1 ..." when there is none). */
static uint64_t user_ip(const char *text)
{
	const char *last = strrchr(text, ' ');

	if (!isdigit((unsigned char)text[0]) || !last)
		return 0;
	return strtoull(last + 1, NULL, 16);
}

/* One thread of pid: kept when it is off the CPU (S, D, I). */
static int look_at_thread(struct seed *s, uint32_t pid, uint32_t tid)
{
	char path[64], buf[4096];
	struct seed_thread *th;
	const char *paren;
	uint32_t state;
	void *p;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0; /* gone */
	paren = strrchr(buf, ')');
	if (!paren || paren[1] != ' ')
		return 0;
	switch (paren[2]) {
	case 'S':
	case 'I': /* an idle kernel worker sleeps, it does not block */
		state = DCP_OFF_CPU_INTERRUPTIBLE;
		break;
	case 'D':
		state = DCP_OFF_CPU_UNINTERRUPTIBLE;
		break;
	default:
		return 0; /* running or runnable: its switch-out will come */
	}
	p = dcp_grow(s->threads, &s->cap_threads, s->nr_threads + 1,
		     sizeof(*s->threads));
	if (!p)
		return -ENOMEM;
	s->threads = p;
	th = &s->threads[s->nr_threads++];
	*th = (struct seed_thread){ .pid = pid, .tid = tid, .state = state };
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		th->user_ip = user_ip(buf);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stack", pid, tid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		return add_frames(s, th, buf);
	return 0;
}

static int look_at_process(struct seed *s, uint32_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0; /* gone, or hidden */
	while (!ret && (d = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(d->d_name, &end, 10);

		if (*end || !tid)
			continue;
		ret = look_at_thread(s, pid, (uint32_t)tid);
	}
	closedir(dir);
	return ret;
}

struct dcp_kernel_names *dcp_kernel_names_load(void)
{
	struct dcp_kernel_names *k = calloc(1, sizeof(*k));
	char line[512], *buf;
	FILE *f;

	if (!k)
		return NULL;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return k; /* no names: the frames are dropped */
	/* a read() per 4 KiB of its 6 MB otherwise */
	buf = malloc(1 << 16);
	if (buf)
		setvbuf(f, buf, _IOFBF, 1 << 16);
	while (fgets(line, sizeof(line), f)) {
		struct dcp_kallsyms_line l;
		struct kernel_name_bucket *b;
		uint64_t h;
		void *p;

		if (!dcp_kallsyms_parse_line(line, &l) || !l.addr ||
		    (l.type != 't' && l.type != 'T'))
			continue;
		h = dcp_hash_fnv1a(DCP_FNV_OFFSET, l.name, l.name_len);
		b = &k->buckets[h >> 56];
		p = dcp_grow(b->names, &b->cap, b->nr + 1, sizeof(*b->names));
		if (!p) {
			fclose(f);
			free(buf);
			dcp_kernel_names_free(k);
			return NULL;
		}
		b->names = p;
		b->names[b->nr++] = (struct kernel_name){ h, l.addr };
	}
	fclose(f);
	free(buf);
	return k;
}

void dcp_kernel_names_free(struct dcp_kernel_names *k)
{
	for (size_t i = 0; k && i < KERNEL_NAME_BUCKETS; i++)
		free(k->buckets[i].names);
	free(k);
}

/* The address of a kernel text symbol by its name's hash (the lowest of a
 * name given twice), 0 when unknown. */
static uint64_t address_of(const struct dcp_kernel_names *k, uint64_t hash)
{
	const struct kernel_name_bucket *b;
	uint64_t addr = 0;

	if (!k)
		return 0;
	b = &k->buckets[hash >> 56];
	for (size_t i = 0; i < b->nr; i++)
		if (b->names[i].hash == hash &&
		    (!addr || b->names[i].addr < addr))
			addr = b->names[i].addr;
	return addr;
}

/*
 * Each distinct name's address, looked for once: the waiting threads of a
 * machine share a few hundred names among their frames, and each look
 * scans a bucket. The names' hashes are their keys; room for every frame's
 * name is allocated first, so the index never grows.
 */
struct name_memo {
	struct kernel_name *names;
	size_t nr;
	struct dcp_index index;
};

static uint64_t memo_hash_of(const void *ctx, uint32_t i)
{
	return ((const struct name_memo *)ctx)->names[i].hash;
}

static uint64_t memo_address(struct name_memo *m,
			     const struct dcp_kernel_names *k, uint64_t hash)
{
	struct kernel_name *n;
	size_t pos;
	uint32_t i;

	if (!m->names || !hash)
		return address_of(k, hash);
	dcp_index_for_each(&m->index, hash, pos, i) {
		if (m->names[i].hash == hash)
			return m->names[i].addr;
	}
	n = &m->names[m->nr];
	n->hash = hash;
	n->addr = address_of(k, hash);
	if (dcp_index_add(&m->index, pos, hash, (uint32_t)m->nr, memo_hash_of,
			  m) == 0)
		m->nr++;
	return n->addr;
}

static int hand_over(struct dcp_off_cpu_tracker *t, const struct seed *s,
		     const struct dcp_kernel_names *k, uint64_t time)
{
	uint64_t chain[SEED_MAX_FRAMES + 3];
	struct name_memo memo = { 0 };
	size_t slots = 16;
	int ret = 0;

	while (slots < 2 * s->nr_frames)
		slots *= 2;
	/* without it, each frame is looked for on its own */
	memo.names =
		calloc(s->nr_frames ? s->nr_frames : 1, sizeof(*memo.names));
	if (memo.names && dcp_index_init(&memo.index, slots) < 0) {
		free(memo.names);
		memo.names = NULL;
	}

	for (size_t i = 0; i < s->nr_threads && !ret; i++) {
		const struct seed_thread *th = &s->threads[i];
		uint64_t n = 0;

		chain[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		for (uint32_t j = 0; j < th->nr; j++) {
			const struct seed_frame *f = &s->frames[th->first + j];
			uint64_t addr = memo_address(&memo, k, f->name);

			if (addr)
				chain[n++] = addr + f->offset;
		}
		if (n == 1)
			n = 0; /* no kernel frame known */
		if (th->user_ip) {
			chain[n++] = (uint64_t)PERF_CONTEXT_USER;
			chain[n++] = th->user_ip;
		}
		ret = dcp_off_cpu_under_way(t, time, th->pid, th->tid,
					    th->state, chain, n);
	}
	free(memo.names);
	dcp_index_free(&memo.index);
	return ret;
}

int dcp_off_cpu_seed(struct dcp_off_cpu_tracker *t,
		     const struct dcp_kernel_names *k, const pid_t *pids,
		     size_t nr_pids)
{
	struct seed s = { 0 };
	int ret = 0;

	if (pids) {
		for (size_t i = 0; i < nr_pids && !ret; i++)
			ret = look_at_process(&s, (uint32_t)pids[i]);
	} else {
		DIR *dir = opendir("/proc");
		struct dirent *d;

		if (!dir)
			return dcp_error(errno, "cannot read /proc: %s",
					 strerror(errno));
		while (!ret && (d = readdir(dir))) {
			char *end;
			unsigned long pid = strtoul(d->d_name, &end, 10);

			if (!*end && pid)
				ret = look_at_process(&s, (uint32_t)pid);
		}
		closedir(dir);
	}
	/* the waits begin when they were seen: the scan takes a few ms */
	if (!ret)
		ret = hand_over(t, &s, k, dcp_now_ns(CLOCK_MONOTONIC));
	if (ret == -ENOMEM)
		ret = dcp_error(ENOMEM, "out of memory");
	free(s.threads);
	free(s.frames);
	return ret;
}
