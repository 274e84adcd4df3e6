// SPDX-License-Identifier: MIT
/*
 * The pipeline's input: what a record source delivers, in time order,
 * goes to replay (sync records), to the walk's holding or to samples.
 */
#include "recorder_internal.h"

/*
 * Time has moved on: exits long enough ago are retired, and at the walk's
 * end its processes are all described.
 */
static int advance(struct dcp_recorder *r, uint64_t time)
{
	dcp_replay_retire(r, time);
	if (r->hold_until && time >= r->hold_until)
		return dcp_walk_release(r);
	return 0;
}

int dcp_recorder_take_record(struct dcp_recorder *r, uint64_t time,
			     const struct perf_event_header *h, size_t size)
{
	int ret = advance(r, time);

	if (ret)
		return ret;
	if (h->type != PERF_RECORD_SAMPLE)
		return dcp_replay_record(r, h);
	if (r->hold_until && dcp_walk_hold(r, time, h, size))
		return 0;
	return dcp_samples_take(r, h, false);
}

int dcp_recorder_take_off_cpu(struct dcp_recorder *r, uint64_t time,
			      const struct dcp_off_cpu_block *b)
{
	int ret = advance(r, time);

	if (ret)
		return ret;
	if (r->hold_until && dcp_walk_hold_off_cpu(r, time, b))
		return 0;
	return dcp_samples_take_off_cpu(r, b);
}

int dcp_recorder_take_munmap(struct dcp_recorder *r, uint64_t time,
			     uint32_t pid, uint64_t addr, uint64_t len)
{
	int ret = advance(r, time);

	return ret ? ret : dcp_replay_munmap(r, pid, addr, len);
}
