/* SPDX-License-Identifier: MIT */
/*
 * libdcprof: the public interface.
 *
 * Conventions, the same for every call:
 *  - functions returning int return 0 (or a non-negative count) on success
 *    and a negative errno on failure, and then also set errno to that
 *    errno (positive);
 *  - functions returning a pointer return NULL and set errno on failure;
 *  - on failure a one-line, lowercase explanation is left for the calling
 *    thread in dcp_last_error();
 *  - the library never prints: warnings and progress go to the callback set
 *    with dcp_set_log();
 *  - every struct the caller allocates, options it passes in as well as
 *    results it gets back, starts with `size_t sz`: set it to sizeof the
 *    struct before the call. The structs can then grow at their end
 *    without breaking programs built against an older header: the library
 *    reads and fills only the first sz bytes, and clears the fields it
 *    does not know of when sz is larger than its own size. A sz too small
 *    for the fields of this version fails with -EINVAL;
 *  - structs the library owns (returned as const pointers) are valid as
 *    long as the object they come from;
 *  - no name is both a struct and a function: the getters of a struct are
 *    called *_get_*();
 *  - every function is exported at version DCPROF_0.1 of libdcprof.so.0
 *    (lib/libdcprof.map); a later one is added in a new version node.
 */
#ifndef DCPROF_DCPROF_H
#define DCPROF_DCPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DCPROF_API __attribute__((visibility("default")))

/* ---- errors and logging ------------------------------------------------ */

enum dcp_log_level {
	DCP_LOG_WARN = 0,
	DCP_LOG_INFO = 1,
	DCP_LOG_DEBUG = 2,
};

typedef void (*dcp_log_fn)(enum dcp_log_level level, const char *message,
			   void *ctx);

/* Route the library's warnings and progress to fn (NULL: discard them). */
DCPROF_API void dcp_set_log(dcp_log_fn fn, void *ctx);

/*
 * The explanation of the calling thread's last failure, e.g.
 * "cannot open 'x.data': No such file or directory". Never NULL.
 */
DCPROF_API const char *dcp_last_error(void);

/* ---- cookies ------------------------------------------------------------ */

/*
 * A cookie is a small number that stands for one file identity (its build
 * id, else device + inode + generation), for the kernel image or one kernel
 * module, or for a named region that has no file ([vdso], [vsyscall],
 * anonymous executable memory, JIT code). Every sampled instruction pointer
 * is stored as (cookie, offset in that object).
 *
 * Cookie 0 is reserved for addresses that no mapping covered: such frames
 * are counted as unattributed, never folded silently into another object.
 */
#define DCP_COOKIE_UNKNOWN 0u

enum dcp_cookie_kind {
	DCP_COOKIE_KIND_UNKNOWN = 0, /* cookie 0: no mapping covered the ip */
	DCP_COOKIE_KIND_FILE = 1, /* a file mapped by a process */
	DCP_COOKIE_KIND_KERNEL = 2, /* the kernel image */
	DCP_COOKIE_KIND_MODULE = 3, /* one kernel module */
	DCP_COOKIE_KIND_ANON = 4, /* anonymous executable memory */
	DCP_COOKIE_KIND_VDSO = 5, /* [vdso] */
	DCP_COOKIE_KIND_VSYSCALL = 6, /* [vsyscall] */
	DCP_COOKIE_KIND_JIT = 7, /* JIT code described by a perf map */
	DCP_COOKIE_KIND_IDLE = 8, /* the idle task: one line, no frames */
};

/* The name of a DCP_COOKIE_KIND_JIT cookie that holds a Python process's
 * code objects begins so: "[python:PID]" ("[python:PID.N]" for a later
 * process of the same pid). */
#define DCP_PYTHON_COOKIE_PREFIX "[python:"

#define DCP_BUILD_ID_MAX 20

struct dcp_cookie_info {
	size_t sz; /* sizeof(struct dcp_cookie_info), set by the caller */
	uint32_t cookie;
	enum dcp_cookie_kind kind;
	/* Display name: first path for files, "[kernel.kallsyms]",
	 * module name, "[vdso]", "[anon:exec]", ... */
	const char *name;
	uint8_t build_id[DCP_BUILD_ID_MAX];
	uint8_t build_id_size; /* 0: the file has no build id */
	uint32_t dev_major, dev_minor;
	uint64_t ino, ino_generation;
	/* Every path under which this identity was mapped. */
	const char *const *paths;
	size_t nr_paths;
	bool marked; /* matched an --only mark */
	uint64_t samples; /* samples whose leaf frame is in this object */
};

