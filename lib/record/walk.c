// SPDX-License-Identifier: MIT
/*
 * The collection walk: the processes that existed before recording,
 * described by records read from /proc (or, for the BPF source, the
 * kernel's task iterators) once the events run and injected
 * into the source's time order, and the samples held until those records
 * are replayed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "collect_internal.h"
#include "log_internal.h"
#include "recorder_internal.h"
#include "bpf/source_bpf.h"

/*
 * The walk's reader: the kernel's task iterators (lib/record/bpf/iter.c)
 * for the BPF source, as the design has the kernel walk its tasks; the
 * /proc walk for the ring, or when the iterators cannot load. Both write
 * the same records.
 */
struct walk_reader {
	struct dcp_collection *proc;
	struct dcp_collection_bpf *kernel;
};

/*
 * The processes to walk: the caller's targets and their descendants alive
 * now. Those forked since the recorder looked, before the events were on,
 * become targets too (no live FORK names them); those that exited since
 * are left out, as the walk refuses a pid it cannot find.
 */
static int walk_targets(struct dcp_recorder *r, pid_t **out, size_t *nr)
{
	pid_t *below = NULL, *list;
	size_t nr_below = 0;
	int ret;

	*out = NULL;
	*nr = 0;
	if (!r->nr_roots)
		return 0;
	ret = r->no_inherit ? 0 :
			      dcp_proc_descendants(r->roots, r->nr_listed,
						   &below, &nr_below);
	if (ret)
		return ret;
	for (size_t i = 0; i < nr_below && !ret; i++) {
		bool known = false;

		for (size_t j = 0; j < r->nr_roots && !known; j++)
			known = r->roots[j] == below[i];
		if (!known)
			ret = dcp_recorder_add_pid(r, below[i]);
	}
	list = ret ? NULL : calloc(r->nr_listed + nr_below, sizeof(*list));
	if (!list) {
		free(below);
		return ret ? ret : dcp_error(ENOMEM, "out of memory");
	}
	memcpy(list, r->roots, r->nr_listed * sizeof(*list));
	if (nr_below)
		memcpy(list + r->nr_listed, below, nr_below * sizeof(*list));
	free(below);
	*out = list;
	*nr = r->nr_listed + nr_below;
	return 0;
}

static int walk_open_once(struct dcp_recorder *r, enum dcp_collection_kind kind,
			  struct walk_reader *w)
{
	struct dcp_collection_opts copts = {
		.sz = sizeof(copts),
		.cookies = r->cookies,
		.only_marked = false,
	};
	pid_t *pids;
	size_t nr_pids;
	int ret = walk_targets(r, &pids, &nr_pids);

	if (ret)
		return ret;
	copts.pids = pids;
	copts.nr_pids = nr_pids;
	memset(w, 0, sizeof(*w));
	if (dcp_source_is_bpf(r->source)) {
		w->kernel =
			dcp_bpf_source_collection_open(r->source, kind, &copts);
		if (w->kernel) {
			free(pids);
			return 0;
		}
		dcp_log(DCP_LOG_INFO, "walking /proc: %s", dcp_last_error());
	}
	w->proc = dcp_collection_open(kind, &copts);
	ret = w->proc ? 0 : -errno;
	free(pids);
	return ret;
}

static int walk_open(struct dcp_recorder *r, enum dcp_collection_kind kind,
		     struct walk_reader *w)
{
	int ret = walk_open_once(r, kind, w);

	/* a descendant that exited between the look and the open */
	for (int again = 0;
	     ret == -ESRCH && r->nr_roots > r->nr_listed && again < 3; again++)
		ret = walk_open_once(r, kind, w);
	return ret;
}

static ssize_t walk_read(struct walk_reader *w, void *buf, size_t size)
{
	return w->kernel ? dcp_collection_bpf_read(w->kernel, buf, size, NULL) :
			   dcp_collection_read(w->proc, buf, size, NULL);
}

static uint64_t walk_vanished(const struct walk_reader *w)
{
	const struct dcp_collection_stats *st =
		w->kernel ? dcp_collection_bpf_get_stats(w->kernel) :
			    dcp_collection_get_stats(w->proc);

	return st ? st->tasks_vanished : 0;
}

static void walk_close(struct walk_reader *w)
{
	dcp_collection_bpf_close(w->kernel);
	dcp_collection_close(w->proc);
}

static int inject_kind(struct dcp_recorder *r, enum dcp_collection_kind kind)
{
	struct dcp_source *src = r->source;
	size_t size = 256 * 1024;
	unsigned char *buf = malloc(size);
	struct walk_reader w;
	ssize_t n;
	int ret = 0;

	if (!buf)
		return dcp_error(ENOMEM, "out of memory");
	ret = walk_open(r, kind, &w);
	if (ret) {
		free(buf);
		return ret;
	}
	while ((n = walk_read(&w, buf, size)) > 0) {
		for (ssize_t off = 0; off < n;) {
			const struct perf_event_header *h =
				(const void *)(buf + off);
			const struct dcp_sample_id *sid =
				dcp_record_sample_id(h);

			ret = src->ops->inject(src, sid ? sid->time : 0, h);
			if (ret)
				goto out;
			if (h->type == PERF_RECORD_MMAP2)
				r->stats.maps_injected++;
			off += h->size;
		}
		/*
		 * The walk can take seconds on a busy machine: empty the
		 * kernel's buffers between its reads, as the resumable
		 * iterator allows, so that no live record is lost meanwhile.
		 */
		ret = src->ops->drain(src);
		if (ret)
			goto out;
	}
	if (n < 0)
		ret = (int)n;
	r->stats.tasks_vanished += walk_vanished(&w);
out:
	walk_close(&w);
	free(buf);
	return ret;
}

