// SPDX-License-Identifier: MIT
/*
 * The names annotate answers to besides a function's own: the short forms
 * of a demangled name ("heavy", "Calc<double>::heavy" for
 * "ns::Calc<double>::heavy(int)"), and, when nothing answers, the sampled
 * functions whose names come closest, for the error line; the direct
 * call and jump targets of the disassembly, which the library names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"

/* The length of a demangled name without its parameters (and what follows
 * them): up to its first '(' outside template arguments. */
static size_t without_parameters(const char *s)
{
	int depth = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && depth > 0)
			depth--;
		else if (s[i] == '(' && depth == 0 && i > 0)
			return i;
	}
	return strlen(s);
}

bool annotate_short_match(const char *demangled, const char *name)
{
	size_t n = without_parameters(demangled), len = strlen(name);

	if (!len || len > n || strncmp(demangled + n - len, name, len))
		return false;
	/* the whole name, or a suffix that starts a scope */
	return len == n || (n - len >= 2 && demangled[n - len - 1] == ':' &&
			    demangled[n - len - 2] == ':');
}

/* Edit distance of a and b (their first 63 bytes), for typos. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 63), lb = strnlen(b, 63), d[64];

	for (size_t j = 0; j <= lb; j++)
		d[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = d[0];

		d[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = d[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (d[j - 1] + 1 < best)
				best = d[j - 1] + 1;
			diag = up;
			d[j] = best;
		}
	}
	return d[lb];
}

/* The last scope of a demangled name without its parameters, in buf. */
static const char *last_scope(const char *s, char *buf, size_t size)
{
	size_t n = without_parameters(s), start = 0;
	int depth = 0;

	for (size_t i = 0; i + 1 < n; i++) {
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && depth > 0)
			depth--;
		else if (depth == 0 && s[i] == ':' && s[i + 1] == ':')
			start = i + 2;
	}
	snprintf(buf, size, "%.*s", (int)(n - start), s + start);
	return buf;
}

struct candidate {
	const char *name;
	uint64_t samples;
	size_t score; /* 0: contains the name; else 1 + the distance */
};

static int by_score(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

size_t annotate_closest(const struct profile_view *v, const char *name,
			char *buf, size_t size)
{
	struct candidate *c = NULL;
	size_t n = 0, cap = 0, len = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < dcp_profile_nr_rows(v->profile); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		const char *sym;
		char scope[128];
		size_t score = 0, k;

		if (dcp_profile_row(v->profile, i, &row) || !row.nr_frames ||
		    !row.count)
			continue;
		sym = profile_view_symbol(v, &row.frames[0]);
		if (!sym || sym[0] == '[')
			continue;
		if (!strstr(sym, name)) {
			size_t d = distance(
				last_scope(sym, scope, sizeof(scope)), name);

			/* a typo: a third of the name at most */
			if (d * 3 > strlen(name))
				continue;
			score = 1 + d;
		}
		for (k = 0; k < n && strcmp(c[k].name, sym); k++)
			;
		if (k == n) {
			struct candidate *g;

			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				g = realloc(c, cap * sizeof(*g));
				if (!g)
					break; /* only a hint */
				c = g;
			}
			c[n++] = (struct candidate){ .name = sym,
						     .score = score };
		}
		c[k].samples += row.count;
	}
	if (n)
		qsort(c, n, sizeof(*c), by_score);
	for (size_t k = 0; k < n && shown < 5 && len + 8 < size; k++, shown++)
		len += (size_t)snprintf(buf + len, size - len, "%s'%s'",
					shown ? ", " : "", c[k].name);
	free(c);
	return shown;
}

bool annotate_direct_target(const cs_insn *in, uint64_t *target)
{
	/* x86's call and jumps, AArch64's b, b.cond and bl */
	bool branch = !strncmp(in->mnemonic, "call", 4) ||
		      in->mnemonic[0] == 'j' || !strcmp(in->mnemonic, "b") ||
		      !strncmp(in->mnemonic, "b.", 2) ||
		      !strcmp(in->mnemonic, "bl");
	const char *op = in->op_str + (in->op_str[0] == '#');
	char *end;

	/* direct: the operand is the target's address */
	if (!branch || strncmp(op, "0x", 2))
		return false;
	*target = strtoull(op, &end, 16);
	return !*end;
}