struct dcp_cookie_table;

/*
 * A new, empty table: it holds only cookie 0 (DCP_COOKIE_KIND_UNKNOWN,
 * "[unknown]"). For dcp_collection_opts.cookies and
 * dcp_collection_record_decode(). NULL with errno set on failure.
 */
DCPROF_API struct dcp_cookie_table *dcp_cookie_table_new(void);

/* Free a table from dcp_cookie_table_new() (NULL: nothing). */
DCPROF_API void dcp_cookie_table_free(struct dcp_cookie_table *t);

/* Number of cookies, including cookie 0; valid cookies are 0 .. n-1. */
DCPROF_API size_t dcp_cookie_table_size(const struct dcp_cookie_table *t);

/*
 * Fill *info for cookie. The strings stay valid as long as the table.
 * Returns -ENOENT for a cookie the table does not hold.
 */
DCPROF_API int dcp_cookie_table_lookup(const struct dcp_cookie_table *t,
				       uint32_t cookie,
				       struct dcp_cookie_info *info);

/*
 * Whether info is a Python process's code (DCP_PYTHON_COOKIE_PREFIX): its
 * frames are the Python calls the BPF backend's walk put in the stacks.
 * Each such frame's symbol is a code object, "qualname (file.py)", with
 * the source file's path and the call's current line in its details
 * (dcp_symbol.file, .line). docs/FORMAT.md.
 */
DCPROF_API bool dcp_cookie_is_python(const struct dcp_cookie_info *info);

/* Hex form of a build id into buf (2*DCP_BUILD_ID_MAX+1 bytes); buf. */
DCPROF_API char *dcp_build_id_hex(const uint8_t *id, size_t size, char *buf);

/* ---- profiles (reading) ------------------------------------------------- */

struct dcp_frame {
	uint32_t cookie;
	uint32_t flags; /* DCP_FRAME_* */
	uint64_t offset; /* offset in the object the cookie names */
};

#define DCP_FRAME_KERNEL (1u << 0)
/*
 * A marker frame (cookie 0, offset the return address found, or 0): the
 * frame-pointer chain of a user stack broke here, leaving the mapped code
 * or stopping after the leaf. Named "[truncated]", not unattributed.
 */
#define DCP_FRAME_TRUNCATED (1u << 1)

/*
 * Why a thread was off the CPU (record --off-cpu): switched out while
 * runnable (preempted: waiting for a CPU), asleep interruptibly (S: a
 * lock, a pipe, a sleep, idle kernel workers too), or uninterruptibly
 * (D: mostly I/O).
 */
enum dcp_off_cpu_state {
	DCP_OFF_CPU_RUNNABLE = 0,
	DCP_OFF_CPU_INTERRUPTIBLE = 1,
	DCP_OFF_CPU_UNINTERRUPTIBLE = 2,
	DCP_OFF_CPU_NR_STATES = 3,
};

/* One aggregated row: how many samples hit this stack in this process. */
struct dcp_sample_row {
	size_t sz; /* sizeof(struct dcp_sample_row), set by the caller */
	const char *comm;
	uint32_t pid;
	const struct dcp_frame *frames; /* leaf first */
	uint32_t nr_frames;
	uint64_t count;
	/* The thread (files before threads were kept: tid = pid and the
	 * process's name; a summary's rows: tid 0). */
	uint32_t tid;
	const char *thread_comm;
	/* record --off-cpu: ns the thread spent switched out with this
	 * stack, by enum dcp_off_cpu_state (a row may have no samples) */
	uint64_t off_cpu_ns[DCP_OFF_CPU_NR_STATES];
	/* The cgroup (v2) the thread was in: its path, the kernel's id of
	 * it (a cgroup made again under the same path has another) and the
	 * name its container runtime gave it. NULL, 0, NULL: not recorded. */
	const char *cgroup;
	uint64_t cgroup_id;
	const char *container_name;
};

/* What a sampled (cookie, offset) resolved to when recording ended. */
struct dcp_symbol {
	size_t sz; /* sizeof(struct dcp_symbol), set by the caller */
	const char *name; /* NULL: not resolved (counted, see stats) */
	uint64_t start; /* symbol start, same space as the offset */
	uint64_t size;
	/* The rest is filled from DWARF and the demangler where they had
	 * something to say (docs/SYMBOLS.md). */
	const char *demangled; /* NULL: the name is not mangled */
	/* Where in the function the address is: its own source line, or,
	 * when it lies in inlined code, the call site of the outermost
	 * inlined call. NULL/0 when DWARF has no line for it. */
	const char *file;
	uint32_t line;
	uint32_t nr_inline; /* inlined calls at the address */
	uint32_t flags; /* DCP_SYMBOL_* */
};

