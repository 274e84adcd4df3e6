/* SPDX-License-Identifier: MIT */
/*
 * The perf records the recorder consumes, as the kernel lays them out for
 * our attributes (sample_id_all with TID|TIME|CPU|IDENTIFIER), and as the
 * collection writes them for processes that existed before recording.
 * One decoder reads both.
 */
#ifndef DCPROF_RECORDS_INTERNAL_H
#define DCPROF_RECORDS_INTERNAL_H

#include <linux/perf_event.h>
#include <stdint.h>

/* sample_type of every event we open; the trailer below follows from it */
#define DCP_SAMPLE_ID_TYPE                                      \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_IDENTIFIER)

/* The sample_id_all trailer at the end of every non-sample record. */
struct dcp_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
	uint64_t id;
};

/* PERF_RECORD_COMM: then char comm[] (NUL-padded to 8), then trailer. */
struct dcp_comm_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT, then trailer. */
struct dcp_task_record {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

/* PERF_RECORD_MMAP2: then char filename[] (NUL-padded to 8), trailer. */
struct dcp_mmap2_record {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

/* PERF_RECORD_LOST, then trailer. */
struct dcp_lost_record {
	struct perf_event_header header;
	uint64_t id, lost;
};

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

/* The trailer of a non-sample record, or NULL if it is too short. */
static inline const struct dcp_sample_id *
dcp_record_sample_id(const struct perf_event_header *h)
{
	if (h->size < sizeof(*h) + sizeof(struct dcp_sample_id))
		return 0;
	return (const struct dcp_sample_id *)((const char *)h + h->size -
					      sizeof(struct dcp_sample_id));
}

#endif
