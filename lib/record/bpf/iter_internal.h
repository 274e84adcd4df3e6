/* SPDX-License-Identifier: MIT */
/*
 * The collection through the kernel (iter.c: the iterators, reading and
 * opening; iter_convert.c: their records turned into the /proc walk's):
 * the state the two files share.
 */
#ifndef DCPROF_ITER_INTERNAL_H
#define DCPROF_ITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dcprof/dcprof.h"
#include "collect_walk_internal.h"
#include "iter_record.h"

#define VM_READ 0x1u
#define VM_WRITE 0x2u
#define VM_MAYSHARE 0x80u

enum phase {
	PHASE_EXE, /* tasks kind: the main executables' first maps */
	PHASE_TASKS, /* tasks kind: every thread */
	PHASE_MAPS, /* maps kind: every executable mapping */
	PHASE_DONE,
};

/* A file identity by (dev, ino), looked up once per collection. */
/* The exe MMAP2 record of one process (tasks kind), at off in c->exe. */
struct exe_entry {
	uint32_t tgid;
	size_t off;
};

struct task_iter_bpf;

/*
 * The iterator programs' fds, loaded: task_iter.bpf.c's own object
 * (collect), or the BPF record source's, which links them in (one object
 * loaded for the whole start-up).
 */
struct dcp_iter_programs {
	int exe, task, vma;
};

struct dcp_collection_bpf {
	enum dcp_collection_kind kind;
	struct dcp_cookie_table *cookies;
	bool own_cookies, only_marked;

	struct task_iter_bpf *skel; /* NULL: the programs are lent */
	struct dcp_iter_programs progs;
	int link_fd, iter_fd;
	enum phase phase;

	uint32_t *targets; /* thread group ids, or NULL: every process */
	size_t nr_targets, next_target;
	uint64_t target_seen; /* kernel records of the current target */

	/* bytes read from the iterator, parsed from in_pos */
	struct dcp_coll_buf in;
	size_t in_pos;

	/* records ready for the caller, handed over from q.out_pos */
	struct dcp_coll_queue q;

	/* maps kind: the records of the process being read */
	struct dcp_coll_buf pend;
	uint32_t pend_tgid;
	bool pend_gone;

	/* tasks kind: exe MMAP2 records by thread group id, in walk order */
	struct dcp_coll_buf exe;
	struct exe_entry *exes;
	size_t nr_exes, exes_cap;
	uint32_t last_exe_tgid;

	struct dcp_ident_cache idents;

	bool vsyscall; /* the gate area, which no vma iterator shows */
	uint64_t vsys_start, vsys_end;
	uint32_t vsys_prot;

	uint64_t time, boot_minus_mono;
	long clk_tck;
	char *link_buf; /* PATH_MAX */

	uint64_t kernel_reads;
	struct dcp_collection_stats stats;
};

/* ---- iter.c ---- */

/*
 * dcp_collection_bpf_open() over programs loaded by the caller, which
 * keeps them loaded until the collection is closed.
 */
struct dcp_collection_bpf *
dcp_collection_bpf_open_programs(enum dcp_collection_kind kind,
				 const struct dcp_collection_opts *opts,
				 const struct dcp_iter_programs *progs);

/* ---- iter_convert.c ---- */

/* Whether /proc no longer has the process. */
bool dcp_iter_process_gone(uint32_t pid);
/* One record of the kernel's into c->q.out (or c->pend, c->exe). */
int dcp_iter_convert(struct dcp_collection_bpf *c,
		     const struct dcp_iter_hdr *h);
/* Hand the records of the process in c->pend over (or drop them: gone). */
int dcp_iter_flush_process(struct dcp_collection_bpf *c);

#endif
