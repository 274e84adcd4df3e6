#!/bin/bash
# dcprof export on bad input and hostile output paths: a missing or corrupt
# profile is one error line and exit 1; usage errors exit 2; an output into
# a directory that does not exist fails without leaving a file; a symlink
# planted at the output path is replaced, and what it points to is left
# alone; a device or FIFO there is written, not replaced (/dev/null stays
# a device; /dev/full's error is one line); a failed export never leaves a
# half-written file behind.
. "$(dirname "$0")/test-lib.sh"
need gcc gzip
need_perf_events

SPLIT=$(build_workload split)
F=$TMP/p.data
expect_exit 0 "$DCPROF" record -g -o "$F" -- "$SPLIT" 0.3

# no such input, a corrupt one, an empty one
for fmt in pprof otlp folded; do
	expect_exit 1 "$DCPROF" export --format $fmt -i "$TMP/missing.data" \
		-o "$TMP/x.out"
	one_line_error
	grep -q "missing.data" "$TMP/err" ||
		die "the error does not name the input: $(cat "$TMP/err")"
	head -c 100 /dev/urandom >"$TMP/corrupt.data"
	expect_exit 1 "$DCPROF" export --format $fmt -i "$TMP/corrupt.data" \
		-o "$TMP/x.out"
	one_line_error
	: >"$TMP/empty.data"
	expect_exit 1 "$DCPROF" export --format $fmt -i "$TMP/empty.data"
	one_line_error
	# a profile cut short: half of a finished file
	head -c $(($(stat -c %s "$F") / 2)) "$F" >"$TMP/cut.data"
	expect_exit 1 "$DCPROF" export --format $fmt -i "$TMP/cut.data" \
		-o "$TMP/x.out"
	one_line_error
done
[ -e "$TMP/x.out" ] && die "a failed export left '$TMP/x.out'"
ls -a "$TMP" | grep -q '\.tmp$' && die "a failed export left a temporary file"

# usage errors
expect_exit 2 "$DCPROF" export --format bogus -i "$F"
expect_exit 2 "$DCPROF" export -i "$F"
expect_exit 2 "$DCPROF" export --format pprof --no-comm -i "$F"
expect_exit 2 "$DCPROF" export --format otlp --no-comm -i "$F"
grep -q "^dcprof: --no-comm applies to --format folded only" "$TMP/err" ||
	die "--no-comm with otlp: $(cat "$TMP/err")"
expect_exit 2 "$DCPROF" export --format otlp --value off-cpu -i "$F"
grep -q "^dcprof: --value applies to --format folded only" "$TMP/err" ||
	die "--value with otlp: $(cat "$TMP/err")"
expect_exit 2 "$DCPROF" export --format folded -i "$F" extra
expect_exit 2 "$DCPROF" export --format folded --bogus
expect_exit 2 "$DCPROF" export --format folded -i
expect_exit 0 "$DCPROF" export --help
grep -q -- "--no-comm" "$TMP/out" || die "--help does not show the options"

# into a directory that does not exist
expect_exit 1 "$DCPROF" export --format pprof -i "$F" -o "$TMP/nodir/x.pb.gz"
one_line_error
[ -e "$TMP/nodir" ] && die "export created the missing directory"
# onto a directory
mkdir "$TMP/adir"
expect_exit 1 "$DCPROF" export --format folded -i "$F" -o "$TMP/adir"
one_line_error
[ -z "$(ls -A "$TMP/adir")" ] || die "export wrote into '$TMP/adir'"
[ -z "$(ls -a "$TMP" | grep '\.tmp$')" ] ||
	die "a failed export left a temporary file"

# a symlink planted at the output path: replaced, its target untouched
for fmt in pprof otlp folded; do
	echo precious >"$TMP/target"
	ln -sf "$TMP/target" "$TMP/link.out"
	expect_exit 0 "$DCPROF" export --format $fmt -i "$F" -o "$TMP/link.out"
	[ "$(cat "$TMP/target")" = precious ] ||
		die "export ($fmt) wrote through a planted symlink"
	[ -L "$TMP/link.out" ] && die "the symlink is still at the output path"
	[ -s "$TMP/link.out" ] || die "no output at '$TMP/link.out'"
done
gzip -t <"$TMP/link.out" 2>/dev/null &&
	die "the folded export replaced the file with gzip"
# a dangling symlink, pointing where a file would appear
ln -s "$TMP/created-by-symlink" "$TMP/dangling.out"
expect_exit 0 "$DCPROF" export --format pprof -i "$F" -o "$TMP/dangling.out"
[ -e "$TMP/created-by-symlink" ] && die "export followed a dangling symlink"
gzip -t "$TMP/dangling.out" || die "the pprof export is not gzip"

# a device or a FIFO at the output path is written as it is, never
# replaced by a file (-o /dev/null must leave /dev/null a device)
mknod -m 666 "$TMP/null" c 1 3 || die "cannot make a null device"
mkfifo "$TMP/fifo" || die "cannot make a FIFO"
for fmt in pprof otlp folded; do
	expect_exit 0 "$DCPROF" export --format $fmt -i "$F" -o "$TMP/null"
	[ -c "$TMP/null" ] || die "export ($fmt) -o a device replaced it"
	cat "$TMP/fifo" >"$TMP/fifo.out" &
	reader=$!
	expect_exit 0 "$DCPROF" export --format $fmt -i "$F" -o "$TMP/fifo"
	wait "$reader"
	[ -p "$TMP/fifo" ] || die "export ($fmt) -o a FIFO replaced it"
	[ -s "$TMP/fifo.out" ] || die "export ($fmt) -o a FIFO wrote nothing into it"
done
expect_exit 0 "$DCPROF" flamegraph -i "$F" -o "$TMP/null"
[ -c "$TMP/null" ] || die "flamegraph -o a device replaced it"
mknod -m 666 "$TMP/full" c 1 7 || die "cannot make a full device"
expect_exit 1 "$DCPROF" export --format pprof -i "$F" -o "$TMP/full"
one_line_error

# an existing output is replaced whole, and only on success
echo old >"$TMP/keep.out"
expect_exit 1 "$DCPROF" export --format folded -i "$TMP/corrupt.data" \
	-o "$TMP/keep.out"
[ "$(cat "$TMP/keep.out")" = old ] ||
	die "a failed export changed the earlier output"
expect_exit 0 "$DCPROF" export --format folded -i "$F" -o "$TMP/keep.out"
grep -q ' [0-9]*$' "$TMP/keep.out" || die "the output was not replaced"

# a full disk: the error is reported and nothing is left behind
if [ ! -w /dev/full ]; then
	skip_part "/dev/full is not writable: write errors on stdout untested"
else
	"$DCPROF" export --format folded -i "$F" >/dev/full 2>"$TMP/err"
	[ $? -eq 1 ] || die "a write error on stdout did not exit 1"
	one_line_error
	"$DCPROF" export --format pprof -i "$F" -o - >/dev/full 2>"$TMP/err"
	[ $? -eq 1 ] || die "a write error on stdout (pprof) did not exit 1"
	one_line_error
	"$DCPROF" export --format otlp -i "$F" -o - >/dev/full 2>"$TMP/err"
	[ $? -eq 1 ] || die "a write error on stdout (otlp) did not exit 1"
	one_line_error
fi

pass
