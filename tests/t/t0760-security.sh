#!/bin/bash
# The output file: (a) created 0600 even under umask 000; (b) a symlink
# planted at the output path is never followed: its target keeps its
# content, the link itself is moved aside to FILE.old (still a link to the
# same target) and the profile is a new regular file; (c) a dangling
# symlink is not followed either (its target is not created); (d) a symlink
# planted in place of the working file while recording is replaced by the
# compact file at the end, its target untouched; (e) in a sticky,
# world-writable directory, a symlink owned by another user (nobody) at the
# output path: the same, and the profile belongs to root, 0600.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

VICTIM=$TMP/victim
echo "precious" >"$VICTIM"
chmod 0644 "$VICTIM"
victim_ok() {
	[ "$(cat "$VICTIM")" = precious ] || die "$1: the symlink's target was written"
	[ "$(stat -c %a "$VICTIM")" = 644 ] || die "$1: the target's mode changed"
}
check_out() { # FILE WHAT
	[ -f "$1" ] && [ ! -L "$1" ] || die "$2: '$1' is not a regular file"
	[ "$(stat -c %a "$1")" = 600 ] || die "$2: '$1' is mode $(stat -c %a "$1")"
	[ "$(stat -c %u "$1")" = 0 ] || die "$2: '$1' is not root's"
	expect_exit 0 "$DCPROF" report -i "$1"
}
rec() { expect_exit 0 "$DCPROF" record -a --duration 1 -o "$1"; }

# (a)
(umask 000 && rec "$TMP/a.data")
check_out "$TMP/a.data" "umask 000"

# (b)
ln -s "$VICTIM" "$TMP/b.data"
rec "$TMP/b.data"
victim_ok "planted link"
check_out "$TMP/b.data" "planted link"
[ "$(readlink "$TMP/b.data.old")" = "$VICTIM" ] ||
	die "the planted link was not moved to b.data.old"

# (c)
ln -s "$TMP/created-by-dcprof" "$TMP/c.data"
rec "$TMP/c.data"
[ ! -e "$TMP/created-by-dcprof" ] || die "a dangling link was followed"
check_out "$TMP/c.data" "dangling link"

# (d) the link is planted once the recorder records (its working file is
# there): the compact file must replace it, a regular file of root's
"$DCPROF" record -a --duration 3 -o "$TMP/d.data" --ready-fd 3 >/dev/null \
	2>"$TMP/d.err" 3>"$TMP/d.ready" &
REC=$!
_spawned+=("$REC")
wait_line "$TMP/d.ready" '^recording$' 30
[ -f "$TMP/d.data" ] || die "no working file once recording"
rm "$TMP/d.data" && ln -s "$VICTIM" "$TMP/d.data" || die "cannot plant the link"
wait "$REC"
rc=$?
echo "link planted during recording: dcprof exited $rc ($(tail -1 "$TMP/d.err"))"
[ "$rc" -eq 0 ] || die "link planted during recording: dcprof exited $rc: $(cat "$TMP/d.err")"
victim_ok "link planted during recording"
[ ! -L "$TMP/d.data" ] || die "the planted link is still in place: $(ls -l "$TMP/d.data")"
check_out "$TMP/d.data" "link planted during recording"
expect_exit 0 "$DCPROF" report -i "$TMP/d.data" --format json
[ "$(json_get "$TMP/out" 'd["meta"]["complete"]')" = true ] ||
	die "link planted during recording: the profile is not complete"

# (e)
id nobody >/dev/null 2>&1 || die "no user nobody for (e)"
{
	SHARED=$TMP/shared
	mkdir -m 1777 "$SHARED"
	su -s /bin/sh nobody -c "ln -s '$VICTIM' '$SHARED/e.data'" 2>/dev/null ||
		{ ln -s "$VICTIM" "$SHARED/e.data" && chown -h nobody "$SHARED/e.data"; }
	rec "$SHARED/e.data"
	victim_ok "another user's link in a sticky directory"
	check_out "$SHARED/e.data" "sticky directory"
}
pass
