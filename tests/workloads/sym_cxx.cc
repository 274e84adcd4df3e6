// SPDX-License-Identifier: MIT
/*
 * Mangled names: two instances of a C++ function template, and a function
 * under a hand-written Rust (legacy scheme) symbol name, each busy for a
 * third of the time.
 * usage: sym_cxx SECONDS
 */
#include <cstdint>
#include <cstdlib>
#include <ctime>

static volatile uint64_t sink;

static uint64_t thread_cpu_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

namespace shapes {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T spin(uint64_t ns)
	{
		uint64_t end = thread_cpu_ns() + ns;

		while (thread_cpu_ns() < end)
			for (uint64_t i = 0; i < 100000; i++)
				sink += (uint64_t)(v * (T)i);
		return v;
	}
};
} // namespace shapes

/* rustc would name mycrate::spin like this (legacy mangling, with hash) */
extern "C" void
rust_spin(uint64_t ns) __asm__("_ZN7mycrate4spin17h0123456789abcdefE");

extern "C" __attribute__((noinline)) void rust_spin(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i * 3;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	uint64_t end = thread_cpu_ns() + (uint64_t)(seconds * 1e9);
	shapes::Box<int> bi{ 3 };
	shapes::Box<double> bd{ 2.5 };

	while (thread_cpu_ns() < end) {
		bi.spin(3000000);
		bd.spin(3000000);
		rust_spin(3000000);
	}
	return 0;
}
