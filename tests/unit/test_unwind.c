// SPDX-License-Identifier: MIT
/*
 * The DWARF call-graph path: sample decoding with bounds checks, the
 * perf-to-DWARF register mapping, stack copy compaction, and real
 * unwinding of this test's own stack through libdwfl, complete and cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unwind_internal.h"

/* ---- a synthetic sample -------------------------------------------------- */

struct builder {
	uint64_t buf[8192];
	size_t n; /* u64 words after the header */
};

static void put(struct builder *b, uint64_t v)
{
	b->buf[1 + b->n++] = v;
}

static struct perf_event_header *finish(struct builder *b)
{
	struct perf_event_header *h = (void *)b->buf;

	h->type = PERF_RECORD_SAMPLE;
	h->misc = 0;
	h->size = (uint16_t)(8 + b->n * 8);
	return h;
}

static const struct dcp_sample_layout dwarf_layout = {
	.callchain = true,
	.regs_mask = DCP_UNWIND_REGS_MASK,
	.stack_user = true,
};

/* id, ip, pid/tid, time, cpu, period, chain(2), regs, stack(room, dyn) */
static struct perf_event_header *build_sample(struct builder *b, uint64_t room,
					      uint64_t dyn)
{
	b->n = 0;
	put(b, 7); /* id */
	put(b, 0x401000); /* ip */
	put(b, (5ull << 32) | 4); /* tid 5, pid 4 */
	put(b, 123456); /* time */
	put(b, 1); /* cpu */
	put(b, 1000); /* period */
	put(b, 2);
	put(b, (uint64_t)PERF_CONTEXT_KERNEL);
	put(b, 0xffffffff81000000ull);
	put(b, PERF_SAMPLE_REGS_ABI_64);
	for (uint32_t i = 0; i < DCP_UNWIND_NR_REGS; i++)
		put(b, 100 + i);
	put(b, room);
	for (uint64_t i = 0; i < room / 8; i++)
		put(b, 0x1111111111111111ull * (i % 15 + 1));
	put(b, dyn);
	return finish(b);
}

static void test_parse(void **state)
{
	struct builder *b = malloc(sizeof(*b));
	struct dcp_sample s;
	struct perf_event_header *h = build_sample(b, 64, 40);

	(void)state;
	assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s), 0);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 4);
	assert_int_equal(s.tid, 5);
	assert_int_equal(s.time, 123456);
	assert_int_equal(s.nr_chain, 2);
	assert_int_equal(s.chain[1], 0xffffffff81000000ull);
	assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s.nr_regs, DCP_UNWIND_NR_REGS);
	assert_int_equal(s.regs[16], 116);
	assert_int_equal(s.stack_room, 64);
	assert_int_equal(s.stack_size, 40);
	assert_int_equal(s.stack[0], 0x11);

	/* every prefix of the record is refused, never read past */
	for (uint16_t size = 8; size < h->size; size += 8) {
		uint16_t full = h->size;

		h->size = size;
		assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s),
				 -EBADMSG);
		h->size = full;
	}
	/* a dyn_size larger than the room is malformed */
	b->buf[1 + b->n - 1] = 72;
	assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s), -EBADMSG);
	/* a chain longer than the record */
	build_sample(b, 64, 40);
	b->buf[1 + 6] = 1u << 20;
	assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s), -EBADMSG);
	free(b);
}

static void test_parse_no_user_state(void **state)
{
	struct builder *b = malloc(sizeof(*b));
	struct perf_event_header *h;
	struct dcp_sample s;

	(void)state;
	/* a kernel thread: ABI_NONE and no regs, an empty stack copy and
	 * then no dyn_size either */
	b->n = 0;
	for (int i = 0; i < 6; i++)
		put(b, (uint64_t)i);
	put(b, 0); /* no chain */
	put(b, PERF_SAMPLE_REGS_ABI_NONE);
	put(b, 0); /* stack size 0 */
	h = finish(b);
	assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s), 0);
	assert_null(s.regs);
	assert_null(s.stack);
	assert_int_equal(s.stack_size, 0);
	free(b);
}

static void test_compact(void **state)
{
	struct builder *b = malloc(sizeof(*b));
	unsigned char *out = malloc(65536);
	struct perf_event_header *h = build_sample(b, 4096, 100);
	struct dcp_sample s, c;
	size_t size;

	(void)state;
	assert_int_equal(dcp_sample_parse(h, &dwarf_layout, &s), 0);
	size = dcp_sample_compact(h, &dwarf_layout, out);
	assert_int_equal(size, h->size - 4096 + 104);
	assert_int_equal(((struct perf_event_header *)out)->size, size);
	assert_int_equal(dcp_sample_parse((void *)out, &dwarf_layout, &c), 0);
	assert_int_equal(c.stack_size, 100);
	assert_int_equal(c.stack_room, 104);
	assert_memory_equal(c.stack, s.stack, 100);
	assert_memory_equal(c.regs, s.regs, DCP_UNWIND_NR_REGS * 8);
	assert_int_equal(c.time, s.time);
	/* a full copy stays as it is */
	h = build_sample(b, 64, 64);
	assert_int_equal(dcp_sample_compact(h, &dwarf_layout, out), 0);
	free(out);
	free(b);
}

