// SPDX-License-Identifier: MIT
/*
 * The opening of dcprof report, as text or JSON: the recording's meta
 * data and statistics, and what --resymbolize found.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "cmd.h"
#include "report.h"

static void print_header_text(const struct profile_view *v,
			      const struct report_args *a, uint64_t total,
			      uint64_t unfiltered)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_get_stats(v->profile);
	char when[64] = "?", hint[512];
	time_t t = (time_t)(m->start_realtime_ns / 1000000000ull);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("# dcprof report of '%s'\n", v->path);
	printf("# recorded %s on ", when);
	text_print_safe(stdout, m->hostname, 0);
	printf(" (%s), %.1f s, %u cpus, event %s",
	       m->kernel_release ? m->kernel_release : "?",
	       (double)m->duration_ns / 1e9, m->nr_cpus,
	       m->event ? m->event : "?");
	if (m->sample_freq || !m->sample_period)
		printf(" at %u Hz", m->sample_freq);
	else /* record -c */
		printf(" every %" PRIu64, m->sample_period);
	printf("%s\n", m->callchain ? ", call graphs" : "");
	printf("# command: ");
	text_print_safe(stdout, m->cmdline, 0);
	printf("\n");
	if (m->backend && m->backend[0])
		printf("# backend: %s\n", m->backend);
	printf("# samples: %" PRIu64 " read, %" PRIu64 " kept (%" PRIu64
	       " idle), %" PRIu64 " filtered by --only, %" PRIu64
	       " of other tasks",
	       s->samples, s->samples_kept, s->samples_idle,
	       s->samples_filtered, s->samples_other_tasks);
	/* the idle task is another task of a -p or command recording */
	if (s->samples_other_idle)
		printf(" (%" PRIu64 " idle)", s->samples_other_idle);
	if (s->samples_other_cgroups)
		printf(", %" PRIu64 " of other cgroups",
		       s->samples_other_cgroups);
	printf("\n");
	printf("# lost: %" PRIu64 " records, %" PRIu64
	       " samples; unattributed: %" PRIu64 " samples, %" PRIu64
	       " frames; unresolved symbols: %" PRIu64 "\n",
	       s->lost_records, s->lost_samples, s->samples_unattributed,
	       s->frames_unattributed, s->symbols_unresolved);
	if (s->unwind_truncated_stack_end || s->unwind_truncated_no_cfi ||
	    s->unwind_truncated_other)
		printf("# truncated stacks: %" PRIu64
		       " at the end of the stack copy, %" PRIu64
		       " at frames without CFI, %" PRIu64 " other\n",
		       s->unwind_truncated_stack_end,
		       s->unwind_truncated_no_cfi, s->unwind_truncated_other);
	if (s->unwind_walks) {
		printf("# unwound in the kernel: %" PRIu64
		       " user stacks, %" PRIu64
		       " frames by unwind tables, %" PRIu64
		       " by frame pointers (%" PRIu64
		       " in files without a table, %" PRIu64
		       " in no known file); %" PRIu64
		       " frames named (file, offset) there\n",
		       s->unwind_walks, s->unwind_table_frames,
		       s->unwind_fp_frames, s->unwind_no_table_frames,
		       s->unwind_no_mapping_frames, s->unwind_named_frames);
		printf("# stacks ended: %" PRIu64
		       " at the outermost frame, %" PRIu64
		       " where the frame-pointer chain ended, %" PRIu64
		       " at a rule the tables cannot express, %" PRIu64
		       " at a stack read that failed, %" PRIu64
		       " at the depth limit\n",
		       s->unwind_end_root, s->unwind_end_fp,
		       s->unwind_end_unsupported, s->unwind_end_read,
		       s->unwind_end_depth);
		printf("# unwind tables: %" PRIu64 " files, %.1f KiB in the "
		       "kernel; %" PRIu64 " files without one: %" PRIu64
		       " for want of room (--unwind-memory), %" PRIu64
		       " without CFI; %" PRIu64
		       " evicted, the least recently used, for room\n",
		       s->unwind_tables, (double)s->unwind_table_bytes / 1024,
		       s->unwind_tables_refused + s->unwind_tables_failed,
		       s->unwind_tables_refused, s->unwind_tables_failed,
		       s->unwind_tables_evicted);
	}
	if (s->python_frames || s->python_no_thread || s->python_cut ||
	    s->python_unnamed)
		printf("# python: %" PRIu64 " frames of Python calls, %" PRIu64
		       " not named (their code could not be read); %" PRIu64
		       " samples of a Python process without a Python thread "
		       "state found, %" PRIu64
		       " stacks with Python frames left out\n",
		       s->python_frames, s->python_unnamed, s->python_no_thread,
		       s->python_cut);
	if (cmd_fp_hint(s, v->cookies, hint, sizeof(hint)))
		printf("# %s\n", hint); /* broken frame-pointer chains */
	if (report_filtered(a) && !report_in_ms(a))
		printf("# filtered (%s%s): %" PRIu64 " of the %" PRIu64
		       " samples kept match; percentages are of the %" PRIu64
		       "\n",
		       report_filter_names(a),
		       a->files.n || a->symbols.n ? ", any frame of the stack" :
						    "",
		       total, unfiltered, total);
	else if (report_filtered(a))
		printf("# filtered (%s, any frame of the stack): %.1f of the "
		       "%.1f ms match; percentages are of the %.1f\n",
		       report_filter_names(a), (double)total / 1e6,
		       (double)unfiltered / 1e6, (double)total / 1e6);
	if (m->off_cpu)
		/* switches, short blocks and unfinished threads are every
		 * task's: the targets are applied to the blocks charged */
		printf("# off-CPU: %" PRIu64
		       " switches (every task's), %" PRIu64
		       " blocks charged (%.1f ms), %" PRIu64
		       " shorter than --off-cpu-min (every task's), %" PRIu64
		       " of other tasks, %" PRIu64
		       " threads (of any task) still switched out at the end, "
		       "charged up to it\n",
		       s->off_cpu_switches, s->off_cpu_blocks,
		       (double)s->off_cpu_ns / 1e6, s->off_cpu_short,
		       s->off_cpu_other_tasks, s->off_cpu_unfinished);
	if (m->off_cpu && s->off_cpu_under_way)
		printf("# off-CPU: %" PRIu64
		       " threads (of any task) were off the CPU when recording "
		       "began: charged from then, on the stack they were on "
		       "(their user stack not known)\n",
		       s->off_cpu_under_way);
	if (m->off_cpu && s->off_cpu_missed_switch_ins)
		printf("# off-CPU: %" PRIu64
		       " blocks dropped: the thread's switch-in was not "
		       "reported by the kernel\n",
		       s->off_cpu_missed_switch_ins);
	if (m->off_cpu)
		printf("# off-CPU by state: %.1f ms preempted (runnable), "
		       "%.1f ms sleeping (S), %.1f ms blocked (D)\n",
		       (double)a->off_cpu_state_ns[DCP_OFF_CPU_RUNNABLE] / 1e6,
		       (double)a->off_cpu_state_ns[DCP_OFF_CPU_INTERRUPTIBLE] /
			       1e6,
		       (double)a->off_cpu_state_ns
				       [DCP_OFF_CPU_UNINTERRUPTIBLE] /
			       1e6);
	if (report_in_ms(a))
		printf("# value: %s time in ms\n",
		       a->value == VIEW_VALUE_WALL ?
			       "wall-clock (samples times the period, plus off-CPU)" :
			       "off-CPU");
	if (m->kernel_excluded)
		printf("# user frames only: kernel frames were not allowed (kernel.perf_event_paranoid, recorded without root)\n");
	if (!m->complete && m->disk_full)
		printf("# INCOMPLETE: the disk was full; this is the data the recorder wrote before, up to %.1f s\n",
		       (double)m->duration_ns / 1e9);
	else if (!m->complete)
		printf("# INCOMPLETE: the recorder did not finish; this is the data up to its last flush\n");
	/* -p or a command whose processes never ran: an empty table alone
	 * reads as a broken recorder */
	if (!s->samples_kept && s->samples_other_tasks && !m->off_cpu)
		printf("# nothing kept: all %" PRIu64
		       " samples were of tasks other than the recorded ones, which did not run\n",
		       s->samples_other_tasks);
	printf("#\n");
}

