#!/bin/bash
# Byte-for-byte comparison of dcprof's read-side outputs between two builds,
# for refactors that must not change what users see.
#
# usage:
#   compare-outputs.sh record DIR DCPROF
#       build the workloads into DIR and record four profiles there with
#       DCPROF (as root): storm (-a -g during a fork storm), dwarf
#       (--call-graph dwarf through code without frame pointers), cxx (-g,
#       C++ names and inline frames, -O2), stripped (-g, a stripped binary
#       whose debug file is in DIR/debug/.build-id); then store in DIR the
#       functions to annotate, picked from DCPROF's flat report, so that
#       every build annotates the same ones (record with the base build)
#   compare-outputs.sh outputs DIR DCPROF OUTDIR
#       run every read-side output of DCPROF (report views, JSON, cookies,
#       exports, flame graphs, annotate, resymbolize) on the profiles of DIR
#       and write each to a file of OUTDIR/PROFILE/; a non-empty stderr goes
#       to NAME.err, with the exit status when it is not the expected one
#   compare-outputs.sh diff OUTDIR_A OUTDIR_B
#       one line per output, "same" or "DIFFERENT"; exit 1 if any differs
#
# Typical use (P=/tmp/compat/profiles):
#   scripts/compare-outputs.sh record $P OLD/dcprof
#   scripts/compare-outputs.sh outputs $P OLD/dcprof /tmp/compat/old
#   scripts/compare-outputs.sh outputs $P NEW/dcprof /tmp/compat/new
#   scripts/compare-outputs.sh diff /tmp/compat/old /tmp/compat/new
#
# Nothing is normalised: every output of one profile is a function of the
# profile and of the files it names (binaries, debug files, sources in DIR,
# the running kernel's symbols), and two runs of one build give the same
# bytes. The recording's own time, host and paths appear in the outputs but
# come from the profile; outputs written with -o do not name their own path.
# The environment is fixed below (no symbol cache, no debuginfod, C locale,
# UTC) so that the two runs see the same inputs. Run both builds on one
# boot with the same files installed: --resymbolize reads the files the
# profile names again (for the -a profile, system libraries and the
# recording dcprof binary itself), and the running kernel's symbols.
# Left out: `collect` (it prints the processes running now) and `--write`
# (it changes the profile).
set -eu

PROG=compare-outputs.sh
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILES="storm dwarf cxx stripped"

# No cache: every run derives symbols from the files themselves, and the
# builds compared cannot feed each other through a cache they share.
export DCPROF_CACHE_DIR=
unset DEBUGINFOD_URLS
# Headers print the recording's start in the local time zone: fix it.
export LC_ALL=C TZ=UTC

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage() {
	echo "usage: $PROG record DIR DCPROF" >&2
	echo "       $PROG outputs DIR DCPROF OUTDIR" >&2
	echo "       $PROG diff OUTDIR_A OUTDIR_B" >&2
	exit 2
}

