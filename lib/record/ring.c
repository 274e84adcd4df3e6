// SPDX-License-Identifier: MIT
/*
 * The perf ring buffers: opening one sampling event per CPU (with the sync
 * records' dummy event and the munmap tracepoint routed into its ring),
 * mapping and draining the rings, and explaining what the kernel refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log_internal.h"
#include "records_internal.h"
#include "ring_internal.h"

static int paranoid_level(void)
{
	char buf[32];

	if (dcp_read_small_file("/proc/sys/kernel/perf_event_paranoid", buf,
				sizeof(buf)) < 0)
		return 99;
	return atoi(buf);
}

/* The kernel's perf_event_max_sample_rate, 0 when unknown. */
static long max_sample_rate(void)
{
	char buf[32];

	if (dcp_read_small_file("/proc/sys/kernel/perf_event_max_sample_rate",
				buf, sizeof(buf)) < 0)
		return 0;
	return strtol(buf, NULL, 10);
}

/* Turn the kernel's refusal into advice, as the user needs it. */
static int explain_open_error(int err, const struct dcp_ring_opts *opts,
			      int cpu)
{
	const struct dcp_event_spec *ev = opts->event;
	long max;

	switch (err) {
	case EINVAL:
		max = max_sample_rate();
		if (max > 0 && opts->sample_freq > (unsigned long)max)
			return dcp_error(
				err,
				"a sampling frequency of %u Hz is above the kernel's maximum of %ld Hz (kernel.perf_event_max_sample_rate)",
				opts->sample_freq, max);
		return dcp_error(
			err, "perf_event_open failed for '%s' on cpu %d: %s",
			ev->name, cpu, strerror(err));
	case EACCES:
	case EPERM:
		max = paranoid_level();
		return dcp_error(
			err,
			"perf_event_open refused system-wide sampling (perf_event_paranoid is %ld): run as root or with CAP_PERFMON, or set /proc/sys/kernel/perf_event_paranoid to -1%s",
			max,
			max < 3 ? " (-p PID and -- COMMAND need neither)" : "");
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return dcp_error(
			err,
			"event '%s' is not supported on cpu %d (no hardware PMU here?): use -e cpu-clock",
			ev->name, cpu);
	case EMFILE:
		return dcp_error(
			err,
			"too many open files for one event per cpu: raise the limit (ulimit -n)");
	case ENOSYS:
		return dcp_error(
			err,
			"this kernel has no perf_event_open (CONFIG_PERF_EVENTS is off)");
	default:
		return dcp_error(
			err, "perf_event_open failed for '%s' on cpu %d: %s",
			ev->name, cpu, strerror(err));
	}
}

