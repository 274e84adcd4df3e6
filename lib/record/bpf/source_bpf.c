// SPDX-License-Identifier: MIT
/*
 * The BPF record source (see source_bpf.h): loads profile.bpf.c, attaches
 * it to a cpu-clock event per CPU, and every flush interval drains the
 * count map with batch operations, turning each (pid, thread name, user
 * stack, kernel stack) into frames: (build id, file offset) user frames
 * become the cookie of that build id, the ring backend's cookie for the
 * same file; frames the kernel gave as plain addresses (no build id,
 * anonymous memory, or the mmap lock busy) are looked up in the process's
 * maps, read from /proc when first needed. Task events (fork, exec, exit)
 * arrive through a ring buffer and are replayed as perf's records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log_internal.h"
#include "recorder_internal.h"
#include "source_bpf.h"

#ifdef DCPROF_NO_BPF

struct dcp_source *dcp_bpf_source_new(const struct dcp_recorder_opts *opts,
				      struct dcp_recorder *sink)
{
	return dcp_error_null(ENOTSUP, "the BPF backend was not built: %s",
			      DCPROF_NO_BPF_REASON);
}

bool dcp_source_is_bpf(const struct dcp_source *s)
{
	return false;
}

#else

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "buildid_internal.h"
#include "grow.h"
#include "sort.h"
#include "profile.skel.h"
#include "source_bpf_internal.h"

#define DEFAULT_BTF "/sys/kernel/btf/vmlinux"
#define DRAIN_MS 250

static struct bpf_source *bpf_source(struct dcp_source *s)
{
	return (struct bpf_source *)s;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	dcp_log(DCP_LOG_DEBUG, "libbpf: %s", line);
	return 0;
}

/* ---- the count map into the pipeline ------------------------------------ */

/*
 * The kernel pads every build id to 20 bytes with zeros. Its real size is
 * taken as the smallest usual one (8: xxhash, 16: md5/uuid, 20: sha1) that
 * holds its bytes up to the last non-zero one: wrong only for an id whose
 * last four or more bytes are all zero.
 */
static uint8_t build_id_size(const unsigned char *id)
{
	int n = BPF_BUILD_ID_SIZE;

	while (n > 0 && !id[n - 1])
		n--;
	if (n <= 8)
		return 8;
	if (n <= 16)
		return 16;
	return BPF_BUILD_ID_SIZE;
}

/* A stack id's generation (DCP_BPF_STACK_GEN_BIT) and its map key. */
static uint32_t stack_gen_of(int id)
{
	return id & DCP_BPF_STACK_GEN_BIT ? 1 : 0;
}

static uint32_t stack_key_of(int id)
{
	return (uint32_t)id & ~(uint32_t)DCP_BPF_STACK_GEN_BIT;
}

/* The cache slot of an id (both generations' ids share the caches). */
static uint32_t cache_slot(const struct bpf_source *bs, int id)
{
	return (stack_key_of(id) * 2 + stack_gen_of(id)) % bs->ucache_size;
}

/* The user stack of id, from the cache or copied from the kernel. */
static const struct stack_copy *user_stack(struct bpf_source *bs, int id)
{
	struct stack_copy *sc = &bs->ucache[cache_slot(bs, id)];
	struct bpf_map *map = stack_gen_of(id) ? bs->skel->maps.user_stacks_1 :
						 bs->skel->maps.user_stacks;
	uint32_t key = stack_key_of(id), nr = 0;

	if (sc->id == id)
		return sc;
	if (bpf_map_lookup_elem(bpf_map__fd(map), &key, bs->ustack))
		return NULL;
	bs->bytes_read += DCP_BPF_MAX_FRAMES * sizeof(*bs->ustack);
	while (nr < DCP_BPF_MAX_FRAMES &&
	       bs->ustack[nr].status != BPF_STACK_BUILD_ID_EMPTY)
		nr++;
	free(sc->frames);
	sc->frames = malloc((nr ? nr : 1) * sizeof(*sc->frames));
	if (!sc->frames) {
		sc->id = -1;
		return NULL;
	}
	memcpy(sc->frames, bs->ustack, nr * sizeof(*sc->frames));
	sc->nr = nr;
	sc->id = id;
	return sc;
}

