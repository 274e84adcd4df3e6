// SPDX-License-Identifier: MIT
/*
 * dcprof record --continuous DIR: the period loop (cuts on wall-clock
 * boundaries and SIGHUP, one log line per period), the period files'
 * names, and retention by age and size.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "continuous.h"

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int continuous_check_dir(const char *dir)
{
	struct stat st;
	char *probe;
	int fd;

	if (stat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0700) < 0)
			return cmd_error("cannot use '%s' for --continuous: %s",
					 dir, strerror(errno));
		if (stat(dir, &st) < 0)
			return cmd_error("cannot use '%s' for --continuous: %s",
					 dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return cmd_error(
			"cannot use '%s' for --continuous: not a directory",
			dir);
	/* root passes access(): only a file really created tells */
	if (asprintf(&probe, "%s/.dcprof-probe.XXXXXX", dir) < 0)
		return cmd_error("out of memory");
	fd = mkostemp(probe, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(probe);
		return cmd_error("cannot write in '%s': %s", dir, strerror(e));
	}
	close(fd);
	unlink(probe);
	free(probe);
	return 0;
}

int continuous_parse_age(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!errno && end != arg && v > 0 && isfinite(v)) {
		if (!strcmp(end, "") || !strcmp(end, "s"))
			*out = v;
		else if (!strcmp(end, "m"))
			*out = v * 60;
		else if (!strcmp(end, "h"))
			*out = v * 3600;
		else if (!strcmp(end, "d"))
			*out = v * 86400;
		else
			end = NULL;
		if (end)
			return 0;
	}
	return cmd_usage_error(
		"record",
		"invalid --keep '%s': expected a positive age such as 90s, 30m, 12h or 7d",
		arg);
}

int continuous_parse_size(const char *opt, const char *arg, uint64_t *out)
{
	static const char units[] = "KMGT";
	char *end;
	unsigned long long v;
	const char *u;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || arg[0] == '-' || v == 0)
		goto bad;
	if (*end) {
		u = strchr(units, *end);
		if (!u || !*u || end[1])
			goto bad;
		for (const char *p = units; p <= u; p++) {
			if (v > UINT64_MAX / 1024)
				goto bad;
			v *= 1024;
		}
	}
	*out = v;
	return 0;
bad:
	return cmd_usage_error(
		"record",
		"invalid %s '%s': expected a positive size in bytes (K, M, G or T after it)",
		opt, arg);
}

int continuous_parse_push(struct continuous_args *c, int opt, const char *arg)
{
	const char **grown;

	switch (opt) {
	case 'U':
		c->push.url = arg;
		return 0;
	case 'A':
		c->push.app = arg;
		return 0;
	case 'T':
		c->push.token_file = arg;
		return 0;
	case 'Q':
		c->push.basic_auth_file = arg;
		return 0;
	case 'Y':
		c->push.ca_file = arg;
		return 0;
	case 'S':
		return continuous_parse_size("--push-spool-size", arg,
					     &c->push.spool_max);
	case CONTINUOUS_OPT_TENANT:
		c->push.tenant = arg;
		return 0;
	case CONTINUOUS_OPT_SAMPLE_LABELS:
		if (push_parse_sample_labels(arg, &c->push.sample_labels))
			return cmd_usage_error(
				"record",
				"invalid --push-sample-labels '%s': expected none, or a list of comm, thread, pid, tid, cgroup, container, unit and pod",
				arg);
		return 0;
	case CONTINUOUS_OPT_MAX_SAMPLES: {
		uint64_t n;
		int ret = continuous_parse_size("--push-max-samples", arg, &n);

		if (ret)
			return ret;
		c->push.max_samples =
			n > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)n;
		return 0;
	}
	case CONTINUOUS_OPT_MAX_BYTES:
		return continuous_parse_size("--push-max-bytes", arg,
					     &c->push.max_bytes);
	default:
		grown = realloc(c->labels,
				(c->push.nr_labels + 1) * sizeof(*grown));
		if (!grown)
			return cmd_error("out of memory");
		c->labels = grown;
		c->labels[c->push.nr_labels++] = arg;
		c->push.labels = c->labels;
		return 0;
	}
}

