#!/bin/bash
# make install into a temporary DESTDIR (PREFIX=/usr, and the default
# /usr/local): exactly the command, libdcprof.so.0 with its links and the
# .a, the headers, dcprof.pc, the man page, the bash completion and the
# systemd unit (its ExecStart the installed command, a unit systemd-analyze
# accepts, the capabilities it keeps each explained). A small
# C program built with `pkg-config --cflags --libs dcprof` (shared, and
# --static against the .a) opens a profile and prints its rows; their
# samples per process name and in all match `dcprof report`, on a profile
# of the corpus and on a fresh recording. make uninstall leaves nothing.
. "$(dirname "$0")/test-lib.sh"
need gcc make pkg-config python3 readelf

D=$TMP/dest
inst() {
	make -C "$TOP" --no-print-directory BUILD="$BUILD" "$@" \
		>"$TMP/make.log" 2>&1 || die "make $*: $(tail -c 800 "$TMP/make.log")"
}

# installed_files DIR: what is under DIR, files and links, one a line
installed_files() {
	(cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}

inst install DESTDIR="$D" PREFIX=/usr
installed_files "$D" >"$TMP/files"
cat >"$TMP/want" <<'LIST'
usr/bin/dcprof
usr/include/dcprof/code.h
usr/include/dcprof/collection.h
usr/include/dcprof/dcprof.h
usr/lib/libdcprof.a
usr/lib/libdcprof.so
usr/lib/libdcprof.so.0
usr/lib/libdcprof.so.0.1.0
usr/lib/pkgconfig/dcprof.pc
usr/lib/systemd/system/dcprof.service
usr/share/bash-completion/completions/dcprof
usr/share/man/man1/dcprof.1
LIST
diff -u "$TMP/want" "$TMP/files" >"$TMP/diff" ||
	die "installed files differ (- expected, + installed): $(cat "$TMP/diff")"
[ "$(readlink "$D/usr/lib/libdcprof.so")" = libdcprof.so.0 ] &&
	[ "$(readlink "$D/usr/lib/libdcprof.so.0")" = libdcprof.so.0.1.0 ] ||
	die "library links: $(ls -l "$D/usr/lib")"
[ "$(stat -c %a "$D/usr/bin/dcprof")" = 755 ] || die "dcprof is not mode 755"
for h in dcprof.h code.h collection.h; do
	cmp -s "$TOP/include/dcprof/$h" "$D/usr/include/dcprof/$h" ||
		die "the installed $h is not include/dcprof/$h"
done
"$D/usr/bin/dcprof" --version | grep -q '^dcprof ' || die "the installed dcprof does not run"

# the unit: the installed command, 0644, and every capability it keeps
# said why in its comment
U=$D/usr/lib/systemd/system/dcprof.service
[ "$(stat -c %a "$U")" = 644 ] || die "dcprof.service is not mode 644"
grep -qx 'ExecStart=/usr/bin/dcprof record -a -g --continuous /var/lib/dcprof .*' "$U" ||
	die "the unit's ExecStart: $(grep ExecStart "$U")"
grep -q '@' "$U" && die "the unit holds a placeholder: $(grep '@' "$U")"
for cap in $(sed -n 's/^CapabilityBoundingSet=//p' "$U"); do
	grep -q "^#   $cap " "$U" || die "the unit keeps $cap without saying why"
done
if command -v systemd-analyze >/dev/null; then
	# only the command's absence from this machine may be reported
	systemd-analyze verify "$U" 2>&1 | grep -v -e 'is not executable' -e "Command 'man" \
		>"$TMP/verify" && [ -s "$TMP/verify" ] && die "systemd-analyze: $(cat "$TMP/verify")"
fi

# pkg-config as a cross build would use it: the sysroot prefixes -I, -L.
export PKG_CONFIG_PATH=$D/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
unset PKG_CONFIG_LIBDIR
grep -qx 'prefix=/usr' "$D/usr/lib/pkgconfig/dcprof.pc" ||
	die "dcprof.pc: $(head -5 "$D/usr/lib/pkgconfig/dcprof.pc")"
[ "$(pkg-config --modversion dcprof)" = 0.1 ] || die "dcprof.pc's version: $(pkg-config --modversion dcprof 2>&1)"
CFLAGS_PC=$(pkg-config --cflags dcprof) || die "pkg-config --cflags dcprof failed"
LIBS_PC=$(pkg-config --libs dcprof) || die "pkg-config --libs dcprof failed"
STATIC_PC=$(pkg-config --static --libs dcprof) || die "pkg-config --static --libs dcprof failed"
echo "$TEST_NAME: pkg-config: $CFLAGS_PC $LIBS_PC"
case " $CFLAGS_PC " in *" -I$D/usr/include "*) ;; *) die "cflags '$CFLAGS_PC'" ;; esac