static void print_header_json(const struct profile_view *v,
			      const struct report_args *a, uint64_t unfiltered)
{
	const struct dcp_profile_meta *m = dcp_profile_get_meta(v->profile);
	const struct dcp_profile_stats *s = dcp_profile_get_stats(v->profile);
	char hint[512];

	printf("{\"file\":");
	json_print_string(stdout, v->path);
	/* summary: read from the file's summary (docs/FORMAT.md) */
	printf(",\"meta\":{\"complete\":%s,\"summary\":%s,\"disk_full\":%s,"
	       "\"start_realtime_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
	       ",\"sample_freq\":%u,\"nr_cpus\":%u"
	       ",\"callchain\":%s,\"event\":",
	       m->complete ? "true" : "false",
	       dcp_profile_is_summary(v->profile) ? "true" : "false",
	       m->disk_full ? "true" : "false", m->start_realtime_ns,
	       m->duration_ns, m->sample_freq, m->nr_cpus,
	       m->callchain ? "true" : "false");
	json_print_string(stdout, m->event);
	printf(",\"cmdline\":");
	json_print_string(stdout, m->cmdline);
	printf(",\"hostname\":");
	json_print_string(stdout, m->hostname);
	printf(",\"kernel_release\":");
	json_print_string(stdout, m->kernel_release);
	printf(",\"kernel_excluded\":%s",
	       m->kernel_excluded ? "true" : "false");
	printf(",\"backend\":");
	json_print_string(stdout, m->backend);
	/* "": no hint */
	cmd_fp_hint(s, v->cookies, hint, sizeof(hint));
	printf(",\"fp_hint\":");
	json_print_string(stdout, hint);
	printf("},\"stats\":{\"samples\":%" PRIu64 ",\"samples_kept\":%" PRIu64
	       ",\"samples_idle\":%" PRIu64 ",\"samples_filtered\":%" PRIu64
	       ",\"samples_other_tasks\":%" PRIu64
	       ",\"samples_other_idle\":%" PRIu64
	       ",\"samples_other_cgroups\":%" PRIu64
	       ",\"samples_unattributed\":%" PRIu64
	       ",\"frames_unattributed\":%" PRIu64 ",\"lost_records\":%" PRIu64
	       ",\"lost_samples\":%" PRIu64 ",\"throttle_events\":%" PRIu64
	       ",\"symbols_unresolved\":%" PRIu64 ",\"tasks_injected\":%" PRIu64
	       ",\"tasks_vanished\":%" PRIu64
	       ",\"unwind_truncated_stack_end\":%" PRIu64
	       ",\"unwind_truncated_no_cfi\":%" PRIu64
	       ",\"unwind_truncated_other\":%" PRIu64 "}",
	       s->samples, s->samples_kept, s->samples_idle,
	       s->samples_filtered, s->samples_other_tasks,
	       s->samples_other_idle, s->samples_other_cgroups,
	       s->samples_unattributed, s->frames_unattributed, s->lost_records,
	       s->lost_samples, s->throttle_events, s->symbols_unresolved,
	       s->tasks_injected, s->tasks_vanished,
	       s->unwind_truncated_stack_end, s->unwind_truncated_no_cfi,
	       s->unwind_truncated_other);
	if (m->off_cpu)
		printf(",\"off_cpu\":{\"switches\":%" PRIu64
		       ",\"blocks\":%" PRIu64 ",\"ns\":%" PRIu64
		       ",\"short\":%" PRIu64 ",\"other_tasks\":%" PRIu64
		       ",\"unfinished\":%" PRIu64
		       ",\"missed_switch_ins\":%" PRIu64
		       ",\"under_way\":%" PRIu64 ",\"runnable_ns\":%" PRIu64
		       ",\"interruptible_ns\":%" PRIu64
		       ",\"uninterruptible_ns\":%" PRIu64 "}",
		       s->off_cpu_switches, s->off_cpu_blocks, s->off_cpu_ns,
		       s->off_cpu_short, s->off_cpu_other_tasks,
		       s->off_cpu_unfinished, s->off_cpu_missed_switch_ins,
		       s->off_cpu_under_way,
		       a->off_cpu_state_ns[DCP_OFF_CPU_RUNNABLE],
		       a->off_cpu_state_ns[DCP_OFF_CPU_INTERRUPTIBLE],
		       a->off_cpu_state_ns[DCP_OFF_CPU_UNINTERRUPTIBLE]);
	if (s->unwind_walks)
		printf(",\"unwind\":{\"walks\":%" PRIu64
		       ",\"table_frames\":%" PRIu64 ",\"fp_frames\":%" PRIu64
		       ",\"no_table_frames\":%" PRIu64
		       ",\"no_mapping_frames\":%" PRIu64
		       ",\"end_root\":%" PRIu64 ",\"end_fp\":%" PRIu64
		       ",\"end_unsupported\":%" PRIu64 ",\"end_read\":%" PRIu64
		       ",\"end_depth\":%" PRIu64 ",\"tables\":%" PRIu64
		       ",\"table_bytes\":%" PRIu64
		       ",\"tables_refused\":%" PRIu64
		       ",\"tables_failed\":%" PRIu64
		       ",\"tables_evicted\":%" PRIu64
		       ",\"named_frames\":%" PRIu64 "}",
		       s->unwind_walks, s->unwind_table_frames,
		       s->unwind_fp_frames, s->unwind_no_table_frames,
		       s->unwind_no_mapping_frames, s->unwind_end_root,
		       s->unwind_end_fp, s->unwind_end_unsupported,
		       s->unwind_end_read, s->unwind_end_depth,
		       s->unwind_tables, s->unwind_table_bytes,
		       s->unwind_tables_refused, s->unwind_tables_failed,
		       s->unwind_tables_evicted, s->unwind_named_frames);
	if (s->python_frames || s->python_no_thread || s->python_cut ||
	    s->python_unnamed)
		printf(",\"python\":{\"frames\":%" PRIu64
		       ",\"unnamed\":%" PRIu64 ",\"no_thread\":%" PRIu64
		       ",\"cut\":%" PRIu64 "}",
		       s->python_frames, s->python_unnamed, s->python_no_thread,
		       s->python_cut);
	/* total, what the percentages are of, is printed by the view */
	if (report_filtered(a))
		printf(",\"unfiltered_total\":%" PRIu64, unfiltered);
}

