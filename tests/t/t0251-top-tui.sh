#!/bin/bash
# exclusive: wants rows on the screen within wall-clock deadlines of the recorder's start
# dcprof top's full-screen view, driven through tmux (a 100x30 pane read
# with capture-pane, typed into with send-keys): the hot function on the
# first row within 3 s; the sort key changes; a filter keeps the matching
# rows; Enter opens a call tree (-g); space pauses; a resize to 80x24
# repaints with no line wider than the pane, one to 60 columns shortens
# the file's path, not the function; q exits 0, and q, Ctrl-C and
# SIGTERM leave the terminal sane (echo on, no alternate screen); k hides
# the kernel rows already shown (dd copying /dev/zero). Runs in
# the C locale (not UTF-8).
# With --off-cpu on nap_burn, v changes the value in the header (cpu to
# off-cpu) and nap, absent from the CPU view, leads the off-CPU view.
# Under --backend bpf, top -- split: the hot function on the first row
# within 3 s; when split exits the header says so and the final totals
# stay until q, which exits 0.
. "$(dirname "$0")/test-lib.sh"
need gcc tmux
need_perf_events

SPLIT=$(build_workload split)
spawn "$SPLIT" 60
WL=$SPAWNED
SOCK=$TMP/tmux.sock
S=dcprof-top-$$
tm() { tmux -S "$SOCK" "$@"; }
screen() { tm capture-pane -p -t "$S"; }
cleanup_tmux() { tm kill-server 2>/dev/null; }
trap 'cleanup_tmux; _cleanup' EXIT

