// SPDX-License-Identifier: MIT
/* dcprof: one table of subcommands, each in src/cmd/NAME.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct cmd commands[] = {
	{ "record", cmd_record, CMD_NEEDS_PERF,
	  "sample the whole system, some processes, or a command",
	  "[-a] [-p PID[,PID...]] [-F HZ] [-e EVENT] [-g] [-o FILE]\n"
	  "              [--duration SECONDS] [--only FILE]... [--flush-interval SECONDS]\n"
	  "              [--mmap-pages N] [-v] [-- COMMAND [ARGS...]]\n"
	  "\n"
	  "  -a, --all-cpus         record the whole system (default without -p or COMMAND)\n"
	  "  -p, --pid PID,...      record these processes and the children they fork\n"
	  "  -F, --freq HZ          sampling frequency (default 999)\n"
	  "  -e, --event EVENT      cpu-clock (default), task-clock, or cycles where a PMU exists\n"
	  "  -g, --call-graph       record kernel and user frame-pointer call chains\n"
	  "  -o, --output FILE      profile to write (default dcprof.data; an old one becomes FILE.old)\n"
	  "      --duration SECONDS stop after this long\n"
	  "      --only FILE        keep only samples whose leaf frame is in FILE (a path or a\n"
	  "                         build id); repeatable; the rest is counted as filtered\n"
	  "      --flush-interval S write the profile to disk every S seconds (default 2)\n"
	  "      --mmap-pages N     ring buffer pages per CPU (default 128)\n"
	  "  -v, --verbose          say more about what the recorder does\n" },
	{ "report", cmd_report, 0, "print the flat profile of a recording",
	  "[-i FILE] [--sort KEYS] [--format text|json] [--limit N]\n"
	  "\n"
	  "  -i, --input FILE       profile to read (default dcprof.data)\n"
	  "  -s, --sort KEYS        group by comm, pid, file, symbol, comma-separated\n"
	  "                         (default comm,file,symbol)\n"
	  "      --format FORMAT    text (default) or json\n"
	  "      --limit N          print at most N rows (default: all)\n" },
	{ "cookies", cmd_cookies, 0, "list the files a recording saw",
	  "[-i FILE] [--format text|json]\n"
	  "\n"
	  "  -i, --input FILE       profile to read (default dcprof.data)\n"
	  "      --format FORMAT    text (default) or json\n" },
	{ "export", cmd_export, 0, "write a recording as pprof or folded stacks",
	  "--format pprof|folded [-i FILE] [-o OUT] [--no-comm]\n"
	  "\n"
	  "      --format FORMAT    pprof (gzipped profile.proto) or folded (one line per stack)\n"
	  "  -i, --input FILE       profile to read (default dcprof.data)\n"
	  "  -o, --output OUT       file to write (default: stdout for folded, dcprof.pb.gz for pprof)\n"
	  "      --no-comm          folded: no process name as the root frame\n" },
	{ "flamegraph", cmd_flamegraph, 0,
	  "draw a recording as an interactive flame graph",
	  "[-i FILE] [-o OUT] [--format html|svg] [--diff BEFORE AFTER]\n"
	  "\n"
	  "  -i, --input FILE       profile to read (default dcprof.data)\n"
	  "  -o, --output OUT       file to write (default flamegraph.html or .svg)\n"
	  "      --format FORMAT    html (self-contained, interactive; default) or svg (static)\n"
	  "      --diff BEFORE AFTER\n"
	  "                         colour each frame of AFTER by how much its share changed\n" },
	{ "collect", cmd_collect, 0,
	  "print the tasks or maps that recording would inject",
	  "[--kind tasks|maps] [-p PID,...] [--buffer BYTES] [--format text|json]\n"
	  "\n"
	  "      --kind KIND        tasks (default) or maps\n"
	  "  -p, --pid PID,...      only these processes\n"
	  "      --buffer BYTES     read through a buffer of this size (default 65536)\n"
	  "      --format FORMAT    text (default) or json\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct cmd *cmd_find(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void cmd_usage(const struct cmd *c, FILE *out)
{
	fprintf(out, "usage: dcprof %s %s", c->name, c->usage);
}

static void print_help(FILE *out)
{
	fprintf(out, "usage: dcprof [--version] [--help] COMMAND [ARGS]\n\n");
	fprintf(out, "commands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(out, "\n'dcprof COMMAND --help' shows a command's options\n");
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		print_help(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && (c = cmd_find(argv[2]))) {
			cmd_usage(c, stdout);
			return cmd_finish_stdout(0);
		}
		print_help(stdout);
		return cmd_finish_stdout(0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dcprof %s\n", DCPROF_VERSION);
		return cmd_finish_stdout(0);
	}
	c = cmd_find(argv[1]);
	if (!c) {
		cmd_error("'%s' is not a dcprof command (see 'dcprof --help')",
			  argv[1]);
		return 2;
	}
	return c->run(argc - 1, argv + 1);
}
