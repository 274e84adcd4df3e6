#!/bin/bash
# libdcprof's ABI: libdcprof.so is a link to libdcprof.so.0, whose soname
# it is; its exported (dynamic, defined) symbols are exactly the functions
# include/dcprof/dcprof.h and the header it includes (code.h) declare,
# every one of them with DCPROF_API and
# at version DCPROF_0.1, and exactly those lib/libdcprof.map lists. Then a
# program linked with it checks the conventions that keep the ABI: sz too
# small fails with -EINVAL and errno; a struct from a newer header (larger
# sz) gets the fields the library knows and zeros after them; options with
# unknown fields set are refused; errno on every failure; the collection
# decoded through the public decoder.
. "$(dirname "$0")/test-lib.sh"
need gcc nm readelf awk

HDRS=("$TOP"/include/dcprof/*.h)
MAP=$TOP/lib/libdcprof.map
SO=$BUILD/libdcprof.so

[ -L "$SO" ] || die "'$SO' is not a symbolic link"
[ "$(readlink "$SO")" = libdcprof.so.0 ] ||
	die "libdcprof.so links to '$(readlink "$SO")', not libdcprof.so.0"
[ -L "$BUILD/libdcprof.so.0" ] && [ -f "$BUILD/libdcprof.so.0" ] ||
	die "libdcprof.so.0 is not a link to the library"
soname=$(readelf -d "$SO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libdcprof.so.0 ] || die "soname is '$soname', not libdcprof.so.0"

# The header's statements (comments out, joined, split at ; { }) that
# declare a function: those with DCPROF_API, and any other that has a
# dcp_*( declarator outside a typedef (there must be none).
statements() {
	cat "${HDRS[@]}" | tr '\n' ' ' | sed 's@/\*\([^*]\|\*[^/]\)*\*/@ @g' | tr ';{}' '\n\n\n'
}
statements | grep 'DCPROF_API' | grep -v '#define' |
	grep -o 'dcp_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:](]//g' |
	LC_ALL=C sort >"$TMP/header"
statements | grep -v 'DCPROF_API\|typedef\|#define' |
	grep 'dcp_[a-z0-9_]*[[:space:]]*(' >"$TMP/unmarked" &&
	die "functions declared without DCPROF_API: $(cat "$TMP/unmarked")"
[ "$(wc -l <"$TMP/header")" -ge 20 ] || die "found only $(wc -l <"$TMP/header") functions in the header"
[ -z "$(uniq -d "$TMP/header")" ] || die "a function declared twice: $(uniq -d "$TMP/header")"

# Defined dynamic symbols, without the version nodes (absolute, type A).
nm -D --defined-only "$SO" | awk '$2 != "A" { print $3 }' |
	sed 's/@.*//' | LC_ALL=C sort -u >"$TMP/exported"
diff -u "$TMP/header" "$TMP/exported" >"$TMP/diff" ||
	die "exported symbols differ from the header's functions (- header, + libdcprof.so):
$(cat "$TMP/diff")"
nm -D --defined-only --with-symbol-versions "$SO" |
	awk '$2 != "A" && $3 !~ /@@DCPROF_0\.1$/ { print $3 }' >"$TMP/unversioned"
[ ! -s "$TMP/unversioned" ] || die "symbols not at DCPROF_0.1: $(cat "$TMP/unversioned")"
sed -n 's/^[[:space:]]*\(dcp_[a-z0-9_]*\);.*/\1/p' "$MAP" | LC_ALL=C sort >"$TMP/map"
diff -u "$TMP/header" "$TMP/map" >"$TMP/diff" ||
	die "lib/libdcprof.map differs from the header's functions (- header, + map):
$(cat "$TMP/diff")"
echo "$TEST_NAME: $(wc -l <"$TMP/header") functions exported, all at DCPROF_0.1"