# abspath PATH: PATH made absolute (its directory must exist)
abspath() {
	case $1 in
	/*) echo "$1" ;;
	*) echo "$PWD/$1" ;;
	esac
}

check_dcprof() {
	[ -x "$1" ] || die "no dcprof binary at '$1'"
}

# ---- record

# Same flags as tests/t/test-lib.sh's build_workload.
CFLAGS_TEST=(-std=gnu11 -O1 -g -fno-omit-frame-pointer "-Wl,--build-id")

build_workloads() {
	local dir=$1 src=$1/src bin=$1/bin bid w

	mkdir -p "$src" "$bin"
	for w in storm.c unwind_main.c unwind_lib.c sym_cxx.cc sym_inline.c \
		split.c; do
		cp "$TOP/tests/workloads/$w" "$src/" ||
			die "cannot copy '$TOP/tests/workloads/$w'"
	done

	# (a) the fork storm, as t0120
	gcc "${CFLAGS_TEST[@]}" -o "$bin/storm" "$src/storm.c" -lpthread ||
		die "cannot build storm"

	# (b) no frame pointers, main -> shared library -> callbacks, as t0500
	gcc -std=gnu11 -O1 -g -fomit-frame-pointer -shared -fPIC \
		-Wl,--build-id -o "$bin/libdcpwork.so" "$src/unwind_lib.c" ||
		die "cannot build libdcpwork.so"
	gcc -std=gnu11 -O1 -g -fomit-frame-pointer -Wl,--build-id \
		-o "$bin/unwind_main" "$src/unwind_main.c" -L"$bin" -ldcpwork \
		-Wl,-rpath,"$bin" || die "cannot build unwind_main"

	# (c) C++ names (t0410) and inline frames (t0400), at -O2
	g++ -O2 -g -fno-omit-frame-pointer -Wl,--build-id -o "$bin/sym_cxx" \
		"$src/sym_cxx.cc" || die "cannot build sym_cxx"
	gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wl,--build-id \
		-o "$bin/sym_inline" "$src/sym_inline.c" -lpthread ||
		die "cannot build sym_inline"

	# (d) stripped, its debug file found by build id, as t0420
	gcc "${CFLAGS_TEST[@]}" -o "$bin/split" "$src/split.c" -lpthread ||
		die "cannot build split"
	bid=$(readelf -n "$bin/split" | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ] || die "split has no build id"
	rm -rf "$dir/debug"
	mkdir -p "$dir/debug/.build-id/${bid:0:2}"
	objcopy --only-keep-debug "$bin/split" \
		"$dir/debug/.build-id/${bid:0:2}/${bid:2}.debug" ||
		die "objcopy failed"
	strip --strip-all "$bin/split" || die "strip failed"
}

# rec NAME DCPROF RECORD-ARGS...: DIR/NAME.data, the recorder's output in
# DIR/NAME.log
rec() {
	local name=$1 dcprof=$2

	shift 2
	rm -f "$DIR/$name.data" "$DIR/$name.data.old"
	echo "$PROG: recording $name" >&2
	"$dcprof" record -o "$DIR/$name.data" "$@" >"$DIR/$name.log" 2>&1 ||
		die "recording '$name' failed: $(tail -n 3 "$DIR/$name.log")"
}

# hottest DCPROF NAME COMM [REPORT-ARGS...]: the user function of COMM with
# the most samples in the flat report of NAME, appended to DIR/NAME.hot
hottest() {
	local dcprof=$1 name=$2 comm=$3 fn

	shift 3
	fn=$("$dcprof" report -i "$DIR/$name.data" --sort symbol --comm "$comm" \
		"$@" | awk '
			/^#/ { next }
			{
				i = index($0, "[.] ")
				if (i && substr($0, i + 4, 1) != "[") {
					print substr($0, i + 4)
					exit
				}
			}') || die "cannot report '$name'"
	[ -n "$fn" ] || die "no resolved user function of '$comm' in '$name'"
	echo "$fn" >>"$DIR/$name.hot"
}

do_record() {
	local dcprof bin

	[ $# -eq 2 ] || usage
	dcprof=$2
	DIR=$(abspath "$1")
	check_dcprof "$dcprof"
	dcprof=$(abspath "$dcprof")
	mkdir -p "$DIR" || die "cannot create '$DIR'"
	build_workloads "$DIR"
	bin=$DIR/bin

	# 800 children x 5 ms, two at a time: about 2.5 s
	rec storm "$dcprof" -a -g -- "$bin/storm" 800 5
	# shellcheck disable=SC2016 # $1 and $2 are sh's, not ours
	rec dwarf "$dcprof" --call-graph dwarf -- \
		sh -c '"$1" cb 2 && "$1" qsort 1' sh "$bin/unwind_main"
	# shellcheck disable=SC2016
	rec cxx "$dcprof" -g -- \
		sh -c '"$1" 3 & "$2" 3; wait' sh "$bin/sym_cxx" "$bin/sym_inline"
	rec stripped "$dcprof" -g -- "$bin/split" 2

	rm -f "$DIR"/*.hot
	hottest "$dcprof" storm storm
	hottest "$dcprof" dwarf unwind_main
	hottest "$dcprof" cxx sym_cxx
	hottest "$dcprof" cxx sym_inline
	# stripped: no names until re-symbolized with the debug file
	hottest "$dcprof" stripped split --resymbolize --debuginfo-dir "$DIR/debug"
	echo "$PROG: profiles and workloads in $DIR; functions to annotate:" >&2
	grep . "$DIR"/*.hot >&2
}

# ---- outputs

# out STATUS NAME COMMAND...: COMMAND's stdout in $OUT/NAME, its stderr in
# $OUT/NAME.err unless empty; an exit status other than STATUS is noted at
# the end of NAME.err and counted. For commands that write their output
# with -o, NAME ends in .stdout and is kept only if not empty.
out() {
	local want=$1 name=$2 rc=0

	shift 2
	"$@" >"$OUT/$name" 2>"$OUT/$name.err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "[exit status $rc, expected $want]" >>"$OUT/$name.err"
		echo "$PROG: ${OUT##*/}/$name: exit status $rc, expected $want" >&2
		FAILED=$((FAILED + 1))
	fi
	[ -s "$OUT/$name.err" ] || rm -f "$OUT/$name.err"
	case $name in
	*.stdout) [ -s "$OUT/$name" ] || rm -f "$OUT/$name" ;;
	esac
}