/* The CPUs listed in /sys/devices/system/cpu/online, e.g. "0-3,6". */
static int online_cpus(int **cpus, size_t *nr)
{
	char buf[1024], *p = buf;
	size_t n = 0, cap = 0;
	int *list = NULL;

	if (dcp_read_small_file("/sys/devices/system/cpu/online", buf,
				sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "0-%ld",
			 sysconf(_SC_NPROCESSORS_ONLN) - 1);
	while (*p && *p != '\n') {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		for (long c = lo; c <= hi; c++) {
			if (n == cap) {
				int *grown;

				cap = cap ? cap * 2 : 16;
				grown = realloc(list, cap * sizeof(*list));
				if (!grown) {
					free(list);
					return dcp_error(ENOMEM,
							 "out of memory");
				}
				list = grown;
			}
			list[n++] = (int)c;
		}
		if (*p == ',')
			p++;
		else
			break;
	}
	*cpus = list;
	*nr = n;
	return n ? 0 : dcp_error(ENODEV, "no online cpu found");
}

/* -C: keep of the online cpus those asked for; each must be online. */
static int select_cpus(const struct dcp_ring_opts *opts, int *cpus, size_t *nr)
{
	size_t kept = 0;

	for (size_t i = 0; i < opts->nr_cpus; i++) {
		bool online = false;

		for (size_t j = 0; j < *nr; j++)
			online |= cpus[j] == opts->cpus[i];
		if (!online)
			return dcp_error(ENODEV, "cpu %d is not online",
					 opts->cpus[i]);
	}
	for (size_t j = 0; j < *nr; j++) {
		bool asked = false;

		for (size_t i = 0; i < opts->nr_cpus; i++)
			asked |= cpus[j] == opts->cpus[i];
		if (asked)
			cpus[kept++] = cpus[j];
	}
	*nr = kept;
	return 0;
}

static void fill_common_attr(struct perf_event_attr *attr)
{
	attr->size = sizeof(*attr);
	attr->sample_id_all = 1;
	/* one clock for the kernel's records and ours (collection, timers) */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

/* The sampling event's attributes, common to per-CPU and per-task events. */
static void fill_sample_attr(const struct dcp_ring_opts *opts,
			     struct perf_event_attr *attr)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(attr, 0, sizeof(*attr));
	fill_common_attr(attr);
	attr->type = opts->event->type;
	attr->config = opts->event->config;
	if (opts->sample_period) {
		attr->sample_period = opts->sample_period;
	} else {
		attr->freq = 1;
		attr->sample_freq = opts->sample_freq;
	}
	attr->exclude_kernel = opts->event->exclude_kernel;
	attr->exclude_callchain_kernel = opts->event->exclude_kernel;
	attr->exclude_user = opts->event->exclude_user;
	attr->exclude_callchain_user = opts->event->exclude_user;
	attr->sample_type =
		DCP_SAMPLE_ID_TYPE | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD;
	if (dcp_event_period_omitted(opts->event, opts->sample_period))
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	if (opts->callchain)
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (opts->cgroup)
		attr->sample_type |= PERF_SAMPLE_CGROUP;
	if (opts->dwarf) {
		/* user frames come from unwinding the stack copy */
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN |
				     PERF_SAMPLE_REGS_USER |
				     PERF_SAMPLE_STACK_USER;
		attr->exclude_callchain_user = 1;
		attr->sample_regs_user = opts->regs_user_mask;
		attr->sample_stack_user = opts->stack_user;
	}
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->cgroup = opts->cgroup;
	attr->build_id = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(opts->mmap_pages * page / 4);
}

/* perf_event_open, again without build ids in MMAP2 (before 5.12). */
static int open_sample_event(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = dcp_perf_event_open(attr, pid, cpu);

	if (fd < 0 && errno == EINVAL && attr->build_id) {
		attr->build_id = 0;
		fd = dcp_perf_event_open(attr, pid, cpu);
	}
	return fd;
}

/* perf_event_mlock_kb, the KiB per CPU a user may lock for rings; -1. */
static long mlock_kb(void)
{
	char buf[32];

	if (dcp_read_small_file("/proc/sys/kernel/perf_event_mlock_kb", buf,
				sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* Map the ring of ring->fd, the event just opened. */
static int map_ring(const struct dcp_ring_opts *opts, struct dcp_ring *ring)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(opts->mmap_pages + 1) * page;
	void *base;

	if (ioctl(ring->fd, PERF_EVENT_IOC_ID, &ring->sample_id) < 0)
		return dcp_error(errno, "cannot read the event id: %s",
				 strerror(errno));
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ring->fd, 0);
	if (base == MAP_FAILED && errno == EPERM && geteuid() != 0)
		return dcp_error(
			EPERM,
			"cannot map a ring of %u pages (%zu KiB) per CPU: users without CAP_IPC_LOCK may lock %ld KiB per CPU: use --mmap-pages %ld or less, or raise /proc/sys/kernel/perf_event_mlock_kb (or ulimit -l)",
			opts->mmap_pages, len / 1024, mlock_kb(),
			mlock_kb() > 0 ? (mlock_kb() * 1024 / page - 1) : 1);
	if (base == MAP_FAILED)
		return dcp_error(
			errno,
			"cannot map the ring buffer of cpu %d (%u pages): %s",
			ring->cpu, opts->mmap_pages, strerror(errno));
	ring->meta = base;
	ring->data = (unsigned char *)base + page;
	ring->data_size = (uint64_t)opts->mmap_pages * page;
	ring->scratch = malloc(65536);
	if (!ring->scratch)
		return dcp_error(ENOMEM, "out of memory");
	return 0;
}

/* The munmap tracepoint of pid (-1: every task) on ring's CPU, into it. */
static int open_munmap(const struct dcp_ring_opts *opts, struct dcp_ring *ring,
		       pid_t pid, int *out)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	fill_common_attr(&attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = opts->munmap->id;
	attr.sample_period = 1;
	attr.sample_type = DCP_SAMPLE_ID_TYPE | PERF_SAMPLE_RAW;
	attr.inherit = pid >= 0;
	fd = dcp_perf_event_open(&attr, pid, ring->cpu);
	if (fd < 0)
		return dcp_error(
			errno,
			"cannot open syscalls:sys_enter_munmap on cpu %d: %s",
			ring->cpu, strerror(errno));
	*out = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &ring->munmap_id) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
		return dcp_error(
			errno,
			"cannot route the munmap tracepoint into the ring of cpu %d: %s",
			ring->cpu, strerror(errno));
	return 0;
}

/*
 * The sync records of a CPU (mmap, comm, fork, exit, switches) from a
 * dummy event of their own, into ring's buffer: they run from the start,
 * before the collection walk, while the sampling event waits for
 * dcp_rings_enable() (as perf does): the walk then does not run under the
 * interrupts of its own sampling, which at high rates on busy CPUs made
 * it last many seconds.
 */
static int open_sync(const struct perf_event_attr *sample_attr,
		     struct dcp_ring *ring)
{
	struct perf_event_attr attr = *sample_attr;
	int fd;

	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	/*
	 * It never samples; a frequency would make it a freq event, which
	 * keeps the tick of every CPU running for the kernel's period
	 * adjustment (and changed where t0470's samples fell in its loop).
	 */
	attr.freq = 0;
	attr.sample_period = 1;
	attr.disabled = 0;
	attr.watermark = 0;
	attr.wakeup_watermark = 0;
	fd = open_sample_event(&attr, -1, ring->cpu);
	if (fd < 0)
		return dcp_error(errno,
				 "cannot open the sync event on cpu %d: %s",
				 ring->cpu, strerror(errno));
	ring->sync_fd = fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
		return dcp_error(
			errno,
			"cannot route the sync event into the ring of cpu %d: %s",
			ring->cpu, strerror(errno));
	return 0;
}

static int open_cpu(const struct dcp_ring_opts *opts, struct dcp_ring *ring)
{
	struct perf_event_attr attr, sample_attr;
	int fd, ret;

	fill_sample_attr(opts, &attr);
	sample_attr = attr;
	sample_attr.mmap = sample_attr.mmap2 = sample_attr.comm = 0;
	sample_attr.comm_exec = sample_attr.task = 0;
	sample_attr.build_id = sample_attr.cgroup = 0;
	sample_attr.disabled = 1;
	fd = open_sample_event(&sample_attr, -1, ring->cpu);
	if (fd < 0)
		return explain_open_error(errno, opts, ring->cpu);
	ring->fd = fd;
	ret = map_ring(opts, ring);
	if (!ret)
		ret = open_sync(&attr, ring);
	if (ret)
		return ret;
	if (opts->munmap && opts->munmap->id)
		return open_munmap(opts, ring, -1, &ring->munmap_fd);
	return 0;
}

/* ---- the per-task fallback -------------------------------------------- */

struct tid_list {
	pid_t *tids;
	size_t n, cap;
};

static int tid_list_add(struct tid_list *l, pid_t tid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		pid_t *grown = realloc(l->tids, cap * sizeof(*grown));

		if (!grown)
			return dcp_error(ENOMEM, "out of memory");
		l->tids = grown;
		l->cap = cap;
	}
	l->tids[l->n++] = tid;
	return 0;
}