static const struct kstack_copy *ip_stack(struct bpf_source *bs,
					  struct kstack_copy *cache,
					  struct bpf_map *const maps[2],
					  int id);

static int user_frames(struct bpf_source *bs, struct dcp_process *p, int id,
		       uint32_t n, bool kernel_above)
{
	struct dcp_recorder *r = bs->r;
	int ret;

	const struct stack_copy *sc;

	if (id >= 0 && !bs->user_build_ids) {
		struct bpf_map *const maps[2] = { bs->skel->maps.user_ips,
						  bs->skel->maps.user_ips_1 };
		const struct kstack_copy *ic =
			ip_stack(bs, bs->icache, maps, id);

		for (uint32_t i = 0; ic && i < ic->nr && n < MAX_STACK; i++) {
			ret = dcp_bpf_map_frame(bs, p, ic->ips[i] - (n ? 1 : 0),
						&bs->frames[n]);
			if (ret)
				return ret;
			n++;
		}
		return (int)n;
	}
	sc = id < 0 ? NULL : user_stack(bs, id);
	if (!sc)
		return (int)n;
	for (uint32_t i = 0; i < sc->nr && n < MAX_STACK; i++) {
		const struct bpf_stack_build_id *b = &sc->frames[i];
		struct dcp_frame *f = &bs->frames[n];
		/* callers are named inside their call instruction */
		uint64_t back = n == 0 ? 0 : 1;

		if (b->status == BPF_STACK_BUILD_ID_EMPTY)
			break;
		if (b->status == BPF_STACK_BUILD_ID_VALID) {
			struct dcp_file_id fid;
			int64_t cookie;

			memset(&fid, 0, sizeof(fid));
			memcpy(fid.build_id, b->build_id, BPF_BUILD_ID_SIZE);
			fid.build_id_size = build_id_size(b->build_id);
			cookie = dcp_recorder_file_cookie(r, &fid, NULL);
			if (cookie < 0)
				return (int)cookie;
			f->cookie = (uint32_t)cookie;
			f->offset = b->offset - back;
			f->flags = 0;
			if (!dcp_cookie_table_pin_tried(r->cookies,
							f->cookie)) {
				ret = dcp_bpf_pin_cookie(bs, p, f->cookie);
				if (ret)
					return ret;
			}
		} else {
			ret = dcp_bpf_map_frame(bs, p, b->ip - back, f);
			if (ret)
				return ret;
		}
		n++;
	}
	(void)kernel_above;
	return (int)n;
}

static const struct kstack_copy *ip_stack(struct bpf_source *bs,
					  struct kstack_copy *cache,
					  struct bpf_map *const maps[2], int id)
{
	struct kstack_copy *kc = &cache[cache_slot(bs, id)];
	uint32_t key = stack_key_of(id), nr = 0;

	if (kc->id == id)
		return kc;
	if (bpf_map_lookup_elem(bpf_map__fd(maps[stack_gen_of(id)]), &key,
				bs->kstack))
		return NULL;
	bs->bytes_read += DCP_BPF_MAX_FRAMES * sizeof(*bs->kstack);
	while (nr < DCP_BPF_MAX_FRAMES && bs->kstack[nr])
		nr++;
	free(kc->ips);
	kc->ips = malloc((nr ? nr : 1) * sizeof(*kc->ips));
	if (!kc->ips) {
		kc->id = -1;
		return NULL;
	}
	memcpy(kc->ips, bs->kstack, nr * sizeof(*kc->ips));
	kc->nr = nr;
	kc->id = id;
	return kc;
}

static uint32_t kernel_frames(struct bpf_source *bs, int id)
{
	struct bpf_map *const maps[2] = { bs->skel->maps.kernel_stacks,
					  bs->skel->maps.kernel_stacks_1 };
	const struct kstack_copy *kc =
		id < 0 ? NULL : ip_stack(bs, bs->kcache, maps, id);
	uint32_t n = 0;

	if (!kc)
		return 0;
	for (uint32_t i = 0; i < kc->nr && n < MAX_STACK; i++) {
		struct dcp_frame *f = &bs->frames[n++];

		f->flags = DCP_FRAME_KERNEL;
		f->cookie = dcp_kernel_layout_resolve(
			&bs->r->kernel, kc->ips[i] - (i ? 1 : 0), &f->offset);
	}
	return n;
}