# profile_outputs DCPROF NAME: every output of DIR/NAME.data in $OUT
profile_outputs() {
	local d=$1 name=$2 f=$DIR/$2.data fn i=0
	local dbg=() resym=()

	# the stripped binary's names are in its debug file
	if [ "$name" = stripped ]; then
		dbg=(--debuginfo-dir "$DIR/debug")
		resym=(--resymbolize "${dbg[@]}")
	fi

	out 0 report.txt "$d" report -i "$f"
	out 0 report-children.txt "$d" report -i "$f" --children
	out 0 report-tree-caller.txt "$d" report -i "$f" --tree caller
	out 0 report-tree-callee.txt "$d" report -i "$f" --tree callee
	out 0 report-tree-caller-no-inline.txt "$d" report -i "$f" \
		--tree caller --no-inline
	out 0 report-sort-all.txt "$d" report -i "$f" \
		--sort comm,pid,file,symbol
	out 0 report-no-demangle.txt "$d" report -i "$f" --sort symbol \
		--no-demangle
	out 0 report-limit.txt "$d" report -i "$f" --limit 5 \
		--percent-limit 1 --max-stack 3 --children
	out 0 report.json "$d" report -i "$f" --format json
	out 0 report-children.json "$d" report -i "$f" --format json --children
	out 0 report-tree-caller.json "$d" report -i "$f" --format json \
		--tree caller
	out 0 report-tree-callee.json "$d" report -i "$f" --format json \
		--tree callee
	out 0 report-sort-all.json "$d" report -i "$f" --format json \
		--sort comm,pid,file,symbol
	out 0 report-resymbolize.txt "$d" report -i "$f" --resymbolize "${dbg[@]}"
	out 0 report-resymbolize.json "$d" report -i "$f" --format json \
		--resymbolize "${dbg[@]}"
	if [ "$name" = stripped ]; then
		out 0 report-resymbolize-tree-caller.txt "$d" report -i "$f" \
			--tree caller --resymbolize "${dbg[@]}"
		out 0 report-resymbolize-nodir.txt "$d" report -i "$f" \
			--resymbolize
	fi

	out 0 cookies.txt "$d" cookies -i "$f"
	out 0 cookies.json "$d" cookies -i "$f" --format json

	out 0 folded.txt "$d" export --format folded -i "$f"
	out 0 folded-no-comm.txt "$d" export --format folded -i "$f" --no-comm
	# pprof is gzipped: the file as written (zlib's stream, no time in
	# its header), and decompressed, which tells a change of the
	# compression from one of the profile
	out 0 pprof.stdout "$d" export --format pprof -i "$f" -o "$OUT/pprof.pb.gz"
	if [ -f "$OUT/pprof.pb.gz" ]; then
		out 0 pprof.pb gzip -dc "$OUT/pprof.pb.gz"
	fi

	for fmt in html svg; do
		out 0 flamegraph-$fmt.stdout "$d" flamegraph -i "$f" --format $fmt \
			-o "$OUT/flamegraph.$fmt"
	done

	[ -s "$DIR/$name.hot" ] || die "no '$DIR/$name.hot' (run 'record' first)"
	while IFS= read -r fn; do
		i=$((i + 1))
		out 0 "annotate-$i.txt" "$d" annotate "$fn" -i "$f" "${dbg[@]}"
		out 0 "annotate-$i.json" "$d" annotate "$fn" -i "$f" \
			--format json "${dbg[@]}"
		# the report filtered to the function (named again where the
		# profile has no names)
		out 0 "report-symbol-$i.txt" "$d" report -i "$f" --tree caller \
			--symbol "$fn" "${resym[@]}"
		if [ "$name" = stripped ]; then
			# without the debug file: one error line, exit 1
			out 1 "annotate-$i-nodir.txt" "$d" annotate "$fn" -i "$f"
		fi
	done <"$DIR/$name.hot"
}

