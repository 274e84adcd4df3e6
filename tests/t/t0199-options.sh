#!/bin/bash
# exclusive: records the whole machine while split runs (-a -- split): another test's copy of split, running then, has its base name
# The options, each checked by what it selects:
#  record: --ready-fd (the line comes once the events are on and the walk
#    is in the file, and the command does not hold the descriptor), -p A,B
#    (those two processes, not a third), -p following children forked
#    after the start, -e task-clock, an unknown -e (one-line error, no
#    file), --call-graph fp (callers recorded), repeated --only (both files,
#    nothing else), the default output name (dcprof.data in the cwd, read
#    by a report without -i), the long option forms;
#  report: --limit, -s, --file (base name and path), --no-inline, comma
#    lists for --comm and --symbol;
#  annotate --no-demangle; collect -p with several pids; flamegraph's
#  default output names; dcprof --version, --help, an unknown command.
. "$(dirname "$0")/test-lib.sh"
need gcc g++ python3
need_perf_events

SPIN=$(build_workload spin)
SPLIT=$(build_workload split)
INL=$(build_workload sym_inline)
CXX=$TMP/sym_cxx
g++ -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$CXX" \
	"$TOP/tests/workloads/sym_cxx.cc" || die "cannot build sym_cxx"

# py FILE... <<'PY': python over the files, which are sys.argv[1:]
py() { python3 - "$@"; }

# start_spin NAME: a spinning process, running once this returns; $SPAWNED
start_spin() {
	spawn "$SPIN" "$TMP/$1.ready"
	wait_file "$TMP/$1.ready"
}

# ---- record --ready-fd, -p A,B -----------------------------------------
start_spin s1
S1=$SPAWNED
start_spin s2
S2=$SPAWNED
start_spin s3
S3=$SPAWNED
mkfifo "$TMP/ready.fifo" || die "cannot make a fifo"
F=$TMP/pab.data
"$DCPROF" record -p "$S1,$S2" -o "$F" --ready-fd 3 >"$TMP/pab.out" \
	2>"$TMP/pab.err" 3>"$TMP/ready.fifo" &
REC=$!
_spawned+=("$REC")
# read to the end: the recorder closes the descriptor after its line
line=$(timeout 30 cat "$TMP/ready.fifo") || die "no ready line within 30 s"
[ "$line" = recording ] || die "--ready-fd wrote '$line', not 'recording'"
# at that moment the events are on: the working file is there, ours
# (the walk's records are replayed into it as recording goes on)
"$DCPROF" report -i "$F" --format json >"$TMP/ready.json" 2>&1 ||
	die "no readable profile when the recorder said it records: $(head -c 300 "$TMP/ready.json")"
py "$TMP/ready.json" <<'PY' || die "the working file is not this recording's"
import json, sys
m = json.load(open(sys.argv[1]))["meta"]
assert not m["complete"] and "--ready-fd 3" in m["cmdline"], m
PY
sleep 1
kill -INT "$REC"
wait "$REC" || die "record -p A,B failed: $(cat "$TMP/pab.err")"
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid --format json
py "$TMP/out" "$S1" "$S2" "$S3" <<'PY' || die "-p A,B did not record exactly A and B"
import json, sys
d = json.load(open(sys.argv[1]))
a, b, c = map(int, sys.argv[2:5])
n = {}
for r in d["rows"]:
    n[r["pid"]] = n.get(r["pid"], 0) + r["samples"]
print("-p %d,%d (not %d): samples by pid %s" % (a, b, c, n))
assert set(n) <= {a, b}, "other pids: %s" % (set(n) - {a, b})
assert n.get(a, 0) >= 300 and n.get(b, 0) >= 300, n
PY

# --ready-fd with a command: the command does not inherit the descriptor,
# so the reader sees its end well before the command's 4 s are over
start=$(date +%s%N)
"$DCPROF" record -o "$TMP/cmd.data" --ready-fd 3 -- sleep 4 \
	>/dev/null 2>"$TMP/cmd.err" 3>"$TMP/ready.fifo" &