/*
 * dcp_symbol.flags: the name is not a symbol's but made from the file's
 * name and the function's start, "file+0xSTART", START its offset in the
 * file: the file has no symbol for the function, whose extent came from
 * its .eh_frame entry (or, with size 1, the address alone: no entry
 * covered it). docs/SYMBOLS.md.
 */
#define DCP_SYMBOL_MADE_NAME (1u << 0)

struct dcp_profile_meta {
	uint32_t version; /* format version of the file */
	bool complete; /* the recorder finished; false after a crash */
	uint64_t start_realtime_ns; /* wall clock when recording began */
	uint64_t duration_ns;
	uint32_t sample_freq; /* Hz, 0 when a fixed period was used */
	uint64_t sample_period; /* when sample_freq is 0 */
	uint32_t nr_cpus;
	bool callchain;
	const char *event; /* "cpu-clock", ... */
	const char *cmdline; /* how the recorder was started */
	const char *hostname;
	const char *kernel_release;
	/* perf_event_paranoid allowed user frames only (exclude_kernel) */
	bool kernel_excluded;
	const char *backend; /* "bpf", "perf"; NULL when not recorded */
	bool off_cpu; /* recorded with --off-cpu: rows carry off-CPU time */
	bool disk_full; /* not complete: the disk was full at a flush */
};

struct dcp_profile_stats {
	size_t sz; /* sizeof(struct dcp_profile_stats), set by the caller */
	uint64_t samples; /* samples read from the kernel */
	uint64_t samples_kept; /* stored in the profile */
	uint64_t samples_idle; /* the idle task (part of kept) */
	uint64_t samples_filtered; /* dropped by --only */
	uint64_t samples_other_tasks; /* not in -p/command's process tree */
	uint64_t samples_unattributed; /* leaf frame in no mapping */
	uint64_t frames_unattributed; /* any frame in no mapping */
	uint64_t lost_records; /* the kernel's PERF_RECORD_LOST total */
	uint64_t lost_samples; /* PERF_RECORD_LOST_SAMPLES total */
	uint64_t throttle_events; /* PERF_RECORD_THROTTLE */
	uint64_t reorder_late; /* records older than the reorder window */
	uint64_t symbols_unresolved; /* sampled addresses left unnamed */
	uint64_t tasks_injected; /* pre-existing tasks from collection */
	uint64_t tasks_vanished; /* exited while being collected */
	uint64_t maps_injected;
	uint64_t context_switches;
	uint64_t processes_seen;
	uint64_t files_pinned; /* cookies held open by the recorder */
	uint64_t files_unpinned; /* cookies whose file could not be held */
	/* --call-graph dwarf: user stacks that stop before their outermost
	 * frame, by reason (a truncated stack keeps every frame it has) */
	uint64_t unwind_truncated_stack_end; /* past the stack copy */
	uint64_t unwind_truncated_no_cfi; /* vdso/anon/JIT, no CFI */
	uint64_t unwind_truncated_other; /* CFI failure, depth limit */
	/* -g (frame pointers): user stacks, and those whose chain broke
	 * (left the mapped code or stopped after the leaf); the files with
	 * most breaks (cookie of the last good frame, 0: none), by count */
	uint64_t fp_user_stacks;
	uint64_t fp_broken_stacks;
	uint64_t fp_broken_cookie[3];
	uint64_t fp_broken_in[3];
	/* --off-cpu: switches out of a thread (idle excluded), blocks
	 * charged to a stack, blocks shorter than --off-cpu-min (dropped),
	 * blocks outside the recorded tasks, switch-outs with no switch-in
	 * before the end (threads still waiting, or exited), and the ns
	 * charged in all */
	uint64_t off_cpu_switches;
	uint64_t off_cpu_blocks;
	uint64_t off_cpu_short;
	uint64_t off_cpu_other_tasks;
	uint64_t off_cpu_unfinished;
	uint64_t off_cpu_ns;
	/* of samples_other_tasks: the idle task's (the CPUs the recorded
	 * processes left idle) */
	uint64_t samples_other_idle;
	/* --off-cpu: blocks dropped because the thread's switch-in was not
	 * reported (the perf ring's tracepoint samples; the thread was
	 * seen switched out again) */
	uint64_t off_cpu_missed_switch_ins;
	/* --off-cpu: threads found off the CPU when recording began (-p,
	 * -a): their waits are charged from then, on the stack they are
	 * on (kernel frames, and the user ip where the kernel shows it) */
	uint64_t off_cpu_under_way;
	/* The BPF backend's -g, unwound in the kernel by the files' unwind
	 * tables: walks, frames, ends, tables (docs/FORMAT.md, fields 39-54) */
	uint64_t unwind_walks;
	uint64_t unwind_table_frames;
	uint64_t unwind_fp_frames;
	uint64_t unwind_no_table_frames;
	uint64_t unwind_no_mapping_frames;
	uint64_t unwind_end_root;
	uint64_t unwind_end_fp;
	uint64_t unwind_end_unsupported;
	uint64_t unwind_end_read;
	uint64_t unwind_end_depth;
	uint64_t unwind_tables;
	uint64_t unwind_table_bytes;
	uint64_t unwind_tables_refused;
	uint64_t unwind_tables_failed;
	uint64_t unwind_tables_evicted;
	uint64_t unwind_named_frames; /* named (file, offset) by the walk */
	uint64_t samples_other_cgroups; /* of threads outside the cgroups */
	/* Python frames (BPF backend): put in stacks by the walk; samples of
	 * a Python process whose thread state was not found; walks that
	 * ended with Python frames left out; frames whose code object could
	 * not be read (unresolved) */
	uint64_t python_frames;
	uint64_t python_no_thread;
	uint64_t python_cut;
	uint64_t python_unnamed;
};

