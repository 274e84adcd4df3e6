# dcprof: plain Makefile with pkg-config. `make` builds, `make check` builds
# and runs every test, `make profile` profiles the whole system.

CC ?= cc
ifeq ($(origin CC),default)
CC := gcc
endif

LIB_PKGS := libelf libdw zlib libzstd
CMD_PKGS := libprotobuf-c
# annotate's disassembler, loaded when it disassembles (src/cmd/capstone_load.c)
ANNOTATE_PKGS := capstone
# --push: HTTP(S) to a profile store (src/push)
PUSH_PKGS := libcurl
# dcprof top's full-screen view: the wide-character ncurses when there
CURSES_PKG := $(shell pkg-config --exists ncursesw 2>/dev/null && echo ncursesw || echo ncurses)
PKGS := $(LIB_PKGS) $(CMD_PKGS) $(ANNOTATE_PKGS) $(PUSH_PKGS)
TEST_PKGS := cmocka
BUILD := build

# Installs the Debian -dev packages only when pkg-config lacks one of them.
# libiberty (the demangler) has no .pc file: its header stands for it.
DEPS_OK := $(shell pkg-config --exists $(PKGS) $(TEST_PKGS) 2>/dev/null && \
	test -e /usr/include/libiberty/demangle.h && \
	command -v protoc-c protoc chromium clang-format >/dev/null && echo yes)
ifneq ($(DEPS_OK),yes)
DEPS_STAMP := deps
endif

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CFLAGS ?= -O2 -g
BASE_CFLAGS = -std=gnu11 -I$(BUILD)/gen -DDCPROF_VERSION=\"0.1\" $(BPF_CFLAGS_DEF) $(WARN) $(CFLAGS) -Iinclude -Ilib/base \
	-D_GNU_SOURCE -fvisibility=hidden $(SAN_FLAGS)

ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

# The layers, lowest first (docs/ARCHITECTURE.md). Each folder is compiled
# with the include paths and pkg-config flags of itself and the layers below
# it only, so an include of a higher layer's header does not compile, and
# each layer's objects are linked together with -Wl,--no-undefined against
# only their own libraries and those of the layers below (the layer-check
# targets below; src/ against libdcprof.so, whose only exports are the
# public API), so a call into a higher layer, into the library's internals
# or into a library the layer must not use does not link.
#   base     lib/base      header-only helpers (hashing, the hash index,
#                          growing, sorting)
#   core     lib/core      records, processes, cookies, collection, aggregate,
#                          the profile file: zlib and zstd only
#   symbols  lib/symbols   ELF/DWARF symbolization: libelf, libdw, libiberty
#   unwind   lib/unwind    DWARF unwinding: libdw
#   record   lib/record    the recorder and its record sources
#   view     src/view      naming frames and interning keys for reading
#                          commands, through the public API only
#   export   src/export    pprof, OpenTelemetry profiles, folded, flame
#                          graphs
#   push     src/push      continuous recording's periods sent to a
#                          Pyroscope-compatible endpoint: libcurl
#   cmd      src/cmd       the subcommands
#
# The allowlist: the libraries each layer may use besides libc and the
# layers below it, as pkg-config names (-lNAME for a library without a .pc
# file). A layer includes the headers of these only (scripts/check-layers.sh
# knows whose header is whose) and its link check links against them only.
# LAYER_LOADS_NAME: libraries the layer opens with dlopen at run time, whose
# headers it includes and which are never linked.
LAYER_NAMES := base core symbols unwind record view export push cmd
LAYER_LIBS_base :=
LAYER_LIBS_core := zlib libzstd
LAYER_LIBS_symbols := libelf libdw -liberty
LAYER_LIBS_unwind := libelf libdw
# libbpf when the BPF record source is built (BPF_LIBS below)
LAYER_LIBS_record := libbpf
LAYER_LIBS_view :=
LAYER_LIBS_export := libprotobuf-c zlib
LAYER_LIBS_push :=
LAYER_LOADS_push := libcurl
LAYER_LIBS_cmd := $(CURSES_PKG)
LAYER_LOADS_cmd := capstone
# "NAME: LIBRARIES;" per layer, for scripts/check-layers.sh
LAYER_LIB_TABLE := $(foreach l,$(LAYER_NAMES),$(l): $(LAYER_LIBS_$(l)) $(LAYER_LOADS_$(l));)
# layer_ldlibs LIBRARIES: their link flags
layer_ldlibs = $(if $(filter-out -l%,$(1)),$(shell pkg-config --libs $(filter-out -l%,$(1)))) \
	$(filter -l%,$(1))