/* Every thread of pid now (pid itself when /proc does not say). */
static int list_threads(pid_t pid, struct tid_list *l)
{
	char path[64];
	struct dirent *de;
	size_t before = l->n;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d) {
		while (!ret && (de = readdir(d))) {
			long tid = strtol(de->d_name, NULL, 10);

			if (tid > 0)
				ret = tid_list_add(l, (pid_t)tid);
		}
		closedir(d);
	}
	if (!ret && l->n == before)
		ret = tid_list_add(l, pid);
	return ret;
}

/* The owner of process pid, or (uid_t)-1. */
static uid_t process_owner(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/* Why a per-task event for pid was refused, as the user needs it. */
static int explain_task_error(int err, const struct dcp_ring_opts *opts,
			      pid_t pid, int cpu)
{
	int paranoid = paranoid_level();
	uid_t owner;

	if (err != EACCES && err != EPERM) {
		if (err == ESRCH)
			return dcp_error(err, "no such process: %d", (int)pid);
		return explain_open_error(err, opts, cpu);
	}
	if (paranoid >= 3)
		return dcp_error(
			err,
			"kernel.perf_event_paranoid is %d: this kernel refuses every perf event to users without CAP_PERFMON: run as root or with CAP_PERFMON, or set kernel.perf_event_paranoid to 2 (or lower)",
			paranoid);
	owner = process_owner(pid);
	if (owner != (uid_t)-1 && owner != geteuid())
		return dcp_error(
			err,
			"process %d belongs to another user (uid %u): record it as that user, or as root or with CAP_PERFMON (and ptrace access)",
			(int)pid, (unsigned)owner);
	return dcp_error(
		err,
		"perf_event_open refused to sample process %d (perf_event_paranoid is %d): run as root or with CAP_PERFMON, or lower /proc/sys/kernel/perf_event_paranoid",
		(int)pid, paranoid);
}

static int add_task_fd(struct dcp_ring *ring, int fd)
{
	int *grown = realloc(ring->task_fds,
			     (ring->nr_task_fds + 1) * sizeof(*grown));

	if (!grown) {
		close(fd);
		return dcp_error(ENOMEM, "out of memory");
	}
	ring->task_fds = grown;
	ring->task_fds[ring->nr_task_fds++] = fd;
	return 0;
}

/*
 * One event per (thread of a target, CPU), inherited by the threads and
 * processes they create: perf's way for a user's own processes. The first
 * event of a CPU owns its ring, the others write into it, so that the
 * rings stay per CPU as the pipeline expects. Kernel frames are asked for
 * first and left out when refused (perf_event_paranoid 2).
 */
static int open_per_task(const struct dcp_ring_opts *opts,
			 struct dcp_ring *rings, size_t nr_rings)
{
	struct tid_list tl = { 0 };
	struct perf_event_attr attr;
	bool exclude_kernel = opts->event->exclude_kernel;
	int ret = 0;

	for (size_t i = 0; !ret && i < opts->nr_pids; i++)
		ret = list_threads(opts->pids[i], &tl);
	for (size_t c = 0; !ret && c < nr_rings; c++) {
		struct dcp_ring *ring = &rings[c];

		for (size_t t = 0; !ret && t < tl.n; t++) {
			int fd;

			fill_sample_attr(opts, &attr);
			attr.inherit = !opts->no_inherit;
			attr.exclude_kernel = exclude_kernel;
			attr.exclude_callchain_kernel = exclude_kernel;
			fd = open_sample_event(&attr, tl.tids[t], ring->cpu);
			if (fd < 0 && (errno == EACCES || errno == EPERM) &&
			    !exclude_kernel) {
				exclude_kernel = true;
				attr.exclude_kernel = 1;
				attr.exclude_callchain_kernel = 1;
				fd = open_sample_event(&attr, tl.tids[t],
						       ring->cpu);
			}
			if (fd < 0 && errno == ESRCH && t > 0)
				continue; /* a thread that exited meanwhile */
			if (fd < 0) {
				ret = explain_task_error(errno, opts,
							 tl.tids[t], ring->cpu);
				break;
			}
			if (ring->fd < 0) {
				ring->fd = fd;
				ret = map_ring(opts, ring);
				continue;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) <
			    0) {
				ret = dcp_error(
					errno,
					"cannot route the events of process %d into the ring of cpu %d: %s",
					(int)tl.tids[t], ring->cpu,
					strerror(errno));
				close(fd);
				break;
			}
			ret = add_task_fd(ring, fd);
		}
		ring->per_task = true;
		ring->exclude_kernel = exclude_kernel;
		/* munmap is best effort here: maps are replaced by overlap */
		for (size_t t = 0;
		     !ret && opts->munmap && opts->munmap->id && t < tl.n;
		     t++) {
			int fd;

			if (open_munmap(opts, ring, tl.tids[t], &fd))
				break;
			if (ring->munmap_fd < 0)
				ring->munmap_fd = fd;
			else
				ret = add_task_fd(ring, fd);
		}
	}
	free(tl.tids);
	return ret;
}

