// SPDX-License-Identifier: MIT
/*
 * Folded stacks: "comm;root;...;leaf count", the input of flamegraph.pl,
 * inferno and speedscope.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "grow.h"

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sbuf_grow(struct sbuf *b, size_t more)
{
	char *p;

	if (b->oom)
		return;
	p = dcp_grow_from(b->p, &b->cap, b->len + more, 1, 4096);
	if (p)
		b->p = p;
	else
		b->oom = true;
}

static void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	sbuf_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void sbuf_escape(struct sbuf *b, unsigned char c)
{
	char hex[5];

	snprintf(hex, sizeof(hex), "\\x%02x", c);
	sbuf_add(b, hex, 4);
}

/*
 * One frame. Names come from binaries and /proc, so anything can be in
 * them: ';' would split the frame, a newline the line, and readers that
 * decode UTF-8 (inferno, speedscope) stop at invalid bytes. Those bytes
 * are written as \xNN, the way the report shows control bytes.
 */
static void add_frame(struct sbuf *b, const char *name, const char *suffix)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = strlen(name);

	if (!n) {
		/* an empty frame would read as two separators */
		sbuf_add(b, "[unknown]", 9);
	}
	while (n) {
		size_t len = export_utf8_len(p, n);

		if (!len || *p < 0x20 || *p == 0x7f || *p == ';') {
			sbuf_escape(b, *p);
			len = 1;
		} else {
			sbuf_add(b, (const char *)p, len);
		}
		p += len;
		n -= len;
	}
	sbuf_add(b, suffix, strlen(suffix));
}

/*
 * A stored frame as the function and the calls inlined into it, root
 * first. The suffixes are flamegraph.pl's and inferno's: kernel frames
 * end in _[k], inlined calls in _[i] (their --colors=java tells them
 * apart).
 */
static void add_frames(struct sbuf *b, const struct profile_view *v,
		       const struct dcp_frame *f)
{
	struct dcp_expanded_frame ex[PROFILE_VIEW_EXPAND_MAX];
	int n = profile_view_expand(v, f, ex, PROFILE_VIEW_EXPAND_MAX);
	const char *kernel = f->flags & DCP_FRAME_KERNEL ? "_[k]" : "";

	if (n < 1) {
		add_frame(b, profile_view_symbol(v, f), kernel);
		return;
	}
	/* deeper inlining is cut: the function and outer calls stay */
	if (n > PROFILE_VIEW_EXPAND_MAX)
		n = PROFILE_VIEW_EXPAND_MAX;
	for (int k = 0; k < n; k++) {
		if (k)
			sbuf_add(b, ";", 1);
		add_frame(b, ex[k].name ? ex[k].name : "",
			  ex[k].is_inline ? "_[i]" : kernel);
	}
}

struct folded_line {
	size_t off, len;
	uint64_t count;
};

static int compare_lines(const void *a, const void *b, void *arena)
{
	const struct folded_line *x = a, *y = b;
	const char *base = arena;
	int c = memcmp(base + x->off, base + y->off,
		       x->len < y->len ? x->len : y->len);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int export_folded(const struct profile_view *v, FILE *out, bool with_comm,
		  enum view_value value, struct export_error *err)
{
	size_t nr_rows = dcp_profile_nr_rows(v->profile), n = 0, groups = 0;
	struct folded_line *lines = calloc(nr_rows + 1, sizeof(*lines));
	struct sbuf arena = { 0 };
	int ret = 0;

	if (!lines)
		return export_fail(err, ENOMEM, "out of memory");
	for (size_t i = 0; i < nr_rows && !arena.oom; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		struct folded_line *l = &lines[n];

		/* rows without frames are not in the report's total either */
		if (dcp_profile_row(v->profile, i, &row) || !row.nr_frames)
			continue;
		row.count = profile_view_row_value(v, &row, value);
		if (!row.count)
			continue;
		l->off = arena.len;
		if (with_comm) {
			add_frame(&arena, row.comm ? row.comm : "", "");
			sbuf_add(&arena, ";", 1);
		}
		for (uint32_t k = row.nr_frames; k-- > 0;) {
			add_frames(&arena, v, &row.frames[k]);
			if (k)
				sbuf_add(&arena, ";", 1);
		}
		l->len = arena.len - l->off;
		l->count = row.count;
		n++;
	}
	if (arena.oom) {
		ret = export_fail(err, ENOMEM, "out of memory");
		goto out;
	}
	/* different pids of one command with one stack are one line */
	qsort_r(lines, n, sizeof(*lines), compare_lines, arena.p);
	for (size_t i = 0; i < n; i++) {
		if (groups &&
		    !compare_lines(&lines[groups - 1], &lines[i], arena.p))
			lines[groups - 1].count += lines[i].count;
		else
			lines[groups++] = lines[i];
	}
	for (size_t i = 0; i < groups; i++) {
		fwrite(arena.p + lines[i].off, 1, lines[i].len, out);
		fprintf(out, " %" PRIu64 "\n", lines[i].count);
	}
out:
	free(arena.p);
	free(lines);
	return ret;
}
