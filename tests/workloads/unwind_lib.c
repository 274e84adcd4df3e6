// SPDX-License-Identifier: MIT
/*
 * The shared-library half of the unwind workload: a function that calls
 * back into the main binary. Built by the tests with -fomit-frame-pointer
 * -shared -fPIC.
 */
#include <stdint.h>

volatile uint64_t unwind_lib_sink;

/* Not a tail call: the callbacks return here, so this frame is live. */
__attribute__((noinline)) void unwind_lib_run(void (*a)(uint64_t),
					      void (*b)(uint64_t),
					      uint64_t a_ns, uint64_t b_ns)
{
	a(a_ns);
	unwind_lib_sink++;
	b(b_ns);
	unwind_lib_sink++;
}