void report_print_header(const struct profile_view *v,
			 const struct report_args *a, uint64_t total,
			 uint64_t unfiltered)
{
	if (a->json)
		print_header_json(v, a, unfiltered);
	else
		print_header_text(v, a, total, unfiltered);
}

const char *report_filter_names(const struct report_args *a)
{
	static char buf[80];

	snprintf(buf, sizeof(buf), "%s%s%s%s%s%s", a->comms.n ? ", --comm" : "",
		 a->pids.n ? ", --pid" : "", a->tids.n ? ", --tid" : "",
		 a->files.n ? ", --file" : "", a->symbols.n ? ", --symbol" : "",
		 a->cgroups.n ? ", --cgroup" : "");
	return buf[0] ? buf + 2 : buf;
}

void report_warn_empty(const struct report_args *a, uint64_t unfiltered,
		       const uint64_t *removed)
{
	static const char *const names[FILTER_NR] = { "--comm",	  "--pid",
						      "--tid",	  "--file",
						      "--symbol", "--cgroup" };
	const struct str_list *lists[FILTER_NR] = { &a->comms,	 &a->pids,
						    &a->tids,	 &a->files,
						    &a->symbols, &a->cgroups };
	char why[256] = "";
	size_t len = 0;

	for (int f = 0; f < FILTER_NR; f++) {
		if (!lists[f]->n || len >= sizeof(why))
			continue;
		if (report_in_ms(a))
			len += (size_t)snprintf(why + len, sizeof(why) - len,
						"%s%s removed %.1f ms",
						len ? ", " : "", names[f],
						(double)removed[f] / 1e6);
		else
			len += (size_t)snprintf(why + len, sizeof(why) - len,
						"%s%s removed %" PRIu64,
						len ? ", " : "", names[f],
						removed[f]);
	}
	if (report_in_ms(a))
		cmd_warn("no stack matches %s: of the %.1f ms, %s",
			 report_filter_names(a), (double)unfiltered / 1e6, why);
	else
		cmd_warn("no sample matches %s: of the %" PRIu64
			 " samples kept, %s",
			 report_filter_names(a), unfiltered, why);
}