REC=$!
_spawned+=("$REC")
line=$(timeout 30 cat "$TMP/ready.fifo") || die "no ready line within 30 s"
ms=$((($(date +%s%N) - start) / 1000000))
echo "--ready-fd with a command: '$line' and its end after $ms ms"
[ "$line" = recording ] || die "--ready-fd wrote '$line'"
[ "$ms" -lt 3000 ] || die "the descriptor stayed open $ms ms: the command holds it"
wait "$REC" || die "record -- sleep failed: $(cat "$TMP/cmd.err")"
expect_exit 2 "$DCPROF" record --ready-fd 9 -o "$TMP/bad.data" -- true
[ ! -e "$TMP/bad.data" ] || die "--ready-fd of a closed descriptor recorded"

# ---- collect -p A,B --------------------------------------------------------
expect_exit 0 "$DCPROF" collect -p "$S1,$S2" --format json
py "$TMP/out" "$S1" "$S2" <<'PY' || die "collect -p A,B"
import json, sys
d = json.load(open(sys.argv[1]))
a, b = map(int, sys.argv[2:4])
pids = {r["pid"] for r in d["records"] if "pid" in r}
print("collect -p %d,%d: pids %s" % (a, b, sorted(pids)))
assert pids == {a, b}, pids
PY
kill -KILL "$S2" "$S3"
wait "$S2" "$S3" 2>/dev/null

# ---- -p following forked children ------------------------------------------
# a shell that forks a spinning child only once it is told to, after the
# recorder records
spawn bash -c 'while [ ! -e "$1/go" ]; do sleep 0.05; done
	"$2" "$1/child.ready" & echo $! >"$1/child.pid"; wait' _ "$TMP" "$SPIN"
PARENT=$SPAWNED
F=$TMP/kids.data
"$DCPROF" record -p "$PARENT" -o "$F" --ready-fd 3 >/dev/null \
	2>"$TMP/kids.err" 3>"$TMP/kids.ready" &
REC=$!
_spawned+=("$REC")
wait_line "$TMP/kids.ready" '^recording$' 30
touch "$TMP/go"
wait_file "$TMP/child.ready"
CHILD=$(cat "$TMP/child.pid")
_spawned+=("$CHILD")
sleep 1
# The child's CPU time while recorded is the truth (a loaded machine gives
# it less than the second): stop it before the recorder.
kill -STOP "$CHILD"
CHILD_TICKS=$(awk '{ print $14 + $15 }' "/proc/$CHILD/stat")
kill -INT "$REC"
wait "$REC" || die "record -p PARENT failed: $(cat "$TMP/kids.err")"
kill -KILL "$CHILD" "$PARENT" 2>/dev/null
wait "$PARENT" 2>/dev/null
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid --format json
py "$TMP/out" "$CHILD" "$CHILD_TICKS" "$(getconf CLK_TCK)" <<'PY' || die "-p does not follow a child forked after the start"
import json, sys
d = json.load(open(sys.argv[1]))
child = int(sys.argv[2])
cpu_s = int(sys.argv[3]) / int(sys.argv[4])
rate = d["meta"]["sample_freq"]
n = sum(r["samples"] for r in d["rows"] if r["pid"] == child and r["comm"] == "spin")
print("-p PARENT: %d samples of its child %d, which ran %.2f s (%d expected)"
      % (n, child, cpu_s, cpu_s * rate))
assert cpu_s > 0.1, "the child hardly ran: %.2f s" % cpu_s
assert n >= 0.7 * cpu_s * rate, "only %d samples of the child" % n
PY

