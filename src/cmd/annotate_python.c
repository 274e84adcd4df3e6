// SPDX-License-Identifier: MIT
/*
 * annotate of a Python function: its samples by source line, beside the
 * lines of its file. A Python frame's symbol is a code object and its
 * details the file's path and the call's current line, so a sample counts
 * at the line its innermost Python frame was running, wherever the native
 * leaf is (a C function called from that line counts there, as in py-spy's
 * line view). The file is read as it is now; a function whose file is not
 * there shows its lines' counts alone.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "cmd.h"

/* Lines shown around each sampled one when the function is long */
#define CONTEXT_LINES 2
/* A function of at most this many lines is shown whole */
#define WHOLE_LINES 60
/* How far above its first sampled line a function's "def" is looked for */
#define DEF_SEARCH_LINES 400

struct line_count {
	uint32_t line;
	uint64_t samples;
};

static int compare_lines(const void *a, const void *b)
{
	const struct line_count *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

bool annotate_python_match(const char *sym_name, const char *name,
			   bool short_forms)
{
	const char *paren = strstr(sym_name, " (");
	size_t qlen = paren ? (size_t)(paren - sym_name) : strlen(sym_name);
	size_t len = strlen(name);

	if (!short_forms)
		return !strcmp(sym_name, name) ||
		       (len == qlen && !strncmp(sym_name, name, len));
	/* the qualname's last part: "run" of "Worker.run" */
	return len < qlen && sym_name[qlen - len - 1] == '.' &&
	       !strncmp(sym_name + qlen - len, name, len);
}

static size_t indent_of(const char *text)
{
	size_t n = 0;

	for (; *text == ' ' || *text == '\t'; text++)
		n += *text == '\t' ? 8 - n % 8 : 1;
	return n;
}

static bool starts_def(const char *text)
{
	text += strspn(text, " \t");
	if (!strncmp(text, "async ", 6))
		text += 6 + strspn(text + 6, " \t");
	return !strncmp(text, "def ", 4) || !strncmp(text, "class ", 6);
}

/* The line of the "def" (or "class") above the first sampled line, at a
 * smaller indent; the first sampled line itself when none is found (module
 * code, a file that changed). */
static uint32_t def_line(struct annotate_source *src, const char *path,
			 uint32_t first)
{
	const char *text = annotate_source_line(src, path, first);
	size_t indent = text ? indent_of(text) : 0;

	for (uint32_t l = first; text && l > 0 && first - l < DEF_SEARCH_LINES;
	     l--) {
		const char *t = annotate_source_line(src, path, l);

		if (t && starts_def(t) && (indent_of(t) < indent || l == first))
			return l;
	}
	return first;
}

/* Whether line is shown: the function whole when it is short, else the
 * def line and the lines near a sampled one. */
static bool shown(const struct line_count *lc, size_t n, uint32_t line,
		  uint32_t def, uint32_t last)
{
	if (line == def || last - def <= WHOLE_LINES)
		return true;
	for (size_t i = 0; i < n; i++)
		if (lc[i].line + CONTEXT_LINES >= line &&
		    line + CONTEXT_LINES >= lc[i].line)
			return true;
	return false;
}

static void print_json_line(const struct line_count *lc, uint64_t total,
			    const char *text, bool first)
{
	printf("%s{\"line\":%" PRIu32 ",\"samples\":%" PRIu64
	       ",\"percent\":%.4f,\"text\":",
	       first ? "" : ",", lc->line, lc->samples,
	       total ? 100.0 * (double)lc->samples / (double)total : 0);
	if (text)
		json_print_string(stdout, text);
	else
		printf("null");
	printf("}");
}

static void print_text_line(uint32_t line, uint64_t samples, uint64_t total,
			    const char *text, bool colour)
{
	double pct = total ? 100.0 * (double)samples / (double)total : 0;
	const char *c = annotate_print_samples(samples, pct, colour);

	if (line)
		printf("  %6" PRIu32 "  ", line);
	else
		printf("  %6s  ", "?");
	if (text)
		annotate_print_source(text);
	else if (!line)
		printf("(no line: the code object's location table had none)");
	if (c)
		fputs("\033[0m", stdout);
	printf("\n");
}

int annotate_python_one(const struct profile_view *v,
			const struct annotate_target *t, bool json, bool first,
			bool colour)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	struct annotate_source src = { 0 };
	struct line_count *lc = calloc(t->n ? t->n : 1, sizeof(*lc));
	const char *path = NULL;
	uint32_t def = 0, last = 0;
	bool readable = false;
	size_t n = 0;

	if (!lc)
		return cmd_error("out of memory");
	dcp_cookie_table_lookup(v->cookies, t->cookie, &ci);
	for (size_t i = 0; i < t->n; i++) {
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		uint32_t line = 0;

		if (!dcp_profile_symbol(v->profile, t->cookie, t->offsets[i],
					&sym)) {
			line = sym.line;
			if (!path && sym.file)
				path = sym.file;
		}
		lc[n].line = line;
		lc[n++].samples = t->counts[i];
	}
	qsort(lc, n, sizeof(*lc), compare_lines);
	/* one row a line: offsets of one line are one already, but merge
	 * whatever the symbol lookups made equal */
	{
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (k && lc[k - 1].line == lc[i].line)
				lc[k - 1].samples += lc[i].samples;
			else
				lc[k++] = lc[i];
		}
		n = k;
	}
	for (size_t i = 0; i < n; i++) {
		if (!lc[i].line)
			continue;
		if (!def)
			def = lc[i].line;
		last = lc[i].line;
	}
	if (path && def && annotate_source_line(&src, path, last)) {
		readable = true;
		def = def_line(&src, path, def);
	}

	if (json) {
		printf("%s{\"symbol\":", first ? "" : ",");
		json_print_string(stdout, t->name);
		printf(",\"file\":");
		if (path)
			json_print_string(stdout, path);
		else
			printf("null");
		printf(",\"python\":true,\"process\":");
		json_print_string(stdout, ci.name ? ci.name : "");
		printf(",\"samples\":%" PRIu64
		       ",\"source_read\":%s,\"lines\":[",
		       t->samples, readable ? "true" : "false");
		for (size_t i = 0; i < n; i++)
			print_json_line(
				&lc[i], t->samples,
				readable && lc[i].line ?
					annotate_source_line(&src, path,
							     lc[i].line) :
					NULL,
				i == 0);
		printf("]}");
		goto out;
	}

	printf("%s# %s in %s, Python (%s): %" PRIu64
	       " samples, each at the line its innermost Python frame ran\n",
	       first ? "" : "\n", t->name, path ? path : "(no file)",
	       ci.name ? ci.name : "", t->samples);
	if (!readable)
		printf("# %s cannot be read here: the sampled lines alone\n",
		       path ? path : "the source file");
	printf("# %7s %7s  %6s  %s\n", "Percent", "Samples", "Line", "Source");
	if (n && !lc[0].line)
		print_text_line(0, lc[0].samples, t->samples, NULL, colour);
	if (!readable) {
		for (size_t i = 0; i < n; i++)
			if (lc[i].line)
				print_text_line(lc[i].line, lc[i].samples,
						t->samples, NULL, colour);
		goto out;
	}
	{
		size_t i = 0;
		bool gap = false;

		while (i < n && !lc[i].line)
			i++;
		for (uint32_t line = def; line <= last; line++) {
			uint64_t samples = 0;

			if (i < n && lc[i].line == line)
				samples = lc[i++].samples;
			if (!samples && !shown(lc, n, line, def, last)) {
				gap = true;
				continue;
			}
			if (gap)
				printf("  %7s  %7s  %6s  ...\n", "", "", "");
			gap = false;
			print_text_line(line, samples, t->samples,
					annotate_source_line(&src, path, line),
					colour);
		}
	}
out:
	annotate_source_free(&src);
	free(lc);
	return 0;
}
