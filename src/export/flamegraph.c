// SPDX-License-Identifier: MIT
/*
 * The merged call tree behind the flame graphs, and its two renderings: an
 * interactive HTML page (the tree as compact JSON, drawn by the embedded
 * script on a canvas) and a static SVG in the manner of flamegraph.pl.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "grow.h"
#include "intern.h"

#define NONE UINT32_MAX
/* Inlined calls shown per stored frame; deeper nests are cut. */
#define FG_MAX_EXPAND 32

struct fg_node {
	uint32_t name, file; /* indexes into the string table */
	uint32_t parent;
	uint32_t first_child, next_sibling;
	uint32_t depth;
	uint8_t type;
	uint64_t value[2]; /* samples, by enum fg_side */
};

struct fg_tree {
	bool threads; /* a level of thread names under the processes */
	enum view_value value; /* what a frame's width counts */
	struct fg_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct key_map node_index; /* (parent, name, file, type) -> node */
	struct string_table strings;
};

/* What a cookie contributes to each of its frames, looked up once. */
struct cookie_class {
	bool known;
	uint8_t type;
	uint32_t file;
};

static int64_t intern(struct fg_tree *t, const char *s)
{
	return string_table_intern(&t->strings, s);
}

/* The child of parent with this identity, created when missing. */
static int64_t child(struct fg_tree *t, uint32_t parent, uint32_t name,
		     uint32_t file, uint8_t type)
{
	uint64_t k1 = (uint64_t)parent << 32 | name;
	uint64_t k2 = (uint64_t)file << 8 | type;
	struct fg_node *n;
	uint32_t id;

	if (!key_map_find(&t->node_index, k1, k2, &id))
		return id;
	n = dcp_grow_from(t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*n),
			  4096);
	if (!n)
		return -ENOMEM;
	t->nodes = n;
	if (key_map_add(&t->node_index, k1, k2, (uint32_t)t->nr_nodes) < 0)
		return -ENOMEM;
	n = &t->nodes[t->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->file = file;
	n->parent = parent;
	n->first_child = NONE;
	n->type = type;
	if (parent != NONE) {
		n->depth = t->nodes[parent].depth + 1;
		n->next_sibling = t->nodes[parent].first_child;
		t->nodes[parent].first_child = (uint32_t)t->nr_nodes;
	} else {
		n->next_sibling = NONE;
	}
	return (int64_t)t->nr_nodes++;
}

struct fg_tree *fg_tree_new(void)
{
	struct fg_tree *t = calloc(1, sizeof(*t));

	/* String 0 is the empty name, node 0 the root "all". */
	if (!t || intern(t, "") != 0 || intern(t, "all") != 1 ||
	    child(t, NONE, 1, 0, FG_TYPE_ROOT) != 0) {
		fg_tree_free(t);
		return NULL;
	}
	return t;
}

void fg_tree_free(struct fg_tree *t)
{
	if (!t)
		return;
	string_table_free(&t->strings);
	free(t->nodes);
	key_map_free(&t->node_index);
	free(t);
}

static uint8_t frame_type(const struct dcp_cookie_info *info, bool found)
{
	if (!found)
		return FG_TYPE_UNKNOWN;
	switch (info->kind) {
	case DCP_COOKIE_KIND_KERNEL:
	case DCP_COOKIE_KIND_MODULE:
		return FG_TYPE_KERNEL;
	case DCP_COOKIE_KIND_ANON:
	case DCP_COOKIE_KIND_JIT:
		return FG_TYPE_JIT;
	case DCP_COOKIE_KIND_IDLE:
		return FG_TYPE_IDLE;
	case DCP_COOKIE_KIND_UNKNOWN:
		return FG_TYPE_UNKNOWN;
	default:
		return FG_TYPE_USER;
	}
}

static int classify(struct fg_tree *t, const struct profile_view *v,
		    const struct dcp_frame *f, struct cookie_class *c)
{
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	bool found = dcp_cookie_table_lookup(v->cookies, f->cookie, &info) == 0;
	const char *file = found && info.name ? info.name : "";
	const char *slash = strrchr(file, '/');
	int64_t s;

	/* The base name: what a reader recognises, and what stays the same
	 * between two builds of one program in two places (--diff). */
	s = intern(t, slash && slash[1] ? slash + 1 : file);
	if (s < 0)
		return (int)s;
	c->file = (uint32_t)s;
	c->type = frame_type(&info, found);
	c->known = true;
	return 0;
}