static void reset_rings(struct dcp_ring *r, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++) {
		int cpu = r[i].cpu;

		if (r[i].meta)
			munmap(r[i].meta, r[i].data_size + page);
		if (r[i].munmap_fd >= 0)
			close(r[i].munmap_fd);
		if (r[i].sync_fd >= 0)
			close(r[i].sync_fd);
		if (r[i].fd >= 0)
			close(r[i].fd);
		for (size_t j = 0; j < r[i].nr_task_fds; j++)
			close(r[i].task_fds[j]);
		free(r[i].task_fds);
		free(r[i].scratch);
		memset(&r[i], 0, sizeof(r[i]));
		r[i].cpu = cpu;
		r[i].fd = -1;
		r[i].munmap_fd = -1;
		r[i].sync_fd = -1;
	}
}

int dcp_rings_open(const struct dcp_ring_opts *opts, struct dcp_ring **rings,
		   size_t *nr_rings)
{
	struct dcp_ring *r;
	size_t nr_cpus;
	int *cpus, ret;

	if (opts->mmap_pages == 0 ||
	    (opts->mmap_pages & (opts->mmap_pages - 1)))
		return dcp_error(
			EINVAL,
			"ring buffer pages must be a power of two, not %u",
			opts->mmap_pages);
	ret = online_cpus(&cpus, &nr_cpus);
	if (ret)
		return ret;
	if (opts->nr_cpus) {
		ret = select_cpus(opts, cpus, &nr_cpus);
		if (ret) {
			free(cpus);
			return ret;
		}
	}
	r = calloc(nr_cpus, sizeof(*r));
	if (!r) {
		free(cpus);
		return dcp_error(ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nr_cpus; i++) {
		r[i].cpu = cpus[i];
		r[i].fd = -1;
		r[i].munmap_fd = -1;
		r[i].sync_fd = -1;
	}
	free(cpus);
	for (size_t i = 0; i < nr_cpus; i++) {
		ret = open_cpu(opts, &r[i]);
		if (ret == -EACCES || ret == -EPERM) {
			if (i > 0 || !opts->nr_pids)
				break;
			/* no privilege for per-CPU events: per task */
			reset_rings(r, nr_cpus);
			ret = open_per_task(opts, r, nr_cpus);
			break;
		}
		if (ret)
			break;
	}
	if (ret) {
		dcp_rings_close(r, nr_cpus);
		return ret;
	}
	*rings = r;
	*nr_rings = nr_cpus;
	return 0;
}

int dcp_rings_enable(struct dcp_ring *rings, size_t nr_rings)
{
	for (size_t i = 0; i < nr_rings; i++)
		if (rings[i].fd >= 0 &&
		    ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return dcp_error(errno,
					 "cannot enable sampling on cpu %d: %s",
					 rings[i].cpu, strerror(errno));
	return 0;
}

void dcp_rings_disable(struct dcp_ring *rings, size_t nr_rings)
{
	for (size_t i = 0; i < nr_rings; i++) {
		if (rings[i].fd >= 0)
			ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		if (rings[i].sync_fd >= 0)
			ioctl(rings[i].sync_fd, PERF_EVENT_IOC_DISABLE, 0);
		if (rings[i].munmap_fd >= 0)
			ioctl(rings[i].munmap_fd, PERF_EVENT_IOC_DISABLE, 0);
		for (size_t j = 0; j < rings[i].nr_task_fds; j++)
			ioctl(rings[i].task_fds[j], PERF_EVENT_IOC_DISABLE, 0);
	}
}

void dcp_rings_close(struct dcp_ring *rings, size_t nr_rings)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!rings)
		return;
	for (size_t i = 0; i < nr_rings; i++) {
		struct dcp_ring *r = &rings[i];

		if (r->meta)
			munmap(r->meta, r->data_size + page);
		if (r->munmap_fd >= 0)
			close(r->munmap_fd);
		if (r->sync_fd >= 0)
			close(r->sync_fd);
		if (r->fd >= 0)
			close(r->fd);
		for (size_t j = 0; j < r->nr_task_fds; j++)
			close(r->task_fds[j]);
		free(r->task_fds);
		free(r->scratch);
	}
	free(rings);
}

int dcp_ring_drain(struct dcp_ring *ring, dcp_ring_record_fn fn, void *ctx)
{
	uint64_t head =
		__atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->meta->data_tail;
	uint64_t mask = ring->data_size - 1;
	int ret = 0;

	while (tail < head) {
		const struct perf_event_header *h =
			(const void *)(ring->data + (tail & mask));
		size_t size = h->size;
		size_t first = ring->data_size - (tail & mask);

		if (size < sizeof(*h) || size > head - tail)
			break; /* cannot happen with a sane kernel */
		if (size > first) {
			/* the record wraps: hand out a contiguous copy */
			memcpy(ring->scratch, h, first);
			memcpy(ring->scratch + first, ring->data, size - first);
			h = (const void *)ring->scratch;
		}
		ret = fn(h, ctx);
		tail += size;
		if (ret)
			break;
	}
	__atomic_store_n(&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret;
}
