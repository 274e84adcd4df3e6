#!/bin/bash
# The rules of docs/ARCHITECTURE.md that a compiler cannot see, checked on
# every C file of include/, lib/ and src/:
#   - an include names a path inside the include paths: no "..", no
#     absolute path, no macro;
#   - a quoted include is a header of the file's own layer or of a layer
#     below it (or a header the build generates for that layer);
#   - an angle-bracket include is on the layer's allowlist: the system's
#     headers the layer may use (libc, the kernel's uapi) and the headers
#     of the libraries the Makefile lists for it (LAYER_LIBS_*, LAYER_LOADS_*);
#   - a file is under 800 lines and opens with a comment saying its job.
# The per-layer link checks of the Makefile enforce the rest. Prints one
# line per breach and exits 1 if there is any.
#
# The Makefile's lists come from the environment (LAYER_LIB_TABLE, as
# `make check-layers` passes it) or, when run alone, from `make layer-libs`.
set -u
cd "$(dirname "$0")/.."
bad=0

breach() {
	echo "check-layers: $*" >&2
	bad=1
}

# Each layer: the folders whose headers it may include (its own, those
# below it), the headers the build generates for it (BPF skeletons, the
# kernel's types for the BPF programs, the protobuf-c code of the exports'
# schemas) and the system headers it may use whatever its libraries: the C
# library (libc), the kernel's user-space API (uapi); a BPF program runs
# in the kernel: libbpf's BPF-side helpers only, no libc.
# layer | may include                                         | generated          | system
table="
public  |                                                     |                    | libc
base    | lib/base                                            |                    | libc
core    | lib/base lib/core                                   |                    | libc uapi
symbols | lib/base lib/core lib/symbols                       |                    | libc uapi
unwind  | lib/base lib/core lib/symbols lib/unwind            |                    | libc uapi
record  | lib/base lib/core lib/symbols lib/unwind lib/record | *.skel.h *.lskel.h | libc uapi
bpf     | lib/unwind lib/record/bpf                           | vmlinux.h          | bpf-helpers
view    | lib/base src/view                                   |                    | libc
export  | lib/base src/view src/export                        | *.pb-c.h           | libc
push    | lib/base src/view src/export src/push               |                    | libc
cmd     | lib/base src/view src/export src/push src/cmd       |                    | libc uapi
"
declare -A may_include generated system
while IFS='|' read -r layer inc gen sys; do
	layer=${layer// /}
	[ -n "$layer" ] || continue
	read -ra words <<<"$inc" && may_include[$layer]=${words[*]}
	read -ra words <<<"$gen" && generated[$layer]=${words[*]}
	read -ra words <<<"$sys" && system[$layer]=${words[*]}
done <<<"$table"

# Whose header is it: by exact name, else by its first folder.
declare -A header_of dir_of
owns() { # LIBRARY HEADER...: names ending in / are folders
	local lib=$1 h
	shift
	for h in "$@"; do
		case $h in
		*/) dir_of[${h%/}]=$lib ;;
		*) header_of[$h]=$lib ;;
		esac
	done
}
# C11, POSIX and the GNU C library's own headers (sys/ is glibc's).
owns libc assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h \
	iso646.h limits.h locale.h math.h setjmp.h signal.h stdalign.h \
	stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h \
	stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h \
	wctype.h aio.h dirent.h dlfcn.h fcntl.h fnmatch.h ftw.h glob.h grp.h \
	iconv.h langinfo.h libgen.h mqueue.h netdb.h poll.h pthread.h pwd.h \
	regex.h sched.h search.h semaphore.h spawn.h strings.h syslog.h \
	termios.h unistd.h utime.h wordexp.h alloca.h byteswap.h elf.h \
	endian.h err.h error.h execinfo.h features.h getopt.h link.h malloc.h \
	mntent.h paths.h sysexits.h ucontext.h sys/ arpa/ net/ netinet/
owns uapi linux/ asm/ asm-generic/
owns bpf-helpers bpf/bpf_helpers.h bpf/bpf_tracing.h bpf/bpf_core_read.h \
	bpf/bpf_endian.h
# The libraries of the Makefile's lists (pkg-config names, -lNAME).
owns zlib zlib.h zconf.h
owns libzstd zstd.h zstd_errors.h zdict.h
owns libelf libelf.h gelf.h nlist.h
owns libdw dwarf.h elfutils/
owns -liberty libiberty/
owns libbpf bpf/
owns capstone capstone/
owns libprotobuf-c protobuf-c/
owns libcurl curl/
# ncursesw or ncurses, whichever the Makefile found (CURSES_PKG)
owns curses curses.h ncurses.h ncursesw/