static int add_profile(struct fg_tree *t, const struct profile_view *v,
		       enum fg_side side)
{
	size_t nr_cookies = dcp_cookie_table_size(v->cookies);
	struct cookie_class *classes = calloc(nr_cookies + 1, sizeof(*classes));
	size_t nr_rows = dcp_profile_nr_rows(v->profile);
	int ret = 0;

	if (!classes)
		return -ENOMEM;
	for (size_t r = 0; r < nr_rows && !ret; r++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		int64_t node, s;

		if (dcp_profile_row(v->profile, r, &row) || !row.nr_frames)
			continue;
		row.count = profile_view_row_value(v, &row, t->value);
		if (!row.count)
			continue;
		t->nodes[0].value[side] += row.count;
		s = intern(t, row.comm ? row.comm : "");
		node = s < 0 ? s : child(t, 0, (uint32_t)s, 0, FG_TYPE_COMM);
		if (node < 0) {
			ret = (int)node;
			break;
		}
		t->nodes[node].value[side] += row.count;
		if (t->threads) {
			s = intern(t, row.thread_comm ? row.thread_comm : "");
			node = s < 0 ? s :
				       child(t, (uint32_t)node, (uint32_t)s, 0,
					     FG_TYPE_COMM);
			if (node < 0) {
				ret = (int)node;
				break;
			}
			t->nodes[node].value[side] += row.count;
		}
		for (uint32_t i = row.nr_frames; i-- > 0;) {
			const struct dcp_frame *f = &row.frames[i];
			struct cookie_class one = { 0 }, *c = &one;
			struct dcp_expanded_frame ex[FG_MAX_EXPAND];
			uint8_t type;
			int nr;

			if (f->cookie < nr_cookies)
				c = &classes[f->cookie];
			if (!c->known) {
				ret = classify(t, v, f, c);
				if (ret)
					break;
			}
			/* The recorder's kernel flag wins over the cookie: an
			 * address it saw in kernel mode is kernel code. */
			type = f->flags & DCP_FRAME_KERNEL ? FG_TYPE_KERNEL :
							     c->type;
			ex[0].sz = sizeof(ex[0]);
			nr = dcp_profile_frame_expand(v->profile, f, ex,
						      FG_MAX_EXPAND);
			if (nr < 1)
				nr = 1, ex[0].name = NULL;
			/* a function that shares its name says which */
			if (ex[0].name && !ex[0].is_inline) {
				const char *label = profile_view_label(v, f);

				if (label)
					ex[0].name = label;
			}
			if (nr > FG_MAX_EXPAND)
				nr = FG_MAX_EXPAND;
			/* The function, then its inlined calls inside out. */
			for (int k = 0; k < nr && node >= 0; k++) {
				if (k)
					t->nodes[node].value[side] += row.count;
				s = intern(t, ex[k].name ? ex[k].name :
							   profile_view_symbol(
								   v, f));
				node = s < 0 ? s :
					       child(t, (uint32_t)node,
						     (uint32_t)s, c->file,
						     ex[k].is_inline ?
							     FG_TYPE_INLINE :
							     type);
			}
			if (node < 0) {
				ret = (int)node;
				break;
			}
			t->nodes[node].value[side] += row.count;
		}
	}
	free(classes);
	return ret;
}

void fg_tree_set_value(struct fg_tree *t, enum view_value value)
{
	t->value = value;
}

void fg_tree_group_threads(struct fg_tree *t, bool threads)
{
	t->threads = threads;
}

int fg_tree_add_profile(struct fg_tree *t, const struct profile_view *v,
			enum fg_side side, struct export_error *err)
{
	int ret = add_profile(t, v, side);

	return ret < 0 ? export_fail(err, -ret, "out of memory") : 0;
}

/* ---- the tree in output order ------------------------------------------ */