int dcp_walk_inject(struct dcp_recorder *r)
{
	int ret = inject_kind(r, DCP_COLLECTION_TASKS);

	if (!ret)
		ret = inject_kind(r, DCP_COLLECTION_MAPS);
	if (ret)
		return ret;
	/* every record of the walk is stamped before this */
	r->hold_until = dcp_now_ns(CLOCK_MONOTONIC);
	return 0;
}

/*
 * The walk describes the processes that existed before recording with
 * records stamped when it read them, after the events were enabled: a
 * sample taken in between would find its process without maps and count
 * as unattributed. So until the walk's last record is replayed, the
 * samples of every process not born from a live FORK are held, and then
 * resolved against what the walk (and the live records up to its end)
 * described. A held sample older than its process's live exec ran a
 * program whose maps are gone: it keeps only its kernel frames, as
 * before. A map changed between the sample and the walk's end is the race
 * this accepts. Held samples are bounded; past the bound they are
 * resolved at once, as if nothing were held.
 */
#define HELD_MAX_BYTES (64u << 20)

struct held_sample {
	uint64_t time;
	uint32_t size;
	uint32_t pid;
};

/* held_sample.size of an off-CPU block (a struct held_off_cpu) */
#define HELD_OFF_CPU (1u << 31)

struct held_off_cpu {
	uint32_t pid, tid, nr_ips, reserved;
	uint64_t ns[DCP_OFF_CPU_NR_STATES];
	/* then nr_ips instruction pointers */
};

/* Keep [a, a + a_size) then [b, b + b_size) of process pid, held. */
static bool hold(struct dcp_recorder *r, uint64_t time, uint32_t pid,
		 uint32_t flag, const void *a, size_t a_size, const void *b,
		 size_t b_size)
{
	struct held_sample hs = { .time = time,
				  .size = (uint32_t)(a_size + b_size) | flag,
				  .pid = pid };
	size_t need = sizeof(hs) + ((a_size + b_size + 7) & ~(size_t)7);
	const struct dcp_process *p = dcp_process_table_find(r->procs, pid);
	unsigned char *held;

	/* with -p or a command, only the targets are worth holding */
	if ((p && p->born_live) || (r->targeted && !(p && p->target)) ||
	    r->held_len + need > HELD_MAX_BYTES)
		return false;
	held = dcp_grow(r->held, &r->held_cap, r->held_len + need, 1);
	if (!held)
		return false;
	r->held = held;
	memcpy(held + r->held_len, &hs, sizeof(hs));
	memcpy(held + r->held_len + sizeof(hs), a, a_size);
	if (b_size)
		memcpy(held + r->held_len + sizeof(hs) + a_size, b, b_size);
	r->held_len += need;
	r->samples_held++;
	return true;
}

bool dcp_walk_hold(struct dcp_recorder *r, uint64_t time, const void *rec,
		   size_t size)
{
	struct dcp_sample s;

	if (dcp_sample_parse(rec, &r->layout, &s) || (s.pid == 0 && s.tid == 0))
		return false;
	return hold(r, time, s.pid, 0, rec, size, NULL, 0);
}

bool dcp_walk_hold_off_cpu(struct dcp_recorder *r, uint64_t time,
			   const struct dcp_off_cpu_block *b)
{
	struct held_off_cpu ho = { .pid = b->pid,
				   .tid = b->tid,
				   .nr_ips = b->nr_ips };

	memcpy(ho.ns, b->ns, sizeof(ho.ns));
	return hold(r, time, b->pid, HELD_OFF_CPU, &ho, sizeof(ho), b->ips,
		    b->nr_ips * sizeof(*b->ips));
}

/* A held off-CPU block, taken now that its process is described. */
static int take_held_off_cpu(struct dcp_recorder *r, const void *rec)
{
	struct held_off_cpu ho;
	struct dcp_off_cpu_block b;

	memcpy(&ho, rec, sizeof(ho));
	b.pid = ho.pid;
	b.tid = ho.tid;
	b.nr_ips = ho.nr_ips;
	b.ips = (const uint64_t *)((const unsigned char *)rec + sizeof(ho));
	memcpy(b.ns, ho.ns, sizeof(b.ns));
	return dcp_samples_take_off_cpu(r, &b);
}

int dcp_walk_release(struct dcp_recorder *r)
{
	int ret = 0;

	r->hold_until = 0;
	for (size_t off = 0; off < r->held_len && !ret;) {
		struct held_sample hs;
		const struct perf_event_header *h;
		const struct dcp_process *p;

		memcpy(&hs, r->held + off, sizeof(hs));
		h = (const void *)(r->held + off + sizeof(hs));
		off += sizeof(hs) +
		       (((hs.size & ~HELD_OFF_CPU) + 7) & ~(size_t)7);
		if (hs.size & HELD_OFF_CPU) {
			ret = take_held_off_cpu(r, h);
			continue;
		}
		p = dcp_process_table_find(r->procs, (pid_t)hs.pid);
		ret = dcp_samples_take(r, h, p && p->exec_time > hs.time);
	}
	if (r->samples_held)
		dcp_log(DCP_LOG_DEBUG,
			"%" PRIu64 " samples held until the collection walk "
			"described their processes",
			r->samples_held);
	free(r->held);
	r->held = NULL;
	r->held_len = r->held_cap = 0;
	return ret;
}
