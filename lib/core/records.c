// SPDX-License-Identifier: MIT
/*
 * The decoders of the perf records dcprof reads: samples (every call-graph
 * mode, with their lengths checked against the record) and the sync
 * records, whether read live from the kernel or injected by the collection.
 */
#include <errno.h>
#include <string.h>

#include "log_internal.h"
#include "records_internal.h"

static bool take_u64(const unsigned char **p, const unsigned char *end,
		     uint64_t *v)
{
	if ((size_t)(end - *p) < sizeof(*v))
		return false;
	memcpy(v, *p, sizeof(*v));
	*p += sizeof(*v);
	return true;
}

int dcp_sample_parse(const struct perf_event_header *h,
		     const struct dcp_sample_layout *l, struct dcp_sample *s)
{
	const unsigned char *p = (const unsigned char *)(h + 1);
	const unsigned char *end = (const unsigned char *)h + h->size;
	uint64_t v = 0;

	memset(s, 0, sizeof(*s));
	if (h->size < sizeof(*h) + 6 * sizeof(uint64_t))
		return -EBADMSG;
	take_u64(&p, end, &s->id);
	take_u64(&p, end, &s->ip);
	take_u64(&p, end, &v);
	s->pid = (uint32_t)v;
	s->tid = (uint32_t)(v >> 32);
	take_u64(&p, end, &s->time);
	take_u64(&p, end, &v);
	s->cpu = (uint32_t)v;
	take_u64(&p, end, &s->period);
	if (l->callchain) {
		if (!take_u64(&p, end, &s->nr_chain) ||
		    s->nr_chain > (uint64_t)(end - p) / sizeof(uint64_t))
			return -EBADMSG;
		s->chain = (const uint64_t *)p;
		p += s->nr_chain * sizeof(uint64_t);
	}
	if (l->regs_mask) {
		if (!take_u64(&p, end, &s->regs_abi))
			return -EBADMSG;
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			uint32_t n =
				(uint32_t)__builtin_popcountll(l->regs_mask);

			if ((uint64_t)(end - p) / sizeof(uint64_t) < n)
				return -EBADMSG;
			s->regs = (const uint64_t *)p;
			s->nr_regs = n;
			p += (size_t)n * sizeof(uint64_t);
		}
	}
	if (l->stack_user) {
		if (!take_u64(&p, end, &s->stack_room))
			return -EBADMSG;
		if (s->stack_room) {
			if (s->stack_room > (uint64_t)(end - p) ||
			    (uint64_t)(end - p) - s->stack_room <
				    sizeof(uint64_t))
				return -EBADMSG;
			s->stack = p;
			p += s->stack_room;
			take_u64(&p, end, &s->stack_size);
			if (s->stack_size > s->stack_room)
				return -EBADMSG;
		}
	}
	if (l->cgroup && !take_u64(&p, end, &s->cgroup))
		return -EBADMSG;
	return 0;
}

size_t dcp_sample_compact(const struct perf_event_header *h,
			  const struct dcp_sample_layout *l, void *out)
{
	const unsigned char *rec = (const unsigned char *)h;
	unsigned char *o = out;
	struct dcp_sample s;
	size_t head, tail, keep;
	struct perf_event_header nh;

	if (!l->stack_user || dcp_sample_parse(h, l, &s) || !s.stack_room)
		return 0;
	keep = (size_t)((s.stack_size + 7) & ~7ull);
	if (keep >= s.stack_room)
		return 0;
	head = (size_t)(s.stack - rec);
	tail = h->size - head - (size_t)s.stack_room;
	memcpy(o, rec, head);
	memcpy(o + head - sizeof(uint64_t), &(uint64_t){ keep },
	       sizeof(uint64_t));
	memcpy(o + head, s.stack, (size_t)s.stack_size);
	memset(o + head + s.stack_size, 0, keep - (size_t)s.stack_size);
	memcpy(o + head + keep, s.stack + s.stack_room, tail);
	nh = *h;
	nh.size = (uint16_t)(head + keep + tail);
	memcpy(o, &nh, sizeof(nh));
	return nh.size;
}

enum dcp_cookie_kind dcp_record_region(const char *filename)
{
	if (!strcmp(filename, "[vdso]"))
		return DCP_COOKIE_KIND_VDSO;
	if (!strcmp(filename, "[vsyscall]"))
		return DCP_COOKIE_KIND_VSYSCALL;
	/* "//anon", "[anon:NAME]", "[heap]", "[uprobes]", ... */
	if (!filename[0] || filename[0] == '[' || !strcmp(filename, "//anon"))
		return DCP_COOKIE_KIND_ANON;
	return DCP_COOKIE_KIND_FILE;
}

/* A NUL-terminated string in [s, end), or NULL. */
static const char *record_string(const char *s, const char *end)
{
	return s < end && memchr(s, 0, (size_t)(end - s)) ? s : NULL;
}

int dcp_record_decode(const struct perf_event_header *h, size_t avail,
		      struct dcp_record_view *v)
{
	const size_t tr = sizeof(struct dcp_sample_id);
	const char *end;

	memset(v, 0, sizeof(*v));
	if (avail < sizeof(*h) || h->size < sizeof(*h) || h->size > avail ||
	    h->size % 8)
		return dcp_error(EINVAL, "malformed record of %u bytes",
				 avail < sizeof(*h) ? 0u : (unsigned)h->size);
	v->type = h->type;
	v->misc = h->misc;
	v->injected = h->misc & DCP_RECORD_MISC_INJECTED;
	end = (const char *)h + h->size - tr;

	switch (h->type) {
	case PERF_RECORD_COMM: {
		const struct dcp_comm_record *r = (const void *)h;

		if (h->size < sizeof(*r) + tr ||
		    !(v->comm = record_string(r->comm, end)))
			break;
		v->pid = r->pid;
		v->tid = r->tid;
		v->comm_exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		v->sample_id = dcp_record_sample_id(h);
		return 0;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct dcp_task_record *r = (const void *)h;

		if (h->size < sizeof(*r) + tr)
			break;
		v->pid = r->pid;
		v->ppid = r->ppid;
		v->tid = r->tid;
		v->ptid = r->ptid;
		v->time = r->time;
		v->sample_id = dcp_record_sample_id(h);
		return 0;
	}
	case PERF_RECORD_MMAP2: {
		const struct dcp_mmap2_record *r = (const void *)h;

		if (h->size < sizeof(*r) + tr ||
		    !(v->filename = record_string(r->filename, end)))
			break;
		v->pid = r->pid;
		v->tid = r->tid;
		v->addr = r->addr;
		v->len = r->len;
		v->pgoff = r->pgoff;
		v->prot = r->prot;
		v->flags = r->flags;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			if (!r->build_id_size ||
			    r->build_id_size > DCP_BUILD_ID_MAX)
				break;
			v->id.build_id_size = r->build_id_size;
			memcpy(v->id.build_id, r->build_id, r->build_id_size);
		} else {
			v->id.dev_major = r->maj;
			v->id.dev_minor = r->min;
			v->id.ino = r->ino;
			v->id.ino_generation = r->ino_generation;
		}
		v->region = dcp_record_region(v->filename);
		v->sample_id = dcp_record_sample_id(h);
		return 0;
	}
	default:
		return dcp_error(ENOTSUP, "record type %u is not decoded",
				 (unsigned)h->type);
	}
	return dcp_error(EINVAL, "malformed record of type %u and %u bytes",
			 (unsigned)h->type, (unsigned)h->size);
}