/*
 * Nodes in depth-first order, children sorted by name as flamegraph.pl
 * sorts them, so that a frame's children follow it and siblings run left to
 * right; only nodes with AFTER samples (a diff draws the AFTER tree).
 */
struct fg_order {
	uint32_t *nodes;
	uint32_t *end; /* position after the last descendant of each position */
	size_t n;
	uint32_t max_depth;
};

static int compare_siblings(const void *a, const void *b, void *ctx)
{
	const struct fg_tree *sort_tree = ctx;
	const struct fg_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const struct fg_node *y = &sort_tree->nodes[*(const uint32_t *)b];
	int c = strcmp(string_table_get(&sort_tree->strings, x->name),
		       string_table_get(&sort_tree->strings, y->name));

	if (c)
		return c;
	c = strcmp(string_table_get(&sort_tree->strings, x->file),
		   string_table_get(&sort_tree->strings, y->file));
	if (c)
		return c;
	return (int)x->type - (int)y->type;
}

static int order_build(const struct fg_tree *t, struct fg_order *o)
{
	uint32_t *stack = malloc(t->nr_nodes * sizeof(*stack));
	uint32_t *kids = malloc(t->nr_nodes * sizeof(*kids));
	uint32_t *pos_stack = malloc(t->nr_nodes * sizeof(*pos_stack));
	size_t sp = 0;

	o->nodes = malloc(t->nr_nodes * sizeof(*o->nodes));
	o->end = malloc(t->nr_nodes * sizeof(*o->end));
	o->n = 0;
	o->max_depth = 0;
	if (!stack || !kids || !pos_stack || !o->nodes || !o->end) {
		free(stack);
		free(kids);
		free(pos_stack);
		free(o->nodes);
		free(o->end);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp], nk = 0;
		const struct fg_node *n = &t->nodes[i];

		o->nodes[o->n++] = i;
		if (n->depth > o->max_depth)
			o->max_depth = n->depth;
		for (uint32_t c = n->first_child; c != NONE;
		     c = t->nodes[c].next_sibling)
			if (t->nodes[c].value[FG_AFTER])
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), compare_siblings, (void *)t);
		/* Reversed onto the stack, so that the first comes out first. */
		while (nk)
			stack[sp++] = kids[--nk];
	}
	/* A position's subtree ends where the next node no deeper starts. */
	sp = 0;
	for (size_t k = 0; k < o->n; k++) {
		uint32_t d = t->nodes[o->nodes[k]].depth;

		while (sp && t->nodes[o->nodes[pos_stack[sp - 1]]].depth >= d)
			o->end[pos_stack[--sp]] = (uint32_t)k;
		pos_stack[sp++] = (uint32_t)k;
	}
	while (sp)
		o->end[pos_stack[--sp]] = (uint32_t)o->n;
	free(stack);
	free(kids);
	free(pos_stack);
	return 0;
}

static void order_free(struct fg_order *o)
{
	free(o->nodes);
	free(o->end);
}

/* Frames of BEFORE with no counterpart in AFTER, counted where they part. */
static void only_before(const struct fg_tree *t, uint64_t *frames,
			uint64_t *samples)
{
	*frames = *samples = 0;
	for (size_t i = 1; i < t->nr_nodes; i++) {
		const struct fg_node *n = &t->nodes[i];

		if (n->value[FG_BEFORE] && !n->value[FG_AFTER] &&
		    t->nodes[n->parent].value[FG_AFTER]) {
			(*frames)++;
			*samples += n->value[FG_BEFORE];
		}
	}
}

/* ---- escaping ------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p, 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string that is also safe inside a <script> element: no '<', so no
 * "</script>", and names from /proc that are not UTF-8 show U+FFFD.
 */
static void json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', out);
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' ||
			   *p == '&') {
			fprintf(out, "\\u%04x", *p++);
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, n, out);
			p += n;
		} else {
			fputs("\\ufffd", out);
			p++;
		}
	}
	fputc('"', out);
}