# the pane: top with ARGS (default -g -p WL), then its status and the
# terminal's echo setting. The view is redrawn every DELAY seconds: a check
# that nothing changes waits three of them.
DELAY=0.3
start_pane() { # [ARGS...]
	[ $# -gt 0 ] || set -- -g -p "$WL"
	set -- --delay "$DELAY" "$@"
	cat >"$TMP/pane.sh" <<SH
export LC_ALL=C TERM=screen
echo \$\$ >"$TMP/shell.pid"
"$DCPROF" top $(printf '%q ' "$@")
echo "EXIT=\$?"
stty -a | tr ' ;' '\n\n' | grep -x -- '-\{0,1\}echo' | sed 's/^/ECHO=/'
exec sleep 300
SH
	rm -f "$TMP/shell.pid"
	tm new-session -d -s "$S" -x 100 -y 30 "bash $TMP/pane.sh"
}
# the table under the header, whose lines wrap on a narrow screen
column_header() { grep -m1 '^ *last  *session'; }
first_row() { sed -n '/^ *last  *session/{n;p;q}'; }
table_rows() { sed -n '/^ *last  *session/,$p' | tail -n +2; }
alt_screen() { tm display-message -p -t "$S" '#{alternate_on}'; }
wait_screen() { # REGEX SECONDS
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		screen | grep -Eq "$1" && return 0
		sleep 0.1
	done
	return 1
}
# until_true SECONDS CMD...: until CMD succeeds, 1 after SECONDS
until_true() {
	local i limit
	limit=$(awk -v s="$1" 'BEGIN { print int(s * 10) }')
	shift
	for ((i = 0; i < limit; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
three_intervals() { sleep "$(awk -v d="$DELAY" 'BEGIN { print 3 * d + 0.1 }')"; }
check_exit() { # WHAT
	wait_screen '^EXIT=' 5 || die "$1: top did not exit: $(screen)"
	screen | grep -q '^EXIT=0$' || die "$1: top's status: $(screen | grep EXIT=)"
	wait_screen '^ECHO=' 5 || die "$1: no stty output"
	screen | grep -q '^ECHO=echo$' || die "$1: echo is off after top"
	[ "$(alt_screen)" = 0 ] || die "$1: the alternate screen was left on"
	tm kill-session -t "$S"
}

start_pane
# the hot function on the first row within 3 s
wait_screen '^ *[0-9.]+% +[0-9.]+% +[0-9]+ +split .* work_fifty$' 3 ||
	die "work_fifty is not on a row within 3 s: $(screen)"
row1=$(screen | first_row)
echo "$row1" | grep -q 'work_fifty$' || die "first row: $row1"
screen | column_header | grep -q 'last  *session  *samples  *comm  *file  *symbol' ||
	die "no column header: $(screen | column_header)"

# sort change
screen | grep -q 'sort(last)' || die "the sort key is not shown"
tm send-keys -t "$S" s
wait_screen 'sort\(session\)' 2 || die "s did not change the sort"
tm send-keys -t "$S" s
wait_screen 'sort\(name\)' 2 || die "s did not cycle the sort"
tm send-keys -t "$S" s
wait_screen 'sort\(last\)' 2 || die "s did not cycle back"

# an unknown key is ignored
tm send-keys -t "$S" x
sleep 0.3
screen | grep -q 'work_fifty' || die "an unknown key changed the view"

# filter by symbol: only matching rows
tm send-keys -t "$S" / t h i r t y Enter
wait_screen 'filter=thirty|/:filter=thirty' 2 || die "the filter is not shown: $(screen)"
filtered() { ! screen | table_rows | grep -q 'work_fifty'; }
until_true 3 filtered || die "the filter kept work_fifty: $(screen)"
screen | table_rows | grep -q 'work_thirty' || die "the filter hid work_thirty"
# Escape in the filter prompt clears it
tm send-keys -t "$S" / Escape
wait_screen 'work_fifty' 2 || die "clearing the filter did not bring rows back"

# call tree of the first row (-g): work_fifty's callers
tm send-keys -t "$S" Enter
wait_screen 'call tree of' 2 || die "Enter did not open a call tree: $(screen)"
screen | grep -q '<- ' || die "the call tree has no callers: $(screen)"
# each path once: stacks that differ only in where in a function the
# samples fell are one (before, work_fifty <- main <- ... seven times)
screen | awk '/^ *[0-9.]+%  / { if (p != "") print p; p = $2; next }
	/^ +<- / { p = p ";" $2 } END { if (p != "") print p }' |
	sort | uniq -d >"$TMP/dup-paths"
[ ! -s "$TMP/dup-paths" ] ||
	die "the call tree shows a path twice: $(cat "$TMP/dup-paths"): $(screen)"
tm send-keys -t "$S" x # any key goes back
wait_screen 'sort\(' 2 || die "the call tree did not close"
tm send-keys -t "$S" Space
wait_screen '\[paused\]' 2 || die "space did not pause: $(screen)"
a=$(screen | table_rows)
three_intervals
b=$(screen | table_rows)
[ "$a" = "$b" ] || die "the paused view changed"
tm send-keys -t "$S" Space
resumed() { ! screen | grep -q '\[paused\]'; }
until_true 2 resumed || die "space did not resume"

# help
tm send-keys -t "$S" '?'
wait_screen 'any key closes this help' 2 || die "? shows no help"
tm send-keys -t "$S" x
wait_screen 'sort\(' 2 || die "the help did not close"

# resize to 80x24: repainted, no line wider than the pane
tm resize-window -t "$S" -x 80 -y 24
repainted() { # COLUMNS: a full view no wider than COLUMNS
	screen | grep -q 'work_fifty' &&
		[ -z "$(screen | awk -v w="$1" 'length($0) > w' | head -1)" ]
}
until_true 3 repainted 80 || die "no full view of 80 columns after the resize: $(screen)"
[ "$(screen | wc -l)" -le 24 ] || die "more than 24 lines"
wide=$(screen | awk 'length($0) > 80' | head -1)
[ -z "$wide" ] || die "a line wider than 80 columns: $wide"
screen | grep -q 'work_fifty' || die "nothing after the resize: $(screen)"
# 60 columns: the file's path gives way, the function's name stays whole
# (before: cut to "wor")
tm resize-window -t "$S" -x 60 -y 24
until_true 3 repainted 60 || die "no full view of 60 columns after the resize: $(screen)"
screen | grep -Eq ' work_fifty$' ||
	die "work_fifty is cut at 60 columns: $(screen | sed -n '5,8p')"

tm send-keys -t "$S" q
check_exit q

# Ctrl-C and SIGTERM restore the terminal too
start_pane
wait_screen 'work_fifty' 3 || die "top did not start again"
tm send-keys -t "$S" C-c
check_exit Ctrl-C

start_pane
wait_screen 'work_fifty' 3 || die "top did not start again"
pkill -TERM -P "$(cat "$TMP/shell.pid")" -x dcprof ||
	die "no dcprof to send SIGTERM to"
check_exit SIGTERM

# k hides the kernel frames of the rows already shown: dd copying
# /dev/zero spends most of its time in the kernel; after k no row is the
# kernel's (before, the rows seen before k kept their kernel frame)
start_pane -g -- dd if=/dev/zero of=/dev/null bs=1M
wait_screen '^ *[0-9.]+% .*\[kernel\.kallsyms\]' 4 ||
	die "no kernel row for dd: $(screen)"
tm send-keys -t "$S" k
wait_screen 'kernel\(hidden\)' 2 || die "k is not shown: $(screen | head -3)"
no_kernel_rows() { ! screen | table_rows | grep -q 'kernel\.kallsyms'; }
# within five intervals: rows shown before k must not keep their kernel
# frame until they age out
until_true 1.5 no_kernel_rows ||
	die "kernel rows after k: $(screen | sed -n '5,12p')"
screen | table_rows | grep -Eq ' dd +/' ||
	die "no user row for dd after k: $(screen | sed -n '5,12p')"
tm send-keys -t "$S" q
check_exit k

# v with --off-cpu: the value changes in the header, and nap (asleep, no
# CPU samples) appears, leading the off-CPU view
# (--off-cpu needs root, as in t0253)
if [ "$(id -u)" -eq 0 ]; then
	NAP=$(build_workload nap_burn)
	spawn "$NAP" 60 "$TMP/nap.truth"
	NAPPID=$SPAWNED
	start_pane --off-cpu -p "$NAPPID"
	wait_screen '^ *[0-9.]+% +[0-9.]+% +[0-9]+ +nap_burn .* burn_cpu$' 3 ||
		die "--off-cpu: burn_cpu is not on a row within 3 s: $(screen)"
	screen | grep -q 'v:value(cpu)' || die "the header does not show the value: $(screen | sed -n 3p)"
	! screen | table_rows | grep -q ' nap$' || die "nap has a row in the CPU view: $(screen)"
	tm send-keys -t "$S" v
	wait_screen 'v:value\(off-cpu\)' 2 || die "v did not change the value: $(screen | sed -n 3p)"
	screen | column_header | grep -q 'last  *session  *ms  *total ms  *comm' ||
		die "the off-CPU view has no ms column: $(screen | column_header)"
	wait_screen '^ *[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+ +nap_burn .* nap$' 3 ||
		die "nap does not appear in the off-CPU view: $(screen)"
	nap_leads() { screen | first_row | grep -q ' nap$'; }
	until_true 3 nap_leads || die "nap does not lead the off-CPU view: $(screen)"
	tm send-keys -t "$S" v
	wait_screen 'v:value\(wall\)' 2 || die "v did not cycle to wall: $(screen | sed -n 3p)"
	tm send-keys -t "$S" q
	check_exit "--off-cpu"
	kill -KILL "$NAPPID" 2>/dev/null
	wait "$NAPPID" 2>/dev/null
else
	skip_part "not root: --off-cpu is not tried"
fi

# --backend bpf, top -- CMD: the hot function first within 3 s; the
# command's end said in the header, the final totals kept until q
if "$DCPROF" record --backend bpf --duration 0.3 -o "$TMP/bpf-probe.data" \
	>"$TMP/bpf-probe.out" 2>"$TMP/bpf-probe.err"; then
	start_pane --backend bpf -- "$SPLIT" 4
	# the view is drawn once the recorder runs: the BPF backend's start
	# (making its stack maps, 1M entries each) took from 1 to 16 s on this
	# 2-CPU machine at load 4, so the 3 s count from the view's first
	# drawing
	wait_screen "^dcprof top  'split' \\(pid [0-9]+\\) running" 30 ||
		die "bpf: no view after 30 s: $(screen)"
	wait_screen '^ *[0-9.]+% +[0-9.]+% +[0-9]+ +split .* work_fifty$' 3 ||
		die "bpf: work_fifty is not on a row within 3 s: $(screen)"
	screen | first_row | grep -q 'work_fifty$' || die "bpf: first row: $(screen | first_row)"
	wait_screen "'split' \(pid [0-9]+\) exited with status 0, final totals" 30 ||
		die "the command's end is not in the header: $(screen)"
	a=$(screen | sed -n '4,$p')
	three_intervals
	[ "$a" = "$(screen | sed -n '4,$p')" ] || die "the final totals changed after the command's end"
	screen | first_row | grep -q 'work_fifty$' || die "the final totals lost work_fifty: $(screen)"
	! screen | grep -q '^EXIT=' || die "top ended with the command, before q"
	tm send-keys -t "$S" q
	check_exit "top -- CMD"
else
	skip_part "the BPF backend does not load: $(cat "$TMP/bpf-probe.err")"
fi

pass