int64_t continuous_name_time(const char *name)
{
	struct tm tm = { 0 };
	unsigned ms;
	int n = 0;
	size_t len = strlen(name), slen = strlen(CONTINUOUS_SUFFIX);
	time_t t;

	if (len <= slen || strcmp(name + len - slen, CONTINUOUS_SUFFIX) ||
	    sscanf(name, "%4d%2d%2dT%2d%2d%2d.%3uZ-%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms,
		   &n) != 7 ||
	    n != 21 || (size_t)n >= len - slen)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	if (t < 0)
		return -1;
	return (int64_t)t * 1000000000 + (int64_t)ms * 1000000;
}

/* DIR/20261203T165000.000Z-HOST.dcprof: sortable by name, by time. */
static int period_path(const char *dir, const char *host, uint64_t start_ns,
		       char **out)
{
	time_t t = (time_t)(start_ns / 1000000000u);
	unsigned ms = (unsigned)(start_ns / 1000000u % 1000u);
	struct tm tm;
	char when[32];

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	if (asprintf(out, "%s/%s.%03uZ-%s%s", dir, when, ms, host,
		     CONTINUOUS_SUFFIX) < 0)
		return cmd_error("out of memory");
	return 0;
}

/* The host name as a file name can hold it. */
static void host_name(char *buf, size_t len)
{
	struct utsname uts;

	snprintf(buf, len, "%s", uname(&uts) == 0 ? uts.nodename : "host");
	for (char *p = buf; *p; p++)
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && *p != '.' && *p != '-' &&
		    *p != '_')
			*p = '_';
	if (!buf[0] || buf[0] == '.')
		buf[0] = '_';
}

struct period_file {
	char *name;
	uint64_t size;
	int64_t start_ns;
};

static int cmp_period_file(const void *a, const void *b)
{
	const struct period_file *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/*
 * Remove finished period files, oldest first, while they are older than
 * keep_age or all of them take more than keep_size; only names dcprof
 * gives, never the current period's.
 */
static void apply_retention(const struct continuous_args *c,
			    const char *current)
{
	struct period_file *files = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0, now = realtime_ns();
	struct dirent *de;
	DIR *d;
	int dfd;

	if (!c->keep_age && !c->keep_size)
		return;
	d = opendir(c->dir);
	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		int64_t start = continuous_name_time(de->d_name);
		struct stat st;

		if (start < 0 || !strcmp(de->d_name, current) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct period_file *g;

			cap = cap ? 2 * cap : 64;
			g = realloc(files, cap * sizeof(*g));
			if (!g)
				break;
			files = g;
		}
		files[n].name = strdup(de->d_name);
		if (!files[n].name)
			break;
		files[n].size = (uint64_t)st.st_size;
		files[n].start_ns = start;
		total += files[n].size;
		n++;
	}
	if (n)
		qsort(files, n, sizeof(*files), cmp_period_file);
	for (size_t i = 0; i < n; i++) {
		bool too_old =
			c->keep_age &&
			(double)((int64_t)now - files[i].start_ns) / 1e9 >
				c->keep_age;
		bool too_big = c->keep_size && total > c->keep_size;

		if ((too_old || too_big) &&
		    unlinkat(dfd, files[i].name, 0) == 0) {
			total -= files[i].size;
			fprintf(stderr, "dcprof: removed '%s/%s' (%s)\n",
				c->dir, files[i].name,
				too_old ? "--keep" : "--keep-size");
		}
		free(files[i].name);
	}
	free(files);
	closedir(d);
}

/* The next wall-clock boundary after now: a multiple of the period. */
static uint64_t next_boundary(uint64_t now, double period)
{
	uint64_t p = (uint64_t)(period * 1e9);

	if (!p)
		p = 1;
	return (now / p + 1) * p;
}

struct period_log {
	uint64_t written, dropped;
};

static void push_log(const char *line)
{
	fprintf(stderr, "dcprof: %s\n", line);
}

/* --push: checked and started before recording; the spool is DIR/.spool */
static int start_push(const struct continuous_args *c, struct push **out,
		      char **spool)
{
	struct push_opts o = c->push;
	struct push_error err;

	*out = NULL;
	if (!c->push.url)
		return 0;
	if (asprintf(spool, "%s/.spool", c->dir) < 0)
		return cmd_error("out of memory");
	o.spool_dir = *spool;
	o.log = push_log;
	*out = push_start(&o, &err);
	return *out ? 0 : cmd_error("%s", err.msg);
}