# ---- -e task-clock, an unknown -e, --call-graph fp, long forms -------------
expect_exit 0 "$DCPROF" record -e task-clock -o "$TMP/tc.data" -- "$SPLIT" 1
expect_exit 0 "$DCPROF" report -i "$TMP/tc.data" --format json --sort symbol
py "$TMP/out" <<'PY' || die "-e task-clock"
import json, sys
d = json.load(open(sys.argv[1]))
n = sum(r["samples"] for r in d["rows"] if r["symbol"].startswith("work_"))
print("-e task-clock: event %s, %d samples in the split" % (d["meta"]["event"], n))
assert d["meta"]["event"] == "task-clock", d["meta"]
assert n >= 500, n
assert not d["meta"]["callchain"], "call graphs without -g"
PY
mkdir "$TMP/cwd-bad"
(cd "$TMP/cwd-bad" && "$DCPROF" record -e no-such-event -- true) \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || die "an unknown -e exited $rc"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || die "an unknown -e: not one line: $(cat "$TMP/err")"
grep -q "no-such-event" "$TMP/err" || die "the error does not name the event: $(cat "$TMP/err")"
[ -z "$(ls -A "$TMP/cwd-bad")" ] || die "an unknown -e left $(ls -A "$TMP/cwd-bad")"

# the long forms, --call-graph fp among them: callers recorded
expect_exit 0 "$DCPROF" record --event task-clock --freq 499 \
	--call-graph fp --output "$TMP/long.data" -- "$SPLIT" 1
expect_exit 0 "$DCPROF" report --input "$TMP/long.data" --format json \
	--children --sort symbol --comm split
py "$TMP/out" <<'PY' || die "the long option forms or --call-graph fp"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["meta"]
rows = {r["symbol"]: r for r in d["rows"]}
print("long forms: event %s, %d Hz, callchain %s; main inclusive %d of %d"
      % (m["event"], m["sample_freq"], m["callchain"],
         rows.get("main", {}).get("children", 0), d["total"]))
assert m["event"] == "task-clock" and m["sample_freq"] == 499, m
assert m["callchain"], "--call-graph fp recorded no call chains"
assert "--call-graph fp" in m["cmdline"], m["cmdline"]
assert rows["main"]["children"] >= 0.9 * d["total"], "main is not the callers' root"
PY
expect_exit 0 "$DCPROF" record --all-cpus --duration 0.5 -o "$TMP/all.data"
[ "$(json_get <("$DCPROF" report -i "$TMP/all.data" --format json) 'd["meta"]["duration_ns"] < 3e9')" = true ] ||
	die "--all-cpus --duration 0.5 recorded too long"

# ---- repeated --only ---------------------------------------------------
F=$TMP/only.data
expect_exit 0 "$DCPROF" record -a --only "$SPLIT" --only "$SPIN" -o "$F" \
	-- "$SPLIT" 1
expect_exit 0 "$DCPROF" report -i "$F" --sort file --format json
py "$TMP/out" "$SPLIT" "$SPIN" <<'PY' || die "repeated --only"
import json, sys
d = json.load(open(sys.argv[1]))
files = {r["file"]: r["samples"] for r in d["rows"]}
print("--only split --only spin: %s" % files)
assert set(files) == set(sys.argv[2:4]), files
assert min(files.values()) >= 300, files
PY

# ---- the default output name -------------------------------------------
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && "$DCPROF" record -- "$SPLIT" 1) >/dev/null 2>"$TMP/err" ||
	die "record without -o failed: $(cat "$TMP/err")"
[ -f "$TMP/cwd/dcprof.data" ] || die "no dcprof.data in the cwd: $(ls -A "$TMP/cwd")"
(cd "$TMP/cwd" && "$DCPROF" report --format json --sort symbol) >"$TMP/out" ||
	die "report without -i failed"
py "$TMP/out" <<'PY' || die "report without -i did not read dcprof.data"
import json, sys
d = json.load(open(sys.argv[1]))
print("default name: %s, %d samples" % (d["file"], d["total"]))
assert d["file"] == "dcprof.data" and d["total"] >= 500, (d["file"], d["total"])
PY

