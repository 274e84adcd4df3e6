// SPDX-License-Identifier: MIT
/*
 * The sampling program's CPU budget (see source_bpf_internal.h). A
 * cpu-clock event runs its program in the timer interrupt; at high rates
 * the program's two stack walks can take the CPUs from everything else
 * (-F 100000 on 2 busy CPUs of a VM: a 3 s recording took 446 s, with 18.6
 * million samples lost). The kernel throttles hardware events whose
 * handlers take more than kernel.perf_cpu_time_max_percent of the CPU time,
 * but not the hrtimer behind cpu-clock. So the recorder does it for its own
 * program: with run time counted (BPF_ENABLE_STATS), once a second it
 * compares the program's time with that share of the CPUs' time, and above
 * it divides the sampling rate by a whole factor and makes every sample
 * count that many times (sample_weight in profile.bpf.c): the counts keep
 * the requested rate's units, no sample is lost, and the lowering is said
 * and counted as a throttle event.
 */
#ifndef DCPROF_NO_BPF

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log_internal.h"
#include "recorder.lskel.h"
#include "source_bpf_internal.h"

#define BUDGET_WINDOW_NS 1000000000ull
#define MAX_PERCENT_SYSCTL "/proc/sys/kernel/perf_cpu_time_max_percent"

/* The budget: bpf_cpu_max_percent, else the kernel's own for perf. */
static double read_max_percent(const struct bpf_source *bs)
{
	unsigned int v = 25; /* the kernel's default */
	FILE *f;

	if (bs->cpu_max_percent)
		return bs->cpu_max_percent;
	f = fopen(MAX_PERCENT_SYSCTL, "re");
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 25;
		fclose(f);
	}
	return v;
}

static uint64_t run_time_ns(const struct bpf_source *bs)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bs->skel->progs.dcp_sample.prog_fd, &info,
				   &len))
		return 0;
	return info.run_time_ns;
}

void dcp_bpf_budget_start(struct bpf_source *bs, uint32_t freq)
{
	bs->freq = freq;
	bs->weight = 1;
	bs->stats_fd = -1;
	bs->max_percent = read_max_percent(bs);
	/* 0 and 100 turn the kernel's throttling off: so they do here */
	if (bs->max_percent <= 0 || bs->max_percent >= 100) {
		dcp_log(DCP_LOG_INFO,
			"bpf: no CPU budget for the sampling program "
			"(kernel.perf_cpu_time_max_percent is %g)",
			bs->max_percent);
		return;
	}
	bs->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (bs->stats_fd < 0) {
		dcp_log(DCP_LOG_INFO,
			"bpf: the sampling program's run time cannot be "
			"counted (%s): its CPU time is not bounded",
			strerror(errno));
		return;
	}
	bs->budget_at_ns = dcp_now_ns(CLOCK_MONOTONIC);
	bs->budget_run_ns = run_time_ns(bs);
}

void dcp_bpf_budget_check(struct bpf_source *bs)
{
	uint64_t now, run, wall, factor, freq, period_ns;
	double percent;

	if (bs->stats_fd < 0 || !bs->nr_events)
		return;
	now = dcp_now_ns(CLOCK_MONOTONIC);
	wall = now - bs->budget_at_ns;
	if (wall < BUDGET_WINDOW_NS)
		return;
	run = run_time_ns(bs);
	percent = 100.0 * (double)(run - bs->budget_run_ns) /
		  ((double)wall * bs->nr_events);
	bs->budget_at_ns = now;
	bs->budget_run_ns = run;
	if (percent <= bs->max_percent || bs->freq / bs->weight <= 1)
		return;
	/* to four fifths of the budget, as a whole factor */
	factor = (uint64_t)(percent * 5 / (4.0 * bs->max_percent)) + 1;
	if (bs->freq / (bs->weight * factor) < 1)
		factor = bs->freq / bs->weight;
	freq = bs->freq / (bs->weight * factor);
	bs->weight *= (uint32_t)factor;
	/* the weight first: samples still at the old rate count more, for
	 * the microseconds until the events take the new one */
	bs->skel->data->sample_weight = bs->weight;
	period_ns = 1000000000ull / freq;
	for (uint32_t i = 0; i < bs->nr_events; i++)
		ioctl(bs->event_fds[i], PERF_EVENT_IOC_PERIOD, &period_ns);
	bs->base.counts.throttle_events++;
	dcp_log(DCP_LOG_WARN,
		"the BPF sampling program took %.1f%% of the CPUs' time "
		"(kernel.perf_cpu_time_max_percent is %g"
		"): sampling lowered to %" PRIu64
		" Hz, each sample counted %" PRIu32 " times",
		percent, bs->max_percent, freq, bs->weight);
}

void dcp_bpf_budget_stop(struct bpf_source *bs)
{
	if (bs->stats_fd >= 0)
		close(bs->stats_fd);
	bs->stats_fd = -1;
}

#endif