static void test_regs(void **state)
{
	uint64_t regs[DCP_UNWIND_NR_REGS], dwarf[DCP_UNWIND_NR_DWARF_REGS];
	uint32_t filled;

	(void)state;
	/* perf order: AX BX CX DX SI DI BP SP IP R8..R15 */
	for (uint32_t i = 0; i < DCP_UNWIND_NR_REGS; i++)
		regs[i] = 1000 + i;
	filled = dcp_unwind_regs_to_dwarf(regs, DCP_UNWIND_NR_REGS,
					  DCP_UNWIND_REGS_MASK, dwarf);
	assert_int_equal(filled, (1u << 17) - 1);
	assert_int_equal(dwarf[0], 1000); /* rax */
	assert_int_equal(dwarf[1], 1003); /* rdx */
	assert_int_equal(dwarf[2], 1002); /* rcx */
	assert_int_equal(dwarf[3], 1001); /* rbx */
	assert_int_equal(dwarf[4], 1004); /* rsi */
	assert_int_equal(dwarf[5], 1005); /* rdi */
	assert_int_equal(dwarf[6], 1006); /* rbp */
	assert_int_equal(dwarf[7], 1007); /* rsp */
	assert_int_equal(dwarf[16], 1008); /* rip */
	assert_int_equal(dwarf[8], 1009); /* r8 */
	assert_int_equal(dwarf[15], 1016); /* r15 */

	/* only IP, SP, BP: the rest is missing, not invented */
	regs[0] = 6;
	regs[1] = 7;
	regs[2] = 8;
	filled = dcp_unwind_regs_to_dwarf(
		regs, 3, (1u << 6) | (1u << 7) | (1u << 8), dwarf);
	assert_int_equal(filled, (1u << 6) | (1u << 7) | (1u << 16));
	assert_int_equal(dwarf[6], 6);
	assert_int_equal(dwarf[7], 7);
	assert_int_equal(dwarf[16], 8);
	assert_int_equal(dwarf[3], 0);
}

/* ---- unwinding our own stack ---------------------------------------------- */

#define MAX_PATHS 64
static char *paths[MAX_PATHS];
static size_t nr_paths;

static int open_self_map(void *ctx, const struct dcp_process *p,
			 const struct dcp_map *map)
{
	char path[96];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 p->pid, map->start, map->end);
	return open(path, O_RDONLY | O_CLOEXEC);
}

enum { VDSO = 1000, ANON = 1001, VSYSCALL = 1002 };

static uint32_t cookie_of(const char *name)
{
	if (!strcmp(name, "[vdso]"))
		return VDSO;
	if (name[0] != '/')
		return ANON;
	for (size_t i = 0; i < nr_paths; i++)
		if (!strcmp(paths[i], name))
			return (uint32_t)(i + 1);
	assert_true(nr_paths < MAX_PATHS);
	paths[nr_paths++] = strdup(name);
	return (uint32_t)nr_paths;
}

/* Our own executable maps, as the recorder would have them. */
static void load_self(struct dcp_process *p, uint64_t *stack_top)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], name[256] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &start,
			   &end, perms, &pgoff, name) < 4)
			continue;
		if (!strcmp(name, "[stack]"))
			*stack_top = end;
		if (perms[2] != 'x')
			continue;
		assert_int_equal(
			dcp_process_map_insert(p, start, end - start,
					       name[0] == '/' ? pgoff : 0,
					       cookie_of(name), 5),
			0);
	}
	fclose(f);
	p->map_generation = 1;
}

struct capture {
	uint64_t regs[DCP_UNWIND_NR_REGS]; /* perf order */
	unsigned char *stack;
	uint64_t stack_size;
	uint64_t stack_top;
	void *ret_in_two; /* return address of capture() */
	void *ret_in_one; /* return address of level_two() */
};

