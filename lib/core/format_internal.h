/* SPDX-License-Identifier: MIT */
/*
 * The on-disk layout of a profile file, shared by the writer and the
 * reader; docs/FORMAT.md is the prose version. Every integer is little
 * endian. The asserts pin each struct to the documented layout, so that a
 * change of compiler, ABI or field can never silently change the format.
 */
#ifndef DCPROF_FORMAT_INTERNAL_H
#define DCPROF_FORMAT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "dcprof/dcprof.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ||
		       __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
	       "unknown byte order");

#define DCP_FMT_MAGIC "DCPROF\0\0"
#define DCP_FMT_MAGIC_SIZE 8
#define DCP_FMT_VERSION 1u

/* File header flags. */
#define DCP_FMT_COMPLETE (1ull << 0)

struct dcp_fmt_header {
	char magic[DCP_FMT_MAGIC_SIZE];
	uint32_t version;
	uint32_t header_size; /* offset of the first chunk */
	uint64_t flags; /* DCP_FMT_COMPLETE */
	uint64_t file_size; /* compact file: its size; working file: 0 */
	uint64_t created_realtime_ns;
	/* crc32 of the header_size header bytes, this field taken as 0 */
	uint32_t header_crc32;
	uint8_t reserved[20];
};

_Static_assert(sizeof(struct dcp_fmt_header) == 64, "header size");
_Static_assert(offsetof(struct dcp_fmt_header, magic) == 0, "magic");
_Static_assert(offsetof(struct dcp_fmt_header, version) == 8, "version");
_Static_assert(offsetof(struct dcp_fmt_header, header_size) == 12, "hsize");
_Static_assert(offsetof(struct dcp_fmt_header, flags) == 16, "flags");
_Static_assert(offsetof(struct dcp_fmt_header, file_size) == 24, "fsize");
_Static_assert(offsetof(struct dcp_fmt_header, created_realtime_ns) == 32,
	       "created");
_Static_assert(offsetof(struct dcp_fmt_header, header_crc32) == 40, "hcrc");
_Static_assert(offsetof(struct dcp_fmt_header, reserved) == 44, "reserved");

enum dcp_fmt_chunk_type {
	DCP_FMT_CHUNK_META = 1,
	DCP_FMT_CHUNK_COOKIES = 2,
	DCP_FMT_CHUNK_STRINGS = 3,
	DCP_FMT_CHUNK_STACKS = 4,
	DCP_FMT_CHUNK_ROWS = 5,
	DCP_FMT_CHUNK_STATS = 6,
	DCP_FMT_CHUNK_SYMBOLS = 7,
	DCP_FMT_CHUNK_END = 8,
	DCP_FMT_CHUNK_SYMBOL_DETAILS = 9,
	/* The summary (compact file): the records of STACKS, ROWS, SYMBOLS
	 * and SYMBOL_DETAILS, with stack ids of its own. */
	DCP_FMT_CHUNK_SUMMARY_STACKS = 10,
	DCP_FMT_CHUNK_SUMMARY_ROWS = 11,
	DCP_FMT_CHUNK_SUMMARY_SYMBOLS = 12,
	DCP_FMT_CHUNK_SUMMARY_SYMBOL_DETAILS = 13,
	/* Threads the rows refer to; the summary's threads. */
	DCP_FMT_CHUNK_THREADS = 14,
	DCP_FMT_CHUNK_SUMMARY_THREADS = 15,
	/* record --off-cpu: ns off the CPU per row key, by state; the
	 * summary's */
	DCP_FMT_CHUNK_OFF_CPU_ROWS = 16,
	DCP_FMT_CHUNK_SUMMARY_OFF_CPU_ROWS = 17,
	/* when the recorded processes' threads began and ended */
	DCP_FMT_CHUNK_THREAD_LIFETIMES = 18,
	/* the cgroups threads were in */
	DCP_FMT_CHUNK_CGROUPS = 19,
};

/* Chunk header flags. */
#define DCP_FMT_CHUNK_DEFLATE (1u << 0) /* read, no longer written */
#define DCP_FMT_CHUNK_ZSTD (1u << 1)
#define DCP_FMT_CHUNK_KNOWN_FLAGS (DCP_FMT_CHUNK_DEFLATE | DCP_FMT_CHUNK_ZSTD)

/* Chunks start and end on this boundary; padding bytes are zero. */
#define DCP_FMT_ALIGN 8u

