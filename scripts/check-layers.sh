#!/bin/bash
# The rules of docs/ARCHITECTURE.md that a compiler cannot see: which
# headers each layer may include, files of one job under 800 lines, and a
# first comment saying what each file is for. The include paths and the
# per-layer link checks of the Makefile enforce the rest. Prints one line
# per breach and exits 1 if there is any.
set -u
cd "$(dirname "$0")/.."
bad=0

breach() {
	echo "check-layers: $*" >&2
	bad=1
}

# layer folder, then the folders whose headers it may include.
declare -A may_include=(
	[lib/base]="lib/base"
	[lib/core]="lib/base lib/core"
	[lib/symbols]="lib/base lib/core lib/symbols"
	[lib/unwind]="lib/base lib/core lib/symbols lib/unwind"
	[lib/record]="lib/base lib/core lib/symbols lib/unwind lib/record"
	[src/view]="lib/base src/view"
	[src/export]="lib/base src/view src/export"
	[src/push]="lib/base src/view src/export src/push"
	[src/cmd]="lib/base src/view src/export src/push src/cmd"
)
# System headers of libraries a layer must not use.
declare -A forbidden=(
	[lib/base]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|capstone|protobuf-c|zlib|zstd|curl/'
	[lib/core]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|capstone|protobuf-c|curl/'
	[lib/symbols]='capstone|protobuf-c|curl/'
	[lib/unwind]='capstone|protobuf-c|curl/'
	[lib/record]='capstone|protobuf-c|curl/'
	[src/view]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|curl/'
	[src/export]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|curl/'
	[src/push]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|capstone'
	[src/cmd]='libelf|gelf|elfutils/|dwarf\.h|demangle\.h|libiberty|curl/'
)

for layer in "${!may_include[@]}"; do
	for f in $(find "$layer" -name '*.[ch]' 2>/dev/null); do
		dir=$(dirname "$f")
		while read -r inc; do
			[ -n "$inc" ] || continue
			case $inc in dcprof/dcprof.h) continue ;; esac
			# Generated files of the build (protobuf-c, embedded assets).
			case $inc in *.pb-c.h | *.skel.h | *.lskel.h | vmlinux.h) continue ;; esac
			found=""
			for d in $dir ${may_include[$layer]}; do
				[ -e "$d/$inc" ] && found=$d && break
			done
			[ -n "$found" ] ||
				breach "$f includes \"$inc\", which is not in its layer or one below it"
		done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
		if grep -Eq "^#include <(${forbidden[$layer]})" "$f"; then
			breach "$f includes a library its layer must not use: $(grep -Eo "^#include <(${forbidden[$layer]})[^>]*>" "$f" | head -1)"
		fi
	done
done

for f in $(find include lib src -name '*.[ch]'); do
	n=$(wc -l <"$f")
	[ "$n" -le 800 ] || breach "$f has $n lines (at most 800: split it by job)"
	# The first comment after the licence line says what the file is for.
	first=$(grep -v 'SPDX-License-Identifier' "$f" | grep -m1 -E '^\s*(/\*|//|#|[a-z])')
	case $first in
	/\**) ;;
	*) breach "$f does not open with a comment saying what it is for" ;;
	esac
done

[ "$bad" -eq 0 ] && echo "check-layers: every layer includes only itself and the layers below it"
exit "$bad"