/* A count of samples, or (off_ns) of time off the CPU, of k's stacks. */
static int take_count(struct bpf_source *bs, const struct dcp_bpf_key *k,
		      uint64_t count, const uint64_t *off_ns)
{
	struct dcp_recorder *r = bs->r;
	struct dcp_stack_count c = { .pid = k->pid,
				     .count = count,
				     .off_cpu_ns = off_ns };
	char comm[DCP_BPF_COMM_LEN + 1];
	struct dcp_process *p;
	uint32_t n;
	int ret;

	if (k->pid == 0)
		return dcp_recorder_take_stack(r, &c);
	memcpy(comm, k->comm, DCP_BPF_COMM_LEN);
	comm[DCP_BPF_COMM_LEN] = 0;
	p = dcp_process_table_find(r->procs, (pid_t)k->pid);
	if (!p && !r->targeted)
		p = dcp_replay_process(r, (pid_t)k->pid);
	if (!p || (r->targeted && !p->target))
		return dcp_recorder_take_stack(r, &c); /* counted as other */
	n = kernel_frames(bs, k->kernel_stack);
	ret = user_frames(bs, p, k->user_stack, n, n > 0);
	if (ret < 0)
		return ret;
	n = (uint32_t)ret;
	if (n == 0 && k->ip) {
		if (k->ip >= 0xffff800000000000ull) {
			bs->frames[0].flags = DCP_FRAME_KERNEL;
			bs->frames[0].cookie = dcp_kernel_layout_resolve(
				&r->kernel, k->ip, &bs->frames[0].offset);
		} else {
			ret = dcp_bpf_map_frame(bs, p, k->ip, &bs->frames[0]);
			if (ret)
				return ret;
		}
		n = 1;
	}
	if (n == 0) {
		bs->frames[0] =
			(struct dcp_frame){ .cookie = DCP_COOKIE_UNKNOWN };
		n = 1;
	}
	if (bs->call_graph == DCP_CALL_GRAPH_NONE)
		n = 1; /* without -g, the leaf only */
	c.comm = comm[0] ? comm : NULL;
	c.frames = bs->frames;
	c.nr_frames = n;
	return dcp_recorder_take_stack(r, &c);
}

static int drain_counts(struct bpf_source *bs)
{
	int fd = bpf_map__fd(bs->skel->maps.counts);
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t out, *in = NULL;
	int ret = 0, err;

	do {
		uint32_t n = bs->count_entries;

		err = bpf_map_lookup_and_delete_batch(fd, in, &out, bs->keys,
						      bs->vals, &n, &o);
		if (err && errno != ENOENT)
			return dcp_error(errno,
					 "cannot read the BPF count map: %s",
					 strerror(errno));
		bs->bytes_read +=
			(uint64_t)n * (sizeof(*bs->keys) + sizeof(*bs->vals));
		for (uint32_t i = 0; i < n && !ret; i++) {
			bs->samples_seen += bs->vals[i];
			ret = take_count(bs, &bs->keys[i], bs->vals[i], NULL);
		}
		in = &out;
	} while (!err && !ret);
	return ret;
}

/* --off-cpu: the ns counted in the kernel, by stacks and state. */
static int drain_off_counts(struct bpf_source *bs)
{
	int fd = bpf_map__fd(bs->skel->maps.off_counts);
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t out, *in = NULL;
	int ret = 0, err;

	if (!bs->off_cpu)
		return 0;
	do {
		uint32_t n = bs->count_entries;

		err = bpf_map_lookup_and_delete_batch(
			fd, in, &out, bs->off_keys, bs->vals, &n, &o);
		if (err && errno != ENOENT)
			return dcp_error(errno,
					 "cannot read the BPF off-CPU map: %s",
					 strerror(errno));
		bs->bytes_read += (uint64_t)n *
				  (sizeof(*bs->off_keys) + sizeof(*bs->vals));
		for (uint32_t i = 0; i < n && !ret; i++) {
			const struct dcp_bpf_off_key *ok = &bs->off_keys[i];
			struct dcp_bpf_key k = { .pid = ok->pid,
						 .tid = ok->tid,
						 .user_stack = ok->user_stack,
						 .kernel_stack =
							 ok->kernel_stack };
			uint64_t ns[DCP_OFF_CPU_NR_STATES] = { 0 };

			uint64_t blocks = bs->r->stats.off_cpu_blocks;

			memcpy(k.comm, ok->comm, sizeof(k.comm));
			if (ok->state >= DCP_OFF_CPU_NR_STATES)
				continue;
			ns[ok->state] = bs->vals[i];
			ret = take_count(bs, &k, 0, ns);
			/* the kernel counts the blocks (read_stats): this
			 * key stands for many */
			bs->r->stats.off_cpu_blocks = blocks;
		}
		in = &out;
	} while (!err && !ret);
	return ret;
}

