#!/bin/sh
# Install the Debian packages dcprof builds and tests with. The Makefile runs
# this only when pkg-config cannot find one of the libraries.
set -e
PACKAGES="pkg-config libelf-dev libdw-dev zlib1g-dev libzstd-dev libcmocka-dev libprotobuf-c-dev protobuf-c-compiler libcapstone-dev protobuf-compiler libiberty-dev libncurses-dev tmux libcurl4-openssl-dev"
# Every tool a test needs (`need` in tests/t fails under CI when one is
# missing): compilers for the workloads, python3 for the JSON checks,
# strace (t0770), readelf/objcopy/strip (binutils), protoc (above), gzip,
# setpriv/mount (util-linux), libc's separate debug files (t0460), tmux and
# man (the t08 tests drive a terminal and render the man page), openssl (a
# certificate for t0187's TLS receiver), python3-protobuf (the OTLP tests
# decode with protoc's Python of proto/otlp_profiles.proto).
PACKAGES="$PACKAGES gcc g++ make clang-format python3 python3-protobuf strace binutils gzip util-linux procps libc6-dbg tmux man-db groff-base openssl"
# Debian's own programs, built without frame pointers, for t0508
PACKAGES="$PACKAGES perl xz-utils sqlite3"
# CPython 3.11's debug info and gdb: t0521 checks the layout table
# (lib/record/bpf/python_layout.c) against it
PACKAGES="$PACKAGES python3.11-dbg gdb"
# libFuzzer for `make fuzz`.
PACKAGES="$PACKAGES clang libclang-rt-14-dev"
# The BPF record source: libbpf, bpftool (skeletons, vmlinux.h) and
# llvm-strip (from clang's llvm).
PACKAGES="$PACKAGES libbpf-dev bpftool llvm"
# The benches, which CI runs in their quick mode (make bench BENCH_QUICK=1):
# perf to compare with, bpftrace (the in-kernel peer), jq, GNU time (peak
# RSS).
PACKAGES="$PACKAGES linux-perf bpftrace jq time"
# The flame graph's browser test: Debian's chromium, driven from node.
PACKAGES="$PACKAGES chromium"
command -v node >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs"
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES npm"

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "dcprof: missing packages:$missing (run 'sudo $0')" >&2
	exit 1
fi
echo "dcprof: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
