// SPDX-License-Identifier: MIT
/* dcprof record: the option values checked before anything starts. */
#include <errno.h>
#include <linux/capability.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd.h"
#include "continuous.h"
#include "record_opts.h"

/* -C: "0-3,6", perf's cpu list */
int record_parse_cpus(const char *arg, int **cpus, size_t *nr_cpus)
{
	const char *p = arg;

	free(*cpus);
	*cpus = NULL;
	*nr_cpus = 0;
	while (*p) {
		char *end;
		unsigned long lo, hi;

		if (*p < '0' || *p > '9')
			goto bad;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				goto bad;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= 65536)
			goto bad;
		for (unsigned long c = lo; c <= hi; c++) {
			int *grown =
				realloc(*cpus, (*nr_cpus + 1) * sizeof(*grown));

			if (!grown)
				return cmd_error("out of memory");
			*cpus = grown;
			(*cpus)[(*nr_cpus)++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (*nr_cpus)
		return 0;
bad:
	return cmd_usage_error(
		"record", "invalid cpu list '%s': expected e.g. 0-3,6", arg);
}

/* -u: a user name or a numeric uid */
int record_parse_bound(int opt, const char *arg, struct dcp_recorder_opts *o)
{
	char *end;
	unsigned long v;

	if (opt == RECORD_OPT_MEMORY_LIMIT)
		return continuous_parse_size("--memory-limit", arg,
					     &o->memory_limit);
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < 2 ||
	    v > 1u << 20)
		return cmd_usage_error(
			"record",
			"invalid --max-open-files '%s': expected a number from 2 (a pinned file and one to name with) to 1048576",
			arg);
	o->max_open_files = (uint32_t)v;
	return 0;
}

int record_parse_user(const char *arg, uint32_t *uid)
{
	struct passwd *pw = getpwnam(arg);
	char *end;
	unsigned long v;

	if (pw) {
		*uid = (uint32_t)pw->pw_uid;
	} else {
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' ||
		    v >= UINT32_MAX)
			return cmd_usage_error("record", "no such user: '%s'",
					       arg);
		*uid = (uint32_t)v;
	}
	return 0;
}

/*
 * A frequency above perf_event_max_sample_rate, which perf_event_open
 * refuses with a bare EINVAL, is refused here before anything starts.
 */
int record_check_frequency(unsigned long hz)
{
	char buf[32];
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long max = 0;

	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		max = strtol(buf, NULL, 10);
	fclose(f);
	if (max > 0 && hz > (unsigned long)max)
		return cmd_error(
			"-F %lu is above the kernel's maximum of %ld Hz (kernel.perf_event_max_sample_rate)",
			hz, max);
	return 0;
}

int record_parse_backend(const char *cmd, const char *arg,
			 enum dcp_backend *backend)
{
	if (!strcmp(arg, "bpf"))
		*backend = DCP_BACKEND_BPF;
	else if (!strcmp(arg, "perf"))
		*backend = DCP_BACKEND_PERF;
	else if (!strcmp(arg, "auto"))
		*backend = DCP_BACKEND_AUTO;
	else
		return cmd_usage_error(
			cmd, "invalid backend '%s' (bpf, perf or auto)", arg);
	return 0;
}

/* CAP_BPF and CAP_PERFMON (kernel 5.8), in the effective set */
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/* Whether this process may load the BPF backend's programs. */
static bool may_load_bpf(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3
	};
	struct __user_cap_data_struct data[2] = { { 0 } };
	uint32_t high;

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	high = data[1].effective;
	return (high & (1u << (CAP_PERFMON_BIT - 32))) &&
	       (high & (1u << (CAP_BPF_BIT - 32)));
}

enum dcp_backend record_default_backend(const struct dcp_recorder_opts *o,
					bool cpus)
{
	/* what only the perf backend records is asked for, or the user may
	 * not load BPF programs: no fallback to say, the perf backend says
	 * itself what an unprivileged recording lacks */
	if (cpus || o->sample_period || o->filter_uid ||
	    (o->event && strcmp(o->event, "cpu-clock")) || !may_load_bpf())
		return DCP_BACKEND_PERF;
	return DCP_BACKEND_AUTO;
}