/* The kernel's per-CPU statistics, summed. */
static void read_stats(struct bpf_source *bs)
{
	int fd = bpf_map__fd(bs->skel->maps.stats);
	struct dcp_recorder *r = bs->r;
	uint64_t now[DCP_BPF_STAT_NR] = { 0 };

	for (uint32_t slot = 0; slot < DCP_BPF_STAT_NR; slot++) {
		if (bpf_map_lookup_elem(fd, &slot, bs->percpu))
			continue;
		bs->bytes_read +=
			(uint64_t)bs->nr_possible * sizeof(*bs->percpu);
		for (int c = 0; c < bs->nr_possible; c++)
			now[slot] += bs->percpu[c];
	}
	/* filtered in the kernel: read and dropped, as the ring counts */
	r->stats.samples += now[DCP_BPF_STAT_FILTERED] -
			    bs->kernel_counts[DCP_BPF_STAT_FILTERED];
	r->stats.samples_filtered += now[DCP_BPF_STAT_FILTERED] -
				     bs->kernel_counts[DCP_BPF_STAT_FILTERED];
	r->stats.samples += now[DCP_BPF_STAT_LOST_FULL] -
			    bs->kernel_counts[DCP_BPF_STAT_LOST_FULL];
	r->stats.off_cpu_blocks += now[DCP_BPF_STAT_OFF_BLOCKS] -
				   bs->kernel_counts[DCP_BPF_STAT_OFF_BLOCKS];
	memcpy(bs->kernel_counts, now, sizeof(now));
	bs->base.counts.lost_samples = now[DCP_BPF_STAT_LOST_FULL];
	bs->base.counts.lost_records = now[DCP_BPF_STAT_LOST_STACK] +
				       now[DCP_BPF_STAT_LOST_EVENTS] +
				       now[DCP_BPF_STAT_OFF_LOST];
	bs->base.counts.off_cpu_switches = now[DCP_BPF_STAT_OFF_SWITCHES];
	bs->base.counts.off_cpu_short = now[DCP_BPF_STAT_OFF_SHORT];
}

/* Every entry of a stack map of generation gen deleted, but the ids kept. */
static void clear_stack_map(struct bpf_map *map, uint32_t gen,
			    const uint64_t *keep, size_t nr_keep)
{
	int fd = bpf_map__fd(map);
	uint32_t key, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		uint64_t id = next | (gen ? DCP_BPF_STACK_GEN_BIT : 0);

		if (!bsearch(&id, keep, nr_keep, sizeof(*keep), dcp_cmp_u64))
			bpf_map_delete_elem(fd, &next);
		key = next;
		first = false;
	}
}

/*
 * --off-cpu: the stack ids of the threads switched out now, sorted: their
 * blocks end at a later switch-in, maybe drains later, and are charged to
 * these stacks then. *keep is malloc'd.
 */
static int open_block_stacks(struct bpf_source *bs, uint64_t **keep,
			     size_t *nr_keep)
{
	int fd = bpf_map__fd(bs->skel->maps.off_starts);
	struct dcp_bpf_off_start st;
	uint32_t tid, *prev = NULL;
	size_t cap = 0;

	*keep = NULL;
	*nr_keep = 0;
	if (!bs->off_cpu)
		return 0;
	while (!bpf_map_get_next_key(fd, prev, &tid)) {
		uint64_t *k;

		prev = &tid;
		if (bpf_map_lookup_elem(fd, &tid, &st))
			continue;
		k = dcp_grow(*keep, &cap, *nr_keep + 2, sizeof(*k));
		if (!k)
			return dcp_error(ENOMEM, "out of memory");
		*keep = k;
		if (st.user_stack >= 0)
			k[(*nr_keep)++] = (uint32_t)st.user_stack;
		if (st.kernel_stack >= 0)
			k[(*nr_keep)++] = (uint32_t)st.kernel_stack;
	}
	if (*nr_keep)
		qsort(*keep, *nr_keep, sizeof(**keep), dcp_cmp_u64);
	return 0;
}

