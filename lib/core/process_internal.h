/* SPDX-License-Identifier: MIT */
/*
 * Processes and their address spaces, as the recorder rebuilds them from
 * sync records in timestamp order: fork copies, exec resets, mmap inserts
 * (replacing what it overlaps), munmap removes, exit retires.
 */
#ifndef DCPROF_PROCESS_INTERNAL_H
#define DCPROF_PROCESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One executable mapping: [start, end) maps the object's pgoff onwards. */
struct dcp_map {
	uint64_t start, end;
	uint64_t pgoff; /* file offset of start; 0 for special regions */
	uint32_t cookie;
	uint32_t prot;
};

struct dcp_process {
	pid_t pid; /* thread group id */
	pid_t ppid;
	char comm[16];
	uint64_t start_time; /* ns, CLOCK_MONOTONIC; 0 if unknown */
	bool injected; /* described by the collection walk */
	bool live; /* described by a live FORK/COMM/MMAP record */
	bool born_live; /* created by a live FORK: its maps known from birth */
	uint64_t exec_time; /* ns of its last live exec; 0 if none was seen */
	bool exited; /* its EXIT record was replayed: retired soon */
	uint64_t exit_time; /* ns of that EXIT record */
	bool target; /* in the process tree being recorded (-p, command) */
	/* sorted by start, non-overlapping */
	struct dcp_map *maps;
	size_t nr_maps, cap_maps;
	void *user; /* for the recorder (e.g. its interned comm) */
	uint32_t user_id;
	uint64_t user_id_missed_ns; /* when the recorder last looked in vain */
	/* set by the recorder, unique across processes, whenever the maps
	 * change in a way that matters to unwinding (0: never set) */
	uint64_t map_generation;
	/* threads named apart from the process (COMM of a tid != pid) */
	struct dcp_thread_name {
		pid_t tid;
		char comm[16];
	} * threads;
	size_t nr_threads, cap_threads;
};

struct dcp_process_table;

struct dcp_process_table *dcp_process_table_new(void);
void dcp_process_table_free(struct dcp_process_table *t);

struct dcp_process *dcp_process_table_find(struct dcp_process_table *t,
					   pid_t pid);
/* Find, or create an empty process (comm "", no maps). NULL on ENOMEM. */
struct dcp_process *dcp_process_table_get(struct dcp_process_table *t,
					  pid_t pid);
/*
 * A new process child of parent: a copy of the parent's maps, comm and
 * target flag (an unknown parent gives an empty one). An existing entry for
 * child (a pid reused, or seen by the collection) is replaced.
 */
struct dcp_process *dcp_process_table_fork(struct dcp_process_table *t,
					   pid_t parent, pid_t child);
/* Retire a process: its memory is freed at once. */
void dcp_process_table_remove(struct dcp_process_table *t, pid_t pid);
size_t dcp_process_table_count(const struct dcp_process_table *t);
/* Call fn for each process; fn returns non-zero to stop. */
int dcp_process_table_for_each(struct dcp_process_table *t,
			       int (*fn)(struct dcp_process *p, void *ctx),
			       void *ctx);

/* A thread's name: set (0 or -ENOMEM), found (NULL: it has none of its
 * own, it goes by the process's), forgotten at its exit. */
int dcp_process_thread_set(struct dcp_process *p, pid_t tid, const char *comm);
const char *dcp_process_thread_comm(const struct dcp_process *p, pid_t tid);
void dcp_process_thread_remove(struct dcp_process *p, pid_t tid);

/* exec: a new address space (and the other threads are gone). */
void dcp_process_exec(struct dcp_process *p);
/* mmap: insert, cutting away whatever it overlaps. 0 or -ENOMEM. */
int dcp_process_map_insert(struct dcp_process *p, uint64_t start, uint64_t len,
			   uint64_t pgoff, uint32_t cookie, uint32_t prot);
/* munmap: remove [start, start+len), splitting maps that straddle it. */
int dcp_process_map_remove(struct dcp_process *p, uint64_t start, uint64_t len);
/* The map covering addr, or NULL. O(log n). */
const struct dcp_map *dcp_process_map_find(const struct dcp_process *p,
					   uint64_t addr);

#endif