# The conventions, through the shared library, on a profile of the corpus.
cat >"$TMP/abi.c" <<'C'
#include <dcprof/dcprof.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(c)                                                         \
	do {                                                             \
		if (!(c)) {                                              \
			fprintf(stderr, "line %d: %s (errno %d: %s)\n", \
				__LINE__, #c, errno, dcp_last_error());  \
			exit(1);                                         \
		}                                                        \
	} while (0)

/* A struct as a newer header would have it: 16 bytes more. */
struct row_v2 {
	struct dcp_sample_row row;
	unsigned char more[16];
};

int main(int argc, char **argv)
{
	struct dcp_profile_open_opts bad_opts[2];
	struct dcp_code_opts copts[2];
	struct dcp_sample_row row = { .sz = sizeof(row) }, r0 = { 0 };
	struct row_v2 v2;
	struct dcp_expanded_frame ex[4][2]; /* entries twice as far apart */
	struct dcp_profile_stats ps = { .sz = 4 };
	struct dcp_cookie_table *t;
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	struct dcp_collection_opts co = { .sz = sizeof(co) };
	struct dcp_collection *c;
	struct dcp_profile *p;
	pid_t self = getpid();
	char buf[4096];
	ssize_t n;
	int ret, maps = 0;

	if (argc != 2)
		return 2;

	/* options with a field this library does not know set: refused */
	memset(bad_opts, 0, sizeof(bad_opts));
	bad_opts[0].sz = sizeof(bad_opts);
	((char *)bad_opts)[sizeof(bad_opts[0]) + 3] = 1;
	errno = 0;
	CHECK(!dcp_profile_open_file(argv[1], bad_opts));
	CHECK(errno == EINVAL);
	/* unknown fields all zero: accepted */
	((char *)bad_opts)[sizeof(bad_opts[0]) + 3] = 0;
	p = dcp_profile_open_file(argv[1], bad_opts);
	CHECK(p);
	dcp_profile_close(p);

	p = dcp_profile_open_file(argv[1], NULL);
	CHECK(p);
	CHECK(dcp_profile_nr_rows(p) > 0);
	CHECK(dcp_profile_get_stats(p)->sz == sizeof(struct dcp_profile_stats));
	CHECK(dcp_profile_get_meta(p)->version > 0);

	/* sz left at 0: -EINVAL and errno */
	errno = 0;
	CHECK(dcp_profile_row(p, 0, &r0) == -EINVAL && errno == EINVAL);
	CHECK(strstr(dcp_last_error(), "sz"));
	/* past the end: -ERANGE and errno */
	errno = 0;
	CHECK(dcp_profile_row(p, dcp_profile_nr_rows(p), &row) == -ERANGE);
	CHECK(errno == ERANGE);

	/* a newer caller's struct: the known fields, zeros after them */
	CHECK(dcp_profile_row(p, 0, &row) == 0);
	memset(&v2, 0xaa, sizeof(v2));
	v2.row.sz = sizeof(v2);
	CHECK(dcp_profile_row(p, 0, &v2.row) == 0);
	CHECK(v2.row.sz == sizeof(v2));
	CHECK(v2.row.count == row.count && v2.row.pid == row.pid);
	CHECK(v2.row.frames == row.frames && v2.row.comm == row.comm);
	for (size_t i = 0; i < sizeof(v2.more); i++)
		CHECK(v2.more[i] == 0);

	/* frame expansion with the entries out[0].sz bytes apart */
	memset(ex, 0xaa, sizeof(ex));
	ex[0][0].sz = sizeof(ex[0]);
	for (size_t i = 0; i < dcp_profile_nr_rows(p); i++) {
		CHECK(dcp_profile_row(p, i, &row) == 0);
		if (!row.nr_frames)
			continue;
		ret = dcp_profile_frame_expand(p, &row.frames[0], &ex[0][0], 4);
		CHECK(ret >= 1);
		for (int k = 0; k < ret && k < 4; k++)
			CHECK(ex[k][0].sz == sizeof(ex[0]));
		/* the second half of each entry: zeroed as unknown fields */
		CHECK(ex[0][1].name == NULL && ex[0][1].line == 0);
		break;
	}
	ex[0][0].sz = 1;
	errno = 0;
	CHECK(dcp_profile_frame_expand(p, &row.frames[0], &ex[0][0], 4) ==
	      -EINVAL);
	CHECK(errno == EINVAL);

	/* code.h, through dcprof.h: options with unknown fields set
	 * refused, a cookie the profile lacks too, each with errno */
	memset(copts, 0, sizeof(copts));
	copts[0].sz = sizeof(copts);
	((char *)copts)[sizeof(copts[0]) + 1] = 1;
	errno = 0;
	CHECK(!dcp_profile_code_open(p, 1, 0, 16, copts) && errno == EINVAL);
	errno = 0;
	CHECK(!dcp_profile_code_open(p, 1u << 30, 0, 16, NULL) &&
	      errno == ENOENT);
	dcp_profile_close(p);

	/* cookie tables and the collection through the public API only */
	t = dcp_cookie_table_new();
	CHECK(t && dcp_cookie_table_size(t) == 1);
	CHECK(dcp_cookie_table_lookup(t, 0, &ci) == 0);
	CHECK(ci.kind == DCP_COOKIE_KIND_UNKNOWN && ci.sz == sizeof(ci));
	errno = 0;
	CHECK(dcp_cookie_table_lookup(t, 7, &ci) == -ENOENT && errno == ENOENT);
	co.pids = &self;
	co.nr_pids = 1;
	co.cookies = t;
	c = dcp_collection_open(DCP_COLLECTION_MAPS, &co);
	CHECK(c);
	while ((n = dcp_collection_read(c, buf, sizeof(buf), NULL)) > 0) {
		for (ssize_t pos = 0; pos < n; pos += ret) {
			struct dcp_collection_record rec = { .sz = sizeof(rec) };

			ret = dcp_collection_record_decode(buf + pos, n - pos,
							   t, &rec);
			CHECK(ret > 0 && rec.size == (uint32_t)ret);
			CHECK(rec.type == DCP_RECORD_MMAP2 && rec.injected);
			CHECK(rec.pid == (uint32_t)self && rec.cookie > 0);
			CHECK(rec.cookie < dcp_cookie_table_size(t));
			maps++;
		}
	}
	CHECK(n == 0 && maps > 0);
	CHECK(dcp_collection_get_stats(c)->maps == (uint64_t)maps);
	dcp_collection_close(c);
	dcp_cookie_table_free(t);

	/* the recorder checks the caller's stats struct first */
	errno = 0;
	CHECK(dcp_recorder_finish(NULL, &ps) == -EINVAL && errno == EINVAL);
	printf("%d maps decoded\n", maps);
	return 0;
}
C
gcc -std=gnu11 -Wall -Wextra -Werror $SAN_CFLAGS -I"$TOP/include" -o "$TMP/abi" \
	"$TMP/abi.c" -L"$BUILD" -ldcprof -Wl,-rpath,"$BUILD" ||
	die "cannot build a program against libdcprof.so"
"${SAN_PRELOAD[@]}" "$TMP/abi" "$TOP/tests/fuzz/corpus/fuzz_profile_read/compact-g.data" ||
	die "the ABI conventions do not hold"
pass
