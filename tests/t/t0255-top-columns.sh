#!/bin/bash
# dcprof top's columns (issue 41): a binary under a long directory, run by
# top as its command.
# - --stdio: every row's columns begin where the header's names begin
#   (before, the keys were joined by two spaces: no column lined up);
# - full screen at 80x24 (tmux): no line wider than 80; the header wraps
#   instead of being cut (the keys' line ends with q:quit); the file
#   column is cut by one rule on every row: the base name whole, behind
#   "..." and the end of its directory, cut at a '/' (before, some rows
#   kept the path's last N bytes, "p/nc/cpp", others the base name's
#   first ones, "libstdc+"), and the symbol column begins at one place;
# - full screen at 120x35 with --off-cpu, once the command exited: the
#   header fits and says so, and the off-CPU view has a "total ms" column
#   whose figures are the session's (nap's is the time nap_burn says it
#   slept, more than the last, short interval's "ms": before, only those
#   were shown).
. "$(dirname "$0")/test-lib.sh"
need gcc tmux python3
need_perf_events

SPLIT=$(build_workload split)
DIR=$TMP/a-rather-long-directory-name/for-the-file-column/of-top
mkdir -p "$DIR" && cp "$SPLIT" "$DIR/split" || die "cannot copy split"

# columns FILE: every table row's columns start where the header's names do
columns() {
	python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
tables = 0
for i, h in enumerate(lines):
    if not re.match(r"^ +last +session ", h):
        continue
    tables += 1
    starts = [m.start() for m in re.finditer(r"(?<=  )[a-z]+", h)]
    starts = [s for s in starts if h[s:].split()[0] in
              ("comm", "pid", "tid", "process", "file", "symbol")]
    assert len(starts) >= 3, "header: %r" % h
    rows = 0
    for r in lines[i + 1:]:
        if not re.match(r"^ *[0-9.]+% ", r):
            break
        rows += 1
        for s in starts:
            assert r[s - 2:s] == "  " and r[s] != " ", \
                "column at %d: %r under %r" % (s, r, h)
    assert rows > 0, "no rows under %r" % h
assert tables > 0, "no table"
print("%d tables, columns at %s" % (tables, starts))
PY
}

# --- --stdio ---------------------------------------------------------------
expect_exit 0 "$DCPROF" top --stdio --iterations 2 --limit 12 -- "$DIR/split" 30
cp "$TMP/out" "$TMP/stdio.txt"
columns "$TMP/stdio.txt" || die "--stdio columns do not line up: $(head -8 "$TMP/stdio.txt")"
grep -q "$DIR/split" "$TMP/stdio.txt" || die "--stdio cut the path"

# --- full screen -------------------------------------------------------------
SOCK=$TMP/tmux.sock
S=dcprof-cols-$$
tm() { tmux -S "$SOCK" "$@"; }
screen() { tm capture-pane -p -t "$S"; }
trap 'tm kill-server 2>/dev/null; _cleanup' EXIT
start_pane() { # COLS LINES ARGS...
	local x=$1 y=$2
	shift 2
	cat >"$TMP/pane.sh" <<SH
export LC_ALL=C TERM=screen
"$DCPROF" top $(printf '%q ' "$@")
echo "EXIT=\$?"
exec sleep 300
SH
	tm new-session -d -s "$S" -x "$x" -y "$y" "bash $TMP/pane.sh"
}
wait_screen() { # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		screen | grep -Eq "$1" && return 0
		sleep 0.1
	done
	return 1
}
fits() { # WIDTH WHAT
	local wide
	wide=$(screen | awk -v w="$1" 'length($0) > w' | head -1)
	[ -z "$wide" ] || die "$2: a line wider than $1 columns: $wide"
	screen | grep -q 'q:quit' || die "$2: the keys' line is cut: $(screen | head -5)"
}