/*
 * The stack maps come in two generations: samples take their stacks into
 * the maps of the generation in the program's stack_gen, and their ids say
 * which. A drain flips it, reads the counts, then empties the maps of the
 * generation it left (but for the stacks of threads still switched out,
 * whose blocks --off-cpu charges later) and forgets the copies taken from
 * them. The maps so
 * hold the distinct stacks of one drain interval, not of the whole
 * recording: kept for the recording, they filled up, and every stack that
 * hashed to a taken slot was lost (3.7% of the samples' stacks in 10 s on
 * the busy workload). A program that read the old generation just before
 * the flip and is counted after the read loses its stack (counted), as a
 * full map does.
 */
static uint32_t flip_generation(struct bpf_source *bs)
{
	uint32_t old = bs->skel->bss->stack_gen & 1;

	bs->skel->bss->stack_gen = old ^ 1;
	return old;
}

static int clear_generation(struct bpf_source *bs, uint32_t gen)
{
	uint64_t *keep;
	size_t nr_keep;
	int ret = open_block_stacks(bs, &keep, &nr_keep);

	if (ret)
		return ret;
	clear_stack_map(gen ? bs->skel->maps.user_stacks_1 :
			      bs->skel->maps.user_stacks,
			gen, keep, nr_keep);
	clear_stack_map(gen ? bs->skel->maps.user_ips_1 :
			      bs->skel->maps.user_ips,
			gen, keep, nr_keep);
	clear_stack_map(gen ? bs->skel->maps.kernel_stacks_1 :
			      bs->skel->maps.kernel_stacks,
			gen, keep, nr_keep);
	free(keep);
	for (uint32_t i = 0; i < bs->ucache_size; i++) {
		if (bs->ucache[i].id >= 0 &&
		    stack_gen_of(bs->ucache[i].id) == gen)
			bs->ucache[i].id = -1;
		if (bs->kcache[i].id >= 0 &&
		    stack_gen_of(bs->kcache[i].id) == gen)
			bs->kcache[i].id = -1;
		if (bs->icache[i].id >= 0 &&
		    stack_gen_of(bs->icache[i].id) == gen)
			bs->icache[i].id = -1;
	}
	return 0;
}

static int drain_all(struct bpf_source *bs)
{
	uint32_t old_gen;
	int ret;

	if (ring_buffer__consume(bs->rb) < 0)
		return dcp_error(EIO, "cannot read the BPF event ring");
	bs->drain_gen++;
	old_gen = flip_generation(bs);
	ret = drain_counts(bs);
	if (!ret)
		ret = drain_off_counts(bs);
	if (!ret)
		ret = clear_generation(bs, old_gen);
	if (!ret)
		ret = dcp_bpf_apply_exits(bs);
	read_stats(bs);
	return ret;
}

/* ---- start, poll, stop --------------------------------------------------- */