int record_parse_off_cpu_min(const char *cmd, const char *arg, uint64_t *ns)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] < '0' || arg[0] > '9' ||
	    v > UINT64_MAX / 1000)
		return cmd_usage_error(
			cmd,
			"invalid --off-cpu-min '%s': expected microseconds, 0 or more",
			arg);
	*ns = (uint64_t)v * 1000;
	return 0;
}

/*
 * --only takes an existing file or a whole build id: 40 hex digits (SHA-1,
 * the linkers' default), 32 (md5, uuid) or 16 (lld's fast); anything else
 * would be a build id no file has, filtering every sample away.
 */
int record_check_only(const char *arg)
{
	size_t len = strlen(arg);
	struct stat st;

	if (stat(arg, &st) == 0)
		return 0; /* the recorder says when it is not a regular file */
	if ((len == 16 || len == 32 || len == 40) &&
	    strspn(arg, "0123456789abcdefABCDEF") == len)
		return 0;
	return cmd_error(
		"--only '%s' is neither an existing file nor a build id (40, 32 or 16 hex digits)",
		arg);
}

/* What /proc/ID/status says of a task (a process or one of its threads). */
struct task_info {
	pid_t tgid; /* its process */
	char state; /* R, S, Z, X, ... */
	long threads;
	char name[64];
};

/* 0, or a negative errno: -ENOENT when no such task exists. */
static int task_info_read(pid_t id, struct task_info *ti)
{
	char path[64], line[256];
	FILE *f;

	memset(ti, 0, sizeof(*ti));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)id);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH ? -ENOENT : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			size_t n = strcspn(line + 6, "\n");

			if (n >= sizeof(ti->name))
				n = sizeof(ti->name) - 1;
			for (size_t i = 0; i < n; i++) {
				unsigned char c = (unsigned char)line[6 + i];

				ti->name[i] =
					c < 0x20 || c >= 0x7f ? '?' : (char)c;
			}
		} else if (!strncmp(line, "State:\t", 7)) {
			ti->state = line[7];
		} else if (!strncmp(line, "Tgid:\t", 6)) {
			ti->tgid = (pid_t)atoi(line + 6);
		} else if (!strncmp(line, "Threads:\t", 9)) {
			ti->threads = atol(line + 9);
		}
	}
	fclose(f);
	return ti->tgid > 0 ? 0 : -ENOENT;
}

/*
 * Whether the process pid is gone for a recorder: no such task, or a
 * zombie (exited, not yet reaped: it runs nothing). A leader that is a
 * zombie while other threads run (it called pthread_exit) still lives.
 * When /proc hides it (hidepid), kill() decides.
 */
bool record_process_gone(pid_t pid)
{
	struct task_info ti;
	int ret = task_info_read(pid, &ti);

	if (ret == -ENOENT)
		return true;
	if (ret)
		return kill(pid, 0) < 0 && errno == ESRCH;
	return (ti.state == 'Z' || ti.state == 'X') && ti.threads <= 1;
}

/*
 * The process to record for -p ID: ID's own when it leads it, else the
 * process of the thread ID (said in one line, as a thread id copied from
 * top -H means that process). Refuses what is gone.
 */
int record_resolve_target(unsigned long id, pid_t *out)
{
	struct task_info ti;
	int ret = task_info_read((pid_t)id, &ti);

	if (ret == -ENOENT)
		return cmd_error("no such process: %lu", id);
	if (ret) {
		/* /proc hides it: take it as a process, as kill() sees it */
		if (kill((pid_t)id, 0) < 0 && errno == ESRCH)
			return cmd_error("no such process: %lu", id);
		*out = (pid_t)id;
		return 0;
	}
	if (record_process_gone(ti.tgid)) {
		if ((unsigned long)ti.tgid == id)
			return cmd_error(
				"no such process: %lu has exited (a zombie its parent has not reaped)",
				id);
		return cmd_error(
			"no such process: thread %lu's process %d has exited",
			id, (int)ti.tgid);
	}
	if ((unsigned long)ti.tgid != id) {
		struct task_info pi;

		if (task_info_read(ti.tgid, &pi))
			snprintf(pi.name, sizeof(pi.name), "?");
		fprintf(stderr,
			"dcprof: %lu is a thread of process %d (%s): recording the whole process\n",
			id, (int)ti.tgid, pi.name);
	}
	*out = ti.tgid;
	return 0;
}