CORE_PKGS := $(LAYER_LIBS_core)
SYMBOLS_PKGS := $(filter-out -l%,$(LAYER_LIBS_symbols))
CORE_LIBS = $(call layer_ldlibs,$(LAYER_LIBS_core))
SYMBOLS_LIBS = $(call layer_ldlibs,$(LAYER_LIBS_symbols))
UNWIND_LIBS = $(call layer_ldlibs,$(LAYER_LIBS_unwind))
RECORD_LIBS = -lpthread $(BPF_LIBS)
EXPORT_LIBS = $(call layer_ldlibs,$(LAYER_LIBS_export))
CMD_LIBS = $(call layer_ldlibs,$(LAYER_LIBS_cmd))

LIB_INC_core := -Ilib/core
LIB_INC_symbols := $(LIB_INC_core) -Ilib/symbols
LIB_INC_unwind := $(LIB_INC_symbols) -Ilib/unwind
LIB_INC_record := $(LIB_INC_unwind) -Ilib/record
PKG_CFLAGS_core := $(shell pkg-config --cflags $(CORE_PKGS))
PKG_CFLAGS_symbols := $(PKG_CFLAGS_core) $(shell pkg-config --cflags $(SYMBOLS_PKGS))
PKG_CFLAGS_unwind := $(PKG_CFLAGS_symbols)
PKG_CFLAGS_record = $(PKG_CFLAGS_unwind) $(BPF_PKG_CFLAGS)

# ---- the BPF record source (lib/record/bpf) ---------------------------------
# Built when clang targets bpf, bpftool and libbpf (pkg-config) are there and
# the build machine has kernel BTF (VMLINUX_BTF): every
# lib/record/bpf/NAME.bpf.c becomes $(BUILD)/bpf/NAME.bpf.o (CO-RE, DWARF
# stripped) and its skeleton $(BUILD)/gen/NAME.skel.h, made before any
# lib/record/bpf/*.c is compiled; $(BUILD)/gen/vmlinux.h comes from
# VMLINUX_BTF. Otherwise everything is compiled with -DDCPROF_NO_BPF and
# -DDCPROF_NO_BPF_REASON="why", and the BPF backend says so at run time.
# NO_BPF=1 forces the latter.
BPF_CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),$(wildcard /usr/sbin/bpftool),/usr/sbin/bpftool)
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(shell uname -m)))
# On a clean machine (DEPS_OK not yes) as root, `deps` runs first and
# installs clang, bpftool and libbpf-dev: they are then taken as present,
# and their flags are looked up only when used.
ifneq ($(DEPS_OK),yes)
ifeq ($(shell id -u),0)
BPF_DEPS_LATER := yes
endif
endif
ifeq ($(NO_BPF),1)
BPF_MISSING := the build was made with NO_BPF=1
else ifeq ($(BPF_DEPS_LATER),yes)
BPF_MISSING := $(if $(wildcard $(VMLINUX_BTF)),,the build machine has no kernel BTF at $(VMLINUX_BTF))
else
BPF_MISSING := $(strip \
	$(if $(shell echo 'int x;' | $(BPF_CLANG) -target bpf -x c -c - -o /dev/null 2>/dev/null && echo ok),,$(BPF_CLANG) cannot target bpf) \
	$(if $(shell command -v $(BPFTOOL) 2>/dev/null),,bpftool is not installed) \
	$(if $(shell pkg-config --exists libbpf 2>/dev/null && echo ok),,libbpf (pkg-config libbpf) is not installed) \
	$(if $(wildcard $(VMLINUX_BTF)),,the build machine has no kernel BTF at $(VMLINUX_BTF)))
