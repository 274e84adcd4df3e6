// SPDX-License-Identifier: MIT
/*
 * The public decoder of the records a collection writes: the recorder's own
 * record decoder and cookie interning, behind a struct that can grow.
 */
#include <errno.h>
#include <string.h>

#include "api_internal.h"
#include "collect_internal.h"
#include "log_internal.h"
#include "records_internal.h"

_Static_assert((int)DCP_RECORD_COMM == (int)PERF_RECORD_COMM, "COMM");
_Static_assert((int)DCP_RECORD_EXIT == (int)PERF_RECORD_EXIT, "EXIT");
_Static_assert((int)DCP_RECORD_FORK == (int)PERF_RECORD_FORK, "FORK");
_Static_assert((int)DCP_RECORD_MMAP2 == (int)PERF_RECORD_MMAP2, "MMAP2");

DCPROF_API int dcp_collection_record_decode(const void *buf, size_t size,
					    struct dcp_cookie_table *cookies,
					    struct dcp_collection_record *out)
{
	const struct perf_event_header *h = buf;
	struct dcp_collection_record rec = { 0 };
	struct dcp_record_view v;
	int ret;

	if (!DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_collection_record, out);
	if (!buf)
		return dcp_error(EINVAL, "no record to decode");
	ret = dcp_record_decode(h, size, &v);
	if (ret < 0)
		return dcp_api_ret(ret);
	rec.type = v.type;
	rec.size = h->size;
	rec.injected = v.injected;
	rec.pid = v.pid;
	rec.tid = v.tid;
	rec.ppid = v.ppid;
	rec.ptid = v.ptid;
	rec.time = v.time;
	rec.comm = v.comm;
	rec.addr = v.addr;
	rec.len = v.len;
	rec.pgoff = v.pgoff;
	rec.prot = v.prot;
	rec.flags = v.flags;
	rec.filename = v.filename;
	if (v.type == PERF_RECORD_MMAP2) {
		rec.kind = v.region;
		memcpy(rec.build_id, v.id.build_id, sizeof(rec.build_id));
		rec.build_id_size = v.id.build_id_size;
		rec.dev_major = v.id.dev_major;
		rec.dev_minor = v.id.dev_minor;
		rec.ino = v.id.ino;
		rec.ino_generation = v.id.ino_generation;
		if (cookies) {
			int64_t cookie = dcp_record_intern(cookies, &v);

			if (cookie < 0)
				return dcp_api_ret((int)cookie);
			rec.cookie = (uint32_t)cookie;
		}
	}
	dcp_sz_copy(out, &rec, sizeof(rec));
	return (int)h->size;
}