static int open_cpu_clock(uint32_t freq, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = freq;
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static int load_error(int err, const char *what)
{
	if (err == EPERM || err == EACCES)
		return dcp_error(EPERM,
				 "the BPF backend cannot load (%s: %s): it "
				 "needs root, or CAP_BPF and CAP_PERFMON",
				 what, strerror(err));
	return dcp_error(err, "the BPF backend cannot load (%s: %s)", what,
			 strerror(err));
}

static int size_maps(struct bpf_source *bs,
		     const struct dcp_source_settings *set)
{
	const char *env = getenv("DCPROF_BPF_MAP_ENTRIES");
	uint64_t want;

	/* a quarter of a flush interval's samples, each a new stack */
	want = (uint64_t)set->sample_freq * (uint64_t)bs->nr_possible *
	       bs->r->flush_interval_ms / 1000 / 4;
	if (want < 16384)
		want = 16384;
	if (want > 1u << 20)
		want = 1u << 20;
	if (env && *env)
		want = strtoull(env, NULL, 0);
	if (want < 1)
		want = 1;
	bs->count_entries = (uint32_t)want;
	bs->stack_entries =
		bs->count_entries < 16384 ? 16384 : bs->count_entries;
	if (bpf_map__set_max_entries(bs->skel->maps.counts,
				     bs->count_entries) ||
	    bpf_map__set_max_entries(bs->skel->maps.user_stacks,
				     bs->user_build_ids ? bs->stack_entries :
							  1) ||
	    bpf_map__set_max_entries(bs->skel->maps.user_stacks_1,
				     bs->user_build_ids ? bs->stack_entries :
							  1) ||
	    bpf_map__set_max_entries(bs->skel->maps.user_ips,
				     bs->user_build_ids ? 1 :
							  bs->stack_entries) ||
	    bpf_map__set_max_entries(bs->skel->maps.user_ips_1,
				     bs->user_build_ids ? 1 :
							  bs->stack_entries) ||
	    bpf_map__set_max_entries(bs->skel->maps.kernel_stacks,
				     bs->stack_entries) ||
	    bpf_map__set_max_entries(bs->skel->maps.kernel_stacks_1,
				     bs->stack_entries))
		return dcp_error(EINVAL, "cannot size the BPF maps");
	bs->ucache_size = bs->stack_entries;
	bs->ucache = calloc(bs->ucache_size, sizeof(*bs->ucache));
	bs->kcache = calloc(bs->ucache_size, sizeof(*bs->kcache));
	bs->icache = calloc(bs->ucache_size, sizeof(*bs->icache));
	if (!bs->ucache || !bs->kcache || !bs->icache)
		return dcp_error(ENOMEM, "out of memory");
	for (uint32_t i = 0; i < bs->ucache_size; i++)
		bs->ucache[i].id = bs->kcache[i].id = bs->icache[i].id = -1;
	bs->keys = calloc(bs->count_entries, sizeof(*bs->keys));
	bs->vals = calloc(bs->count_entries, sizeof(*bs->vals));
	bs->off_keys = calloc(bs->count_entries, sizeof(*bs->off_keys));
	if (!bs->keys || !bs->vals || !bs->off_keys)
		return dcp_error(ENOMEM, "out of memory");
	if (bpf_map__set_max_entries(bs->skel->maps.off_counts,
				     bs->off_cpu ? bs->count_entries : 1))
		return dcp_error(EINVAL, "cannot size the BPF maps");
	return 0;
}

static int bpf_start(struct dcp_source *s,
		     const struct dcp_source_settings *set)
{
	struct bpf_source *bs = bpf_source(s);
	const char *btf = getenv("DCPROF_BPF_BTF");
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	uint8_t one = 1;
	int ret, ncpus;

	if (!btf || !*btf)
		btf = DEFAULT_BTF;
	if (access(btf, R_OK))
		return dcp_error(ENOTSUP,
				 "the BPF backend cannot load: no kernel BTF "
				 "at %s (%s)",
				 btf, strerror(errno));
	oo.btf_custom_path = strcmp(btf, DEFAULT_BTF) ? btf : NULL;
	libbpf_set_print(libbpf_log);
	bs->nr_possible = libbpf_num_possible_cpus();
	if (bs->nr_possible <= 0)
		return dcp_error(EINVAL, "cannot count the possible CPUs");
	bs->skel = profile_bpf__open_opts(&oo);
	if (!bs->skel)
		return load_error(errno, "open");
	bs->skel->rodata->filter_marked = bs->filter;
	bs->skel->rodata->user_build_ids = bs->user_build_ids;
	bs->skel->rodata->off_cpu_min_ns = set->off_cpu_min_ns;
	bs->off_cpu = set->off_cpu;
	/* without --off-cpu, switches cost nothing: no program on them */
	bpf_program__set_autoload(bs->skel->progs.dcp_switch, set->off_cpu);
	bs->call_graph = set->call_graph;
	ret = size_maps(bs, set);
	if (ret)
		return ret;
	if (profile_bpf__load(bs->skel))
		return load_error(errno, "load");
	for (size_t i = 0; bs->filter && i < bs->nr_marks; i++)
		if (bpf_map_update_elem(bpf_map__fd(bs->skel->maps.marked),
					bs->marks[i], &one, BPF_ANY))
			return dcp_error(errno, "cannot mark a file: %s",
					 strerror(errno));
	if (profile_bpf__attach(bs->skel))
		return load_error(errno, "attach the task tracepoints");
	bs->rb = ring_buffer__new(bpf_map__fd(bs->skel->maps.events),
				  dcp_bpf_on_event, bs, NULL);
	bs->ustack = calloc(DCP_BPF_MAX_FRAMES, sizeof(*bs->ustack));
	bs->kstack = calloc(DCP_BPF_MAX_FRAMES, sizeof(*bs->kstack));
	bs->percpu = calloc((size_t)bs->nr_possible, sizeof(*bs->percpu));
	bs->frames = calloc(MAX_STACK, sizeof(*bs->frames));
	bs->links = calloc((size_t)bs->nr_possible, sizeof(*bs->links));
	bs->event_fds = calloc((size_t)bs->nr_possible, sizeof(int));
	if (!bs->rb || !bs->ustack || !bs->kstack || !bs->percpu ||
	    !bs->frames || !bs->links || !bs->event_fds)
		return dcp_error(ENOMEM, "out of memory");
	ncpus = 0;
	for (int cpu = 0; cpu < bs->nr_possible; cpu++) {
		int fd = open_cpu_clock(set->sample_freq, cpu);
		struct bpf_link *l;

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* offline */
			return load_error(errno, "the cpu-clock event");
		}
		bs->event_fds[bs->nr_events] = fd;
		l = bpf_program__attach_perf_event(bs->skel->progs.dcp_sample,
						   fd);
		if (!l) {
			int err = errno;

			bs->nr_events++;
			return load_error(err, "attach to cpu-clock");
		}
		bs->links[bs->nr_events++] = l;
		ncpus = cpu + 1;
	}
	s->nr_cpus = (uint32_t)ncpus;
	bs->next_drain_ns = 0;
	return 0;
}

