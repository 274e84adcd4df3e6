// SPDX-License-Identifier: MIT
/*
 * Building a profile's summary: rows summed over pids, each frame replaced
 * by one representative address of its function (summary_internal.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log_internal.h"
#include "summary_internal.h"

struct summarizer {
	const struct dcp_symtab *symbols;
	/* Distinct frames of the profile, as one-frame stacks: the id of a
	 * frame indexes rep_of_frame. */
	struct dcp_aggregate *frames;
	uint64_t *rep_of_frame;
	size_t cap_frames;
	/* Functions, as interned keys: the id of a key indexes rep_of_key,
	 * the offset of the first frame found with that key. */
	struct dcp_aggregate *keys;
	uint64_t *rep_of_key;
	size_t cap_keys;
	char *key; /* the key being built */
	size_t key_len, key_cap;
	struct dcp_summary *out;
};

static void key_put(struct summarizer *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void key_put(struct summarizer *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!s->key)
		return;
	for (;;) {
		size_t room = s->key_cap - s->key_len;
		char *p;

		va_start(ap, fmt);
		n = vsnprintf(s->key + s->key_len, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			free(s->key);
			s->key = NULL;
			return;
		}
		if ((size_t)n < room)
			break;
		p = dcp_grow(s->key, &s->key_cap, s->key_len + (size_t)n + 1,
			     1);
		if (!p) {
			free(s->key);
			s->key = NULL;
			return;
		}
		s->key = p;
	}
	s->key_len += (size_t)n;
}

/* A name in the key, its length first so that no name can be mistaken
 * for the start of the next. */
static void key_put_name(struct summarizer *s, const char *name)
{
	if (name)
		key_put(s, "%zu:%s", strlen(name), name);
	else
		key_put(s, "-");
}

/*
 * What makes two addresses the same function to every view: the object,
 * kernel or not, and then the symbol (start and name, demangled name)
 * and each inlined call's names; addresses nothing named are all one
 * "unresolved" function of their object.
 */
