// SPDX-License-Identifier: MIT
/*
 * The BPF record source's counts (see source_bpf_internal.h): the count
 * maps drained with batch operations into the pipeline, each (pid, thread
 * name, user stack, kernel stack) turned into frames from copies of the
 * kernel's stacks, each copied once; the kernel's statistics.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "grow.h"
#include "log_internal.h"
#include "recorder.lskel.h"
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

/* A cache slot's frames pointer, filled for the first time. */
static int note_filled(struct bpf_source *bs, void *frames_field)
{
	void **p = dcp_grow(bs->filled, &bs->filled_cap, bs->nr_filled + 1,
			    sizeof(*p));

	if (!p)
		return -ENOMEM;
	bs->filled = p;
	bs->filled[bs->nr_filled++] = frames_field;
	return 0;
}

/* The user stack of hash, from the cache or copied from the kernel. */
static const struct stack_copy *user_stack(struct bpf_source *bs, uint64_t hash)
{
	struct stack_copy *sc = &bs->ucache[hash % bs->ucache_size];
	uint32_t nr = 0;

	if (sc->hash == hash)
		return sc;
	if (bpf_map_lookup_elem(bs->skel->maps.user_stacks.map_fd, &hash,
				bs->ustack)) {
		bs->stacks_evicted++;
		return NULL;
	}
	bs->bytes_read += DCP_BPF_MAX_FRAMES * sizeof(*bs->ustack);
	bs->stacks_copied++;
	while (nr < DCP_BPF_MAX_FRAMES &&
	       bs->ustack[nr].status != BPF_STACK_BUILD_ID_EMPTY)
		nr++;
	if (!sc->frames && note_filled(bs, &sc->frames))
		return NULL;
	free(sc->frames);
	sc->frames = malloc((nr ? nr : 1) * sizeof(*sc->frames));
	if (!sc->frames) {
		sc->hash = 0;
		return NULL;
	}
	memcpy(sc->frames, bs->ustack, nr * sizeof(*sc->frames));
	sc->nr = nr;
	sc->hash = hash;
	return sc;
}

static const struct kstack_copy *ip_stack(struct bpf_source *bs,
					  struct kstack_copy *cache, int map_fd,
					  uint64_t hash);

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

/*
 * The user frames of a stack after n kernel ones; leaf: the stack's first
 * frame when the key carries it (dcp_bpf_key.ip), else 0.
 */
static int user_frames(struct bpf_source *bs, struct dcp_process *p,
		       uint64_t hash, uint32_t n, uint64_t leaf)
{
	struct dcp_recorder *r = bs->r;
	uint64_t first;
	int ret;

	const struct stack_copy *sc;

	bs->user_chain = false;
	if (p) {
		ret = dcp_bpf_probe_python(bs, (uint32_t)p->pid, p->nr_maps);
		if (ret)
			return ret;
	}
	if (hash && !bs->user_build_ids) {
		const struct kstack_copy *ic = ip_stack(
			bs, bs->icache, bs->skel->maps.user_ips.map_fd, hash);

		if (!ic || !ic->nr)
			return (int)n;
		first = leaf ? leaf : ic->ips[0];
		if (n < MAX_STACK && !(first & DCP_BPF_NAMED_FRAME) &&
		    leaf_before_exec(bs, p, first, &bs->frames[n]))
			return (int)n + 1;
		for (uint32_t i = 0; i < ic->nr && n < MAX_STACK; i++) {
			uint64_t ip = i == 0 && leaf ? leaf : ic->ips[i];
			struct dcp_frame *f = &bs->frames[n++];
			/* the first is where the user program was
			 * interrupted or entered the kernel: the instruction
			 * itself, as the ring's (samples.c) */
			uint64_t back = i ? 1 : 0;

			if (DCP_BPF_IS_PY_FRAME(ip)) {
				ret = dcp_python_frame(bs->python,
						       p ? (uint32_t)p->pid : 0,
						       ip, bs->drain_gen, f);
				if (ret)
					return ret;
				continue;
			}
			if (ip & DCP_BPF_NAMED_FRAME) {
				/* named by the walk (dcp_bpf_name_file()), its
				 * file pinned when it was named: no maps read */
				f->flags = 0;
				f->cookie = (uint32_t)((ip &
							~DCP_BPF_NAMED_FRAME) >>
						       DCP_BPF_NAMED_OFF_BITS);
				f->offset =
					(ip & DCP_BPF_NAMED_OFF_MASK) - back;
				continue;
			}
			ret = dcp_bpf_map_frame(bs, p, ip - back, i == 0, f);
			if (ret)
				return ret;
		}
		bs->user_chain = true;
		return (int)n;
	}
	sc = hash ? user_stack(bs, hash) : NULL;
	if (!sc)
		return (int)n;
	bs->user_chain = true;
	for (uint32_t i = 0; i < sc->nr && n < MAX_STACK; i++) {
		const struct bpf_stack_build_id *b = &sc->frames[i];
		struct dcp_frame *f = &bs->frames[n];
		/* callers are named inside their call instruction */
		uint64_t back = i == 0 ? 0 : 1;

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
			ret = dcp_bpf_map_frame(bs, p, b->ip - back, i == 0, f);
			if (ret)
				return ret;
		}
		n++;
	}
	return (int)n;
}

