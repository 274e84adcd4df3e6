// SPDX-License-Identifier: MIT
/* Error output, log routing and safe printing shared by the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static void vprint_line(const char *prefix, const char *fmt, va_list ap)
{
	fputs("dcprof: ", stderr);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int cmd_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_line("", fmt, ap);
	va_end(ap);
	return 1;
}

int cmd_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_line("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "see 'dcprof %s --help'\n", name);
	return 2;
}

void cmd_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint_line("warning: ", fmt, ap);
	va_end(ap);
}

static void log_to_stderr(enum dcp_log_level level, const char *msg, void *ctx)
{
	int verbosity = *(int *)ctx;

	if (level == DCP_LOG_WARN)
		fprintf(stderr, "dcprof: warning: %s\n", msg);
	else if ((int)level <= verbosity)
		fprintf(stderr, "dcprof: %s\n", msg);
}

void cmd_setup_log(int verbosity)
{
	static int level;

	level = verbosity;
	dcp_set_log(log_to_stderr, &level);
}

int cmd_fp_hint(const struct dcp_profile_stats *s,
		const struct dcp_cookie_table *cookies, char *buf, size_t len)
{
	/* stacks the kernel walked by unwind tables: their frame-pointer
	 * fallbacks are counted in the unwinding lines, not hinted at */
	if (s->unwind_walks) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	return dcp_fp_hint(s, cookies, buf, len);
}

char *cmd_join_cmdline(int argc, char **argv)
{
	size_t len = strlen("dcprof") + 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "dcprof");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

int cmd_finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "dcprof: cannot write output: %s\n",
			strerror(errno ? errno : EIO));
		return status ? status : 1;
	}
	return status;
}

void json_print_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', out);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else if (*p >= 0x80)
			/* Names from /proc need not be UTF-8: keep JSON valid
			 * by escaping every non-ASCII byte as a code point. */
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void text_print_safe(FILE *out, const char *s, int width)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	int n = 0;

	while (*p) {
		size_t run = 0;

		/* printable runs in one write: reports print many names */
		while (p[run] >= 0x20 && p[run] != 0x7f)
			run++;
		if (run) {
			fwrite(p, 1, run, out);
			n += (int)run;
			p += run;
		} else {
			n += fprintf(out, "\\x%02x", *p++);
		}
	}
	if (n < width)
		fprintf(out, "%*s", width - n, "");
}
