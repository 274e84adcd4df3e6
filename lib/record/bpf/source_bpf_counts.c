// SPDX-License-Identifier: MIT
/*
 * The BPF record source's counts (see source_bpf_internal.h): the count
 * maps drained with batch operations into the pipeline, each (pid, thread
 * name, user stack, kernel stack) turned into frames from copies of the
 * stack maps; the stack maps' generations, flipped and emptied at every
 * drain; the kernel's statistics.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "grow.h"
#include "log_internal.h"
#include "profile.skel.h"
#include "sort.h"
#include "source_bpf_internal.h"

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

/* A key copied from a stack map: to be deleted when its maps are emptied. */
static int note_taken(struct stack_keys *t, uint32_t key)
{
	uint32_t *k = dcp_grow(t->key, &t->cap, t->nr + 1, sizeof(*k));

	if (!k)
		return dcp_error(ENOMEM, "out of memory");
	t->key = k;
	t->key[t->nr++] = key;
	return 0;
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
	if (bpf_map_lookup_elem(bpf_map__fd(map), &key, bs->ustack) ||
	    note_taken(&bs->taken[0][stack_gen_of(id)], key))
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
					  int kind, int id);

/*
 * A sample taken inside execve(2), after the exec's point of no return:
 * its process's maps are the new program's, but its user registers are
 * still the old program's (the system call's entry), so its user leaf is
 * in the old program's maps and the frames above it were read from the
 * new program's stack. The leaf is named against the maps from before the
 * exec, the rest dropped; 1 if it was so named.
 */