# ---- report: --limit, -s, --file, comma lists ------------------------------
F=$TMP/mixed.data
start_spin s4
S4=$SPAWNED
expect_exit 0 "$DCPROF" record -a -o "$F" -- "$SPLIT" 1
kill -KILL "$S4" "$S1"
wait "$S4" "$S1" 2>/dev/null
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,file,symbol --format json
cp "$TMP/out" "$TMP/mixed.json"
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,file,symbol --format json --limit 3
cp "$TMP/out" "$TMP/limit.json"
expect_exit 0 "$DCPROF" report -i "$F" --limit 2
grep -q '^# [0-9]* more rows' "$TMP/out" || die "--limit 2: no '# N more rows' line"
[ "$(grep -cv '^#' "$TMP/out")" -eq 3 ] || die "--limit 2: not a heading and 2 rows: $(cat "$TMP/out")"
expect_exit 0 "$DCPROF" report -i "$F" -s pid,symbol --format json
cp "$TMP/out" "$TMP/s.json"
expect_exit 0 "$DCPROF" report -i "$F" --sort pid,symbol --format json
cmp -s "$TMP/out" "$TMP/s.json" || die "-s and --sort differ"
for sel in "--file split" "--file $SPLIT" "--comm split,spin" \
	"--symbol work_fifty,spin_forever"; do
	name=$(echo "$sel" | tr -c 'a-z\n' _)
	# shellcheck disable=SC2086 # the option and its value
	expect_exit 0 "$DCPROF" report -i "$F" --sort comm,file,symbol \
		--format json $sel
	cp "$TMP/out" "$TMP/$name.json"
done
py "$TMP" "$SPLIT" <<'PY' || die "report's selections are wrong"
import json, os, sys
T, split = sys.argv[1], sys.argv[2]
load = lambda n: json.load(open(os.path.join(T, n)))
full = load("mixed.json")
rows = full["rows"]
key = lambda r: (r["comm"], r["file"], r["symbol"])

lim = load("limit.json")
print("--limit 3:", [key(r) for r in lim["rows"]])
assert [key(r) for r in lim["rows"]] == [key(r) for r in rows[:3]], lim["rows"]
assert len(rows) > 3

def check(name, pred, what):
    d = load(name)
    want = [key(r) for r in rows if pred(r)]
    got = [key(r) for r in d["rows"]]
    n = sum(r["samples"] for r in rows if pred(r))
    print("%s: %d rows, %d samples (want %d rows, %d samples)" %
          (what, len(got), d["total"], len(want), n))
    assert n >= 300, "%s: only %d samples to select" % (what, n)
    assert n < full["total"], "%s selects everything" % what
    assert sorted(got) == sorted(want), "%s: %s, want %s" % (what, got, want)
    assert d["total"] == n, (d["total"], n)

# --file: samples whose leaf frame is in the file, by base name or path
check("__file_split.json", lambda r: r["file"] == split, "--file split")
check("__file_" + "".join(c if "a" <= c <= "z" else "_" for c in split) + ".json",
      lambda r: r["file"] == split, "--file PATH")
check("__comm_split_spin.json", lambda r: r["comm"] in ("split", "spin"),
      "--comm split,spin")
check("__symbol_work_fifty_spin_forever.json",
      lambda r: r["symbol"] in ("work_fifty", "spin_forever"),
      "--symbol work_fifty,spin_forever")
assert any(r["comm"] == "spin" for r in rows) and any(r["comm"] == "split" for r in rows)
PY

# ---- report --no-inline ------------------------------------------------
F=$TMP/inline.data
expect_exit 0 "$DCPROF" record -g -o "$F" -- "$INL" 1
for v in inline no-inline; do
	opt=
	[ "$v" = no-inline ] && opt=--no-inline
	# shellcheck disable=SC2086
	expect_exit 0 "$DCPROF" report -i "$F" --tree caller --comm sym_inline \
		--format json $opt
	cp "$TMP/out" "$TMP/$v.json"
done
py "$TMP/inline.json" "$TMP/no-inline.json" <<'PY' || die "--no-inline"
import json, sys
def walk(nodes, parent=None):
    for n in nodes:
        yield n, parent
        yield from walk(n["children"], n)
inl = list(walk(json.load(open(sys.argv[1]))["tree"]["roots"]))
no = list(walk(json.load(open(sys.argv[2]))["tree"]["roots"]))
# a function can stand at more than one place of the tree (a stack with a
# frame more or less): its self time is the sum over them
hot, callers = {}, {}
for n, p in inl:
    if n["inline"] and n["name"] == "hot":
        hot[p["name"]] = hot.get(p["name"], 0) + n["self"]