/* The registers as perf would sample them, at one instant. */
__attribute__((noinline, no_sanitize_address)) static void
capture(struct capture *c)
{
	uint64_t *r = c->regs;
	uint64_t sp;

	__asm__ volatile("mov %%rax, 0(%0)\n\t"
			 "mov %%rbx, 8(%0)\n\t"
			 "mov %%rcx, 16(%0)\n\t"
			 "mov %%rdx, 24(%0)\n\t"
			 "mov %%rsi, 32(%0)\n\t"
			 "mov %%rdi, 40(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 64(%0)\n\t"
			 "mov %%r8, 72(%0)\n\t"
			 "mov %%r9, 80(%0)\n\t"
			 "mov %%r10, 88(%0)\n\t"
			 "mov %%r11, 96(%0)\n\t"
			 "mov %%r12, 104(%0)\n\t"
			 "mov %%r13, 112(%0)\n\t"
			 "mov %%r14, 120(%0)\n\t"
			 "mov %%r15, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	sp = r[7];
	c->stack_size = c->stack_top - sp;
	if (c->stack_size > DCP_UNWIND_STACK_MAX)
		c->stack_size = DCP_UNWIND_STACK_MAX;
#ifdef __SANITIZE_ADDRESS__
	/* a raw copy of the live stack, redzones and all, as the kernel
	 * takes it: byte by byte, outside ASan's view */
	for (size_t i = 0; i < c->stack_size; i++)
		c->stack[i] = ((const volatile unsigned char *)sp)[i];
#else
	memcpy(c->stack, (const void *)sp, c->stack_size);
#endif
	c->ret_in_two = __builtin_return_address(0);
}

__attribute__((noinline)) static void level_two(struct capture *c)
{
	capture(c);
	c->ret_in_one = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level_one(struct capture *c)
{
	level_two(c);
	__asm__ volatile("" ::: "memory");
}

struct self {
	struct dcp_process_table *t;
	struct dcp_process *p;
	struct dcp_unwinder *u;
	struct capture c;
	struct dcp_sample s;
};

static void self_setup(struct self *x)
{
	struct dcp_unwind_opts o = {
		.open_map = open_self_map,
		.vdso_cookie = VDSO,
		.anon_cookie = ANON,
		.vsyscall_cookie = VSYSCALL,
	};

	memset(x, 0, sizeof(*x));
	x->t = dcp_process_table_new();
	x->p = dcp_process_table_get(x->t, getpid());
	assert_non_null(x->p);
	load_self(x->p, &x->c.stack_top);
	assert_true(x->c.stack_top != 0);
	x->c.stack = malloc(DCP_UNWIND_STACK_MAX);
	x->u = dcp_unwinder_new(&o);
	assert_non_null(x->u);
	level_one(&x->c);
	x->s.pid = (uint32_t)getpid();
	x->s.tid = (uint32_t)gettid();
	x->s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	x->s.regs = x->c.regs;
	x->s.nr_regs = DCP_UNWIND_NR_REGS;
	x->s.stack = x->c.stack;
	x->s.stack_size = x->c.stack_size;
	x->s.ip = x->c.regs[8];
}

static void self_teardown(struct self *x)
{
	dcp_unwinder_free(x->u);
	dcp_process_table_free(x->t);
	free(x->c.stack);
}

static void test_unwind_self(void **state)
{
	struct dcp_unwind_frame frames[256];
	enum dcp_unwind_end end;
	struct self x;
	uint32_t n;

	(void)state;
	self_setup(&x);
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 256, &end);
	assert_true(n >= 4);
	assert_int_equal(frames[0].pc, x.c.regs[8]);
	assert_true(frames[0].activation);
	assert_int_equal(frames[1].pc, (uint64_t)x.c.ret_in_two);
	assert_false(frames[1].activation);
	assert_int_equal(frames[2].pc, (uint64_t)x.c.ret_in_one);
	if (x.c.stack_top - x.c.regs[7] <= DCP_UNWIND_STACK_MAX)
		assert_int_equal(end, DCP_UNWIND_COMPLETE);
	/* the Dwfl is kept while the maps stay the same */
	assert_int_equal(dcp_unwinder_builds(x.u), 1);
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 256, &end);
	assert_int_equal(dcp_unwinder_builds(x.u), 1);
	x.p->map_generation = 2;
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 256, &end);
	assert_int_equal(dcp_unwinder_builds(x.u), 2);
	assert_int_equal(frames[2].pc, (uint64_t)x.c.ret_in_one);

	/* the depth limit */
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 2, &end);
	assert_int_equal(n, 2);
	assert_int_equal(end, DCP_UNWIND_OTHER);
	self_teardown(&x);
}

static void test_unwind_cut(void **state)
{
	struct dcp_unwind_frame frames[256];
	enum dcp_unwind_end end;
	struct self x;
	uint32_t n;

	(void)state;
	self_setup(&x);
	/* too little stack to find capture()'s return address: the leaf
	 * only, marked, and never a guessed caller */
	x.s.stack_size = 8;
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 256, &end);
	assert_int_equal(end, DCP_UNWIND_STACK_END);
	assert_int_equal(n, 1);
	assert_int_equal(frames[0].pc, x.c.regs[8]);

	/* no stack at all */
	x.s.stack = NULL;
	x.s.stack_size = 0;
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 256, &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, DCP_UNWIND_STACK_END);
	self_teardown(&x);
}

static void test_unwind_no_cfi(void **state)
{
	struct dcp_unwind_frame frames[16];
	enum dcp_unwind_end end;
	struct self x;
	uint32_t n;

	(void)state;
	self_setup(&x);
	/* the same sample in a process whose ip lies in anonymous memory */
	dcp_process_exec(x.p);
	assert_int_equal(dcp_process_map_insert(x.p, x.c.regs[8] & ~0xfffull,
						4096, x.c.regs[8] & ~0xfffull,
						ANON, 5),
			 0);
	x.p->map_generation = 3;
	n = dcp_unwinder_unwind(x.u, x.p, &x.s, frames, 16, &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, DCP_UNWIND_NO_CFI);
	self_teardown(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_no_user_state),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_regs),
		cmocka_unit_test(test_unwind_self),
		cmocka_unit_test(test_unwind_cut),
		cmocka_unit_test(test_unwind_no_cfi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