endif
BPF_SRCS := $(wildcard lib/record/bpf/*.bpf.c)
BPF_NAMES := $(BPF_SRCS:lib/record/bpf/%.bpf.c=%)
ifeq ($(BPF_MISSING),)
BPF_CFLAGS_DEF :=
BPF_PKG_CFLAGS = $(shell pkg-config --cflags libbpf)
BPF_LIBS = $(shell pkg-config --libs libbpf)
# The recorder's object links profile.bpf.c's programs with task_iter.bpf.c's
# (bpftool gen object): one object to load, so libbpf parses the kernel's
# BTF once for the sampling programs and the start-up walk. collect loads
# task_iter's alone.
# The recorder's is a light skeleton (bpftool gen skeleton -L): a loader
# program relocates and loads it in the kernel, against the kernel's own
# BTF, so that the recorder never reads and parses the kernel's 5 MiB of
# BTF (a third of a BPF recording's start). collect loads task_iter's
# with libbpf.
BPF_SKELS := $(BUILD)/gen/task_iter.skel.h $(BUILD)/gen/recorder.lskel.h
else
BPF_CFLAGS_DEF := -DDCPROF_NO_BPF '-DDCPROF_NO_BPF_REASON="$(subst ','\'',$(BPF_MISSING))"'
BPF_PKG_CFLAGS :=
BPF_LIBS :=
BPF_SKELS :=
endif

LAYERS := core symbols unwind record
$(foreach l,$(LAYERS),$(eval $(l)_SRCS := $(filter-out %.bpf.c,$(wildcard lib/$(l)/*.c lib/$(l)/*/*.c))))
$(foreach l,$(LAYERS),$(eval $(l)_OBJS := $$($(l)_SRCS:%.c=$$(BUILD)/%.o)))
$(foreach l,$(LAYERS),$(eval $$($(l)_OBJS): LAYER_CFLAGS = $$(LIB_INC_$(l)) $$(PKG_CFLAGS_$(l))))

