/* SPDX-License-Identifier: MIT */
/*
 * The profile buffer: per CPU, the sampling event with its mmapped ring, a
 * dummy event that writes the sync records into that ring, and optionally
 * the syscalls:sys_enter_munmap tracepoint redirected into it as well.
 */
#ifndef DCPROF_RING_INTERNAL_H
#define DCPROF_RING_INTERNAL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * perf_event_open(2) for pid (or -1) on cpu (or -1), in no group and
 * closed on exec, as every event of the recorder is: glibc has no wrapper.
 */
static inline int dcp_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				      int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

struct dcp_event_spec {
	uint32_t type; /* PERF_TYPE_* */
	uint64_t config;
	const char *name;
	bool exclude_user; /* ":k" */
	bool exclude_kernel; /* ":u" */
};

/*
 * "cpu-clock", "task-clock", "cycles", "instructions" or one of perf's
 * software events ("page-faults", "context-switches", ...), optionally
 * with the modifier ":u" (user only) or ":k" (kernel only): 0 or -EINVAL.
 */
int dcp_event_spec_parse(const char *name, struct dcp_event_spec *spec);

/*
 * Whether events of spec sampled every sample_period (-c, 0: by frequency)
 * are opened without PERF_SAMPLE_PERIOD: the kernel makes a sample of every
 * software event (page-faults, ...) that asks for its period, carrying
 * the period rather than skipping. Their samples lack the PERIOD field.
 */
bool dcp_event_period_omitted(const struct dcp_event_spec *spec,
			      uint64_t sample_period);

struct dcp_ring {
	int cpu;
	int fd; /* the sampling event, the ring's owner */
	int sync_fd; /* the sync records' dummy event, or -1 (per task) */
	int munmap_fd; /* the tracepoint, or -1 */
	uint64_t sample_id; /* PERF_EVENT_IOC_ID of fd */
	uint64_t munmap_id;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t data_size; /* a power of two */
	unsigned char *scratch; /* for records that wrap around the end */
	/* per-task fallback: the events of the other target threads on this
	 * CPU, their records routed into fd's ring */
	int *task_fds;
	size_t nr_task_fds;
	bool per_task; /* one event per (target thread, CPU), inherited */
	bool exclude_kernel; /* the kernel allowed user frames only */
};

struct dcp_munmap_tracepoint {
	uint64_t id; /* tracefs event id, 0 when unavailable */
	uint32_t addr_offset, len_offset; /* in the raw record */
};

/* tracefs.c: up to size - 1 bytes of a small file, NUL-terminated: the
 * length, or a negative errno. */
int dcp_read_small_file(const char *path, char *buf, size_t size);

/*
 * tracefs.c: find the munmap tracepoint, mounting tracefs when needed.
 * Fills tp->id with 0 and returns a negative errno (message set) when it
 * is missing.
 */
int dcp_munmap_tracepoint_find(struct dcp_munmap_tracepoint *tp);

/*
 * tracefs.c: a tracefs event ("sched/sched_switch"): its id, and its
 * format file in format (size bytes at most), mounting tracefs when
 * needed. 0, or a negative errno with a message saying why it cannot be
 * read.
 */
int dcp_tracefs_event(const char *event, uint64_t *id, char *format,
		      size_t size);
/* The offset of field in the raw record of a format file: 0 or -ENOENT. */
int dcp_tracefs_field_offset(const char *format, const char *field,
			     uint32_t *offset);

struct dcp_ring_opts {
	const struct dcp_event_spec *event;
	uint32_t sample_freq;
	uint64_t sample_period; /* -c: a fixed period instead of the freq */
	const int *cpus; /* -C: these CPUs only; NULL: every online one */
	size_t nr_cpus;
	bool callchain;
	/* --call-graph dwarf: kernel chains only, plus the user registers
	 * (regs_user_mask) and stack_user bytes of user stack per sample */
	bool dwarf;
	uint64_t regs_user_mask;
	uint32_t stack_user;
	uint32_t mmap_pages;
	const struct dcp_munmap_tracepoint *munmap; /* NULL: none */
	/*
	 * -p or a command: when per-CPU events are refused for lack of
	 * privilege, fall back to one event per (thread of these processes,
	 * CPU) with inherit, into the same per-CPU rings.
	 */
	const pid_t *pids;
	size_t nr_pids;
	bool no_inherit; /* those events not inherited by children */
	bool cgroup; /* samples carry their cgroup id; CGROUP records */
};

/*
 * Open the events on every online CPU and map their rings; the sync
 * records run on return, sampling once dcp_rings_enable() is called.
 * Without the privilege for per-CPU events and with targets, the per-task
 * fallback (said in one line), whose events carry their sync records and
 * sample from the start: rings[0].per_task and .exclude_kernel tell what
 * was granted. *rings is an array of *nr_rings. On failure, the message
 * explains what the kernel refused and what to do about it.
 */
int dcp_rings_open(const struct dcp_ring_opts *opts, struct dcp_ring **rings,
		   size_t *nr_rings);
void dcp_rings_close(struct dcp_ring *rings, size_t nr_rings);
/* Start sampling: 0, or a negative errno with a message. */
int dcp_rings_enable(struct dcp_ring *rings, size_t nr_rings);
void dcp_rings_disable(struct dcp_ring *rings, size_t nr_rings);

typedef int (*dcp_ring_record_fn)(const struct perf_event_header *h, void *ctx);

/*
 * Call fn for every record now in the ring (records that wrap around the
 * end of the ring are passed as a contiguous copy), then release the
 * space read to the kernel. fn returning non-zero stops the reading after
 * its record; that value is returned, else 0.
 */
int dcp_ring_drain(struct dcp_ring *ring, dcp_ring_record_fn fn, void *ctx);

#endif