/*
 * The hint for broken frame-pointer chains, when over 10% of the user
 * stacks broke: "N% of user stacks ... --call-graph dwarf unwinds them"
 * into buf (no newline). Returns 1 with a hint, 0 without (buf ""), and
 * cookies (may be NULL) names the files.
 */
DCPROF_API int dcp_fp_hint(const struct dcp_profile_stats *s,
			   const struct dcp_cookie_table *cookies, char *buf,
			   size_t len);

struct dcp_profile;

/*
 * Open and fully validate a profile file. A file whose recorder was killed
 * opens with meta.complete == false and holds everything up to the last
 * flush; a torn final chunk is ignored with a warning. Corrupt, truncated
 * (finished) or foreign files fail with -EINVAL/-EBADMSG and a message.
 */
DCPROF_API struct dcp_profile *dcp_profile_open(const char *path);

struct dcp_profile_open_opts {
	size_t sz;
	/*
	 * Read the file's summary instead of its full rows, when it has one
	 * (compact files do): the rows summed over pids (all pid 0), each
	 * frame replaced by one representative address of its function
	 * (same object, symbol and inlined calls), so the same names and
	 * counts in every view grouped by process name, file and function,
	 * read in a time that does not grow with the recording's length.
	 * Not for per-pid or per-address views (annotate, exports); such a
	 * profile can be neither resymbolized nor saved. Files without a
	 * summary are read whole (dcp_profile_is_summary() tells).
	 */
	bool summary;
};

/* dcp_profile_open() with options (opts may be NULL: the defaults). */
DCPROF_API struct dcp_profile *
dcp_profile_open_file(const char *path,
		      const struct dcp_profile_open_opts *opts);
/*
 * Several profiles read as one (a time range of continuous recording's
 * periods, docs/FORMAT.md): cookies matched by file identity, counts
 * added, stats summed, meta from the earliest start to the latest end
 * (complete when every file is). A summary profile when opts asks for
 * one and every file has one. NULL with errno set and a message naming
 * the file on error; n == 0 is -ENOENT.
 */
DCPROF_API struct dcp_profile *
dcp_profile_open_files(const char *const *paths, size_t n,
		       const struct dcp_profile_open_opts *opts);
/* Whether p holds only the summary of its file. */
DCPROF_API bool dcp_profile_is_summary(const struct dcp_profile *p);
DCPROF_API void dcp_profile_close(struct dcp_profile *p);

/* What the recorder wrote about the recording, owned by the profile. */
DCPROF_API const struct dcp_profile_meta *
dcp_profile_get_meta(const struct dcp_profile *p);
/* Its counters (all zero in a file whose recorder was killed early). */
DCPROF_API const struct dcp_profile_stats *
dcp_profile_get_stats(const struct dcp_profile *p);
DCPROF_API const struct dcp_cookie_table *
dcp_profile_cookies(const struct dcp_profile *p);

DCPROF_API size_t dcp_profile_nr_rows(const struct dcp_profile *p);
/*
 * Fill *row (row->sz set by the caller) with row i, below
 * dcp_profile_nr_rows(); -ERANGE past the end. The strings and frames
 * live as long as the profile.
 */
