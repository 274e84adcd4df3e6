// SPDX-License-Identifier: MIT
/*
 * annotate's source lines: the file last shown, read whole, and printed a
 * line at a time beside the samples; the colour of a line by its share.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "cmd.h"

/* The file at path when it is a regular one: a FIFO or a device named
 * by a profile is not read (it could block or never end). */
static FILE *open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

void annotate_source_free(struct annotate_source *s)
{
	free(s->path);
	if (s->lines)
		free(s->lines[0]);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

const char *annotate_source_line(struct annotate_source *s, const char *path,
				 uint32_t line)
{
	if (!s->path || strcmp(s->path, path)) {
		FILE *f;
		char *text = NULL;
		size_t len = 0, cap = 0;

		annotate_source_free(s);
		s->path = strdup(path);
		f = open_regular(path);
		if (f) {
			char buf[65536];
			size_t r;

			while ((r = fread(buf, 1, sizeof(buf), f)) > 0) {
				char *t;

				if (len + r + 1 > cap) {
					cap = (len + r + 1) * 2;
					t = realloc(text, cap);
					if (!t)
						break;
					text = t;
				}
				memcpy(text + len, buf, r);
				len += r;
			}
			fclose(f);
		}
		if (text) {
			size_t n = 1;

			text[len] = '\0';
			for (size_t i = 0; i < len; i++)
				n += text[i] == '\n';
			s->lines = calloc(n + 1, sizeof(*s->lines));
			if (!s->lines) {
				free(text);
				return NULL;
			}
			s->lines[s->nr++] = text;
			for (char *p = text; (p = strchr(p, '\n'));) {
				*p++ = '\0';
				s->lines[s->nr++] = p;
			}
		}
	}
	if (!line || line > s->nr)
		return NULL;
	return s->lines[line - 1];
}

void annotate_print_source(const char *text)
{
	char buf[1024];
	size_t col = 0;

	for (const char *p = text; *p && col + 8 < sizeof(buf); p++) {
		if (*p == '\t') {
			do
				buf[col++] = ' ';
			while (col % 8);
		} else {
			buf[col++] = *p;
		}
	}
	buf[col] = '\0';
	text_print_safe(stdout, buf, 0);
}

static const char *heat_colour(double pct)
{
	/* perf annotate's thresholds */
	if (pct >= 5)
		return "\033[1;31m";
	if (pct >= 0.5)
		return "\033[32m";
	return NULL;
}

const char *annotate_print_samples(uint64_t n, double pct, bool colour)
{
	const char *c = colour && n ? heat_colour(pct) : NULL;

	if (c)
		fputs(c, stdout);
	if (n)
		printf("  %7.2f%% %7" PRIu64, pct, n);
	else
		printf("  %7s  %7s", "", "");
	return c;
}