/* XML text of at most max_chars characters (0: all), ".." when cut. */
static void xml_text(FILE *out, const char *s, size_t max_chars)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t total = 0, keep = SIZE_MAX;

	for (const unsigned char *q = p; *q; total++) {
		size_t n = utf8_len(q);

		q += n ? n : 1;
	}
	if (max_chars && total > max_chars)
		keep = max_chars > 2 ? max_chars - 2 : 0;
	for (size_t chars = 0; *p; chars++) {
		size_t n = utf8_len(p);

		if (chars == keep) {
			fputs("..", out);
			break;
		}
		if (*p == '&')
			fputs("&amp;", out);
		else if (*p == '<')
			fputs("&lt;", out);
		else if (*p == '>')
			fputs("&gt;", out);
		else if (*p == '"')
			fputs("&quot;", out);
		else if (*p < 0x20 || *p == 0x7f)
			fputc('?', out); /* not allowed in XML 1.0 */
		else if (n)
			fwrite(p, 1, n, out);
		else
			fputs("\xef\xbf\xbd", out);
		p += n ? n : 1;
	}
}

/* ---- HTML ---------------------------------------------------------------- */

static void write_data(const struct fg_tree *t, const struct fg_output_opts *o,
		       const struct fg_order *ord, FILE *out)
{
	uint64_t ob_frames, ob_samples;
	bool diff = o->diff;

	fputs("{\"version\":1,\"title\":", out);
	json_string(out, o->title);
	fputs(",\"notes\":[", out);
	for (size_t i = 0; i < o->nr_notes; i++) {
		if (i)
			fputc(',', out);
		json_string(out, o->notes[i]);
	}
	fprintf(out, "],\"diff\":%s,\"total\":%" PRIu64,
		diff ? "true" : "false", t->nodes[0].value[FG_AFTER]);
	if (diff) {
		only_before(t, &ob_frames, &ob_samples);
		fprintf(out,
			",\"totalBefore\":%" PRIu64
			",\"onlyBefore\":{\"frames\":%" PRIu64
			",\"samples\":%" PRIu64 "}",
			t->nodes[0].value[FG_BEFORE], ob_frames, ob_samples);
	}
	fputs(",\"types\":[\"root\",\"comm\",\"user\",\"kernel\",\"jit\","
	      "\"inline\",\"unknown\",\"idle\"]",
	      out);
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < t->strings.nr; i++) {
		if (i)
			fputs(i % 64 ? "," : ",\n", out);
		json_string(out, string_table_get(&t->strings, (uint32_t)i));
	}
	/* Flat: name, file, type, depth, samples[, samples before]. */
	fprintf(out, "],\"stride\":%d,\"nodes\":[", diff ? 6 : 5);
	for (size_t k = 0; k < ord->n; k++) {
		const struct fg_node *n = &t->nodes[ord->nodes[k]];

		fprintf(out, "%s%u,%u,%u,%u,%" PRIu64,
			k ? (k % 16 ? "," : ",\n") : "", n->name, n->file,
			n->type, n->depth, n->value[FG_AFTER]);
		if (diff)
			fprintf(out, ",%" PRIu64, n->value[FG_BEFORE]);
	}
	fputs("]}", out);
}

static int write_html(const struct fg_tree *t, const struct fg_output_opts *o,
		      FILE *out)
{
	static const char *const markers[] = { "<!--@TITLE@-->",
					       "<!--@STYLE@-->",
					       "<!--@SCRIPT@-->",
					       "<!--@DATA@-->" };
	const char *p = (const char *)fg_asset_html;
	struct fg_order ord;

	if (order_build(t, &ord))
		return -ENOMEM;
	for (;;) {
		const char *next = NULL;
		size_t which = 0;

		for (size_t m = 0; m < sizeof(markers) / sizeof(*markers);
		     m++) {
			const char *q = strstr(p, markers[m]);

			if (q && (!next || q < next)) {
				next = q;
				which = m;
			}
		}
		if (!next) {
			fputs(p, out);
			break;
		}
		fwrite(p, 1, (size_t)(next - p), out);
		p = next + strlen(markers[which]);
		switch (which) {
		case 0:
			xml_text(out, o->title, 0);
			break;
		case 1:
			fwrite(fg_asset_css, 1, fg_asset_css_len, out);
			break;
		case 2:
			fwrite(fg_asset_js, 1, fg_asset_js_len, out);
			break;
		default:
			write_data(t, o, &ord, out);
			break;
		}
	}
	order_free(&ord);
	return 0;
}