struct dcp_fmt_chunk {
	uint32_t type; /* enum dcp_fmt_chunk_type */
	uint32_t flags; /* at most one of DCP_FMT_CHUNK_DEFLATE, _ZSTD */
	uint64_t payload_size; /* as stored, padding excluded */
	uint64_t raw_size; /* after inflating; == payload_size if stored */
	/* crc32 of this header (crc32 taken as 0), then the stored payload */
	uint32_t crc32;
	uint32_t reserved;
};

_Static_assert(sizeof(struct dcp_fmt_chunk) == 32, "chunk header size");
_Static_assert(offsetof(struct dcp_fmt_chunk, type) == 0, "type");
_Static_assert(offsetof(struct dcp_fmt_chunk, flags) == 4, "flags");
_Static_assert(offsetof(struct dcp_fmt_chunk, payload_size) == 8, "psize");
_Static_assert(offsetof(struct dcp_fmt_chunk, raw_size) == 16, "rsize");
_Static_assert(offsetof(struct dcp_fmt_chunk, crc32) == 24, "crc32");
_Static_assert(offsetof(struct dcp_fmt_chunk, reserved) == 28, "reserved");

/*
 * Payloads are packed byte streams with no alignment. Strings are a u32
 * length and that many bytes, without a terminating NUL; the length
 * DCP_FMT_NULL_STRING stands for a missing string. The fixed parts of the
 * records are below; variable parts follow them as documented.
 */
#define DCP_FMT_NULL_STRING 0xffffffffu

/* META: the fixed part, then strings event, cmdline, hostname, release. */
struct dcp_fmt_meta {
	uint64_t start_realtime_ns;
	uint64_t duration_ns;
	uint64_t sample_period;
	uint32_t sample_freq;
	uint32_t nr_cpus;
	uint32_t flags; /* DCP_FMT_META_* */
};

#define DCP_FMT_META_CALLCHAIN (1u << 0)
/* kernel frames were not allowed (perf_event_paranoid): user frames only */
#define DCP_FMT_META_KERNEL_EXCLUDED (1u << 1)
/* recorded with --off-cpu: OFF_CPU_ROWS may follow */
#define DCP_FMT_META_OFF_CPU (1u << 2)
/* a working file's last META: the file system was full, the recorder
 * wrote nothing after the flush before it */
#define DCP_FMT_META_DISK_FULL (1u << 3)
#define DCP_FMT_META_FIXED_SIZE 36u

_Static_assert(offsetof(struct dcp_fmt_meta, start_realtime_ns) == 0, "m0");
_Static_assert(offsetof(struct dcp_fmt_meta, duration_ns) == 8, "m1");
_Static_assert(offsetof(struct dcp_fmt_meta, sample_period) == 16, "m2");
_Static_assert(offsetof(struct dcp_fmt_meta, sample_freq) == 24, "m3");
_Static_assert(offsetof(struct dcp_fmt_meta, nr_cpus) == 28, "m4");
_Static_assert(offsetof(struct dcp_fmt_meta, flags) == 32, "m5");

/* COOKIES record: the fixed part, then string name, u32 nr_paths, paths. */
struct dcp_fmt_cookie {
	uint32_t cookie;
	uint32_t kind; /* enum dcp_cookie_kind */
	uint8_t build_id_size;
	uint8_t flags; /* DCP_FMT_COOKIE_MARKED */
	uint16_t reserved;
	uint8_t build_id[DCP_BUILD_ID_MAX];
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t ino;
	uint64_t ino_generation;
};

#define DCP_FMT_COOKIE_MARKED (1u << 0)

_Static_assert(sizeof(struct dcp_fmt_cookie) == 56, "cookie record size");
_Static_assert(offsetof(struct dcp_fmt_cookie, kind) == 4, "c1");
_Static_assert(offsetof(struct dcp_fmt_cookie, build_id_size) == 8, "c2");
_Static_assert(offsetof(struct dcp_fmt_cookie, flags) == 9, "c3");
_Static_assert(offsetof(struct dcp_fmt_cookie, build_id) == 12, "c4");
_Static_assert(offsetof(struct dcp_fmt_cookie, dev_major) == 32, "c5");
_Static_assert(offsetof(struct dcp_fmt_cookie, dev_minor) == 36, "c6");
_Static_assert(offsetof(struct dcp_fmt_cookie, ino) == 40, "c7");
_Static_assert(offsetof(struct dcp_fmt_cookie, ino_generation) == 48, "c8");