void report_print_resymbolize(const struct report_args *a,
			      const struct dcp_resymbolize_stats *st)
{
	if (a->json) {
		printf(",\"resymbolize\":{\"objects\":%" PRIu64
		       ",\"objects_missing\":%" PRIu64
		       ",\"objects_mismatched\":%" PRIu64
		       ",\"resolved_before\":%" PRIu64
		       ",\"resolved_after\":%" PRIu64
		       ",\"symbols_before\":%" PRIu64
		       ",\"symbols_after\":%" PRIu64 "}",
		       st->objects, st->objects_missing, st->objects_mismatched,
		       st->resolved_before, st->resolved_after,
		       st->symbols_before, st->symbols_after);
		return;
	}
	/* names made from .eh_frame extents ("file+0xSTART") are no symbols:
	 * counted apart, so that a debug file's gain shows */
	printf("# resymbolized %" PRIu64 " files (%" PRIu64 " missing, %" PRIu64
	       " replaced by other builds): %" PRIu64
	       " addresses named by symbols and %" PRIu64
	       " given made names (file+0xSTART, from .eh_frame); before, %" PRIu64
	       " and %" PRIu64 "\n",
	       st->objects, st->objects_missing, st->objects_mismatched,
	       st->symbols_after, st->resolved_after - st->symbols_after,
	       st->symbols_before, st->resolved_before - st->symbols_before);
}