static int bpf_inject(struct dcp_source *s, uint64_t time,
		      const struct perf_event_header *h)
{
	return dcp_recorder_take_record(bpf_source(s)->r, time, h, h->size);
}

static int bpf_drain(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);

	return ring_buffer__consume(bs->rb) < 0 ?
		       dcp_error(EIO, "cannot read the BPF event ring") :
		       0;
}

static int bpf_poll(struct dcp_source *s, int timeout_ms)
{
	struct bpf_source *bs = bpf_source(s);
	struct dcp_recorder *r = bs->r;
	int n = ring_buffer__poll(bs->rb, timeout_ms);
	uint64_t now;

	if (n < 0 && n != -EINTR)
		return dcp_error(-n, "cannot read the BPF event ring");
	/*
	 * The counts are drained before every flush of the file, and at least
	 * every DRAIN_MS: processes are then usually still alive when their
	 * first frames are named (maps, perf-map files, pins).
	 */
	now = dcp_now_ns(CLOCK_MONOTONIC);
	if (now >= r->next_flush_ns || now >= bs->next_drain_ns) {
		bs->next_drain_ns = now + DRAIN_MS * 1000000ull;
		return drain_all(bs);
	}
	return 0;
}

static void detach(struct bpf_source *bs)
{
	for (uint32_t i = 0; i < bs->nr_events; i++) {
		if (bs->links && bs->links[i])
			bpf_link__destroy(bs->links[i]);
		if (bs->links)
			bs->links[i] = NULL;
		close(bs->event_fds[i]);
	}
	bs->nr_events = 0;
}

static int bpf_stop(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int ret;

	detach(bs);
	ret = drain_all(bs);
	if (bs->off_cpu) {
		/* the threads still switched out: not charged */
		int fd = bpf_map__fd(bs->skel->maps.off_starts);
		uint32_t tid, *prev = NULL;

		while (!bpf_map_get_next_key(fd, prev, &tid)) {
			bs->base.counts.off_cpu_unfinished++;
			prev = &tid;
		}
	}
	memset(&info, 0, sizeof(info));
	/* run time is counted while kernel.bpf_stats_enabled is 1 */
	if (bpf_obj_get_info_by_fd(bpf_program__fd(bs->skel->progs.dcp_sample),
				   &info, &len))
		memset(&info, 0, sizeof(info));
	dcp_log(DCP_LOG_INFO,
		"bpf: %" PRIu64 " samples counted in the kernel, %" PRIu64
		" bytes read from it (%.1f per sample); the program ran %llu "
		"times for %llu ns",
		bs->samples_seen, bs->bytes_read,
		bs->samples_seen ?
			(double)bs->bytes_read / (double)bs->samples_seen :
			0.0,
		(unsigned long long)info.run_cnt,
		(unsigned long long)info.run_time_ns);
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	if (bs->off_cpu &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(bs->skel->progs.dcp_switch),
				    &info, &len))
		dcp_log(DCP_LOG_INFO,
			"bpf: the switch program ran %llu times for %llu ns",
			(unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns);
	return ret;
}