/* STRINGS record: u32 id, then the string. */
#define DCP_FMT_STRING_FIXED_SIZE 4u

/* STACKS record: this, then nr_frames struct dcp_fmt_frame, leaf first. */
struct dcp_fmt_stack {
	uint32_t stack_id;
	uint32_t nr_frames;
};

struct dcp_fmt_frame {
	uint32_t cookie;
	uint32_t flags; /* DCP_FRAME_* */
	uint64_t offset;
};

_Static_assert(sizeof(struct dcp_fmt_stack) == 8, "stack record size");
_Static_assert(sizeof(struct dcp_fmt_frame) == 16, "frame size");
_Static_assert(offsetof(struct dcp_fmt_frame, flags) == 4, "f1");
_Static_assert(offsetof(struct dcp_fmt_frame, offset) == 8, "f2");

/* ROWS record. */
struct dcp_fmt_row {
	uint32_t comm_id;
	uint32_t pid;
	uint32_t stack_id;
	uint32_t thread_id; /* 0: the process's own; else a THREADS id */
	uint64_t count;
};

_Static_assert(sizeof(struct dcp_fmt_row) == 24, "row size");
_Static_assert(offsetof(struct dcp_fmt_row, pid) == 4, "r1");
_Static_assert(offsetof(struct dcp_fmt_row, stack_id) == 8, "r2");
_Static_assert(offsetof(struct dcp_fmt_row, count) == 16, "r3");

/* OFF_CPU_ROWS record: a ROWS key and its ns by enum dcp_off_cpu_state. */
struct dcp_fmt_off_cpu_row {
	uint32_t comm_id;
	uint32_t pid;
	uint32_t stack_id;
	uint32_t thread_id;
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
};

_Static_assert(sizeof(struct dcp_fmt_off_cpu_row) == 40, "off-CPU row size");
_Static_assert(offsetof(struct dcp_fmt_off_cpu_row, ns) == 16, "o1");

/* THREADS record: ids dense from 1 (0 is no thread of its own). */
struct dcp_fmt_thread {
	uint32_t id;
	uint32_t tid; /* 0 in the summary */
	uint32_t comm_id; /* a string id: the thread's name */
	uint32_t cgroup; /* 0: not known; else a CGROUPS id */
};

_Static_assert(sizeof(struct dcp_fmt_thread) == 16, "thread size");

/* CGROUPS record: ids dense from 1. */
struct dcp_fmt_cgroup {
	uint32_t id;
	uint32_t path_id; /* a string id: the path in the v2 hierarchy */
	uint32_t name_id; /* a string id: the runtime's name; or UINT32_MAX */
	uint32_t reserved;
	uint64_t kernel_id; /* the kernel's cgroup id */
};

_Static_assert(sizeof(struct dcp_fmt_cgroup) == 24, "cgroup size");
_Static_assert(offsetof(struct dcp_fmt_cgroup, kernel_id) == 16, "c1");

/* THREAD_LIFETIMES record: ns since the recording began. */
struct dcp_fmt_thread_life {
	uint32_t pid;
	uint32_t tid;
	uint32_t flags; /* DCP_LIFE_* (thread_life_internal.h) */
	uint32_t reserved;
	uint64_t start_ns;
	uint64_t end_ns; /* 0 while DCP_LIFE_RUNNING */
};

_Static_assert(sizeof(struct dcp_fmt_thread_life) == 32, "lifetime size");
_Static_assert(offsetof(struct dcp_fmt_thread_life, start_ns) == 16, "l1");

/* SYMBOLS record: the fixed part, then the name (NULL: unresolved). */
struct dcp_fmt_symbol {
	uint32_t cookie;
	uint32_t flags; /* DCP_FMT_SYMBOL_RESOLVED */
	uint64_t offset;
	uint64_t start;
	uint64_t size;
};

#define DCP_FMT_SYMBOL_RESOLVED (1u << 0)

_Static_assert(sizeof(struct dcp_fmt_symbol) == 32, "symbol size");
_Static_assert(offsetof(struct dcp_fmt_symbol, offset) == 8, "s1");
_Static_assert(offsetof(struct dcp_fmt_symbol, start) == 16, "s2");
_Static_assert(offsetof(struct dcp_fmt_symbol, size) == 24, "s3");

