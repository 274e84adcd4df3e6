/* SPDX-License-Identifier: MIT */
/* dcprof record: the option values checked before anything starts. */
#ifndef DCPROF_RECORD_OPTS_H
#define DCPROF_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "dcprof/dcprof.h"

/* -C: perf's cpu list ("0-3,6") into *cpus (replaced), a usage error */
int record_parse_cpus(const char *arg, int **cpus, size_t *nr_cpus);
/* -u: a user name or a numeric uid */
int record_parse_user(const char *arg, uint32_t *uid);
/* -F above kernel.perf_event_max_sample_rate: refused */
int record_check_frequency(unsigned long hz);
/* --only: an existing file or a whole build id */
int record_check_only(const char *arg);
/* record's long options without a short one (beside continuous.h's) */
#define RECORD_OPT_CALL_GRAPH 0x180
#define RECORD_OPT_NO_CGROUPS 0x181
#define RECORD_OPT_MEMORY_LIMIT 0x182
#define RECORD_OPT_MAX_OPEN_FILES 0x183
/* --memory-limit BYTES or --max-open-files N (opt) into o */
int record_parse_bound(int opt, const char *arg, struct dcp_recorder_opts *o);

/* What --off-cpu cannot be combined with, said before anything starts. */
int record_check_off_cpu(const struct dcp_recorder_opts *o, bool min_given,
			 size_t nr_only, size_t nr_cpus);
/* -G PATH[,PATH]: appended to *list (the strings are arg's, cut). */
int record_parse_cgroups(char *arg, const char ***list, size_t *n);
/* --off-cpu-min: microseconds (0 or more) into *ns, a usage error of
 * the command cmd (record, top) */
int record_parse_off_cpu_min(const char *cmd, const char *arg, uint64_t *ns);

/*
 * The backend when --backend is not given: auto (the BPF backend, whose -g
 * unwinds full stacks in the kernel, and the perf backend when it cannot
 * load), or perf when the options ask for what only it records (cpus: -C).
 */
enum dcp_backend record_default_backend(const struct dcp_recorder_opts *o,
					bool cpus);
/* --backend of record and top: bpf, perf or auto into *backend; else a
 * usage error of cmd (status 2). */
int record_parse_backend(const char *cmd, const char *arg,
			 enum dcp_backend *backend);

/* DCPROF_BPF_PYTHON=0, DCPROF_BPF_FRAMES=buildid, DCPROF_BPF_MAP_ENTRIES,
 * DCPROF_BPF_BTF, DCPROF_BPF_CPU_MAX_PERCENT into o's bpf_* fields; an
 * error for a value that is not one. */
int record_opts_from_env(struct dcp_recorder_opts *o);

/*
 * Whether the process pid is gone for a recorder: no such task, or a
 * zombie that runs nothing.
 */
bool record_process_gone(pid_t pid);
/* The process to record for -p ID (a thread's id: its process). */
int record_resolve_target(unsigned long id, pid_t *out);

#endif