static int function_key(struct summarizer *s, const struct dcp_frame *f)
{
	struct dcp_inline_frame inl = { .sz = sizeof(inl) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	s->key_len = 0;
	key_put(s, "%" PRIu32 " %" PRIu32, f->cookie, f->flags);
	if (dcp_symtab_lookup(s->symbols, f->cookie, f->offset, &sym) ||
	    !sym.name) {
		key_put(s, " -");
	} else {
		key_put(s, " %" PRIx64 " ", sym.start);
		key_put_name(s, sym.name);
		key_put_name(s, sym.demangled);
		for (uint32_t i = 0; i < sym.nr_inline; i++) {
			if (dcp_symtab_inline(s->symbols, f->cookie, f->offset,
					      i, &inl))
				break;
			key_put(s, "|");
			key_put_name(s, inl.name);
			key_put_name(s, inl.demangled);
		}
	}
	return s->key ? 0 : -ENOMEM;
}

/* The representative offset of frame f, the first of its function met. */
static int representative(struct summarizer *s, const struct dcp_frame *f,
			  uint64_t *offset)
{
	size_t known = dcp_aggregate_nr_stacks(s->frames);
	int64_t id = dcp_aggregate_intern_stack(s->frames, f, 1), key;
	uint64_t *p;
	int ret;

	if (id < 0)
		return (int)id;
	if ((size_t)id < known) {
		*offset = s->rep_of_frame[id];
		return 0;
	}
	ret = function_key(s, f);
	if (ret < 0)
		return ret;
	known = dcp_aggregate_nr_strings(s->keys);
	key = dcp_aggregate_intern_string(s->keys, s->key);
	if (key < 0)
		return (int)key;
	if ((size_t)key == known) {
		p = dcp_grow(s->rep_of_key, &s->cap_keys, (size_t)key + 1,
			     sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->rep_of_key = p;
		s->rep_of_key[key] = f->offset;
		/* The representative carries the names of its function. */
		if (dcp_symtab_copy(s->out->symbols, s->symbols, f->cookie,
				    f->offset) == -ENOMEM)
			return -ENOMEM;
	}
	p = dcp_grow(s->rep_of_frame, &s->cap_frames, (size_t)id + 1,
		     sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->rep_of_frame = p;
	s->rep_of_frame[id] = s->rep_of_key[key];
	*offset = s->rep_of_frame[id];
	return 0;
}

static int summarize(struct summarizer *s, const struct dcp_aggregate *agg,
		     const uint32_t *stack_order)
{
	size_t nr_stacks = dcp_aggregate_nr_stacks(agg), i;
	struct dcp_frame *frames = NULL;
	uint32_t *stack_of = NULL; /* profile stack id -> summary's */
	size_t cap = 0;
	int ret = 0;

	for (i = 0; i < dcp_aggregate_nr_strings(agg); i++)
		if (dcp_aggregate_intern_string(
			    s->out->agg,
			    dcp_aggregate_string(agg, (uint32_t)i)) < 0)
			return -ENOMEM;
	stack_of = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*stack_of));
	if (!stack_of)
		return -ENOMEM;
	for (i = 0; i < nr_stacks && !ret; i++) {
		uint32_t sid = stack_order ? stack_order[i] : (uint32_t)i, nr;
		const struct dcp_frame *f = dcp_aggregate_stack(agg, sid, &nr);
		struct dcp_frame *p =
			dcp_grow(frames, &cap, nr ? nr : 1, sizeof(*p));
		int64_t id;

		if (!p) {
			ret = -ENOMEM;
			break;
		}
		frames = p;
		for (uint32_t j = 0; j < nr && !ret; j++) {
			frames[j] = f[j];
			ret = representative(s, &f[j], &frames[j].offset);
		}
		if (ret)
			break;
		id = dcp_aggregate_intern_stack(s->out->agg, frames, nr);
		if (id < 0)
			ret = (int)id;
		else
			stack_of[sid] = (uint32_t)id;
	}
	for (i = 0; i < dcp_aggregate_nr_rows(agg) && !ret; i++) {
		uint64_t ns[DCP_OFF_CPU_NR_STATES];
		struct dcp_row_key key;
		uint64_t count;
		struct dcp_agg_thread t;

		dcp_aggregate_row(agg, i, &key, &count);
		key.pid = 0;
		key.stack_id = stack_of[key.stack_id];
		/* threads by name and cgroup: tids go with the pids */
		if (dcp_aggregate_thread(agg, key.thread_id, &t)) {
			int64_t id = 0;

			t.tid = 0;
			if (t.comm_id != key.comm_id || t.cgroup)
				id = dcp_aggregate_intern_thread(s->out->agg,
								 &t);
			if (id < 0) {
				ret = (int)id;
				break;
			}
			key.thread_id = (uint32_t)id;
		}
		ret = dcp_aggregate_add(s->out->agg, &key, count);
		if (!ret && dcp_aggregate_row_off_cpu(agg, i, false, ns))
			ret = dcp_aggregate_add_off_cpu(s->out->agg, &key, ns);
	}
	free(frames);
	free(stack_of);
	return ret;
}

int dcp_summary_build(const struct dcp_aggregate *agg,
		      const struct dcp_symtab *symbols,
		      const uint32_t *stack_order, struct dcp_summary *out)
{
	struct summarizer s = { .symbols = symbols, .out = out };
	int ret = -ENOMEM;

	out->agg = dcp_aggregate_new();
	out->symbols = dcp_symtab_new();
	s.frames = dcp_aggregate_new();
	s.keys = dcp_aggregate_new();
	s.key_cap = 256;
	s.key = malloc(s.key_cap);
	if (out->agg && out->symbols && s.frames && s.keys && s.key)
		ret = summarize(&s, agg, stack_order);
	dcp_aggregate_free(s.frames);
	dcp_aggregate_free(s.keys);
	free(s.rep_of_frame);
	free(s.rep_of_key);
	free(s.key);
	if (ret < 0) {
		dcp_summary_free(out);
		return dcp_error(ret, "cannot summarize the profile: %s",
				 strerror(-ret));
	}
	return 0;
}

void dcp_summary_free(struct dcp_summary *s)
{
	dcp_aggregate_free(s->agg);
	dcp_symtab_free(s->symbols);
	s->agg = NULL;
	s->symbols = NULL;
}