/*
 * SYMBOL_DETAILS record: the fixed part, then strings demangled and file,
 * u32 line, u32 nr_inline, and nr_inline inlined calls (innermost first),
 * each strings name, demangled, file and u32 line. It adds to the SYMBOLS
 * record of the same (cookie, offset), which must come before it.
 */
struct dcp_fmt_symbol_detail {
	uint32_t cookie;
	uint32_t flags; /* none defined yet: 0, ignored when read */
	uint64_t offset;
};

_Static_assert(sizeof(struct dcp_fmt_symbol_detail) == 16, "detail size");
_Static_assert(offsetof(struct dcp_fmt_symbol_detail, offset) == 8, "d1");

/* Readers refuse longer inline chains: real ones stay far below. */
#define DCP_FMT_MAX_INLINE 1024u

/*
 * STATS: u32 nr_fields, then nr_fields u64, the counters of struct
 * dcp_profile_stats in declaration order, from samples on (its sz is not
 * stored). Adding a field at the end of that struct is compatible both
 * ways; the assert makes whoever adds one update docs/FORMAT.md.
 */
#define DCP_FMT_NR_STATS 60u
/* The fields before the off-CPU counters: a profile whose later fields
 * are all 0 (no off-CPU time, no idle task among other tasks) is written
 * with these only, as before they were added. */
#define DCP_FMT_NR_STATS_CPU 30u
#define DCP_FMT_STATS_FIRST(s) (&(s)->samples)

_Static_assert(sizeof(struct dcp_profile_stats) -
			       offsetof(struct dcp_profile_stats, samples) ==
		       DCP_FMT_NR_STATS * sizeof(uint64_t),
	       "dcp_profile_stats changed: update DCP_FMT_NR_STATS and "
	       "FORMAT.md");

/* Writers split record chunks at about this raw size; readers refuse raw
 * sizes above DCP_FMT_MAX_RAW so that a bad size cannot exhaust memory. */
#define DCP_FMT_SPLIT_RAW (8u << 20)
#define DCP_FMT_MAX_RAW (256ull << 20)

struct dcp_cookie_table;
struct dcp_aggregate;
struct dcp_symtab;

/*
 * Write a whole compact file (the form finishing a recording writes) to a
 * temporary file beside path and rename it over path; profile_write.c.
 */
int dcp_profile_write_compact(const char *path, uint64_t created_ns,
			      const struct dcp_profile_meta *meta,
			      const struct dcp_cookie_table *cookies,
			      const struct dcp_aggregate *agg,
			      const struct dcp_symtab *symbols,
			      const struct dcp_profile_stats *stats);
/* The same with only the cookies agg's stacks name: a period of a
 * continuous recording, whose recorder keeps every cookie it saw. */
int dcp_profile_write_period(const char *path, uint64_t created_ns,
			     const struct dcp_profile_meta *meta,
			     const struct dcp_cookie_table *cookies,
			     const struct dcp_aggregate *agg,
			     const struct dcp_symtab *symbols,
			     const struct dcp_profile_stats *stats);

/*
 * The checksums. Each covers its header with the checksum field taken as
 * zero; the chunk's then goes on over the stored payload. The headers are
 * passed exactly as they are on disk (little endian).
 */
static inline uint32_t dcp_fmt_header_crc(const struct dcp_fmt_header *h,
					  const uint8_t *rest, size_t n)
{
	struct dcp_fmt_header copy = *h;
	uLong crc;

	copy.header_crc32 = 0;
	crc = crc32_z(0, (const Bytef *)&copy, sizeof(copy));
	/* crc32_z(crc, NULL, 0) would restart from 0 */
	return n ? (uint32_t)crc32_z(crc, rest, n) : (uint32_t)crc;
}

static inline uint32_t dcp_fmt_chunk_crc(const struct dcp_fmt_chunk *h,
					 const uint8_t *payload, size_t n)
{
	struct dcp_fmt_chunk copy = *h;
	uLong crc;

	copy.crc32 = 0;
	crc = crc32_z(0, (const Bytef *)&copy, sizeof(copy));
	return n ? (uint32_t)crc32_z(crc, payload, n) : (uint32_t)crc;
}

static inline uint64_t dcp_fmt_pad(uint64_t n)
{
	return (n + DCP_FMT_ALIGN - 1) & ~(uint64_t)(DCP_FMT_ALIGN - 1);
}

#endif