static const struct kstack_copy *ip_stack(struct bpf_source *bs,
					  struct kstack_copy *cache, int map_fd,
					  uint64_t hash)
{
	struct kstack_copy *kc = &cache[hash % bs->ucache_size];
	uint32_t nr = 0;

	if (kc->hash == hash)
		return kc;
	if (bpf_map_lookup_elem(map_fd, &hash, bs->kstack)) {
		bs->stacks_evicted++;
		return NULL;
	}
	bs->bytes_read += DCP_BPF_MAX_FRAMES * sizeof(*bs->kstack);
	bs->stacks_copied++;
	while (nr < DCP_BPF_MAX_FRAMES && bs->kstack[nr])
		nr++;
	if (!kc->ips && note_filled(bs, &kc->ips))
		return NULL;
	free(kc->ips);
	kc->ips = malloc((nr ? nr : 1) * sizeof(*kc->ips));
	if (!kc->ips) {
		kc->hash = 0;
		return NULL;
	}
	memcpy(kc->ips, bs->kstack, nr * sizeof(*kc->ips));
	kc->nr = nr;
	kc->hash = hash;
	return kc;
}

/*
 * The kernel frames of a stack; leaf: its first frame when the key
 * carries it (dcp_bpf_key.ip), else 0; off_cpu: a switch-out's, whose
 * first frame is dropped when it is __traceiter_sched_switch (the
 * tracepoint calls the switch program through it when other probes share
 * it), so that every off-CPU stack starts at __schedule. Checked here
 * rather than in the program: a one-frame bpf_get_stack() there cost 1.7
 * us a switch.
 */
static uint32_t kernel_frames(struct bpf_source *bs, uint64_t hash,
			      uint64_t leaf, bool off_cpu)
{
	const struct kstack_copy *kc =
		hash ? ip_stack(bs, bs->kcache,
				bs->skel->maps.kernel_stacks.map_fd, hash) :
		       NULL;
	uint32_t n = 0, first = 0;

	if (!kc)
		return 0;
	if (off_cpu && kc->nr > 1 && kc->ips[0] >= bs->switch_iter_start &&
	    kc->ips[0] < bs->switch_iter_end)
		first = 1;
	for (uint32_t i = first; i < kc->nr && n < MAX_STACK; i++) {
		struct dcp_frame *f = &bs->frames[n++];
		uint64_t ip = i == 0 && leaf ? leaf : kc->ips[i];

		f->flags = DCP_FRAME_KERNEL;
		f->cookie = dcp_kernel_layout_resolve(
			&bs->r->kernel, ip - (i > first ? 1 : 0), &f->offset);
	}
	return n;
}

/* k's frames into bs->frames, named against p's maps; their number. */
static int count_frames(struct bpf_source *bs, const struct dcp_bpf_key *k,
			struct dcp_process *p, bool off_cpu)
{
	uint32_t n = kernel_frames(
		bs, k->kernel_stack,
		k->leaf_of == DCP_BPF_LEAF_KERNEL ? k->ip : 0, off_cpu);
	int ret = user_frames(bs, p, k->user_stack, n,
			      k->leaf_of == DCP_BPF_LEAF_USER ? k->ip : 0);