/* ---- SVG ----------------------------------------------------------------- */

#define SVG_WIDTH 1200.0
#define SVG_PAD 10.0
#define SVG_ROW 16.0
#define SVG_FONT 12.0
#define SVG_CHAR (SVG_FONT * 0.59) /* flamegraph.pl's Verdana estimate */
#define SVG_TOP 52.0
#define SVG_BOTTOM 24.0
#define SVG_MIN_WIDTH 0.1

/*
 * 32-bit FNV-1a, not dcp_hash_fnv1a(): the page's script hashes names the
 * same way to pick their colours, and both renderings must agree.
 */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The same palette as the page's script: warm user code, blue kernel... */
static void type_colour(const char *name, uint8_t type, int rgb[3])
{
	uint32_t h = name_hash(name);
	double a = (h & 0xff) / 255.0, b = (h >> 8 & 0xff) / 255.0,
	       c = (h >> 16 & 0xff) / 255.0;

	switch (type) {
	case FG_TYPE_ROOT:
		rgb[0] = 190, rgb[1] = 190, rgb[2] = 200;
		return;
	case FG_TYPE_COMM:
		rgb[0] = 196 + (int)(30 * a), rgb[1] = 180 + (int)(30 * a);
		rgb[2] = 150 + (int)(30 * a);
		return;
	case FG_TYPE_KERNEL:
		rgb[0] = 70 + (int)(60 * a), rgb[1] = 140 + (int)(50 * b);
		rgb[2] = 215 + (int)(40 * c);
		return;
	case FG_TYPE_JIT:
		rgb[0] = 80 + (int)(60 * a), rgb[1] = 190 + (int)(50 * b);
		rgb[2] = 60 + (int)(50 * c);
		return;
	case FG_TYPE_INLINE:
		rgb[0] = 40 + (int)(50 * a), rgb[1] = 205 + (int)(45 * b);
		rgb[2] = 190 + (int)(40 * c);
		return;
	case FG_TYPE_UNKNOWN:
	case FG_TYPE_IDLE:
		rgb[0] = rgb[1] = rgb[2] = 175 + (int)(40 * a);
		return;
	default: /* flamegraph.pl's "hot" */
		rgb[0] = 205 + (int)(50 * c), rgb[1] = (int)(230 * a);
		rgb[2] = (int)(55 * b);
		return;
	}
}

static double share(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0;
}

static double abs_d(double v)
{
	return v < 0 ? -v : v;
}

/* The square root of m in [0, 1], without pulling in libm for one call. */
static double unit_sqrt(double m)
{
	double r = (m + 1) / 2;

	if (m <= 0)
		return 0;
	for (int i = 0; i < 30; i++)
		r = (r + m / r) / 2;
	return r;
}

/* Red for a share that grew, blue for one that shrank; stronger for more. */
static void diff_colour(double delta, double max_delta, int rgb[3])
{
	double m = max_delta > 0 ? abs_d(delta) / max_delta : 0;
	int fade = (int)(235 - 195 * unit_sqrt(m > 1 ? 1 : m));

	if (abs_d(delta) < 0.005)
		rgb[0] = rgb[1] = rgb[2] = 235;
	else if (delta > 0)
		rgb[0] = 255, rgb[1] = rgb[2] = fade;
	else
		rgb[0] = rgb[1] = fade, rgb[2] = 255;
}

static double node_delta(const struct fg_tree *t, const struct fg_node *n)
{
	return share(n->value[FG_AFTER], t->nodes[0].value[FG_AFTER]) -
	       share(n->value[FG_BEFORE], t->nodes[0].value[FG_BEFORE]);
}