/* The period at path, [from_ns, until_ns), into the push spool. */
static void push_period(struct push *p, const char *path, uint64_t from_ns,
			uint64_t until_ns, uint32_t hz)
{
	struct push_error err;

	/* whole seconds, as the API takes them: aligned periods exactly, a
	 * short first one at least a second */
	uint64_t from = from_ns / 1000000000u;
	uint64_t until = (until_ns + 500000000u) / 1000000000u;

	if (until <= from)
		until = from + 1;
	if (!p)
		return;
	if (push_enqueue(p, path, from, until, hz, &err))
		fprintf(stderr, "dcprof: push: %s\n", err.msg);
	else if (push_last_pieces(p) > 1)
		fprintf(stderr,
			"dcprof: push: period '%s' cut into %zu requests for the server's limits (samples, bytes)\n",
			path, push_last_pieces(p));
}

static void stop_push(struct push *p, const char *spool)
{
	struct push_counts n;
	struct push_item item;
	char otlp[96] = "";

	if (!p)
		return;
	/* what the server has not taken within a few seconds waits in the
	 * spool for the next run */
	push_stop(p, 5, &n);
	if (n.profiles_rejected)
		snprintf(
			otlp, sizeof(otlp),
			", %llu profiles dropped by the receiver (OTLP partial success)",
			(unsigned long long)n.profiles_rejected);
	fprintf(stderr,
		"dcprof: push: %llu requests taken, %llu failed tries, %llu periods dropped (spool full), %llu requests set aside (never acceptable), %llu periods split%s%s\n",
		(unsigned long long)n.sent,
		(unsigned long long)n.attempts_failed,
		(unsigned long long)n.dropped_full,
		(unsigned long long)n.rejected, (unsigned long long)n.split,
		otlp,
		push_spool_oldest(spool, &item) > 0 ?
			"; the rest stays in the spool" :
			"");
}

/* A bound in the unit it was most likely given in: MiB, else KiB. */
static const char *bound_text(char *buf, size_t size, uint64_t bytes)
{
	if (bytes % (1024 * 1024) == 0)
		snprintf(buf, size, "%llu MiB",
			 (unsigned long long)(bytes / (1024 * 1024)));
	else
		snprintf(buf, size, "%.0f KiB", (double)bytes / 1024);
	return buf;
}

static void log_period(struct period_log *pl, struct dcp_recorder *r,
		       const char *path, int ret,
		       const struct dcp_profile_stats *s, const char *why)
{
	struct dcp_recorder_memory m = { .sz = sizeof(m) };
	struct stat st;
	char bound[32];

	if (ret) {
		pl->dropped++;
		fprintf(stderr,
			"dcprof: period dropped (%llu so far): '%s' not written, %llu samples lost with it: %s\n",
			(unsigned long long)pl->dropped, path,
			(unsigned long long)s->samples_kept, why);
		return;
	}
	pl->written++;
	fprintf(stderr,
		"dcprof: period '%s': %llu samples (%llu kept), lost %llu records and %llu samples, %lld bytes",
		path, (unsigned long long)s->samples,
		(unsigned long long)s->samples_kept,
		(unsigned long long)s->lost_records,
		(unsigned long long)s->lost_samples,
		stat(path, &st) == 0 ? (long long)st.st_size : 0ll);
	/* what stays for the next period, what the cuts let go, and what
	 * the bounds made go */
	if (r && dcp_recorder_memory(r, &m) == 0)
		fprintf(stderr,
			"; kept: %llu names (%.0f KiB), %llu pinned files, %llu files to name with (%.0f KiB; %llu hits, %llu misses), %llu processes (let go: %llu names, %llu pinned files, %llu open files; past the bounds of %s and %llu files: %llu names, %llu files to name with, %llu pins refused)",
			(unsigned long long)m.names,
			(double)m.names_bytes / 1024,
			(unsigned long long)m.files_pinned,
			(unsigned long long)m.naming_files,
			(double)m.naming_bytes / 1024,
			(unsigned long long)m.naming_hits,
			(unsigned long long)m.naming_misses,
			(unsigned long long)m.processes,
			(unsigned long long)m.names_dropped,
			(unsigned long long)m.pins_closed,
			(unsigned long long)m.files_closed,
			bound_text(bound, sizeof(bound), m.memory_limit),
			(unsigned long long)m.max_open_files,
			(unsigned long long)m.names_evicted,
			(unsigned long long)m.naming_evicted,
			(unsigned long long)m.pins_refused);
	fputc('\n', stderr);
}