/* What --off-cpu cannot be combined with, said before anything starts. */
int record_check_off_cpu(const struct dcp_recorder_opts *o, bool min_given,
			 size_t nr_only, size_t nr_cpus)
{
	if (min_given && !o->off_cpu)
		return cmd_usage_error("record",
				       "--off-cpu-min needs --off-cpu");
	if (!o->off_cpu)
		return 0;
	if (o->call_graph == DCP_CALL_GRAPH_DWARF &&
	    o->backend == DCP_BACKEND_PERF)
		return cmd_usage_error(
			"record",
			"--off-cpu with --call-graph dwarf needs --backend bpf (it unwinds each switch-out in the kernel); the perf backend takes -g");
	if (nr_only || nr_cpus || o->filter_uid)
		return cmd_usage_error("record",
				       "--off-cpu cannot be combined with %s",
				       nr_only ? "--only" :
				       nr_cpus ? "-C" :
						 "-u");
	/* wall-clock time and the threads' view add the samples, as time,
	 * to the time off the CPU */
	if (o->event && strncmp(o->event, "cpu-clock", 9) &&
	    strncmp(o->event, "task-clock", 10))
		return cmd_usage_error(
			"record",
			"--off-cpu adds the time off the CPU to the time on it: the sampling event must count time (cpu-clock or task-clock), not '%s'",
			o->event);
	return 0;
}

/* -G PATH[,PATH]: appended to *list (the strings are arg's, cut). */
int record_parse_cgroups(char *arg, const char ***list, size_t *n)
{
	char *save = NULL;

	for (char *tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const char **grown = realloc(*list, (*n + 1) * sizeof(*grown));

		if (!grown)
			return cmd_error("out of memory");
		*list = grown;
		(*list)[(*n)++] = tok;
	}
	if (!*n)
		return cmd_usage_error("record", "-G needs a cgroup's path");
	return 0;
}

/*
 * The BPF backend's settings for tests and benchmarks, from the
 * environment: the library takes them only through the opts.
 */
int record_opts_from_env(struct dcp_recorder_opts *o)
{
	const char *python = getenv("DCPROF_BPF_PYTHON");
	const char *frames = getenv("DCPROF_BPF_FRAMES");
	const char *entries = getenv("DCPROF_BPF_MAP_ENTRIES");
	const char *btf = getenv("DCPROF_BPF_BTF");
	const char *percent = getenv("DCPROF_BPF_CPU_MAX_PERCENT");
	char *end;

	o->bpf_no_python_frames = python && !strcmp(python, "0");
	o->bpf_build_id_frames = frames && !strcmp(frames, "buildid");
	if (entries && *entries) {
		unsigned long v;

		errno = 0;
		v = strtoul(entries, &end, 0);
		if (errno || *end || !v || v > UINT32_MAX)
			return cmd_error(
				"DCPROF_BPF_MAP_ENTRIES must be a count "
				"from 1, not '%s'",
				entries);
		o->bpf_map_entries = (uint32_t)v;
	}
	if (btf && *btf)
		o->bpf_btf_path = btf;
	if (percent && *percent) {
		errno = 0;
		o->bpf_cpu_max_percent = strtod(percent, &end);
		if (errno || *end || o->bpf_cpu_max_percent <= 0 ||
		    o->bpf_cpu_max_percent > 100)
			return cmd_error("DCPROF_BPF_CPU_MAX_PERCENT must be a "
					 "share above 0 and at most 100, not "
					 "'%s'",
					 percent);
	}
	return 0;
}