static void bpf_free(struct dcp_source *s)
{
	struct bpf_source *bs = bpf_source(s);

	detach(bs);
	ring_buffer__free(bs->rb);
	profile_bpf__destroy(bs->skel);
	free(bs->links);
	free(bs->event_fds);
	free(bs->keys);
	free(bs->off_keys);
	free(bs->vals);
	free(bs->ustack);
	free(bs->kstack);
	free(bs->percpu);
	free(bs->frames);
	free(bs->exits);
	free(bs->marks);
	for (uint32_t i = 0; bs->ucache && i < bs->ucache_size; i++)
		free(bs->ucache[i].frames);
	for (uint32_t i = 0; bs->kcache && i < bs->ucache_size; i++)
		free(bs->kcache[i].ips);
	for (uint32_t i = 0; bs->icache && i < bs->ucache_size; i++)
		free(bs->icache[i].ips);
	free(bs->icache);
	free(bs->ucache);
	free(bs->kcache);
	free(bs);
}

static const struct dcp_source_ops bpf_ops = {
	.start = bpf_start,
	.inject = bpf_inject,
	.drain = bpf_drain,
	.poll = bpf_poll,
	.stop = bpf_stop,
	.free = bpf_free,
};

bool dcp_source_is_bpf(const struct dcp_source *s)
{
	return s && s->ops == &bpf_ops;
}

/*
 * --only's files as build ids for the kernel; a file without one can only
 * be matched in user space, so then the kernel keeps every sample.
 */
static int take_marks(struct bpf_source *bs,
		      const struct dcp_recorder_opts *opts)
{
	if (!opts->nr_only)
		return 0;
	bs->marks = calloc(opts->nr_only, sizeof(*bs->marks));
	if (!bs->marks)
		return dcp_error(ENOMEM, "out of memory");
	bs->filter = true;
	for (size_t i = 0; i < opts->nr_only; i++) {
		uint8_t id[DCP_BUILD_ID_MAX];
		int n = dcp_build_id_parse_hex(opts->only[i], id);

		if (n <= 0)
			n = dcp_build_id_read_path(opts->only[i], id);
		if (n <= 0 || n > DCP_BPF_BUILD_ID_SIZE) {
			bs->filter = false;
			continue;
		}
		/* the kernel's ids are zero-padded to 20 bytes */
		memset(bs->marks[bs->nr_marks], 0, DCP_BPF_BUILD_ID_SIZE);
		memcpy(bs->marks[bs->nr_marks++], id, (size_t)n);
	}
	return 0;
}

struct dcp_source *dcp_bpf_source_new(const struct dcp_recorder_opts *opts,
				      struct dcp_recorder *sink)
{
	struct bpf_source *bs;
	const char *env;

	if (opts->event && strcmp(opts->event, "cpu-clock"))
		return dcp_error_null(ENOTSUP,
				      "the BPF backend samples cpu-clock only, "
				      "not %s",
				      opts->event);
	bs = calloc(1, sizeof(*bs));
	if (!bs)
		return dcp_error_null(ENOMEM, "out of memory");
	bs->base.ops = &bpf_ops;
	/*
	 * User frames as plain addresses, named from the process's maps in
	 * user space (a fifth of the BPF time per sample here, see
	 * docs/PERFORMANCE.md); DCPROF_BPF_FRAMES=buildid: every user frame
	 * named (build id, file offset) by the kernel.
	 */
	env = getenv("DCPROF_BPF_FRAMES");
	bs->user_build_ids = env && !strcmp(env, "buildid");
	bs->base.sink = sink;
	bs->r = sink;
	if (take_marks(bs, opts)) {
		free(bs->marks);
		free(bs);
		return NULL;
	}
	return &bs->base;
}

#endif