VIEW_SRCS := $(wildcard src/view/*.c)
EXPORT_SRCS := $(wildcard src/export/*.c)
PUSH_SRCS := $(wildcard src/push/*.c)
CMD_ONLY_SRCS := src/dcprof.c $(wildcard src/cmd/*.c)
VIEW_OBJS := $(VIEW_SRCS:%.c=$(BUILD)/%.o)
EXPORT_OBJS := $(EXPORT_SRCS:%.c=$(BUILD)/%.o)
PUSH_OBJS := $(PUSH_SRCS:%.c=$(BUILD)/%.o)
$(VIEW_OBJS): LAYER_CFLAGS = -Isrc/view
$(EXPORT_OBJS): LAYER_CFLAGS = -Isrc/view -Isrc/export \
	$(shell pkg-config --cflags $(LAYER_LIBS_export))
# the soname that the installed libcurl.so names, for dlopen
CURL_SONAME = $(shell objdump -p $$(pkg-config --variable=libdir libcurl)/libcurl.so 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(PUSH_OBJS): LAYER_CFLAGS = -Isrc/view -Isrc/export -Isrc/push \
	$(shell pkg-config --cflags $(LAYER_LOADS_push)) \
	$(if $(CURL_SONAME),-DDCPROF_CURL_SONAME=\"$(CURL_SONAME)\")
# the soname that the installed libcapstone.so names, for dlopen
CAPSTONE_SONAME = $(shell objdump -p $$(pkg-config --variable=libdir capstone)/libcapstone.so 2>/dev/null | \
	awk '$$1 == "SONAME" { print $$2 }')
$(CMD_ONLY_SRCS:%.c=$(BUILD)/%.o): LAYER_CFLAGS = -Isrc/view -Isrc/export -Isrc/push -Isrc/cmd \
	$(shell pkg-config --cflags $(filter-out -l%,$(LAYER_LIBS_cmd)) $(LAYER_LOADS_cmd)) \
	$(if $(CAPSTONE_SONAME),-DDCPROF_CAPSTONE_SONAME=\"$(CAPSTONE_SONAME)\")

# Unit tests and fuzz targets reach into every layer's internal headers.
ALL_LIB_INC = $(LIB_INC_record) $(shell pkg-config --cflags $(PKGS)) $(BPF_PKG_CFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(ALL_LIB_INC)
LIB_LIBS = $(SYMBOLS_LIBS) $(CORE_LIBS) $(RECORD_LIBS)
# libcurl and capstone are not linked: --push and annotate load them
LIBS = $(shell pkg-config --libs $(LIB_PKGS) $(CMD_PKGS)) -liberty -lpthread $(BPF_LIBS)
TEST_LIBS = $(shell pkg-config --libs $(TEST_PKGS))

LIB_SRCS := $(foreach l,$(LAYERS),$($(l)_SRCS))
CMD_SRCS := $(CMD_ONLY_SRCS) $(VIEW_SRCS) $(EXPORT_SRCS) $(PUSH_SRCS)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
PB_OBJS := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.o,$(wildcard proto/*.proto))
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o) $(PB_OBJS) \
	$(BUILD)/gen/flamegraph_assets.o
FG_ASSETS := $(addprefix src/export/flamegraph.,html js css)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# base is header-only: nothing of its own to link
LAYER_CHECKS := $(patsubst %,$(BUILD)/layer-check/%.so,$(filter-out base,$(LAYER_NAMES)))

.PHONY: all deps check check-build profile bench clean format check-format fuzz check-layers \
	layer-libs

all: $(BUILD)/dcprof $(BUILD)/libdcprof.so $(LAYER_CHECKS) $(BUILD)/libdcprof-core.a

deps:
	scripts/install-deps.sh

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(LAYER_CFLAGS) -fPIC -MMD -MP -c $< -o $@

# Each layer's objects with the layers below it and their libraries only
# (src/: the library through libdcprof.so, the public API); a link that
# fails names the layer and the rule.
define layer_link
@mkdir -p $(dir $@)
$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ $(2) || { echo \
	"layer-check: $(1) calls a function that neither it, the layers below it nor their libraries ($(strip $(3))) define: see the undefined references above" >&2; \
	exit 1; }
endef
$(BUILD)/layer-check/core.so: $(core_OBJS)
	$(call layer_link,lib/core,$(CORE_LIBS),$(LAYER_LIBS_core))
$(BUILD)/layer-check/symbols.so: $(core_OBJS) $(symbols_OBJS)
	$(call layer_link,lib/symbols,$(SYMBOLS_LIBS) $(CORE_LIBS),\
		$(LAYER_LIBS_symbols) $(LAYER_LIBS_core))
$(BUILD)/layer-check/unwind.so: $(core_OBJS) $(symbols_OBJS) $(unwind_OBJS)
	$(call layer_link,lib/unwind,$(UNWIND_LIBS) $(SYMBOLS_LIBS) $(CORE_LIBS),\
		$(sort $(LAYER_LIBS_unwind) $(LAYER_LIBS_symbols) $(LAYER_LIBS_core)))
$(BUILD)/layer-check/record.so: $(LIB_OBJS)
	$(call layer_link,lib/record,$(LIB_LIBS),$(if $(BPF_LIBS),libbpf) $(sort $(LAYER_LIBS_unwind) \
		$(LAYER_LIBS_symbols) $(LAYER_LIBS_core)))
$(BUILD)/layer-check/view.so: $(VIEW_OBJS) $(BUILD)/libdcprof.so
	$(call layer_link,src/view,,the public API)
$(BUILD)/layer-check/export.so: $(VIEW_OBJS) $(EXPORT_OBJS) $(PB_OBJS) \
		$(BUILD)/gen/flamegraph_assets.o $(BUILD)/libdcprof.so
	$(call layer_link,src/export,$(EXPORT_LIBS),the public API $(LAYER_LIBS_export))
# libcurl is loaded at run time, never linked (src/push/curl_load.c)
$(BUILD)/layer-check/push.so: $(VIEW_OBJS) $(EXPORT_OBJS) $(PUSH_OBJS) $(PB_OBJS) \
		$(BUILD)/gen/flamegraph_assets.o $(BUILD)/libdcprof.so
	$(call layer_link,src/push,$(EXPORT_LIBS),the public API $(LAYER_LIBS_export))
$(BUILD)/layer-check/cmd.so: $(CMD_OBJS) $(BUILD)/libdcprof.so
	$(call layer_link,src/cmd,$(EXPORT_LIBS) $(CMD_LIBS),\
		the public API $(LAYER_LIBS_export) $(LAYER_LIBS_cmd))

check-layers: $(LAYER_CHECKS)
	LAYER_LIB_TABLE='$(LAYER_LIB_TABLE)' scripts/check-layers.sh

# The allowlist, for scripts/check-layers.sh run alone.
layer-libs:
	@echo '$(LAYER_LIB_TABLE)'

# The schemas of the exports (pprof's, OpenTelemetry profiles'), compiled
# by protoc-c; their output is not ours to lint.
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(BUILD)/gen $<

$(PB_OBJS): $(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(CC) -std=gnu11 $(CFLAGS) $(SAN_FLAGS) -fPIC -I$(BUILD)/gen $(shell pkg-config --cflags libprotobuf-c) -c $< -o $@

$(CMD_OBJS): | $(PB_OBJS:.o=.h)

# The BPF programs (see BPF_MISSING above): vmlinux.h, objects, skeletons.
$(BUILD)/gen/vmlinux.h: | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/gen
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c >$@.tmp
	mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: lib/record/bpf/%.bpf.c $(BUILD)/gen/vmlinux.h
	@mkdir -p $(BUILD)/bpf
	$(BPF_CLANG) -O2 -g -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
		-I$(BUILD)/gen -Ilib/record/bpf -Ilib/unwind $(BPF_PKG_CFLAGS) \
		-MMD -MP -MT $@ -MF $(@:.o=.d) \
		-c $< -o $@.tmp
	$(LLVM_STRIP) -g $@.tmp
	mv $@.tmp $@

$(BUILD)/bpf/recorder.bpf.o: $(BUILD)/bpf/profile.bpf.o $(BUILD)/bpf/tasks.bpf.o \
		$(BUILD)/bpf/task_iter.bpf.o
	$(BPFTOOL) gen object $@.tmp $^
	mv $@.tmp $@

$(BUILD)/gen/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf >$@.tmp
	mv $@.tmp $@

$(BUILD)/gen/%.lskel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton -L $< name $(subst -,_,$*)_bpf >$@.tmp
	mv $@.tmp $@

# lib/record/bpf/*.c include the skeletons.
$(filter $(BUILD)/lib/record/bpf/%,$(record_OBJS)): $(BPF_SKELS)

# The flame graph page's HTML, script and style, built into the binary.
$(BUILD)/gen/flamegraph_assets.c: scripts/embed.sh $(FG_ASSETS)
	@mkdir -p $(BUILD)/gen
	scripts/embed.sh $@ fg_asset_ $(FG_ASSETS)

$(BUILD)/gen/flamegraph_assets.o: $(BUILD)/gen/flamegraph_assets.c
	$(CC) -std=gnu11 $(CFLAGS) $(SAN_FLAGS) -fPIC -c $< -o $@

$(BUILD)/libdcprof-core.a: $(core_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libdcprof.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The shared library: soname libdcprof.so.0, only the header's functions
# exported, at the versions of lib/libdcprof.map; the links .so.0 (what
# programs load) and .so (what -ldcprof finds) beside it.
SOVERSION := 0
LIBVERSION := 0.1.0
$(BUILD)/libdcprof.so.$(LIBVERSION): $(LIB_OBJS) lib/libdcprof.map
	$(CC) -shared -Wl,-soname,libdcprof.so.$(SOVERSION) \
		-Wl,--version-script=lib/libdcprof.map -Wl,--no-undefined \
		$(LDFLAGS) -o $@ $(LIB_OBJS) $(LIB_LIBS)

$(BUILD)/libdcprof.so.$(SOVERSION): $(BUILD)/libdcprof.so.$(LIBVERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/libdcprof.so: $(BUILD)/libdcprof.so.$(SOVERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/dcprof: $(CMD_OBJS) $(BUILD)/libdcprof.a
	$(CC) $(LDFLAGS) -o $@ $(CMD_OBJS) $(BUILD)/libdcprof.a $(LIBS) \
		$(shell pkg-config --libs $(CURSES_PKG))

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libdcprof.a | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=default -o $@ $< $(BUILD)/libdcprof.a $(LDFLAGS) $(LIBS) $(TEST_LIBS)

# everything `make check` runs, built apart so that it can be built with
# -j while the tests, which time CPUs, run alone
check-build: all check-layers check-format $(UNIT_BINS)

check: check-build
	BUILD=$(abspath $(BUILD)) tests/run.sh $(UNIT_BINS)

DURATION ?= 10
# the top rows: a whole system has hundreds of functions
profile: all
	$(BUILD)/dcprof record -a --duration $(DURATION) -o $(BUILD)/profile.data
	$(BUILD)/dcprof report -i $(BUILD)/profile.data --limit 25
	@echo "make profile: the top 25 rows; all of them: $(BUILD)/dcprof report -i $(BUILD)/profile.data"

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

# Every C source of the project, BPF programs, tests and benches included.
FORMAT_FILES := $(wildcard include/dcprof/*.h lib/*/*.[ch] lib/*/*/*.[ch] \
	src/*.[ch] src/*/*.[ch] tests/unit/*.c tests/fuzz/*.c \
	tests/workloads/*.c tests/workloads/*.cc bench/workloads/*.c)

format:
	clang-format -i $(FORMAT_FILES)

# The style is the repository's .clang-format; a change that breaks it
# fails the build of the checks, so CI catches it.
check-format:
	@echo "clang-format --dry-run -Werror ($(words $(FORMAT_FILES)) files)"
	@clang-format --dry-run -Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(BPF_NAMES:%=$(BUILD)/bpf/%.bpf.d)

# ---- installing ------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=staging]: the command, the
# library (shared and static), its header and pkg-config file, the man page,
# bash completion and the systemd unit of continuous profiling
# (dist/dcprof.service.in, with BINDIR filled in). make uninstall removes
# exactly those.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
# the version of the pkg-config file (DCPROF_VERSION above)
PC_VERSION := 0.1

.PHONY: install uninstall

install: $(BUILD)/dcprof $(BUILD)/libdcprof.so $(BUILD)/libdcprof.a
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/dcprof $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 $(BUILD)/dcprof $(DESTDIR)$(BINDIR)/dcprof
	$(INSTALL) -m 755 $(BUILD)/libdcprof.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libdcprof.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/libdcprof.so.$(SOVERSION)
	ln -sf libdcprof.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdcprof.so
	$(INSTALL) -m 644 $(BUILD)/libdcprof.a $(DESTDIR)$(LIBDIR)/libdcprof.a
	$(INSTALL) -m 644 include/dcprof/*.h $(DESTDIR)$(INCLUDEDIR)/dcprof/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(PC_VERSION)|g' -e 's|@BPF_REQUIRES@|$(if $(BPF_LIBS),libbpf,)|g' \
		dcprof.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/dcprof.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/dcprof.pc
	$(INSTALL) -m 644 docs/man/dcprof.1 $(DESTDIR)$(MANDIR)/man1/dcprof.1
	$(INSTALL) -m 644 completion/dcprof.bash $(DESTDIR)$(BASHCOMPDIR)/dcprof
	sed -e 's|@BINDIR@|$(BINDIR)|g' dist/dcprof.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/dcprof.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/dcprof.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/dcprof \
		$(DESTDIR)$(LIBDIR)/libdcprof.so.$(LIBVERSION) \
		$(DESTDIR)$(LIBDIR)/libdcprof.so.$(SOVERSION) \
		$(DESTDIR)$(LIBDIR)/libdcprof.so $(DESTDIR)$(LIBDIR)/libdcprof.a \
		$(DESTDIR)$(INCLUDEDIR)/dcprof/dcprof.h \
		$(DESTDIR)$(INCLUDEDIR)/dcprof/collection.h \
		$(DESTDIR)$(INCLUDEDIR)/dcprof/code.h \
		$(DESTDIR)$(PKGCONFIGDIR)/dcprof.pc \
		$(DESTDIR)$(MANDIR)/man1/dcprof.1 \
		$(DESTDIR)$(BASHCOMPDIR)/dcprof \
		$(DESTDIR)$(SYSTEMDUNITDIR)/dcprof.service
	rmdir $(DESTDIR)$(INCLUDEDIR)/dcprof 2>/dev/null || true