cat >"$TMP/rows.c" <<'C'
/* Print a profile's rows: samples, pid, process name, frames. */
#include <dcprof/dcprof.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	struct dcp_profile *p;
	uint64_t total = 0;

	if (argc != 2)
		return 2;
	p = dcp_profile_open(argv[1]);
	if (!p) {
		fprintf(stderr, "rows: %s\n", dcp_last_error());
		return 1;
	}
	for (size_t i = 0; i < dcp_profile_nr_rows(p); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };

		if (dcp_profile_row(p, i, &row) < 0) {
			fprintf(stderr, "rows: %s\n", dcp_last_error());
			return 1;
		}
		printf("%" PRIu64 "\t%" PRIu32 "\t%s\t%" PRIu32 "\n", row.count,
		       row.pid, row.comm, row.nr_frames);
		total += row.count;
	}
	printf("total\t%" PRIu64 "\n", total);
	dcp_profile_close(p);
	return 0;
}
C
# shellcheck disable=SC2086 # pkg-config's words are flags
gcc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS $CFLAGS_PC -o "$TMP/rows" "$TMP/rows.c" $LIBS_PC ||
	die "cannot build a program with pkg-config --cflags --libs dcprof"
readelf -d "$TMP/rows" | grep -q 'NEEDED.*\[libdcprof\.so\.0\]' ||
	die "the program does not load libdcprof.so.0: $(readelf -d "$TMP/rows" | grep NEEDED)"
# shellcheck disable=SC2086
gcc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS $CFLAGS_PC -o "$TMP/rows-static" "$TMP/rows.c" \
	"$D/usr/lib/libdcprof.a" ${STATIC_PC//-ldcprof/} ||
	die "cannot link the program with libdcprof.a and pkg-config --static --libs"
readelf -d "$TMP/rows-static" | grep -q 'libdcprof' && die "the static program loads libdcprof"

# check_rows PROFILE: both programs agree with dcprof report, per process
# name and in all (the report's own total and stats.samples_kept).
check_rows() {
	local f=$1
	LD_LIBRARY_PATH=$D/usr/lib "$TMP/rows" "$f" >"$TMP/rows.out" ||
		die "rows failed on '$f': $(cat "$TMP/rows.out")"
	"$TMP/rows-static" "$f" >"$TMP/rows-static.out" || die "rows-static failed on '$f'"
	cmp -s "$TMP/rows.out" "$TMP/rows-static.out" || die "shared and static programs differ"
	"$D/usr/bin/dcprof" report -i "$f" --sort comm --format json >"$TMP/report.json" ||
		die "dcprof report -i '$f' failed"
	python3 - "$TMP/rows.out" "$TMP/report.json" <<'PY' || die "rows of '$f' do not match dcprof report"
import collections, json, sys
lines = [l.rstrip("\n").split("\t") for l in open(sys.argv[1], encoding="latin-1")]
assert lines[-1][0] == "total", lines[-1]
total = int(lines[-1][1])
by_comm = collections.Counter()
for count, pid, comm, nr in lines[:-1]:
    by_comm[comm] += int(count)
assert sum(by_comm.values()) == total
d = json.load(open(sys.argv[2], encoding="latin-1"))
assert d["total"] == total, (d["total"], total)
assert d["stats"]["samples_kept"] == total, (d["stats"]["samples_kept"], total)
rep = collections.Counter()
for r in d["rows"]:
    rep[r["comm"]] += r["samples"]
assert rep == by_comm, (rep, by_comm)
print("%d rows, %d samples, %d process names: as dcprof report" % (len(lines) - 1, total, len(rep)))
PY
}

check_rows "$TOP/tests/fuzz/corpus/fuzz_profile_read/compact-g.data"
SPLIT=$(build_workload split)
if "$DCPROF" record -g -o "$TMP/split.data" -- "$SPLIT" 1 >"$TMP/rec.out" 2>&1; then
	check_rows "$TMP/split.data"
	grep -q "split" "$TMP/rows.out" || die "the recording has no row of split"
else
	[ -z "${CI:-}" ] || die "dcprof record failed under CI: $(tail -c 300 "$TMP/rec.out")"
	skip_part "dcprof record failed, no fresh recording checked: $(tail -1 "$TMP/rec.out")"
fi

inst uninstall DESTDIR="$D" PREFIX=/usr
[ -z "$(installed_files "$D")" ] || die "make uninstall left: $(installed_files "$D")"

# The default PREFIX is /usr/local.
D2=$TMP/dest2
inst install DESTDIR="$D2"
installed_files "$D2" | sed 's|^usr/local/|usr/|' | cmp -s - "$TMP/want" ||
	die "with the default PREFIX: $(installed_files "$D2")"
grep -qx 'prefix=/usr/local' "$D2/usr/local/lib/pkgconfig/dcprof.pc" || die "dcprof.pc under /usr/local"
inst uninstall DESTDIR="$D2"
[ -z "$(installed_files "$D2")" ] || die "make uninstall left: $(installed_files "$D2")"
pass
