// SPDX-License-Identifier: MIT
/*
 * The interactive flame graph page: the embedded page, style and script
 * with the tree as compact JSON, which the script draws on a canvas.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "flamegraph_internal.h"

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

/*
 * The valid UTF-8 sequence at p of a NUL-terminated string, 0 when it is
 * not one: the NUL fails any sequence it would be part of.
 */
static size_t utf8_len(const unsigned char *p)
{
	return export_utf8_len(p, 4);
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

void fg_xml_text(FILE *out, const char *s, size_t max_chars)
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

/*
 * The page's strings numbered in the order its nodes first use them: the
 * tree interned them in the order the profile's rows came, which differs
 * between a file and its summary (or two writers' row orders) for the same
 * tree, and the page must not. to_page[tree string] is its page number;
 * from_page lists the tree's strings in page order (*nr of them).
 */
static int number_strings(const struct fg_tree *t, const struct fg_order *ord,
			  uint32_t **to_page, uint32_t **from_page, size_t *nr)
{
	uint32_t *to =
		malloc((t->strings.nr ? t->strings.nr : 1) * sizeof(*to));
	uint32_t *from =
		malloc((t->strings.nr ? t->strings.nr : 1) * sizeof(*from));
	size_t n = 0;

	if (!to || !from) {
		free(to);
		free(from);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->strings.nr; i++)
		to[i] = UINT32_MAX;
	for (size_t k = 0; k < ord->n; k++) {
		const struct fg_node *nd = &t->nodes[ord->nodes[k]];
		uint32_t s[2] = { nd->name, nd->file };

		for (int j = 0; j < 2; j++)
			if (to[s[j]] == UINT32_MAX) {
				to[s[j]] = (uint32_t)n;
				from[n++] = s[j];
			}
	}
	*to_page = to;
	*from_page = from;
	*nr = n;
	return 0;
}

static void write_data(const struct fg_tree *t, const struct fg_output_opts *o,
		       const struct fg_order *ord, const uint32_t *to_page,
		       const uint32_t *from_page, size_t nr_strings, FILE *out)
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
	if (t->off_cpu)
		fprintf(out,
			",\"offCpu\":{\"value\":\"%s\",\"sampleNs\":%" PRIu64
			",\"total\":%" PRIu64 "}",
			view_value_name(t->value), t->sample_ns,
			t->nodes[0].off_cpu_ns);
	/* Indexed by the type a node carries: new types are appended. */
	fputs(",\"types\":[\"root\",\"comm\",\"user\",\"kernel\",\"jit\","
	      "\"inline\",\"unknown\",\"idle\",\"python\"]",
	      out);
	fputs(",\"strings\":[", out);
	for (size_t i = 0; i < nr_strings; i++) {
		if (i)
			fputs(i % 64 ? "," : ",\n", out);
		json_string(out, string_table_get(&t->strings, from_page[i]));
	}
	/* Flat: name, file, type, depth, samples[, samples before, or ns
	 * off the CPU]: the page computes wall-clock time from the two. */
	fprintf(out, "],\"stride\":%d,\"nodes\":[", diff || t->off_cpu ? 6 : 5);
	for (size_t k = 0; k < ord->n; k++) {
		const struct fg_node *n = &t->nodes[ord->nodes[k]];

		fprintf(out, "%s%u,%u,%u,%u,%" PRIu64,
			k ? (k % 16 ? "," : ",\n") : "", to_page[n->name],
			to_page[n->file], n->type, n->depth,
			n->value[FG_AFTER]);
		if (diff)
			fprintf(out, ",%" PRIu64, n->value[FG_BEFORE]);
		else if (t->off_cpu)
			fprintf(out, ",%" PRIu64, n->off_cpu_ns);
	}
	fputs("]}", out);
}

int fg_write_html(const struct fg_tree *t, const struct fg_output_opts *o,
		  FILE *out)
{
	static const char *const markers[] = { "<!--@TITLE@-->",
					       "<!--@STYLE@-->",
					       "<!--@SCRIPT@-->",
					       "<!--@DATA@-->" };
	const char *p = (const char *)fg_asset_html;
	uint32_t *to_page, *from_page;
	size_t nr_strings;
	struct fg_order ord;

	if (fg_order_build(t, &ord))
		return -ENOMEM;
	if (number_strings(t, &ord, &to_page, &from_page, &nr_strings)) {
		fg_order_free(&ord);
		return -ENOMEM;
	}
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
			fg_xml_text(out, o->title, 0);
			break;
		case 1:
			fwrite(fg_asset_css, 1, fg_asset_css_len, out);
			break;
		case 2:
			fwrite(fg_asset_js, 1, fg_asset_js_len, out);
			break;
		default:
			write_data(t, o, &ord, to_page, from_page, nr_strings,
				   out);
			break;
		}
	}
	fg_order_free(&ord);
	free(to_page);
	free(from_page);
	return 0;
}
