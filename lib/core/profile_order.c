// SPDX-License-Identifier: MIT
/* Sorting a compact file's stacks and rows (profile_order_internal.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile_order_internal.h"

struct sort_ctx {
	const struct dcp_aggregate *agg;
	const uint32_t *stack_pos;
};

static int cmp_frame(const struct dcp_frame *a, const struct dcp_frame *b)
{
	if (a->cookie != b->cookie)
		return a->cookie < b->cookie ? -1 : 1;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

/* Frames are stored leaf first: compare from the other end. */
static int cmp_stack(const void *pa, const void *pb, void *pctx)
{
	const struct sort_ctx *ctx = pctx;
	uint32_t ida = *(const uint32_t *)pa, idb = *(const uint32_t *)pb;
	uint32_t na, nb, i;
	const struct dcp_frame *a = dcp_aggregate_stack(ctx->agg, ida, &na);
	const struct dcp_frame *b = dcp_aggregate_stack(ctx->agg, idb, &nb);
	int c;

	for (i = 0; i < na && i < nb; i++) {
		c = cmp_frame(&a[na - 1 - i], &b[nb - 1 - i]);
		if (c)
			return c;
	}
	if (na != nb)
		return na < nb ? -1 : 1;
	return ida < idb ? -1 : ida > idb;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_row(const void *pa, const void *pb, void *pctx)
{
	const struct sort_ctx *ctx = pctx;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	struct dcp_row_key a, b;
	int c;

	dcp_aggregate_row(ctx->agg, ia, &a, NULL);
	dcp_aggregate_row(ctx->agg, ib, &b, NULL);
	if ((c = cmp_u32(a.comm_id, b.comm_id)) ||
	    (c = cmp_u32(a.pid, b.pid)) ||
	    (c = cmp_u32(a.thread_id, b.thread_id)) ||
	    (c = cmp_u32(ctx->stack_pos[a.stack_id],
			 ctx->stack_pos[b.stack_id])))
		return c;
	return ia < ib ? -1 : ia > ib;
}

int dcp_write_order_build(struct dcp_write_order *o,
			  const struct dcp_aggregate *agg)
{
	size_t nr_stacks = dcp_aggregate_nr_stacks(agg);
	size_t nr_rows = dcp_aggregate_nr_rows(agg), i;
	struct sort_ctx ctx = { .agg = agg };

	memset(o, 0, sizeof(*o));
	o->stack_at = malloc((nr_stacks ? nr_stacks : 1) * sizeof(uint32_t));
	o->stack_pos = malloc((nr_stacks ? nr_stacks : 1) * sizeof(uint32_t));
	o->row_at = malloc((nr_rows ? nr_rows : 1) * sizeof(size_t));
	if (!o->stack_at || !o->stack_pos || !o->row_at) {
		dcp_write_order_free(o);
		return -ENOMEM;
	}
	for (i = 0; i < nr_stacks; i++)
		o->stack_at[i] = (uint32_t)i;
	if (nr_stacks > 1)
		qsort_r(o->stack_at, nr_stacks, sizeof(uint32_t), cmp_stack,
			&ctx);
	for (i = 0; i < nr_stacks; i++)
		o->stack_pos[o->stack_at[i]] = (uint32_t)i;
	ctx.stack_pos = o->stack_pos;
	for (i = 0; i < nr_rows; i++)
		o->row_at[i] = i;
	if (nr_rows > 1)
		qsort_r(o->row_at, nr_rows, sizeof(size_t), cmp_row, &ctx);
	return 0;
}

void dcp_write_order_free(struct dcp_write_order *o)
{
	free(o->stack_at);
	free(o->stack_pos);
	free(o->row_at);
	memset(o, 0, sizeof(*o));
}
