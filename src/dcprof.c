// SPDX-License-Identifier: MIT
/* dcprof: one table of subcommands, each in src/cmd/NAME.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "read_opts.h"
#include "report.h"

/* Laid out as the help prints, which clang-format would undo. */
/* clang-format off */
static const struct cmd commands[] = {
	{ "record", cmd_record, CMD_NEEDS_PERF,
	  "sample the whole system, some processes, or a command",
	  "[-a] [-p PID[,PID...] | -t TID[,TID...] | -u USER] [-i] [-C CPUS]\n"
	  "              [-F HZ | -c PERIOD] [-e EVENT[:u|:k]]\n"
	  "              [-g | --call-graph MODE] [-o FILE] [--duration SECONDS [--kill-at-end]]\n"
	  "              [--only FILE]... [--flush-interval SECONDS] [--mmap-pages N]\n"
	  "              [--backend bpf|perf|auto] [--off-cpu [--off-cpu-min USEC]]\n"
	  "              [--unwind-memory BYTES] [-G CGROUP[,CGROUP...]] [--no-cgroups]\n"
	  "              [--memory-limit BYTES] [--max-open-files N] [--ready-fd N] [-v]\n"
	  "              [--continuous DIR [--period SECONDS] [--keep AGE] [--keep-size BYTES]\n"
	  "               [--push URL [--push-app NAME] [--push-label KEY=VALUE]...\n"
	  "                [--push-token-file FILE | --push-basic-auth-file FILE]\n"
	  "                [--push-ca-file FILE] [--push-spool-size BYTES]\n"
	  "                [--push-tenant ID] [--push-sample-labels LIST]\n"
	  "                [--push-max-samples N] [--push-max-bytes BYTES]]]\n"
	  "              [-- COMMAND [ARGS...]]\n"
	  "\n"
	  "  -a, --all-cpus         record the whole system (default without -p or COMMAND)\n"
	  "  -p, --pid PID,...      record these processes and their descendants (those\n"
	  "                         running already, those they fork); the id of a thread\n"
	  "                         records its process\n"
	  "  -t, --tid TID,...      the same as -p (perf's spelling): a thread's process\n"
	  "  -i, --no-inherit       -p or COMMAND: the processes alone, not their\n"
	  "                         descendants (perf's --no-inherit)\n"
	  "  -F, --freq HZ          sampling frequency (default 999, at most the kernel's\n"
	  "                         kernel.perf_event_max_sample_rate)\n"
	  "  -u, --uid USER         only the processes of USER (a name or a uid), those\n"
	  "                         started while recording too\n"
	  "  -C, --cpu CPUS         sample these CPUs only (e.g. 0-3,6)\n"
	  "  -c, --count PERIOD     a sample every PERIOD ns of cpu-clock or task-clock, or\n"
	  "                         every PERIOD events of another event, instead of -F\n"
	  "  -e, --event EVENT      cpu-clock (default), task-clock, page-faults,\n"
	  "                         minor-faults, major-faults, context-switches,\n"
	  "                         cpu-migrations, or cycles where a PMU exists; :u\n"
	  "                         after it samples user mode only, :k the kernel only\n"
	  "  -g                     record kernel and user call chains: with the BPF\n"
	  "                         backend, user stacks unwound in the kernel with the\n"
	  "                         files' CFI (frame pointers where a file has none);\n"
	  "                         with the perf backend, frame-pointer chains\n"
	  "      --call-graph MODE  fp: frame-pointer chains alone; dwarf[,STACK_BYTES]:\n"
	  "                         the files' CFI: on the BPF backend the same as -g, on\n"
	  "                         the perf backend user stacks unwound from a copy of\n"
	  "                         STACK_BYTES (default 8192, at most 65528)\n"
	  "      --unwind-memory BYTES kernel memory for the BPF backend's unwind tables\n"
	  "                         (default 32M; K, M, G suffixes); a file whose table\n"
	  "                         does not fit is walked by frame pointers (counted)\n"
	  "      --memory-limit BYTES what the recorder keeps to name addresses (default\n"
	  "                         32M): files kept open to name with, names kept from\n"
	  "                         one period to the next; past it the least recently\n"
	  "                         used go (counted on each period's line)\n"
	  "      --max-open-files N files the recorder holds open: pinned files and files\n"
	  "                         to name with (default 512); a file not pinned for it\n"
	  "                         is counted and named through its path\n"
	  "  -G, --cgroup PATH,...  keep only the samples of threads in these cgroups or\n"
	  "                         below them (paths in the cgroup v2 hierarchy, as\n"
	  "                         /proc/PID/cgroup's 0:: line shows; repeatable); the\n"
	  "                         rest is counted as of other cgroups\n"
	  "      --no-cgroups       samples without their cgroups (recorded by default:\n"
	  "                         report --sort cgroup,unit,container,pod)\n"
	  "  -o, --output FILE      profile to write (default " CMD_DEFAULT_PROFILE "; an old one becomes FILE.old)\n"
	  "      --duration SECONDS stop recording after this long; a COMMAND keeps running\n"
	  "                         (dcprof exits 0 once the profile is written)\n"
	  "      --kill-at-end      when recording stops, send COMMAND SIGTERM and exit\n"
	  "                         with its status (128 + 15 when SIGTERM ended it)\n"
	  "      --only FILE        keep only samples whose leaf frame is in FILE (an existing\n"
	  "                         path, or a build id of 40, 32 or 16 hex digits);\n"
	  "                         repeatable; the rest is counted as filtered\n"
	  "      --flush-interval S write the profile to disk every S seconds (default 2)\n"
	  "      --mmap-pages N     ring buffer pages per CPU (default: half a second\n"
	  "                         of samples at -F, at least 128)\n"
	  "      --backend B        bpf: stacks counted and unwound in the kernel by a\n"
	  "                         BPF program (root, or CAP_BPF and CAP_PERFMON;\n"
	  "                         cpu-clock); perf: the perf ring; auto (default):\n"
	  "                         bpf when it can load, else perf (and with -C,\n"
	  "                         -c, -u, another event, or without root or\n"
	  "                         CAP_BPF and CAP_PERFMON)\n"
	  "      --off-cpu          also charge the time threads spend switched out\n"
	  "                         (blocked, sleeping or preempted) to the stack they\n"
	  "                         left the CPU with (sched:sched_switch; implies -g;\n"
	  "                         not with --only, -C or -u)\n"
	  "      --off-cpu-min USEC drop (and count) off-CPU blocks shorter than USEC\n"
	  "                         microseconds (default 0: keep all)\n"
	  "      --ready-fd N       write \"recording\" and a newline to descriptor N,\n"
	  "                         then close it, once the events are on and the\n"
	  "                         processes already running are described\n"
	  "  -v, --verbose          say more about what the recorder does\n"
	  "      --continuous DIR   never stop: write a profile of each period into DIR\n"
	  "                         (named by its start, UTC, and the host), at 99 Hz\n"
	  "                         unless -F; SIGHUP ends a period at once, SIGTERM\n"
	  "                         writes the current one whole and stops\n"
	  "      --period SECONDS   length of a period, on wall-clock boundaries\n"
	  "                         (default 60)\n"
	  "      --keep AGE         remove periods older than AGE (90s, 30m, 12h, 7d)\n"
	  "      --keep-size BYTES  remove the oldest periods past BYTES in all (K, M, G)\n"
	  "      --push URL         send each period as pprof to Pyroscope (http(s)://:\n"
	  "                         POST URL/ingest) or Parca (parca+http(s)://: its\n"
	  "                         WriteRaw at URL/api/profiles/writeraw), or as\n"
	  "                         OpenTelemetry profiles (otlp+http(s)://: POST\n"
	  "                         URL/v1development/profiles), from a spool\n"
	  "                         in DIR/.spool: kept and retried while the server is\n"
	  "                         down or refuses what may pass later, set aside in\n"
	  "                         DIR/.spool/set-aside when it can never take it\n"
	  "      --push-app NAME    the application name of the pushed profiles\n"
	  "                         (default dcprof)\n"
	  "      --push-label KEY=VALUE\n"
	  "                         a label of the pushed profiles (repeatable; hostname\n"
	  "                         and kernel_release by default)\n"
	  "      --push-token-file FILE\n"
	  "                         a bearer token for the server, read from FILE\n"
	  "      --push-basic-auth-file FILE\n"
	  "                         USER:PASSWORD for the server, read from FILE\n"
	  "      --push-ca-file FILE\n"
	  "                         https: trust the CAs of FILE (PEM) instead of the\n"
	  "                         system's\n"
	  "      --push-spool-size BYTES\n"
	  "                         periods waiting to be sent take at most BYTES\n"
	  "                         (default 64M); past it they are dropped, counted\n"
	  "      --push-tenant ID   the tenant of a multi-tenant Pyroscope (X-Scope-OrgID)\n"
	  "      --push-sample-labels LIST\n"
	  "                         the sample labels pushed, each value a series in\n"
	  "                         the store: none, or of comm, thread, pid, tid (as\n"
	  "                         strings), and the cgroup's cgroup, container, unit\n"
	  "                         and pod (default comm,container,unit; at most 64\n"
	  "                         values of each cgroup label a request, then other)\n"
	  "      --push-max-samples N\n"
	  "                         cut a period into requests of at most N samples\n"
	  "                         (default 16000, Pyroscope's limit)\n"
	  "      --push-max-bytes BYTES\n"
	  "                         ... and of at most BYTES of pprof before gzip\n"
	  "                         (default 1M, under Pyroscope's 2 MiB rate burst)\n" },
	{ "report", cmd_report, 0,
	  "print the flat profile, inclusive time or call trees",
	  "[-i FILE|DIR [--since TIME] [--until TIME]] [--sort KEYS] [--format text|json]\n"
	  "              [--limit N] [-n] [--stdio]\n"
	  "              [--children | --no-children | -g | --tree caller|callee] [--percent-limit P]\n"
	  "              [--max-stack N] [--comm C,...] [--pid P,...] [--tid T,...]\n"
	  "              [--file F,...] [--symbol S,...] [--cgroup PATH,...]\n"
	  "              [--no-demangle] [--no-inline] [--no-process] [--full-path]\n"
	  "              [--resymbolize [--debuginfo-dir DIR]... [--write]]\n"
	  "              [--value cpu|off-cpu|wall] [--threads]\n"
	  "\n"
	  READ_HELP_INPUT
	  READ_HELP_RANGE
	  "  -s, --sort KEYS        group by comm (the thread's name, as perf; or thread),\n"
	  "                         pid, tid, process (its name), file, symbol, cgroup\n"
	  "                         (its path), unit (systemd's), container (runtime\n"
	  "                         and id), pod (a Kubernetes pod's UID and QoS class),\n"
	  "                         comma-separated (default comm,file,symbol; perf's\n"
	  "                         dso and sym are file and symbol)\n"
	  READ_HELP_FORMAT_TEXT_JSON
	  "      --limit N          print at most N rows (tree: N functions at the top,\n"
	  "                         of each process)\n"
	  "  -n, --show-nr-samples  trees: a column of sample counts (the flat views always\n"
	  "                         show them)\n"
	  "      --stdio            text output, the default (accepted for perf's users)\n"
	  "  -g                     the call tree, callers first (perf's -g; --tree caller)\n"
	  "      --children         inclusive time (the function anywhere on the stack) and\n"
	  "                         self time, sorted by inclusive\n"
	  "      --no-children      self time only, the default (undoes --children)\n"
	  "      --tree ORDER       call tree: caller (from the outermost caller down) or\n"
	  "                         callee (every function with its inclusive and self\n"
	  "                         time, over its callers); inlined calls are frames of\n"
	  "                         their own\n"
	  "      --percent-limit P  hide rows and tree entries below P percent\n"
	  "      --max-stack N      use only the N frames nearest the sampled one\n"
	  "      --comm C,...       only these thread or process names (repeatable)\n"
	  "      --pid P,...        only these processes (a thread's id: its process)\n"
	  "      --tid T,...        only these threads (repeatable)\n"
	  "      --file F,...       only stacks with a frame in these files (path or base\n"
	  "                         name), in every view and value\n"
	  "      --symbol S,...     only stacks with a frame in these functions, in every\n"
	  "                         view and value (a filter that leaves nothing says on\n"
	  "                         stderr how many samples each one removed)\n"
	  "      --cgroup PATH,...  only threads in these cgroups or below them\n"
	  "      --no-demangle      C++ and Rust names as the binaries spell them\n"
	  "      --no-inline        trees: no frames for inlined calls\n"
	  "      --no-process       text trees: merge the processes (by default each\n"
	  "                         process name is a level at the root when there are\n"
	  "                         several)\n"
	  "      --full-path        text: file paths in full (long ones are shortened\n"
	  "                         to their last components)\n"
	  "      --resymbolize      name the sampled addresses again from the files and\n"
	  "                         their debug files (matched by build id)\n"
	  "      --debuginfo-dir DIR\n"
	  "                         look for debug files in DIR too (DIR/.build-id/..);\n"
	  "                         repeatable\n"
	  "      --write            store the new names in the profile\n"
	  "      --value V          what the views count: cpu (samples, the default),\n"
	  "                         off-cpu (ms off the CPU, record --off-cpu) or wall\n"
	  "                         (ms: samples times the period, plus off-CPU)\n"
	  "      --threads          each thread's time on the CPU and off it (record\n"
	  "                         --off-cpu), against its lifetime (a recorded\n"
	  "                         command or -p) or the recording's length\n" },
	{ "diff", cmd_diff, 0,
	  "compare two recordings function by function",
	  "[--format text|json] [--limit N] OLD NEW\n"
	  "\n"
	  "  each function's self samples and share in OLD and NEW and the\n"
	  "  share's move in points, largest move first\n"
	  "\n"
	  READ_HELP_FORMAT_TEXT_JSON
	  "      --limit N          print at most N functions\n" },
	{ "cookies", cmd_cookies, 0, "list the files a recording saw",
	  "[-i FILE] [--format text|json]\n"
	  "\n"
	  READ_HELP_INPUT
	  READ_HELP_FORMAT_TEXT_JSON },
	{ "export", cmd_export, 0,
	  "write a recording as pprof, OpenTelemetry profiles or folded stacks",
	  "--format pprof|otlp|folded [-i FILE|DIR [--since TIME] [--until TIME]]\n"
	  "              [-o OUT] [--no-comm] [--value cpu|off-cpu|wall]\n"
	  "\n"
	  "      --format FORMAT    pprof (gzipped profile.proto), otlp (an OpenTelemetry\n"
	  "                         ExportProfilesServiceRequest, protobuf) or folded\n"
	  "                         (one line per stack)\n"
	  READ_HELP_INPUT
	  READ_HELP_RANGE
	  "  -o, --output OUT       file to write (default: stdout for folded, dcprof.pb.gz\n"
	  "                         for pprof, dcprof.otlp.pb for otlp)\n"
	  "      --no-comm          folded: no process name as the root frame\n"
	  "      --value V          folded: samples (cpu, the default), or ns off the CPU\n"
	  "                         (off-cpu) or of wall-clock time (wall); pprof has\n"
	  "                         samples, cpu and off_cpu as sample types (wall is\n"
	  "                         their sum)\n" },
	{ "flamegraph", cmd_flamegraph, 0,
	  "draw a recording as an interactive flame graph",
	  "[-i FILE|DIR [--since TIME] [--until TIME]] [-o OUT] [--format html|svg]\n"
	  "               [--group process|thread] [--by cgroup|unit|container|pod]\n"
	  "               [--value cpu|off-cpu|wall]\n"
	  "               [--diff BEFORE AFTER]\n"
	  "\n"
	  READ_HELP_INPUT
	  READ_HELP_RANGE
	  "  -o, --output OUT       file to write (default flamegraph.html or .svg)\n"
	  "      --group WHAT       under each process: nothing (process, the default) or\n"
	  "                         its threads by name (thread)\n"
	  "      --by KEY           a level above the processes: their cgroup's path\n"
	  "                         (cgroup), systemd unit, container or pod\n"
	  "      --value V          frames as wide as their samples (cpu, the default),\n"
	  "                         their time off the CPU (off-cpu) or wall-clock time\n"
	  "                         (wall); the page of an off-CPU profile switches\n"
	  "                         between them and shows V first\n"
	  "      --format FORMAT    html (self-contained, interactive; default) or svg (static)\n"
	  "      --diff BEFORE AFTER\n"
	  "                         colour each frame of AFTER by how much its share changed\n" },
	{ "annotate", cmd_annotate, 0,
	  "show where in a function the samples fell (Python: by line)",
	  "SYMBOL [-i FILE] [--format text|json] [--no-demangle] [--debuginfo-dir DIR]...\n"
	  "                [-k VMLINUX]\n"
	  "\n"
	  READ_HELP_INPUT
	  "      --format FORMAT    text (default; hot lines coloured on a terminal) or json\n"
	  "      --no-demangle      match and show names as the binaries spell them\n"
	  "      --debuginfo-dir DIR\n"
	  "                         look for debug files in DIR too (DIR/.build-id/..), for\n"
	  "                         source lines, and for names of binaries stripped when\n"
	  "                         recorded (the profile is named again, in memory);\n"
	  "                         repeatable\n"
	  "  -k, --vmlinux FILE     the kernel's code, names and lines from FILE, an ELF\n"
	  "                         image of the recorded kernel (same build id), instead\n"
	  "                         of /proc/kcore (root) and /proc/kallsyms\n" },
	{ "top", cmd_top, CMD_NEEDS_PERF,
	  "show the functions taking the CPU now, refreshed every interval",
	  "[-a] [-p PID,... [-i]] [-g] [-F HZ] [--only FILE]... [--backend B]\n"
	  "              [--off-cpu [--off-cpu-min USEC] [--value cpu|off-cpu|wall]]\n"
	  "              [--delay SECONDS] [--sort KEYS] [--comm C,...] [--pid P,...]\n"
	  "              [--stdio [--iterations N] [--format text|json] [--limit N]] [-o FILE]\n"
	  "              [-- COMMAND [ARGS...]]\n"
	  "\n"
	  "  -a, --all-cpus         the whole system (default without -p or COMMAND;\n"
	  "                         with COMMAND, the whole system while it runs)\n"
	  "  -p PID,...             only these processes and their descendants (those\n"
	  "                         running already, those they fork)\n"
	  "  -i, --no-inherit       -p or COMMAND: the processes alone, not their\n"
	  "                         descendants, as record\n"
	  "  -g                     record frame-pointer call chains (Enter: call tree)\n"
	  "  -F, --freq HZ          sampling frequency (default 999)\n"
	  "      --only FILE        keep only samples whose leaf frame is in FILE\n"
	  "      --backend B        bpf, perf or auto (default), as record\n"
	  "      --off-cpu          also the time threads spend off the CPU, as record\n"
	  "                         (implies -g; not with --only)\n"
	  "      --off-cpu-min USEC drop shorter off-CPU blocks, as record\n"
	  "      --value V          what the table adds up: cpu (samples, default),\n"
	  "                         off-cpu or wall (ms; needs --off-cpu): off-CPU time\n"
	  "                         by the frame its thread blocked from\n"
	  "      --delay SECONDS    refresh interval (default 1; above 0)\n"
	  "  -s, --sort KEYS        group by comm, pid, tid, process, file, symbol,\n"
	  "                         cgroup, unit, container, pod (as report's),\n"
	  "                         comma-separated (default comm,file,symbol)\n"
	  "      --comm C,...       only these thread or process names (repeatable)\n"
	  "      --pid P,...        only these process or thread ids (repeatable)\n"
	  "      --stdio            print the table as text every interval (blocks\n"
	  "                         separated by a blank line), no full-screen view\n"
	  "      --iterations N     --stdio: stop after N intervals\n"
	  "      --format FORMAT    --stdio: text (default) or json (an object a line)\n"
	  "      --limit N          rows per interval (--stdio default 20)\n"
	  "  -o, --output FILE      also write the whole session as a profile at the end\n"
	  "\n"
	  "  COMMAND (after --): started as record does, its process tree shown;\n"
	  "  when it exits, --stdio prints a last table and ends (status 0), the\n"
	  "  full-screen view keeps the final totals until q. Stopping top first\n"
	  "  (q, Ctrl-C, --iterations) stops COMMAND: SIGTERM, SIGKILL 2 s later.\n"
	  "  In the full-screen view its input and output are /dev/null.\n"
	  "\n"
	  "  keys: s sort, v value (--off-cpu), i idle, k kernel, / filter,\n"
	  "        Enter call tree, z reset, space pause, ? help, q quit\n" },
	{ "collect", cmd_collect, 0,
	  "print the tasks or maps that recording would inject",
	  "[--kind tasks|maps] [--backend proc|bpf] [-p PID,...]\n"
	  "               [--buffer BYTES] [--format text|json]\n"
	  "\n"
	  "      --kind KIND        tasks (default) or maps\n"
	  "      --backend BACKEND  proc (default: walk /proc) or bpf (the kernel's task\n"
	  "                         iterators; needs root)\n"
	  "  -p, --pid PID,...      only these processes\n"
	  "      --buffer BYTES     read through a buffer of this size (default 65536)\n"
	  READ_HELP_FORMAT_TEXT_JSON },
};
/* clang-format on */

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