for n, p in no:
    if n["name"].startswith("caller_"):
        callers[n["name"]] = callers.get(n["name"], 0) + n["self"]
print("inlined hot's self time under its callers %s; --no-inline: %s" % (hot, callers))
assert set(hot) == {"caller_seventy", "caller_thirty"}, hot
assert not any(n["inline"] for n, p in no), "--no-inline kept inlined frames"
for c, s in hot.items():
    assert callers.get(c, 0) >= s, "%s has %d, hot had %d under it" % (c, callers.get(c, 0), s)
assert hot["caller_seventy"] >= 300
PY

# ---- annotate --no-demangle ------------------------------------------------
F=$TMP/cxx.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$CXX" 1
MANGLED=_ZN6shapes3BoxIiE4spinEm
expect_exit 0 "$DCPROF" annotate "$MANGLED" -i "$F" --no-demangle --format json
cp "$TMP/out" "$TMP/raw.json"
expect_exit 0 "$DCPROF" annotate "$MANGLED" -i "$F" --format json
cp "$TMP/out" "$TMP/demangled.json"
expect_exit 0 "$DCPROF" report -i "$F" --sort symbol --no-demangle --format json
py "$TMP/raw.json" "$TMP/demangled.json" "$TMP/out" "$MANGLED" <<'PY' || die "annotate --no-demangle"
import json, sys
raw = json.load(open(sys.argv[1]))["functions"]
dem = json.load(open(sys.argv[2]))["functions"]
rep = {r["symbol"]: r["samples"] for r in json.load(open(sys.argv[3]))["rows"]}
m = sys.argv[4]
print("--no-demangle: %s, %d samples; demangled: %s" % (
    [f["symbol"] for f in raw], sum(f["samples"] for f in raw),
    [f["symbol"] for f in dem]))
assert [f["symbol"] for f in raw] == [m], raw
assert raw[0]["samples"] == rep[m] and rep[m] >= 200, (raw[0]["samples"], rep.get(m))
assert [f["symbol"] for f in dem] == ["shapes::Box<int>::spin(unsigned long)"], dem
PY

# ---- flamegraph's default output names -------------------------------------
mkdir "$TMP/fg"
(cd "$TMP/fg" && "$DCPROF" flamegraph -i "$F" &&
	"$DCPROF" flamegraph -i "$F" --format svg) >/dev/null 2>"$TMP/err" ||
	die "flamegraph without -o failed: $(cat "$TMP/err")"
[ "$(ls "$TMP/fg" | tr '\n' ' ')" = "flamegraph.html flamegraph.svg " ] ||
	die "flamegraph wrote: $(ls "$TMP/fg")"
grep -qi '<html' "$TMP/fg/flamegraph.html" || die "flamegraph.html is not HTML"
grep -q '<svg' "$TMP/fg/flamegraph.svg" || die "flamegraph.svg is not SVG"
grep -q 'spin' "$TMP/fg/flamegraph.svg" || die "flamegraph.svg has no frame of the recording"

# ---- dcprof --version, --help, an unknown command --------------------------
expect_exit 0 "$DCPROF" --version
want=$(sed -n 's/.*-DDCPROF_VERSION=\\"\([^\\]*\)\\".*/\1/p' "$TOP/Makefile" | head -1)
[ -n "$want" ] || die "no DCPROF_VERSION in the Makefile"
echo "--version: $(cat "$TMP/out") (Makefile: $want)"
[ "$(cat "$TMP/out")" = "dcprof $want" ] || die "--version printed '$(cat "$TMP/out")'"
expect_exit 0 "$DCPROF" --help
for c in record report cookies export flamegraph annotate collect; do
	grep -q "^  $c " "$TMP/out" || die "--help does not list '$c'"
done
expect_exit 2 "$DCPROF" no-such-command
[ ! -s "$TMP/out" ] || die "an unknown command printed on stdout"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "no-such-command" "$TMP/err" ||
	die "an unknown command: not one line naming it: $(cat "$TMP/err")"

pass
