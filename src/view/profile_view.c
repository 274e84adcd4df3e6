// SPDX-License-Identifier: MIT
/*
 * Naming what a profile holds for the reading commands: files, symbols and
 * inlined calls, with placeholders for what is unresolved.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "intern.h"
#include "profile_view.h"

/* One sampled function, by identity. */
struct view_function {
	uint32_t cookie;
	uint64_t start;
	const char *name; /* as the views print it */
	const char *file; /* of its source, NULL: unknown */
	char *label; /* when another function of its file has its name */
};

struct view_functions {
	bool built;
	struct key_map by_start; /* (cookie, start) -> index */
	struct view_function *v;
	size_t n, cap;
};

static void functions_free(struct view_functions *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].label);
	free(fs->v);
	key_map_free(&fs->by_start);
	free(fs);
}

int profile_view_open(struct profile_view *v, const char *path,
		      bool by_function)
{
	struct dcp_profile_open_opts o = {
		.sz = sizeof(o),
		.summary = by_function,
	};

	v->path = path;
	v->raw_names = false;
	v->profile = dcp_profile_open_file(path, &o);
	if (!v->profile)
		return errno ? -errno : -EIO;
	v->cookies = dcp_profile_cookies(v->profile);
	/* without it, names are as they are */
	v->functions = calloc(1, sizeof(*v->functions));
	return 0;
}

int profile_view_open_files(struct profile_view *v, const char *label,
			    const char *const *paths, size_t n,
			    bool by_function)
{
	struct dcp_profile_open_opts o = {
		.sz = sizeof(o),
		.summary = by_function,
	};

	v->path = label;
	v->raw_names = false;
	v->profile = dcp_profile_open_files(paths, n, &o);
	if (!v->profile)
		return errno ? -errno : -EIO;
	v->cookies = dcp_profile_cookies(v->profile);
	v->functions = calloc(1, sizeof(*v->functions));
	return 0;
}

int profile_view_name_unfinished(struct profile_view *v)
{
	int ret;

	if (dcp_profile_get_meta(v->profile)->complete)
		return 0;
	ret = dcp_profile_resymbolize(v->profile, NULL, NULL);
	return ret < 0 ? ret : 0;
}

void profile_view_close(struct profile_view *v)
{
	dcp_profile_close(v->profile);
	v->profile = NULL;
	functions_free(v->functions);
	v->functions = NULL;
}