static int leaf_before_exec(struct bpf_source *bs, struct dcp_process *p,
			    uint64_t leaf, struct dcp_frame *f)
{
	struct dcp_process before;
	const struct dcp_map *map;

	if (bs->pre_exec_view || dcp_process_map_find(p, leaf) ||
	    !dcp_bpf_pre_exec_view(bs, p, 0, &before))
		return 0;
	map = dcp_process_map_find(&before, leaf);
	if (!map || map->cookie == bs->r->cookie_anon)
		return 0;
	f->flags = 0;
	f->cookie = map->cookie;
	f->offset = leaf - map->start + map->pgoff;
	return 1;
}

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
			ip_stack(bs, bs->icache, maps, 0, id);

		if (ic && ic->nr && n < MAX_STACK &&
		    leaf_before_exec(bs, p, ic->ips[0], &bs->frames[n]))
			return (int)n + 1;
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
					  struct bpf_map *const maps[2],
					  int kind, int id)
{
	struct kstack_copy *kc = &cache[cache_slot(bs, id)];
	uint32_t key = stack_key_of(id), nr = 0;

	if (kc->id == id)
		return kc;
	if (bpf_map_lookup_elem(bpf_map__fd(maps[stack_gen_of(id)]), &key,
				bs->kstack) ||
	    note_taken(&bs->taken[kind][stack_gen_of(id)], key))
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

/*
 * The kernel frames of stack id; off_cpu: a switch-out's, whose first
 * frame is dropped when it is __traceiter_sched_switch (the tracepoint
 * calls the switch program through it when other probes share it), so
 * that every off-CPU stack starts at __schedule. Checked here rather than
 * in the program: a one-frame bpf_get_stack() there cost 1.7 us a switch.
 */
static uint32_t kernel_frames(struct bpf_source *bs, int id, bool off_cpu)
{
	struct bpf_map *const maps[2] = { bs->skel->maps.kernel_stacks,
					  bs->skel->maps.kernel_stacks_1 };
	const struct kstack_copy *kc =
		id < 0 ? NULL : ip_stack(bs, bs->kcache, maps, 1, id);
	uint32_t n = 0, first = 0;

	if (!kc)
		return 0;
	if (off_cpu && kc->nr > 1 && kc->ips[0] >= bs->switch_iter_start &&
	    kc->ips[0] < bs->switch_iter_end)
		first = 1;
	for (uint32_t i = first; i < kc->nr && n < MAX_STACK; i++) {
		struct dcp_frame *f = &bs->frames[n++];

		f->flags = DCP_FRAME_KERNEL;
		f->cookie = dcp_kernel_layout_resolve(
			&bs->r->kernel, kc->ips[i] - (i > first ? 1 : 0),
			&f->offset);
	}
	return n;
}

/* k's frames into bs->frames, named against p's maps; their number. */
static int count_frames(struct bpf_source *bs, const struct dcp_bpf_key *k,
			struct dcp_process *p, bool off_cpu)
{
	uint32_t n = kernel_frames(bs, k->kernel_stack, off_cpu);
	int ret = user_frames(bs, p, k->user_stack, n, n > 0);

	if (ret < 0)
		return ret;
	n = (uint32_t)ret;
	if (n == 0 && k->ip) {
		if (k->ip >= 0xffff800000000000ull) {
			bs->frames[0].flags = DCP_FRAME_KERNEL;
			bs->frames[0].cookie = dcp_kernel_layout_resolve(
				&bs->r->kernel, k->ip, &bs->frames[0].offset);
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
	return (int)n;
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
	struct dcp_process *p, before;
	int n;

	if (k->pid == 0)
		return dcp_recorder_take_stack(r, &c);
	memcpy(comm, k->comm, DCP_BPF_COMM_LEN);
	comm[DCP_BPF_COMM_LEN] = 0;
	p = dcp_process_table_find(r->procs, (pid_t)k->pid);
	if (!p && !r->targeted)
		p = dcp_replay_process(r, (pid_t)k->pid);
	if (!p || (r->targeted && !p->target))
		return dcp_recorder_take_stack(r, &c); /* counted as other */
	/* taken before the exec that emptied p's maps: named against the
	 * maps, and under the name, it had then */
	bs->pre_exec_view =
		k->exec_id && dcp_bpf_pre_exec_view(bs, p, k->exec_id, &before);
	if (bs->pre_exec_view)
		p = &before;
	n = count_frames(bs, k, p, off_ns != NULL);
	bs->pre_exec_view = false;
	if (n < 0)
		return n;
	if (bs->call_graph == DCP_CALL_GRAPH_NONE)
		n = 1; /* without -g, the leaf only */
	/* rows per thread, as the ring backend's: the kernel's name is the
	 * thread's; the process keeps the name its COMM records gave it */
	c.tid = k->tid;
	c.thread_comm = comm[0] ? comm : NULL;
	if (p == &before)
		c.comm = before.comm[0] ? before.comm : NULL;
	else
		c.comm = p->comm[0] || !comm[0] ? NULL : comm;
	c.frames = bs->frames;
	c.nr_frames = (uint32_t)n;
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

static bool kept(uint32_t key, uint32_t gen, const uint64_t *keep,
		 size_t nr_keep)
{
	uint64_t id = key | (gen ? DCP_BPF_STACK_GEN_BIT : 0);

	return nr_keep &&
	       bsearch(&id, keep, nr_keep, sizeof(*keep), dcp_cmp_u64);
}

/*
 * The stacks of generation gen deleted from map, but the ids kept: those
 * copied since the map was last emptied (t), one delete each. A stack no
 * count named (its count was lost, or taken by a program that read the
 * generation just before the flip) stays behind; so every SWEEP_EVERY
 * drains (16 s), and at the drain after counts were lost, the whole map is
 * walked instead. Walked at every drain (as first
 * built), each get_next_key a scan of the slots after the last, it cost
 * more than the rest of the drain: 53 of a 15 s recording's 355 samples
 * of the recorder on the busy workload, 19 this way (docs/PERFORMANCE.md).
 */
#define SWEEP_EVERY 64

static void clear_stack_map(struct bpf_map *map, uint32_t gen,
			    struct stack_keys *t, bool sweep,
			    const uint64_t *keep, size_t nr_keep)
{
	int fd = bpf_map__fd(map);
	uint32_t key, next;
	size_t nr_left = 0;
	bool first = true;

	if (sweep) {
		while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
			if (!kept(next, gen, keep, nr_keep))
				bpf_map_delete_elem(fd, &next);
			key = next;
			first = false;
		}
	}
	if (t->nr)
		qsort(t->key, t->nr, sizeof(*t->key), dcp_cmp_u32);
	for (size_t i = 0; i < t->nr; i++) {
		if (i && t->key[i] == t->key[i - 1])
			continue;
		if (kept(t->key[i], gen, keep, nr_keep))
			t->key[nr_left++] = t->key[i]; /* deleted later */
		else if (!sweep)
			bpf_map_delete_elem(fd, &t->key[i]);
	}
	t->nr = nr_left;
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
	bool sweep;

	if (ret)
		return ret;
	/* --off-cpu: a switch-out's stacks stay without a count when the
	 * block is under --off-cpu-min: many, so every drain walks */
	sweep = bs->off_cpu || bs->drain_gen % SWEEP_EVERY < 2 ||
		bs->kernel_counts[DCP_BPF_STAT_LOST_FULL] != bs->swept_lost;
	if (sweep)
		bs->swept_lost = bs->kernel_counts[DCP_BPF_STAT_LOST_FULL];
	if (bs->user_build_ids)
		clear_stack_map(gen ? bs->skel->maps.user_stacks_1 :
				      bs->skel->maps.user_stacks,
				gen, &bs->taken[0][gen], sweep, keep, nr_keep);
	else
		clear_stack_map(gen ? bs->skel->maps.user_ips_1 :
				      bs->skel->maps.user_ips,
				gen, &bs->taken[0][gen], sweep, keep, nr_keep);
	clear_stack_map(gen ? bs->skel->maps.kernel_stacks_1 :
			      bs->skel->maps.kernel_stacks,
			gen, &bs->taken[1][gen], sweep, keep, nr_keep);
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

int dcp_bpf_drain_all(struct bpf_source *bs)
{
	uint32_t old_gen;
	int ret;

	if (ring_buffer__consume(bs->rb) < 0)
		return dcp_error(EIO, "cannot read the BPF event ring");
	bs->drain_gen++;
	dcp_bpf_pre_exec_expire(bs, false);
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

#endif