DCPROF_API int dcp_profile_row(const struct dcp_profile *p, size_t i,
			       struct dcp_sample_row *row);

/*
 * When a thread of the recorded processes (a command and its children,
 * or -p) began and ended, in ns since the recording began. Profiles
 * recorded before lifetimes were kept, or of the whole system, have none.
 */
struct dcp_thread_lifetime {
	size_t sz; /* sizeof(struct dcp_thread_lifetime), set by the caller */
	uint32_t pid, tid;
	uint64_t start_ns; /* its fork; 0 with started_before */
	uint64_t end_ns; /* its exit; the recording's length with running */
	bool started_before; /* it existed when recording began */
	bool running; /* it had not exited when recording stopped */
};

DCPROF_API size_t dcp_profile_nr_thread_lifetimes(const struct dcp_profile *p);
/* Lifetime i into *t (t->sz set by the caller); -ERANGE past the end. */
DCPROF_API int dcp_profile_thread_lifetime(const struct dcp_profile *p,
					   size_t i,
					   struct dcp_thread_lifetime *t);

/*
 * The symbol stored for (cookie, offset) into *sym (sym->sz set by the
 * caller); -ENOENT, and sym->name NULL, when none was.
 */
DCPROF_API int dcp_profile_symbol(const struct dcp_profile *p, uint32_t cookie,
				  uint64_t offset, struct dcp_symbol *sym);

/* One inlined call at a sampled address (docs/SYMBOLS.md). */
struct dcp_inline_frame {
	size_t sz; /* sizeof(struct dcp_inline_frame), set by the caller */
	const char *name; /* the inlined function (linkage name if any) */
	const char *demangled; /* NULL: the name is not mangled */
	/* Where in this inlined function the address is: the address's
	 * own line for the innermost, else the call site of the next
	 * inner one. NULL/0 when unknown. */
	const char *file;
	uint32_t line;
};

/*
 * Inlined call i (0: the innermost) at (cookie, offset), for i below
 * dcp_symbol.nr_inline. Returns -ENOENT when there is no such frame.
 */
DCPROF_API int dcp_profile_symbol_inline(const struct dcp_profile *p,
					 uint32_t cookie, uint64_t offset,
					 uint32_t i,
					 struct dcp_inline_frame *out);

/* One frame of a stack as people read it: a function or an inlined call. */
struct dcp_expanded_frame {
	size_t sz; /* sizeof(struct dcp_expanded_frame): see below */
	const char *name; /* demangled when it was mangled; NULL: unresolved */
	const char *raw_name; /* the name as the binary or DWARF spells it */
	const char *file; /* source position in this function, NULL: none */
	uint32_t line;
	bool is_inline; /* an inlined call, not a real frame */
};

/*
 * Expand a stored frame into the functions it stands for, outermost
 * first: the real function, then each inlined call down to the innermost
 * (the last entry holds the address's own source line). Writes at most
 * max entries and returns how many there are (at least 1; a frame without
 * a symbol gives one entry with a NULL name), so a return above max means
 * out was too small. The strings live as long as the profile.
 *
 * The caller sets out[0].sz to sizeof(struct dcp_expanded_frame); the
 * entries are taken to be that many bytes apart, and every entry filled
 * gets the same sz. -EINVAL when max is not 0 and out[0].sz is too small.
 */
DCPROF_API int dcp_profile_frame_expand(const struct dcp_profile *p,
					const struct dcp_frame *f,
					struct dcp_expanded_frame *out,
					size_t max);

struct dcp_resymbolize_opts {
	size_t sz;
	/* Searched before /usr/lib/debug for separate debug files, by
	 * build id (DIR/.build-id/xx/rest.debug) and by .gnu_debuglink. */
	const char *const *debuginfo_dirs;
	size_t nr_debuginfo_dirs;
};

struct dcp_resymbolize_stats {
	size_t sz; /* sizeof(struct dcp_resymbolize_stats), set by the caller */
	uint64_t objects; /* files (and the kernel) looked up again */
	uint64_t objects_missing; /* no path holds the file any more */
	uint64_t objects_mismatched; /* a path holds another build of it */
	uint64_t resolved_before; /* sampled addresses named before */
	uint64_t resolved_after; /* and after */
	/* Of those, named by a symbol (a symbol table, a debug file), not
	 * after the function an .eh_frame entry gives (file+0xSTART): a
	 * stripped binary given its debug file keeps its count of named
	 * addresses and gains here. */
	uint64_t symbols_before;
	uint64_t symbols_after;
};