	if (ret < 0)
		return ret;
	n = (uint32_t)ret;
	if (n == 0 && k->ip && k->leaf_of == DCP_BPF_LEAF_NONE) {
		if (k->ip >= 0xffff800000000000ull) {
			bs->frames[0].flags = DCP_FRAME_KERNEL;
			bs->frames[0].cookie = dcp_kernel_layout_resolve(
				&bs->r->kernel, k->ip, &bs->frames[0].offset);
		} else {
			ret = dcp_bpf_map_frame(bs, p, k->ip, true,
						&bs->frames[0]);
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

/* A count of samples, or (off_ns) of time off the CPU in off_blocks
 * blocks, of k's stacks. */
static int take_count(struct bpf_source *bs, const struct dcp_bpf_key *k,
		      uint64_t count, const uint64_t *off_ns,
		      uint64_t off_blocks)
{
	struct dcp_recorder *r = bs->r;
	struct dcp_stack_count c = { .pid = k->pid,
				     .cgroup_id = k->cgroup,
				     .count = count,
				     .off_cpu_ns = off_ns,
				     .off_cpu_blocks = off_blocks };
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
	c.check_user_chain = bs->user_chain;
	return dcp_recorder_take_stack(r, &c);
}

/* Whether a drain with this deadline (0: none) should stop now. */
static bool past(uint64_t deadline_ns)
{
	return deadline_ns && dcp_now_ns(CLOCK_MONOTONIC) >= deadline_ns;
}

/* past() at the coarse clock's tick (a few ms, the same clock), cheap
 * enough for every count: one count's naming may read a new process's
 * maps and pin its files (tens of ms under the sanitizers) */
static bool past_coarse(uint64_t deadline_ns)
{
	return deadline_ns && dcp_now_ns(CLOCK_MONOTONIC_COARSE) >= deadline_ns;
}

/* One count map's key: a sample count's, or (off) an off-CPU time's and
 * the blocks it adds up. */
static int take_key(struct bpf_source *bs, const void *key, uint64_t val,
		    uint64_t blocks, bool off)
{
	const struct dcp_bpf_off_key *ok = key;
	struct dcp_bpf_key k;
	uint64_t ns[DCP_OFF_CPU_NR_STATES] = { 0 };

	if (!off) {
		bs->samples_seen += val;
		return take_count(bs, key, val, NULL, 0);
	}
	if (ok->state >= DCP_OFF_CPU_NR_STATES)
		return 0;
	k = (struct dcp_bpf_key){ .pid = ok->pid,
				  .tid = ok->tid,
				  .user_stack = ok->user_stack,
				  .kernel_stack = ok->kernel_stack,
				  .cgroup = ok->cgroup };
	memcpy(k.comm, ok->comm, sizeof(k.comm));
	ns[ok->state] = val;
	return take_count(bs, &k, 0, ns, blocks);
}

/*
 * One pass over a count map (off: the off-CPU one), read and emptied a
 * batch at a time, going on with the pass and the batch an earlier call
 * left: 0 at the pass's end, 1 stopped at the deadline (checked every 16
 * counts: under a storm of sampling interrupts, naming one batch took
 * seconds).
 */
static int drain_map(struct bpf_source *bs, bool off, uint64_t deadline_ns)
{
	struct dcp_bpf_batch *b = off ? &bs->off_batch : &bs->count_batch;
	int fd = off ? bs->skel->maps.off_counts.map_fd :
		       bs->skel->maps.counts.map_fd;
	void *keys = off ? (void *)bs->off_keys : (void *)bs->keys;
	size_t key_size = off ? sizeof(*bs->off_keys) : sizeof(*bs->keys);
	void *vals = off ? (void *)bs->off_vals : (void *)bs->vals;
	size_t val_size = off ? sizeof(*bs->off_vals) : sizeof(*bs->vals);
	LIBBPF_OPTS(bpf_map_batch_opts, o);

	for (;;) {
		uint32_t n = DCP_BPF_DRAIN_BATCH, out;
		int err, ret;

		while (b->next < b->len) {
			uint32_t i = b->next++;

			ret = take_key(bs, (char *)keys + i * key_size,
				       off ? bs->off_vals[i].ns : bs->vals[i],
				       off ? bs->off_vals[i].blocks : 0, off);
			if (ret)
				return ret;
			if ((b->next < b->len || !b->last) &&
			    past_coarse(deadline_ns))
				return 1;
		}
		if (b->last) {
			*b = (struct dcp_bpf_batch){ 0 };
			return 0;
		}
		if (b->pass && past(deadline_ns))
			return 1;
		err = bpf_map_lookup_and_delete_batch(
			fd, b->pass ? &b->token : NULL, &out, keys, vals, &n,
			&o);
		if (err && errno != ENOENT)
			return dcp_error(
				errno, "cannot read the BPF %s map: %s",
				off ? "off-CPU" : "count", strerror(errno));
		bs->bytes_read += (uint64_t)n * (key_size + val_size);
		if (!off)
			bs->counts_read += n;
		b->token = out;
		b->pass = true;
		b->last = err != 0;
		b->len = n;
		b->next = 0;
	}
}

/* The kernel's per-CPU statistics, summed. */
static void read_stats(struct bpf_source *bs)
{
	int fd = bs->skel->maps.stats.map_fd;
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
	r->stats.samples += now[DCP_BPF_STAT_CGROUP_FILTERED] -
			    bs->kernel_counts[DCP_BPF_STAT_CGROUP_FILTERED];
	r->stats.samples_other_cgroups +=
		now[DCP_BPF_STAT_CGROUP_FILTERED] -
		bs->kernel_counts[DCP_BPF_STAT_CGROUP_FILTERED];
	memcpy(bs->kernel_counts, now, sizeof(now));
	bs->base.counts.lost_samples = now[DCP_BPF_STAT_LOST_FULL];
	bs->base.counts.lost_records =
		now[DCP_BPF_STAT_LOST_STACK] + now[DCP_BPF_STAT_LOST_EVENTS] +
		now[DCP_BPF_STAT_OFF_LOST] + bs->stacks_evicted;
	bs->base.counts.off_cpu_switches = now[DCP_BPF_STAT_OFF_SWITCHES];
	bs->base.counts.off_cpu_short = now[DCP_BPF_STAT_OFF_SHORT];
	bs->base.counts.off_cpu_missed_switch_ins =
		now[DCP_BPF_STAT_OFF_MISSED];
	bs->base.counts.off_cpu_under_way = now[DCP_BPF_STAT_OFF_UNDER_WAY];
	bs->base.counts.unwind_walks = now[DCP_BPF_STAT_UNWIND_WALKS];
	bs->base.counts.unwind_table_frames =
		now[DCP_BPF_STAT_UNWIND_TABLE_FRAMES];
	bs->base.counts.unwind_fp_frames = now[DCP_BPF_STAT_UNWIND_FP_FRAMES];
	bs->base.counts.unwind_no_table_frames =
		now[DCP_BPF_STAT_UNWIND_NO_TABLE];
	bs->base.counts.unwind_no_mapping_frames =
		now[DCP_BPF_STAT_UNWIND_NO_MAPPING];
	bs->base.counts.unwind_end_root = now[DCP_BPF_STAT_UNWIND_END_ROOT];
	bs->base.counts.unwind_end_fp = now[DCP_BPF_STAT_UNWIND_END_FP];
	bs->base.counts.unwind_end_unsupported =
		now[DCP_BPF_STAT_UNWIND_END_UNSUPPORTED];
	bs->base.counts.unwind_end_read = now[DCP_BPF_STAT_UNWIND_END_READ];
	bs->base.counts.unwind_end_depth = now[DCP_BPF_STAT_UNWIND_END_DEPTH];
	bs->base.counts.unwind_tables = bs->unwind.tables;
	bs->base.counts.unwind_table_bytes = bs->unwind.table_bytes;
	bs->base.counts.unwind_tables_refused = bs->unwind.refused;
	bs->base.counts.unwind_tables_failed = bs->unwind.failed;
	bs->base.counts.unwind_tables_evicted = bs->unwind.evicted;
	bs->base.counts.unwind_named_frames = now[DCP_BPF_STAT_UNWIND_NAMED];
	bs->base.counts.python_frames = now[DCP_BPF_STAT_PY_FRAMES];
	bs->base.counts.python_no_thread = now[DCP_BPF_STAT_PY_NO_THREAD];
	bs->base.counts.python_cut = now[DCP_BPF_STAT_PY_CUT];
	bs->base.counts.python_unnamed = dcp_python_unnamed(bs->python);
}

int dcp_bpf_drain_all(struct bpf_source *bs, uint64_t deadline_ns)
{
	int ret = 0;

	if (ring_buffer__consume(bs->rb) < 0)
		return dcp_error(EIO, "cannot read the BPF event ring");
	if (!bs->drain_unfinished) {
		bs->drain_began_ns = dcp_now_ns(CLOCK_MONOTONIC);
		bs->drain_gen++;
		bs->exits_ready = bs->nr_exits;
		dcp_bpf_pre_exec_expire(bs, false);
	}
	if (!bs->drain_counts_done) {
		ret = drain_map(bs, false, deadline_ns);
		bs->drain_counts_done = ret == 0;
	}
	if (!ret && bs->off_cpu)
		ret = drain_map(bs, true, deadline_ns);
	bs->drain_unfinished = ret > 0;
	/* the counts not read yet are at least as old as the drain */
	bs->base.behind_since = bs->drain_unfinished ? bs->drain_began_ns : 0;
	if (!ret) {
		/* every count taken before the drain began is in */
		bs->base.delivered_until = bs->drain_began_ns;
		bs->drain_counts_done = false;
		/* read before the drain that ended began: their counts are in */
		ret = dcp_bpf_apply_exits(bs, bs->exits_ready);
		bs->exits_ready = 0;
	}
	read_stats(bs);
	return ret > 0 ? 0 : ret;
}

#endif