int continuous_run(struct dcp_recorder_opts *opts,
		   const struct continuous_args *c, volatile sig_atomic_t *stop,
		   volatile sig_atomic_t *cut)
{
	struct dcp_profile_stats stats = { .sz = sizeof(stats) };
	struct period_log pl = { 0 };
	struct dcp_recorder *r;
	struct push *push = NULL;
	char host[80], why[512];
	char *path = NULL, *next = NULL, *spool = NULL;
	/* sampleRate of the push; 0 with -c (a period in events) */
	uint32_t hz = opts->sample_period ? 0 :
		      opts->sample_freq	  ? opts->sample_freq :
					    99;
	uint64_t start = realtime_ns(), last_start, boundary;
	uint64_t last_period_start = start, start_mono = monotonic_ns();
	int ret = 0;

	host_name(host, sizeof(host));
	if (start_push(c, &push, &spool)) {
		free(spool);
		return 1;
	}
	if (period_path(c->dir, host, start, &path)) {
		stop_push(push, spool);
		free(spool);
		return 1;
	}
	opts->output = path;
	opts->periods = true;
	r = dcp_recorder_new(opts);
	if (!r) {
		ret = cmd_error("%s", dcp_last_error());
		stop_push(push, spool);
		free(spool);
		free(path);
		return ret;
	}
	fprintf(stderr,
		"dcprof: recording continuously into '%s', a period every %g s\n",
		c->dir, c->period);
	if (c->ready_fd >= 0) {
		if (write(c->ready_fd, "recording\n", 10) != 10)
			fprintf(stderr,
				"dcprof: cannot write to --ready-fd %d: %s\n",
				c->ready_fd, strerror(errno));
		close(c->ready_fd);
	}
	last_start = start;
	boundary = next_boundary(start, c->period);
	while (!*stop) {
		uint64_t now = realtime_ns();
		int64_t left;

		/* the wall clock set back: the boundary after the new now */
		if (boundary > now + (uint64_t)(c->period * 1e9))
			boundary = next_boundary(now, c->period);
		left = (int64_t)(boundary - now) / 1000000;
		if (c->duration &&
		    (double)(monotonic_ns() - start_mono) / 1e9 >= c->duration)
			break;
		if (c->nr_pids && !c->targets_alive(c->pids, c->nr_pids))
			break;
		if (*cut || now >= boundary) {
			*cut = 0;
			/* names stay distinct and in order, however fast the
			 * cuts come */
			if (now / 1000000 <= last_start / 1000000)
				now = (last_start / 1000000 + 1) * 1000000;
			last_start = now;
			if (period_path(c->dir, host, now, &next)) {
				ret = 1;
				break;
			}
			ret = dcp_recorder_cut(r, next, &stats);
			snprintf(why, sizeof(why), "%s", dcp_last_error());
			log_period(&pl, r, path, ret, &stats, why);
			if (!ret)
				push_period(push, path, last_period_start, now,
					    hz);
			last_period_start = now;
			free(path);
			path = next;
			next = NULL;
			apply_retention(c, strrchr(path, '/') + 1);
			boundary = next_boundary(realtime_ns(), c->period);
			ret = 0;
			continue;
		}
		ret = dcp_recorder_poll(r, left < 0   ? 0 :
					   left > 100 ? 100 :
							(int)left);
		if (ret) {
			ret = cmd_error("%s", dcp_last_error());
			break;
		}
	}
	/* the last period is written whole, as every other */
	if (dcp_recorder_finish(r, &stats)) {
		snprintf(why, sizeof(why), "%s", dcp_last_error());
		log_period(&pl, NULL, path, 1, &stats, why);
	} else {
		log_period(&pl, NULL, path, 0, &stats, NULL);
		push_period(push, path, last_period_start, realtime_ns(), hz);
		apply_retention(c, "");
	}
	stop_push(push, spool);
	free(spool);
	fprintf(stderr, "dcprof: %llu periods written, %llu dropped\n",
		(unsigned long long)pl.written, (unsigned long long)pl.dropped);
	dcp_recorder_free(r);
	free(path);
	return ret;
}