/*
 * Resolve every sampled address of the profile's files again, from the
 * files at their recorded paths (accepted only when their build id, else
 * device and inode, still match) and separate debug files matched by build
 * id; debuginfod is asked only when DEBUGINFOD_URLS is set. A new name
 * replaces the stored one; an address named before and not now keeps its
 * name. Objects that cannot be read are warned about (dcp_set_log) and
 * keep their names. Kernel frames are named again when the profile's kernel
 * (by build id) is the running one; modules, vdso and JIT code keep their
 * names. stats may be NULL; when it is not, stats->sz is set by the caller.
 */
DCPROF_API int dcp_profile_resymbolize(struct dcp_profile *p,
				       const struct dcp_resymbolize_opts *opts,
				       struct dcp_resymbolize_stats *stats);

/*
 * Write the profile as a compact file at path: to a temporary file beside
 * it, then renamed over it (a profile that was opened from path may be
 * rewritten in place this way).
 */
DCPROF_API int dcp_profile_save(const struct dcp_profile *p, const char *path);

/* ---- recording ------------------------------------------------------------ */

/* How the recorder gathers samples. */
enum dcp_backend {
	/* per-CPU perf event rings, read and aggregated in user space */
	DCP_BACKEND_PERF = 0,
	/* BPF programs that count samples and walk stacks in the kernel */
	DCP_BACKEND_BPF = 1,
	/* BPF when its programs load, else the rings (logged as a warning
	 * with the reason) */
	DCP_BACKEND_AUTO = 2,
};

/* The stacks a sample carries. */
enum dcp_call_graph {
	DCP_CALL_GRAPH_NONE = 0, /* the sampled instruction alone */
	DCP_CALL_GRAPH_FP = 1, /* the kernel's frame-pointer chains */
	/* kernel chains plus user registers and stack copies, unwound with
	 * the files' CFI by the recorder as samples arrive */
	DCP_CALL_GRAPH_DWARF = 2,
	/* on the BPF backend, user stacks unwound in the kernel by the
	 * files' CFI (as DWARF there; FP: frame pointers alone); on the
	 * perf backend, frame pointers */
	DCP_CALL_GRAPH_DEFAULT = 3,
};

struct dcp_recorder_opts {
	size_t sz;
	const char *output; /* profile path, default "dcprof.data" */
	const char *event; /* default "cpu-clock" */
	uint32_t sample_freq; /* Hz, default 999 */
	/* Targets: none means the whole system. With pids, only these
	 * processes and their descendants (running or forked) are kept. */
	const pid_t *pids;
	size_t nr_pids;
	/* --only: paths or hex build ids of the files worth profiling. */
	const char *const *only;
	size_t nr_only;
	uint32_t flush_interval_ms; /* default 2000 */
	const char *cmdline; /* stored in the profile */
	/* per-CPU ring size in pages; 0: about half a second of samples */
	uint32_t mmap_pages;
	/* stacks; off_cpu without stacks takes DCP_CALL_GRAPH_FP (a leaf
	 * alone would be the scheduler's) */
	enum dcp_call_graph call_graph;
	/* dwarf: user stack bytes copied per sample, default 8192, at most
	 * 65528 */
	uint32_t stack_user_bytes;
	enum dcp_backend backend; /* default DCP_BACKEND_PERF */
	/* -C: sample these CPUs only; none: every online CPU */
	const int *cpus;
	size_t nr_cpus;
	/* -c: a fixed period (ns of cpu-clock/task-clock, or events)
	 * instead of sample_freq; 0: sample_freq */
	uint64_t sample_period;
	/* -u: keep only the samples of processes owned by uid (their
	 * effective uid, as /proc shows it), those started later too */
	bool filter_uid;
	uint32_t uid;
	/* --off-cpu: charge the time threads spend switched out to the
	 * stack they left the CPU with (needs call chains); blocks shorter
	 * than off_cpu_min_ns are dropped and counted */
	bool off_cpu;
	uint64_t off_cpu_min_ns;
	/* Continuous recording in periods (dcp_recorder_cut()): a failed
	 * write ends the current period's file, not the recording, and is
	 * reported by the cut that ends the period. */
	bool periods;
	/* BPF backend: bytes for unwind tables in the kernel, 0: 32 MiB */
	uint64_t unwind_memory;
	bool no_inherit; /* pids: the processes alone, no descendants */
	/* Samples carry the cgroup (v2) of their thread unless no_cgroups.
	 * With nr_cgroups, only threads in those cgroups (paths from the
	 * hierarchy's root) or below them are kept; the others' samples are
	 * counted in samples_other_cgroups. */
	bool no_cgroups;
	const char *const *cgroups;
	size_t nr_cgroups;
	/*
	 * Bounds of what a recorder keeps to name addresses, for a recorder
	 * that runs for days (struct dcp_recorder_memory says what it
	 * holds). memory_limit, in bytes (0: 32 MiB): three quarters for the
	 * files kept open to name addresses (the heap their reading took; at
	 * most one file a 256 KiB of it, and 64), an eighth for the names
	 * kept from one period to the next. The least recently used files are
	 * closed past it, names past it are named again when sampled again;
	 * both counted. The recorder's own tables (processes, stacks, the
	 * kernel's symbols) are not in it.
	 * max_open_files (0: 512): handles on files the recorder holds,
	 * pinned files and files kept for naming; a file not pinned because
	 * of it is counted (pins_refused) and named through its path.
	 */
	uint64_t memory_limit;
	uint32_t max_open_files;
	/*
	 * The BPF backend (0, false, NULL: its defaults): no Python frames,
	 * native ones only; every user frame named (build id, offset) by the
	 * kernel, not from the process's mappings; the count and stack maps'
	 * entries (two drain intervals' samples); the file that says the
	 * kernel has BTF (/sys/kernel/btf/vmlinux); the share of a CPU the
	 * program may take before the rate is lowered
	 * (kernel.perf_cpu_time_max_percent).
	 */
	bool bpf_no_python_frames;
	bool bpf_build_id_frames;
	uint32_t bpf_map_entries;
	const char *bpf_btf_path;
	double bpf_cpu_max_percent;
};