do_outputs() {
	local dcprof outdir name start

	[ $# -eq 3 ] || usage
	dcprof=$2
	DIR=$(abspath "$1")
	outdir=$(abspath "$3")
	check_dcprof "$dcprof"
	dcprof=$(abspath "$dcprof")
	for name in $PROFILES; do
		[ -s "$DIR/$name.data" ] ||
			die "no profile '$DIR/$name.data' (run 'record' first)"
	done
	mkdir -p "$outdir" || die "cannot create '$outdir'"
	[ -z "$(ls -A "$outdir")" ] || die "'$outdir' is not empty"

	start=$(date +%s.%N)
	FAILED=0
	for name in $PROFILES; do
		OUT=$outdir/$name
		mkdir "$OUT"
		profile_outputs "$dcprof" "$name"
	done
	# differential flame graphs, both ways (each draws its AFTER's tree)
	OUT=$outdir/diff
	mkdir "$OUT"
	for fmt in html svg; do
		out 0 dwarf-cxx-$fmt.stdout "$dcprof" flamegraph --format $fmt \
			--diff "$DIR/dwarf.data" "$DIR/cxx.data" \
			-o "$OUT/dwarf-cxx.$fmt"
		out 0 cxx-dwarf-$fmt.stdout "$dcprof" flamegraph --format $fmt \
			--diff "$DIR/cxx.data" "$DIR/dwarf.data" \
			-o "$OUT/cxx-dwarf.$fmt"
	done

	echo "$PROG: $(find "$outdir" -type f | wc -l) files in $outdir" \
		"($(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }') s)" >&2
	[ "$FAILED" -eq 0 ] || die "$FAILED commands exited with an unexpected status"
}

# ---- diff

do_diff() {
	local a b f n=0 bad=0

	[ $# -eq 2 ] || usage
	a=$1 b=$2
	[ -d "$a" ] || die "no directory '$a'"
	[ -d "$b" ] || die "no directory '$b'"
	while IFS= read -r f; do
		n=$((n + 1))
		if [ ! -f "$a/$f" ]; then
			echo "DIFFERENT $f (only in $b)"
		elif [ ! -f "$b/$f" ]; then
			echo "DIFFERENT $f (only in $a)"
		elif cmp -s "$a/$f" "$b/$f"; then
			echo "same      $f"
			continue
		else
			echo "DIFFERENT $f"
		fi
		bad=$((bad + 1))
	done < <({ (cd "$a" && find . -type f); (cd "$b" && find . -type f); } |
		sed 's|^\./||' | LC_ALL=C sort -u)
	[ "$n" -gt 0 ] || die "no outputs in '$a' or '$b'"
	echo "$PROG: $n outputs, $bad different" >&2
	[ "$bad" -eq 0 ]
}

[ $# -ge 1 ] || usage
mode=$1
shift
case $mode in
record) do_record "$@" ;;
outputs) do_outputs "$@" ;;
diff) do_diff "$@" ;;
*) usage ;;
esac
