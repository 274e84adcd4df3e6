# dcprof: plain Makefile with pkg-config. `make` builds, `make check` builds
# and runs every test, `make profile` profiles the whole system.

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

LIB_PKGS := libelf libdw zlib libzstd
CMD_PKGS := libprotobuf-c capstone
PKGS := $(LIB_PKGS) $(CMD_PKGS)
TEST_PKGS := cmocka
BUILD := build

# Installs the Debian -dev packages only when pkg-config lacks one of them.
# libiberty (the demangler) has no .pc file: its header stands for it.
DEPS_OK := $(shell pkg-config --exists $(PKGS) $(TEST_PKGS) 2>/dev/null && \
	test -e /usr/include/libiberty/demangle.h && \
	command -v protoc-c protoc chromium >/dev/null && echo yes)
ifneq ($(DEPS_OK),yes)
DEPS_STAMP := deps
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=gnu11 -I$(BUILD)/gen -DDCPROF_VERSION=\"0.1\" $(WARN) $(CFLAGS) -Iinclude -Ilib -D_GNU_SOURCE \
	-fvisibility=hidden $(SAN_FLAGS) $(shell pkg-config --cflags $(PKGS))
LIB_LIBS = $(shell pkg-config --libs $(LIB_PKGS)) -liberty -lpthread
LIBS = $(shell pkg-config --libs $(PKGS)) -liberty -lpthread
TEST_LIBS = $(shell pkg-config --libs $(TEST_PKGS))

ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRCS := $(wildcard lib/*.c)
CMD_SRCS := src/dcprof.c $(wildcard src/cmd/*.c) $(wildcard src/export/*.c)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/profile.pb-c.o \
	$(BUILD)/gen/flamegraph_assets.o
FG_ASSETS := $(addprefix src/export/flamegraph.,html js css)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps check unit-check t-check profile bench clean format fuzz

all: $(BUILD)/dcprof $(BUILD)/libdcprof.so

deps:
	scripts/install-deps.sh

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -MMD -MP -c $< -o $@

# pprof's schema, compiled by protoc-c; its output is not ours to lint.
$(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h: proto/profile.proto | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(BUILD)/gen proto/profile.proto

$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c
	$(CC) -std=gnu11 $(CFLAGS) $(SAN_FLAGS) -fPIC -I$(BUILD)/gen $(shell pkg-config --cflags libprotobuf-c) -c $< -o $@

$(CMD_OBJS): | $(BUILD)/gen/profile.pb-c.h

# The flame graph page's HTML, script and style, built into the binary.
$(BUILD)/gen/flamegraph_assets.c: scripts/embed.sh $(FG_ASSETS)
	@mkdir -p $(BUILD)/gen
	scripts/embed.sh $@ fg_asset_ $(FG_ASSETS)

$(BUILD)/gen/flamegraph_assets.o: $(BUILD)/gen/flamegraph_assets.c
	$(CC) -std=gnu11 $(CFLAGS) $(SAN_FLAGS) -fPIC -c $< -o $@

$(BUILD)/libdcprof.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libdcprof.so: $(LIB_OBJS)
	$(CC) -shared $(LDFLAGS) -o $@ $^ $(LIB_LIBS)

$(BUILD)/dcprof: $(CMD_OBJS) $(BUILD)/libdcprof.a
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/libdcprof.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libdcprof.a | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< $(BUILD)/libdcprof.a $(LDFLAGS) $(LIBS) $(TEST_LIBS)

check: all $(UNIT_BINS)
	BUILD=$(abspath $(BUILD)) tests/run.sh $(UNIT_BINS)

DURATION ?= 10
profile: all
	$(BUILD)/dcprof record -a --duration $(DURATION) -o $(BUILD)/profile.data
	$(BUILD)/dcprof report -i $(BUILD)/profile.data

bench: all
	bench/run.sh

# libFuzzer targets (tests/fuzz/fuzz_*.c), built by clang into build-fuzz/
# with the library instrumented, then each run for FUZZ_SECONDS.
FUZZ_BUILD := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang SANITIZE= \
		SAN_FLAGS='-fsanitize=fuzzer-no-link $(FUZZ_SAN)' $(FUZZ_BINS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BUILD)/fuzz

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libdcprof.a | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(BUILD)/libdcprof.a $(LIB_LIBS)

format:
	clang-format -i include/dcprof/*.h lib/*.[ch] src/*.[ch] src/cmd/*.[ch] src/export/*.[ch] tests/unit/*.c tests/workloads/*.c

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d)