struct dcp_recorder;

/*
 * Open the per-CPU events (their sync records on at once), start the
 * profile file, inject the processes that already exist, then start
 * sampling: the recording's time begins on return. Fails with a message
 * that says what to do when the kernel refuses (perf_event_paranoid,
 * permissions).
 */
DCPROF_API struct dcp_recorder *
dcp_recorder_new(const struct dcp_recorder_opts *opts);

/*
 * Follow one more process tree (command mode: the child, created stopped,
 * is added before it execs). Safe to call while recording.
 */
DCPROF_API int dcp_recorder_add_pid(struct dcp_recorder *r, pid_t pid);

/*
 * Wait up to timeout_ms for data, drain every ring, process what the
 * reorder window lets through and flush the file when it is due.
 */
DCPROF_API int dcp_recorder_poll(struct dcp_recorder *r, int timeout_ms);

/*
 * Stop the events, process everything left, resolve symbols from the
 * pinned files, and write the final, compact profile in place of the
 * working one. stats may be NULL; when it is not, stats->sz is set by the
 * caller (checked before anything is done: -EINVAL when too small).
 */
DCPROF_API int dcp_recorder_finish(struct dcp_recorder *r,
				   struct dcp_profile_stats *stats);
DCPROF_API void dcp_recorder_free(struct dcp_recorder *r);

/*
 * Continuous recording: end the current period and start the next one
 * without stopping the events. The period's samples (everything the
 * pipeline delivered since the previous cut or the start) are named from
 * the pinned files and written as a compact profile in place of its
 * working file; the next period then starts from an empty aggregate and
 * zeroed counts, with its working file at next_output, and keeps the
 * process table, cookies and pinned files: each sample lands in exactly
 * one period. stats (may be NULL, sz set by the caller) receives the
 * finished period's counts. Returns 0, or the negative errno of the write
 * that failed: that period's file is removed (never left half written)
 * and recording goes on; when next_output cannot be started either, the
 * next cut says so again. dcp_recorder_finish() ends the last period.
 */
DCPROF_API int dcp_recorder_cut(struct dcp_recorder *r, const char *next_output,
				struct dcp_profile_stats *stats);

/*
 * What a recorder holds past the samples of its current period, and what
 * its cuts let go (dcp_recorder_memory()). Between two periods of a
 * continuous recording the recorder keeps the names of the addresses the
 * period that ended used, and the pinned files (and the files opened to
 * name them) that period's stacks named or that a process it knows to
 * live maps; the rest is dropped at the cut and taken again if it is
 * sampled again.
 */
