// SPDX-License-Identifier: MIT
/*
 * The static flame graph picture: an SVG in the manner of flamegraph.pl,
 * coloured as the page colours its frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph_internal.h"

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

/* The same palette as the page's script: warm user code, blue kernel,
 * green JIT, orchid Python... */
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
	case FG_TYPE_PYTHON:
		/* Red above green by 70 or more, blue high: no other kind's
		 * shade, nor the off-CPU blue-violet (red equals green) or the
		 * search's magenta (no green). */
		rgb[0] = 180 + (int)(45 * a), rgb[1] = 110 + (int)(35 * a);
		rgb[2] = 220 + (int)(35 * c);
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

int fg_write_svg(const struct fg_tree *t, const struct fg_output_opts *o,
		 FILE *out)
{
	uint64_t total = t->nodes[0].value[FG_AFTER];
	double scale, max_delta = 0, height, *x, *used;
	uint32_t rows = 0;
	struct fg_order ord;

	if (fg_order_build(t, &ord))
		return -ENOMEM;
	x = calloc(t->nr_nodes, sizeof(*x));
	used = calloc(t->nr_nodes, sizeof(*used));
	if (!x || !used) {
		free(x);
		free(used);
		fg_order_free(&ord);
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
	fg_xml_text(out, o->title, 0);
	fputs("</text>\n", out);
	for (size_t i = 0; i < o->nr_notes && i < 1; i++) {
		fprintf(out,
			"<text x=\"%.0f\" y=\"42\" text-anchor=\"middle\" "
			"fill=\"#555\">",
			SVG_WIDTH / 2);
		fg_xml_text(out, o->notes[i], 180);
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
		fg_xml_text(out, name, 0);
		if (*string_table_get(&t->strings, n->file) &&
		    strcmp(string_table_get(&t->strings, n->file), name)) {
			fputs(" in ", out);
			fg_xml_text(out, string_table_get(&t->strings, n->file),
				    0);
		}
		/* --value off-cpu and wall: the widths are ns */
		if (t->value == VIEW_VALUE_CPU)
			fprintf(out, " (%" PRIu64 " sample%s, %.2f%%",
				n->value[FG_AFTER],
				n->value[FG_AFTER] == 1 ? "" : "s",
				share(n->value[FG_AFTER], total));
		else
			fprintf(out, " (%.1f ms, %.2f%%",
				(double)n->value[FG_AFTER] / 1e6,
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
			fg_xml_text(out, name, (size_t)((w - 6) / SVG_CHAR));
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
		k++;
	}
	fputs("</svg>\n", out);
	free(x);
	free(used);
	fg_order_free(&ord);
	return 0;
}
