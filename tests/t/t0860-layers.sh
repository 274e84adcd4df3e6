#!/bin/bash
# Every rule of the layer check bites: a copy of the tree and of its build
# gets one file that breaks one rule, and the check fails with that rule's
# message; the copy without it passes, before and after. The include and
# file rules are run through scripts/check-layers.sh; the link rules, and
# one include rule end to end, through `make check-layers` (part of
# `make check-build`).
. "$(dirname "$0")/test-lib.sh"
need make gcc nm

[ -e "$BUILD/libdcprof.so" ] && [ -e "$BUILD/libdcprof.a" ] ||
	die "no library built in $BUILD (make first)"

COPY=$TMP/tree
mkdir "$COPY" || die "cannot make $COPY"
# the sources and the build, times kept: make rebuilds only what a plant adds
cp -a "$TOP/Makefile" "$TOP/include" "$TOP/lib" "$TOP/src" "$TOP/scripts" \
	"$TOP/proto" "$COPY/" || die "cannot copy the tree"
cp -a "$BUILD" "$COPY/build" || die "cannot copy the build"

# make in the copy, whatever make runs this test with
copy_make() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$COPY" --no-print-directory \
		BUILD=build "${SAN[@]}" "$@"
}
SAN=()
# a sanitized build's objects link with the sanitizers
nm -D "$BUILD/libdcprof.so" | grep -q __asan_init && SAN=(SANITIZE=1)

# the clean copy passes both
copy_make check-layers >"$TMP/clean.out" 2>&1 ||
	die "make check-layers fails on the clean copy: $(tail -5 "$TMP/clean.out")"
grep -q 'check-layers: every include' "$TMP/clean.out" ||
	die "make check-layers did not run scripts/check-layers.sh: $(tail -3 "$TMP/clean.out")"

# bites HOW FILE MESSAGE [LINE...]: FILE (in the copy: the opening comment
# $OPENING, then the LINEs) makes HOW ("script" or "make") fail with MESSAGE
# (grep -F), then goes again.
bites() {
	local how=$1 file=$2 want=$3 rc
	shift 3
	printf '%s\n' ${OPENING:+"$OPENING"} "$@" >"$COPY/$file" ||
		die "cannot plant $file"
	if [ "$how" = script ]; then
		LAYER_LIB_TABLE=$(copy_make -s layer-libs) "$COPY/scripts/check-layers.sh" \
			>"$TMP/out" 2>&1
	else
		copy_make check-layers >"$TMP/out" 2>&1
	fi
	rc=$?
	rm -f "$COPY/$file"
	[ "$rc" -ne 0 ] || die "$file passed the $how check: $(tail -3 "$TMP/out")"
	grep -qF -- "$want" "$TMP/out" ||
		die "$file failed the $how check without '$want': $(tail -5 "$TMP/out")"
	echo "$TEST_NAME: $file: $want"
}

OPENING='/* A file that breaks one layer rule (tests/t/t0860-layers.sh). */'
# a header of lib/record, which lib/core must not include by any path
REC_H=$(cd "$COPY/lib/record" && ls -- *.h | head -1)
[ -n "$REC_H" ] || die "no header in lib/record to include"
# a function of the library that libdcprof.so does not export
INTERNAL=$(comm -23 \
	<(nm -g --defined-only "$BUILD/libdcprof.a" 2>/dev/null |
		awk '$2 == "T" && $3 ~ /^dcp_/ { print $3 }' | sort -u) \
	<(nm -D --defined-only "$BUILD/libdcprof.so" | awk '{ sub(/@.*/, "", $3); print $3 }' |
		sort -u) | head -1)
[ -n "$INTERNAL" ] || die "no internal function in $BUILD/libdcprof.a"
ALLOWLIST="which is not on the allowlist of layer"

# ---- includes: paths, layers ----------------------------------------------
bites script lib/core/layer_mutant.c \
	"includes \"../record/$REC_H\": a path with .. or an absolute path" \
	"#include \"../record/$REC_H\""
bites script src/view/layer_mutant.c \
	'includes "/usr/include/stdio.h": a path with .. or an absolute path' \
	'#include "/usr/include/stdio.h"'
bites script lib/core/layer_mutant.c \
	"includes \"$REC_H\", which is not in its layer or one below it" \
	"#include \"$REC_H\""
bites script src/cmd/layer_mutant.c 'has an include the check cannot read' \
	'#define HEADER <stdio.h>' '#include HEADER'

# ---- includes: each layer's allowlist of system headers -------------------
bites script lib/core/layer_mutant.c "includes <bpf/libbpf.h>, $ALLOWLIST core" \
	'#  include <bpf/libbpf.h>'
bites script src/view/layer_mutant.c "includes <zlib.h>, $ALLOWLIST view" \
	'#include <zlib.h>'
bites script src/push/layer_mutant.c \
	"includes <capstone/capstone.h>, $ALLOWLIST push" '#include <capstone/capstone.h>'
bites script lib/record/bpf/layer_mutant.bpf.c "includes <stdio.h>, $ALLOWLIST bpf" \
	'#include <stdio.h>'
bites script lib/base/layer_mutant.h "includes <linux/perf_event.h>, $ALLOWLIST base" \
	'#include <linux/perf_event.h>'
bites script src/cmd/layer_mutant.c "includes <openssl/ssl.h>, $ALLOWLIST cmd" \
	'#include <openssl/ssl.h>'
# end to end: the header compiles, every layer links, the script refuses it
bites make lib/core/layer_mutant.c "includes <elfutils/libdwfl.h>, $ALLOWLIST core" \
	'#include <elfutils/libdwfl.h>'

# ---- files ----------------------------------------------------------------
blank=()
for ((i = 0; i < 800; i++)); do blank+=(""); done
bites script lib/core/layer_mutant.c 'lib/core/layer_mutant.c has 801 lines' \
	"${blank[@]}"
OPENING='' bites script src/export/layer_mutant.c \
	'src/export/layer_mutant.c does not open with a comment' 'int layer_mutant;'

# ---- links: each layer's calls --------------------------------------------
# (the function declared by hand: the file compiles without the header the
# include rules refuse)
for call in lib/core:elf_version lib/symbols:cs_open lib/unwind:dcp_recorder_new \
	lib/record:cs_open "src/view:$INTERNAL" src/export:cs_open \
	src/push:curl_easy_init "src/cmd:$INTERNAL"; do
	dir=${call%%:*} fn=${call#*:}
	bites make "$dir/layer_mutant.c" \
		"layer-check: $dir calls a function that neither it, the layers below it nor their libraries" \
		'void layer_mutant(void);' "void $fn(void);" \
		"void layer_mutant(void) { $fn(); }"
done

# and without the plants the copy passes again
copy_make check-layers >"$TMP/clean.out" 2>&1 ||
	die "make check-layers fails on the copy once the plants are gone: $(tail -5 "$TMP/clean.out")"
pass