struct dcp_recorder_memory {
	size_t sz; /* sizeof(struct dcp_recorder_memory), set by the caller */
	uint64_t names; /* addresses whose names are kept */
	uint64_t files_pinned; /* handles held open on sampled files */
	uint64_t cookies; /* files and special objects known */
	uint64_t processes; /* in the process table */
	uint64_t names_dropped; /* let go at cuts, since the recording began */
	uint64_t pins_closed; /* closed at cuts, since the recording began */
	/* other handles on files closed at cuts since the recording began:
	 * files kept open to name addresses (read, with their debug
	 * information) and to know files by device and inode */
	uint64_t files_closed;
	/* the bounds in force (dcp_recorder_opts) and what they hold */
	uint64_t memory_limit;
	uint64_t max_open_files;
	uint64_t names_bytes; /* of the names kept */
	uint64_t naming_files; /* files kept open to name addresses */
	uint64_t naming_bytes; /* the heap their reading took */
	/* since the recording began: names of a period not kept for the
	 * next one (past the bound), lookups of a file to name that found
	 * it kept or had to open it, files closed past the bounds, and
	 * files not pinned because of max_open_files */
	uint64_t names_evicted;
	uint64_t naming_hits;
	uint64_t naming_misses;
	uint64_t naming_evicted;
	uint64_t pins_refused;
};

/* Fill *m (sz set by the caller): 0, or -EINVAL with errno. */
DCPROF_API int dcp_recorder_memory(struct dcp_recorder *r,
				   struct dcp_recorder_memory *m);

/* What naming a snapshot cost (dcp_recorder_snapshot()). */
struct dcp_snapshot_info {
	size_t sz; /* sizeof(struct dcp_snapshot_info), set by the caller */
	uint64_t naming_ns; /* time spent naming, since the recorder began */
	uint64_t last_naming_ns; /* of the last batch of new addresses */
	uint64_t addresses_named; /* distinct addresses looked up so far */
	/* how long this snapshot waited for the names (the recorder drained
	 * its events meanwhile) */
	uint64_t wait_ns;
	/* how far the snapshot is behind the kernel: the age of the newest
	 * event taken in while the kernel still holds older ones unread (the
	 * recorder cannot keep up, or was stopped); 0 when it is caught up.
	 * Added after the struct's first version: a program built with the
	 * header before it passes a smaller sz and gets the fields above. */
	uint64_t behind_ns;
	/* CLOCK_MONOTONIC time up to which the samples of the snapshot go
	 * (the newest delivered; 0: none yet): the samples new between two
	 * snapshots were taken between their two times, which is the span a
	 * rate is of (the time between the calls also holds the delivery's
	 * latency). Added with the same rule as behind_ns. */
	uint64_t delivered_ns;
};

/*
 * A live view of what the recorder holds now, for the reading calls
 * (dcp_profile_nr_rows(), dcp_profile_row(), dcp_profile_symbol(), ...):
 * it reads the recorder's aggregate in place, its rows in order of
 * creation (row i stays row i, its count only grows), and names the
 * addresses of stacks new since the last snapshot from the pinned files
 * (each address once; the names are kept). The naming runs in a thread of
 * its own; the call waits for it up to a second, draining the events
 * meanwhile, and names that come later are in a later snapshot (until
 * then dcp_profile_symbol() of such an address is -ENOENT). Owned by the
 * recorder: valid
 * until the next dcp_recorder_poll(), snapshot, cut, finish or free; never
 * passed to dcp_profile_close() or dcp_profile_save(). info may be NULL.
 */
DCPROF_API struct dcp_profile *
dcp_recorder_snapshot(struct dcp_recorder *r, struct dcp_snapshot_info *info);

/* ---- cgroups: what the paths of a sample's cgroup say ------------------- */

/*
 * What a cgroup's path says of the service or container that runs in it,
 * by the layouts of systemd, docker, podman, containerd, CRI-O and the
 * kubelet. Each field is "" where the path says nothing of it.
 */
struct dcp_cgroup_names {
	size_t sz; /* sizeof(struct dcp_cgroup_names), set by the caller */
	char unit[256]; /* the innermost systemd service or scope */
	char slice[256]; /* the innermost systemd slice */
	char runtime[16]; /* "docker", "podman", "containerd", "cri-o" */
	char container_id[72];
	char pod_uid[40]; /* a Kubernetes pod's UID */
	char qos[16]; /* its QoS class: "guaranteed", "burstable", "besteffort" */
};

/* Fill out from a cgroup's path (as in /proc/PID/cgroup's "0::" line):
 * 0, or -EINVAL for a NULL path or a bad sz. */
DCPROF_API int dcp_cgroup_parse_path(const char *path,
				     struct dcp_cgroup_names *out);

#ifdef __cplusplus
}
#endif

/* Processes that existed before recording, as perf records. */
#include "dcprof/collection.h"
/* The machine code of sampled functions, for annotation. */
#include "dcprof/code.h"

#endif /* DCPROF_DCPROF_H */