static int write_svg(const struct fg_tree *t, const struct fg_output_opts *o,
		     FILE *out)
{
	uint64_t total = t->nodes[0].value[FG_AFTER];
	double scale, max_delta = 0, height, *x, *used;
	uint32_t rows = 0;
	struct fg_order ord;

	if (order_build(t, &ord))
		return -ENOMEM;
	x = calloc(t->nr_nodes, sizeof(*x));
	used = calloc(t->nr_nodes, sizeof(*used));
	if (!x || !used) {
		free(x);
		free(used);
		order_free(&ord);
		return -ENOMEM;
	}
	scale = total ? (SVG_WIDTH - 2 * SVG_PAD) / (double)total : 0;
	/* Left edges in depth-first order; rows: the deepest frame drawn. */
	for (size_t k = 0; k < ord.n;) {
		const struct fg_node *n = &t->nodes[ord.nodes[k]];

		if (k) {
			x[ord.nodes[k]] = x[n->parent] + used[n->parent];
			used[n->parent] += (double)n->value[FG_AFTER] * scale;
		} else {
			x[0] = SVG_PAD;
		}
		if ((double)n->value[FG_AFTER] * scale < SVG_MIN_WIDTH) {
			k = ord.end[k];
			continue;
		}
		if (n->depth + 1 > rows)
			rows = n->depth + 1;
		if (o->diff && abs_d(node_delta(t, n)) > max_delta)
			max_delta = abs_d(node_delta(t, n));
		k++;
	}
	height = SVG_TOP + rows * SVG_ROW + SVG_BOTTOM;
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"font-family=\"Verdana, 'DejaVu Sans', sans-serif\" "
		"font-size=\"%.0f\">\n",
		SVG_WIDTH, height, SVG_WIDTH, height, SVG_FONT);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"#f8f8f4\"/>\n<text x=\"%.0f\" y=\"24\" "
		"text-anchor=\"middle\" font-size=\"17\">",
		SVG_WIDTH / 2);
	xml_text(out, o->title, 0);
	fputs("</text>\n", out);
	for (size_t i = 0; i < o->nr_notes && i < 1; i++) {
		fprintf(out,
			"<text x=\"%.0f\" y=\"42\" text-anchor=\"middle\" "
			"fill=\"#555\">",
			SVG_WIDTH / 2);
		xml_text(out, o->notes[i], 180);
		fputs("</text>\n", out);
	}
	for (size_t k = 0; k < ord.n;) {
		const struct fg_node *n = &t->nodes[ord.nodes[k]];
		const char *name = string_table_get(&t->strings, n->name);
		double w = (double)n->value[FG_AFTER] * scale;
		double y = SVG_TOP + (rows - 1 - n->depth) * SVG_ROW;
		int rgb[3];

		if (w < SVG_MIN_WIDTH) {
			k = ord.end[k];
			continue;
		}
		if (o->diff)
			diff_colour(node_delta(t, n), max_delta, rgb);
		else
			type_colour(name, n->type, rgb);
		fputs("<g><title>", out);
		xml_text(out, name, 0);
		if (*string_table_get(&t->strings, n->file) &&
		    strcmp(string_table_get(&t->strings, n->file), name)) {
			fputs(" in ", out);
			xml_text(out, string_table_get(&t->strings, n->file),
				 0);
		}
		fprintf(out, " (%" PRIu64 " sample%s, %.2f%%",
			n->value[FG_AFTER], n->value[FG_AFTER] == 1 ? "" : "s",
			share(n->value[FG_AFTER], total));
		if (o->diff)
			fprintf(out, "; before %.2f%%, %+.2f points",
				share(n->value[FG_BEFORE],
				      t->nodes[0].value[FG_BEFORE]),
				node_delta(t, n));
		fprintf(out,
			")</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" "
			"ry=\"2\"/>",
			x[ord.nodes[k]], y, w, SVG_ROW - 1, rgb[0], rgb[1],
			rgb[2]);
		if (w >= 3 * SVG_CHAR) {
			fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">",
				x[ord.nodes[k]] + 3, y + SVG_ROW - 4.5);
			xml_text(out, name, (size_t)((w - 6) / SVG_CHAR));
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
		k++;
	}
	fputs("</svg>\n", out);
	free(x);
	free(used);
	order_free(&ord);
	return 0;
}

int fg_write(const struct fg_tree *t, const struct fg_output_opts *o, FILE *out,
	     struct export_error *err)
{
	int ret = o->svg ? write_svg(t, o, out) : write_html(t, o, out);

	return ret < 0 ? export_fail(err, -ret, "out of memory") : 0;
}