start_pane 80 24 -- "$DIR/split" 30
wait_screen '^ *[0-9.]+% .* work_fifty$' 5 || die "80x24: no work_fifty row: $(screen)"
sleep 1.2
screen >"$TMP/80.txt"
cat "$TMP/80.txt"
fits 80 "80x24"
columns "$TMP/80.txt" || die "80x24: the columns do not line up"
# the paths the rows may show: split's and its libraries'
{ echo "$DIR/split"; ldd "$DIR/split" | grep -o '/[^ ]*'; } >"$TMP/paths"
python3 - "$TMP/80.txt" "$TMP/paths" <<'PY' || die "80x24: a file column is not cut by the rule"
import os, re, sys
lines = open(sys.argv[1]).read().split("\n")
known = open(sys.argv[2]).read().split()
h = next(l for l in lines if re.match(r"^ +last +session ", l))
f, s = h.index("  file") + 2, h.index("  symbol") + 2
cut = 0
for r in lines[lines.index(h) + 1:]:
    if not re.match(r"^ *[0-9.]+% ", r):
        break
    path = r[f:s].rstrip()
    if path.startswith("..."):
        cut += 1
        rest = path[3:]
        # the base name whole, behind the end of its directory cut at a '/'
        assert any((rest.startswith("/") and p.endswith(rest)) or
                   os.path.basename(p) == rest for p in known), \
            "not a whole base name behind a '/': %r" % path
    else:
        assert path in known or path.startswith("["), "cut path %r" % path
assert cut > 0, "the long path was not cut"
print("80x24: %d file columns cut, e.g. %r" % (cut, [l[f:s].rstrip() for l in lines if "work_fifty" in l][0]))
PY
tm send-keys -t "$S" q
wait_screen '^EXIT=0$' 5 || die "80x24: top did not exit 0: $(screen)"
tm kill-session -t "$S"

if [ "$(id -u)" -eq 0 ]; then
	NAP=$(build_workload nap_burn)
	start_pane 120 35 --off-cpu -- "$NAP" 2 "$TMP/nap.truth"
	wait_screen 'final totals' 8 || die "120x35: the command's end is not said: $(screen)"
	tm send-keys -t "$S" v
	wait_screen 'v:value\(off-cpu\)' 3 || die "v did not change the value: $(screen | head -4)"
	sleep 0.5
	screen >"$TMP/120.txt"
	cat "$TMP/120.txt"
	fits 120 "120x35 --off-cpu"
	grep -q 'naming' "$TMP/120.txt" || die "120x35: the header lost 'naming'"
	grep -Eq '^ +last +session +ms +total ms +comm' "$TMP/120.txt" ||
		die "120x35: no total ms column: $(grep session "$TMP/120.txt")"
	# nap's "total ms" is the session's: the time nap_burn says it slept,
	# more than the last, short interval's "ms" (which may hold some)
	python3 - "$TMP/120.txt" "$TMP/nap.truth" <<'PY' ||
import re, sys
rows = [re.match(r"^ *[0-9.]+% +[0-9.]+% +([0-9.]+) +([0-9.]+) +nap_burn .* nap$", l)
        for l in open(sys.argv[1]).read().split("\n")]
rows = [m for m in rows if m]
assert len(rows) == 1, "%d rows of nap" % len(rows)
last, total = float(rows[0].group(1)), float(rows[0].group(2))
slept = int(open(sys.argv[2]).read().split("\n")[-2].split()[1]) / 1e6
print("nap: last %.1f ms, total %.1f ms, slept %.1f ms" % (last, total, slept))
assert abs(total - slept) <= 0.1 * slept, "total is not the session's"
assert total > last, "total is not more than the last interval"
PY
		die "120x35: nap's session ms is not its slept time beside the last interval's"
	tm send-keys -t "$S" q
	wait_screen '^EXIT=' 5 || die "120x35: top did not exit"
else
	skip_part "not root: --off-cpu is not tried"
fi
pass
