// SPDX-License-Identifier: MIT
/*
 * The events the perf source samples: perf's names of them (cpu-clock,
 * page-faults, ...), their ":u" and ":k" modifiers, and what the kernel
 * puts in the samples of each.
 */
#include <errno.h>
#include <string.h>

#include "log_internal.h"
#include "ring_internal.h"

static const struct dcp_event_spec known_events[] = {
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock", false,
	  false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", false,
	  false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "faults", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context-switches", false, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations",
	  false, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "migrations", false,
	  false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults",
	  false, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults",
	  false, false },
};

int dcp_event_spec_parse(const char *name, struct dcp_event_spec *spec)
{
	const char *colon = strchr(name, ':');
	size_t len = colon ? (size_t)(colon - name) : strlen(name);

	if (colon && strcmp(colon, ":u") && strcmp(colon, ":k"))
		return dcp_error(
			EINVAL,
			"unknown modifier '%s' of event '%.*s' (:u for user only, :k for kernel only)",
			colon, (int)len, name);
	for (size_t i = 0; i < sizeof(known_events) / sizeof(known_events[0]);
	     i++) {
		if (strlen(known_events[i].name) == len &&
		    !strncmp(name, known_events[i].name, len)) {
			*spec = known_events[i];
			spec->exclude_kernel = colon && colon[1] == 'u';
			spec->exclude_user = colon && colon[1] == 'k';
			return 0;
		}
	}
	return dcp_error(
		EINVAL,
		"unknown event '%s' (cpu-clock, task-clock, cycles, instructions, page-faults, minor-faults, major-faults, context-switches, cpu-migrations; :u or :k after one)",
		name);
}

bool dcp_event_period_omitted(const struct dcp_event_spec *spec,
			      uint64_t sample_period)
{
	return sample_period && spec->type == PERF_TYPE_SOFTWARE &&
	       spec->config != PERF_COUNT_SW_CPU_CLOCK &&
	       spec->config != PERF_COUNT_SW_TASK_CLOCK;
}