# "layer: lib lib;" for every layer, from the Makefile.
lib_table=${LAYER_LIB_TABLE-$(make -s --no-print-directory layer-libs)} ||
	{ echo "check-layers: cannot read the Makefile's layer lists" >&2; exit 1; }
declare -A libs
IFS=';' read -ra rows <<<"$lib_table"
for row in "${rows[@]}"; do
	read -r name list <<<"$row"
	[ -n "${name:-}" ] && libs[${name%:}]=${list:-}
done
# the public header and the BPF programs: no library of their own
libs[public]=""
libs[bpf]=""
for layer in "${!system[@]}"; do
	[ -n "${libs[$layer]+set}" ] ||
		breach "the Makefile lists no libraries for layer $layer (LAYER_LIBS_$layer)"
done

# layer_of FILE: sets layer (empty: a file no layer owns).
layer_of() {
	case $1 in
	*.bpf.c | *.bpf.h) layer=bpf ;;
	include/*) layer=public ;;
	lib/*/*) layer=${1#lib/} layer=${layer%%/*} ;;
	src/*/*) layer=${1#src/} layer=${layer%%/*} ;;
	src/*) layer=cmd ;;
	*) layer= ;;
	esac
	[ -n "$layer" ] && [ -n "${system[$layer]+set}" ] || layer=
}

# check_include FILE LINE TEXT: one #include line of FILE.
check_include() {
	local f=$1 at="$1:$2" text=$3 inc d lib found pat allowed
	layer_of "$f"
	[ -n "$layer" ] || return 0
	if [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]*)\" ]]; then
		inc=${BASH_REMATCH[1]}
		leaves "$at" "\"$inc\"" "$inc" || return 0
		# the public API's headers, for every layer
		[[ $inc == dcprof/*.h ]] && [ -e "include/$inc" ] && return 0
		for pat in ${generated[$layer]:-}; do
			# shellcheck disable=SC2053 # a glob, on purpose
			[[ $inc == $pat ]] && return 0
		done
		found=""
		for d in "${f%/*}" ${may_include[$layer]}; do
			[ -e "$d/$inc" ] && found=$d && break
		done
		[ -n "$found" ] ||
			breach "$at includes \"$inc\", which is not in its layer or one below it"
	elif [[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<([^\>]*)\> ]]; then
		inc=${BASH_REMATCH[1]}
		leaves "$at" "<$inc>" "$inc" || return 0
		lib=${header_of[$inc]:-}
		[ -z "$lib" ] && [[ $inc == */* ]] && lib=${dir_of[${inc%%/*}]:-}
		allowed="${system[$layer]} ${libs[$layer]}"
		allowed=${allowed//ncursesw/curses}
		allowed=${allowed//ncurses/curses}
		case " $allowed " in
		*" $lib "*) [ -n "$lib" ] && return 0 ;;
		esac
		breach "$at includes <$inc>, which is not on the allowlist of layer $layer ($allowed)"
	else
		breach "$at has an include the check cannot read (a macro?): $text"
	fi
}

# leaves AT SHOWN PATH: 1 (and a breach) if PATH leaves the include paths.
leaves() {
	case /$3/ in
	*/../* | //*)
		breach "$1 includes $2: a path with .. or an absolute path leaves the layer's include paths"
		return 1
		;;
	esac
	return 0
}

mapfile -t files < <(find include lib src -name '*.[ch]' | sort)
while IFS= read -r hit; do
	f=${hit%%:*} rest=${hit#*:}
	check_include "$f" "${rest%%:*}" "${rest#*:}"
done < <(grep -Hn -E '^[[:space:]]*#[[:space:]]*include' "${files[@]}")

while read -r n f; do
	[ "$f" = total ] && continue
	[ "$n" -le 800 ] || breach "$f has $n lines (at most 800: split it by job)"
done < <(wc -l "${files[@]}")

# The first comment after the licence line says what the file is for.
while IFS= read -r f; do
	breach "$f does not open with a comment saying what it is for"
done < <(awk 'function judge() { if (prev != "" && !ok) print prev }
	FNR == 1 { judge(); prev = FILENAME; seen = 0; ok = 0 }
	seen || /SPDX-License-Identifier/ { next }
	/^[[:space:]]*(\/\*|\/\/|#|[a-z])/ { seen = 1; ok = /^\/\*/ }
	END { judge() }' "${files[@]}")

[ "$bad" -eq 0 ] && echo "check-layers: every include is in its layer, one below it or on its allowlist"
exit "$bad"