const char *profile_view_file_name(const struct profile_view *v,
				   uint32_t cookie)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };

	if (dcp_cookie_table_lookup(v->cookies, cookie, &info) || !info.name)
		return "[unknown]";
	return info.name;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int add_function(struct view_functions *fs, uint32_t cookie,
			const struct dcp_symbol *sym, bool raw)
{
	struct view_function *p;
	uint32_t i;

	if (!key_map_find(&fs->by_start, cookie, sym->start, &i))
		return 0;
	p = dcp_grow(fs->v, &fs->cap, fs->n + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	fs->v = p;
	p = &fs->v[fs->n];
	*p = (struct view_function){
		.cookie = cookie,
		.start = sym->start,
		.name = sym->demangled && !raw ? sym->demangled : sym->name,
		.file = sym->file ? base_name(sym->file) : NULL,
	};
	if (key_map_add(&fs->by_start, cookie, sym->start, (uint32_t)fs->n))
		return -ENOMEM;
	fs->n++;
	return 0;
}

static int compare_functions(const void *a, const void *b)
{
	const struct view_function *x = a, *y = b;
	int c;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Label the functions [from, to) of one file that share a name: by
 * source file when each has its own, else by start. */
static int label_run(struct view_function *v, size_t from, size_t to)
{
	bool by_file = true;

	for (size_t i = from; i < to && by_file; i++) {
		if (!v[i].file) {
			by_file = false;
			break;
		}
		for (size_t j = from; j < i; j++)
			if (!strcmp(v[i].file, v[j].file))
				by_file = false;
	}
	for (size_t i = from; i < to; i++) {
		int n = by_file ? asprintf(&v[i].label, "%s (%s)", v[i].name,
					   v[i].file) :
				  asprintf(&v[i].label, "%s (0x%" PRIx64 ")",
					   v[i].name, v[i].start);

		if (n < 0) {
			v[i].label = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Every sampled function, once: the names shared within a file get their
 * labels. Built on first use, after any --resymbolize. A failure leaves
 * names as they are.
 */
static void functions_build(const struct profile_view *v)
{
	struct view_functions *fs = v->functions;
	struct key_map seen = { 0 };
	size_t i, run;
	int ret = 0;

	fs->built = true;
	for (i = 0; i < dcp_profile_nr_rows(v->profile) && !ret; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		uint32_t none;

		if (dcp_profile_row(v->profile, i, &row))
			continue;
		for (uint32_t k = 0; k < row.nr_frames && !ret; k++) {
			const struct dcp_frame *f = &row.frames[k];
			struct dcp_symbol sym = { .sz = sizeof(sym) };

			if (!key_map_find(&seen, f->cookie, f->offset, &none))
				continue;
			ret = key_map_add(&seen, f->cookie, f->offset, 0);
			if (!ret &&
			    !dcp_profile_symbol(v->profile, f->cookie,
						f->offset, &sym) &&
			    sym.name)
				ret = add_function(fs, f->cookie, &sym,
						   v->raw_names);
		}
	}
	key_map_free(&seen);
	if (!ret && fs->n)
		qsort(fs->v, fs->n, sizeof(*fs->v), compare_functions);
	for (i = 0; i < fs->n && !ret; i = run) {
		for (run = i + 1;
		     run < fs->n && fs->v[run].cookie == fs->v[i].cookie &&
		     !strcmp(fs->v[run].name, fs->v[i].name);
		     run++)
			;
		if (run - i > 1)
			ret = label_run(fs->v, i, run);
	}
	/* sorting moved them: index them again */
	key_map_free(&fs->by_start);
	for (i = 0; i < fs->n && !ret; i++)
		ret = key_map_add(&fs->by_start, fs->v[i].cookie,
				  fs->v[i].start, (uint32_t)i);
	if (ret) {
		for (i = 0; i < fs->n; i++)
			free(fs->v[i].label);
		fs->n = 0;
		key_map_free(&fs->by_start);
	}
}

/* The label of a function that shares its name, NULL for the others. */
static const char *function_label(const struct profile_view *v, uint32_t cookie,
				  const struct dcp_symbol *sym)
{
	uint32_t i;

	if (!v->functions)
		return NULL;
	if (!v->functions->built)
		functions_build(v);
	if (key_map_find(&v->functions->by_start, cookie, sym->start, &i))
		return NULL;
	return v->functions->v[i].label;
}

const char *profile_view_label(const struct profile_view *v,
			       const struct dcp_frame *f)
{
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	if (dcp_profile_symbol(v->profile, f->cookie, f->offset, &sym) ||
	    !sym.name)
		return NULL;
	return function_label(v, f->cookie, &sym);
}

const char *profile_view_symbol(const struct profile_view *v,
				const struct dcp_frame *f)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	/* where a frame-pointer chain broke (docs/FORMAT.md, STACKS) */
	if (f->flags & DCP_FRAME_TRUNCATED)
		return "[truncated]";
	if (dcp_profile_symbol(v->profile, f->cookie, f->offset, &sym) == 0 &&
	    sym.name) {
		const char *label = function_label(v, f->cookie, &sym);

		if (label)
			return label;
		return sym.demangled && !v->raw_names ? sym.demangled :
							sym.name;
	}
	if (dcp_cookie_table_lookup(v->cookies, f->cookie, &info))
		return "[unknown]";
	switch (info.kind) {
	case DCP_COOKIE_KIND_UNKNOWN:
		return "[unknown]";
	case DCP_COOKIE_KIND_IDLE:
		return "[idle]";
	case DCP_COOKIE_KIND_ANON:
		return "[anon:exec]";
	default:
		return "[unresolved]";
	}
}

int profile_view_expand(const struct profile_view *v, const struct dcp_frame *f,
			struct dcp_expanded_frame *out, size_t max)
{
	int n;

	if (max)
		out[0].sz = sizeof(*out);
	n = dcp_profile_frame_expand(v->profile, f, out, max);

	for (int i = 0; i < n && (size_t)i < max; i++) {
		const char *label;

		if (!out[i].name)
			out[i].name = profile_view_symbol(v, f);
		else if (i == 0 && !out[i].is_inline &&
			 (label = profile_view_label(v, f)))
			out[i].name = label;
		else if (v->raw_names && out[i].raw_name)
			out[i].name = out[i].raw_name;
	}
	return n;
}

int view_value_parse(const char *name, enum view_value *out)
{
	if (!strcmp(name, "cpu"))
		*out = VIEW_VALUE_CPU;
	else if (!strcmp(name, "off-cpu"))
		*out = VIEW_VALUE_OFF_CPU;
	else if (!strcmp(name, "wall"))
		*out = VIEW_VALUE_WALL;
	else
		return -EINVAL;
	return 0;
}

const char *view_value_name(enum view_value value)
{
	return value == VIEW_VALUE_OFF_CPU ? "off-cpu" :
	       value == VIEW_VALUE_WALL	   ? "wall" :
					     "cpu";
}

uint64_t profile_view_sample_ns(const struct profile_view *v)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(v->profile);

	if (m->sample_freq)
		return 1000000000ull / m->sample_freq;
	return m->sample_period;
}

uint64_t profile_view_row_value(const struct profile_view *v,
				const struct dcp_sample_row *row,
				enum view_value value)
{
	uint64_t off = 0;

	if (value == VIEW_VALUE_CPU)
		return row->count;
	for (int s = 0; s < DCP_OFF_CPU_NR_STATES; s++)
		off += row->off_cpu_ns[s];
	if (value == VIEW_VALUE_OFF_CPU)
		return off;
	return off + row->count * profile_view_sample_ns(v);
}
