#!/bin/bash
# exclusive: a busy Python process and its recorder (slow under a sanitizer) starve what runs beside them: browser pages drawn late, off-CPU times against a clock
# Python frames (Debian's /usr/bin/python3, CPython 3.11, BPF backend)
# everywhere a frame goes, on one script recorded with -g --off-cpu:
#  - a plain function, a generator's body and an async coroutine's body
#    burning 50/30/20 of the main thread's CPU time by its own clock
#    (time.thread_time): their shares within 3 points, each under its
#    Python callers (the generator under the function that consumes it,
#    the coroutine under the one that awaits it, that under asyncio.run
#    and the module);
#  - annotate of a Python function: its samples by source line (each
#    sample at its innermost Python frame's), two lines calling C code
#    (zlib, hashlib) within 3 points of their shares by the script's
#    clock, the lines' text from the file, text and JSON; a method by the
#    last part of its qualname; the counts alone when the file is gone;
#  - a thread waiting on a threading.Lock: its off-CPU time under the
#    Python function that waits, within 10% of the wait the script timed;
#  - pprof: the Python functions with their file and lines;
#  - flame graphs: the Python frames of their own type;
#  - top -p of a script started before it names its Python functions, and
#    so do record --continuous -p's periods and their pushes to a receiver
#    that decides as Pyroscope does, a function that runs after a whole
#    period without a sample of its process included.
. "$(dirname "$0")/test-lib.sh"
need gcc protoc gzip
need_bpf_backend
need_python311
folded_tool

cat >"$TMP/prog.py" <<'PY'
import asyncio, hashlib, json, sys, threading, time, zlib

took = {"plain": 0.0, "gen_body": 0.0, "coro_body": 0.0}
lines = [0.0, 0.0]
LINES = {}


def spin(sec):
    end = time.thread_time() + sec
    while time.thread_time() < end:
        pass


def timed_spin(name, sec):
    t = time.thread_time()
    spin(sec)
    took[name] += time.thread_time() - t


def plain():
    timed_spin("plain", 0.005)


def gen_body(n):
    for _ in range(n):
        timed_spin("gen_body", 0.003)
        yield 1


def consume(n):
    return sum(gen_body(n))


async def coro_body(n):
    for _ in range(n):
        timed_spin("coro_body", 0.002)
        await asyncio.sleep(0)


DATA = bytes(range(256)) * 4096  # about 1,000 samples on the two lines


def two_lines():
    t0 = time.thread_time()
    zlib.compress(DATA, 6)
    t1 = time.thread_time()
    hashlib.sha256(DATA * 2).digest()
    t2 = time.thread_time()
    lines[0] += t1 - t0
    lines[1] += t2 - t1


class Box:
    def fill(self):
        hashlib.sha256(DATA).digest()


def wait_lock(lock, waited):
    t = time.monotonic()
    lock.acquire()
    waited.append(time.monotonic() - t)
    lock.release()


def warm_up(sec):
    # the recorder reads the new process's interpreter and builds or loads
    # its files' unwind tables meanwhile: a wait that began before would
    # keep the stack it was walked with (frame pointers, cut short)
    end = time.time() + sec
    while time.time() < end:
        pass


async def main_async(rounds):
    for _ in range(rounds):
        plain()
        consume(1)
        await coro_body(1)
        two_lines()
        Box().fill()


def main():
    code = two_lines.__code__
    src = open(code.co_filename).read().splitlines()
    first = code.co_firstlineno
    for i, text in enumerate(src[first - 1:first + 8]):
        if "zlib.compress" in text:
            LINES["zlib"] = first + i
        if "hashlib.sha256" in text:
            LINES["sha"] = first + i
    warm_up(1)
    lock = threading.Lock()
    waited = []
    lock.acquire()
    waiter = threading.Thread(target=wait_lock, args=(lock, waited))
    waiter.start()
    asyncio.run(main_async(250))
    lock.release()
    waiter.join()
    print("truth " + json.dumps({"took": took, "lines": lines,
                                 "line_numbers": LINES, "waited": waited[0]}))


main()
PY

# the interpreter's unwind tables into the cache first (t0520 says why),
# from a process that lives long enough for them to be built while it runs
# (a file is opened through the process that maps it), under a sanitizer
# too
expect_exit 0 "$DCPROF" record -g -o "$TMP/warm.data" -- "$PY" -c 'import asyncio, hashlib, time, zlib
end = time.time() + 1
while time.time() < end:
    pass'
expect_exit 0 "$DCPROF" record -g --off-cpu -o "$TMP/py.data" -- "$PY" "$TMP/prog.py"
grep '^truth ' "$TMP/out" | cut -d' ' -f2- >"$TMP/truth.json" ||
	die "the script printed no truth: $(tail -5 "$TMP/err")"
"$TMP/folded" -u "$TMP/py.data" >"$TMP/py.folded" || die "cannot read py.data"

# the split, each function under its callers
python3 - "$TMP/py.folded" "$TMP/truth.json" <<'PY' || die "the generator's or the coroutine's frames are off"
import json, sys
truth = json.load(open(sys.argv[2]))
rows = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] == "python3":
        rows.append((frames[1:], int(n)))

P = lambda fn: fn + " (prog.py)"
def parent(f, fn):  # the Python caller of fn's innermost frame, or None
    i = max(i for i, g in enumerate(f) if g == P(fn))
    py = [g for g in f[:i] if g.endswith(".py)")]
    return py[-1] if py else None

spun = {}
for fn in truth["took"]:
    spun[fn] = [(f, n) for f, n in rows
                if "spin (prog.py)" in f and P(fn) in f and
                f.index(P(fn)) < max(i for i, g in enumerate(f) if g == "spin (prog.py)")]
inside = sum(n for fn in spun for _, n in spun[fn])
print("%d samples in spin under the three functions" % inside)
assert inside >= 700, "only %d samples in spin" % inside
whole = sum(truth["took"].values())
for fn, sec in truth["took"].items():
    share = 100.0 * sum(n for _, n in spun[fn]) / inside
    want = 100.0 * sec / whole
    print("%s: %.1f%% (the script's clock: %.1f%%)" % (fn, share, want))
    assert abs(share - want) <= 3, "%s: %.1f%%, want %.1f%% +- 3" % (fn, share, want)

# callers: the generator's body under the function that consumes it, the
# coroutine's under the coroutine awaiting it, all under main_async, under
# asyncio.run's frames, under the module
want = {"plain": P("main_async"), "gen_body": P("consume"), "coro_body": P("main_async")}
for fn, caller in want.items():
    n_all = sum(n for _, n in spun[fn])
    good = 0
    bad = None
    for f, n in spun[fn]:
        py = [g for g in f if g.endswith(".py)")]
        ok = (parent(f, fn) == caller and P("main_async") in py and
              py[0] == "<module> (prog.py)" and P("main") in py and
              "run (runners.py)" in py and
              py.index("run (runners.py)") < py.index(P("main_async")))
        if ok:
            good += n
        elif bad is None or n > bad[1]:
            bad = (f, n)
    print("%s: %d of %d under %s, main_async, asyncio.run and <module>" % (fn, good, n_all, caller))
    assert good >= 0.95 * n_all, "%s is not under its callers; the most samples (%d) on %s" % (
        fn, bad[1], " > ".join(bad[0]))
PY

# annotate: two_lines by source line against the script's clock
expect_exit 0 "$DCPROF" annotate -i "$TMP/py.data" two_lines
cp "$TMP/out" "$TMP/annotate.txt"
expect_exit 0 "$DCPROF" annotate -i "$TMP/py.data" two_lines --format json
python3 - "$TMP/out" "$TMP/annotate.txt" "$TMP/truth.json" "$TMP/prog.py" <<'PY' || die "annotate of a Python function is off: $(cat "$TMP/annotate.txt")"
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
truth = json.load(open(sys.argv[3]))
src = open(sys.argv[4]).read().splitlines()
assert len(doc["functions"]) == 1, "%d functions named two_lines" % len(doc["functions"])
fn = doc["functions"][0]
assert fn["python"] and fn["symbol"] == "two_lines (prog.py)", fn["symbol"]
assert fn["file"] == sys.argv[4] and fn["source_read"], (fn["file"], fn["source_read"])
by_line = {l["line"]: l for l in fn["lines"]}
assert sum(l["samples"] for l in fn["lines"]) == fn["samples"], "the lines do not add up"
for l in fn["lines"]:
    assert l["text"] == src[l["line"] - 1], "line %d's text: %r" % (l["line"], l["text"])
zl, sl = truth["line_numbers"]["zlib"], truth["line_numbers"]["sha"]
n = [by_line.get(zl, {"samples": 0})["samples"], by_line.get(sl, {"samples": 0})["samples"]]
assert sum(n) >= 200, "only %d samples on the two lines" % sum(n)
assert sum(n) >= 0.9 * fn["samples"], "%d of %d samples on the two lines" % (sum(n), fn["samples"])
want = 100.0 * truth["lines"][0] / sum(truth["lines"])
share = 100.0 * n[0] / sum(n)
print("two_lines: line %d (zlib) %.1f%% of the two lines, line %d (hashlib) %.1f%%; "
      "the script's clock: %.1f%% and %.1f%%" % (zl, share, sl, 100 - share, want, 100 - want))
assert abs(share - want) <= 3, "zlib's line: %.1f%%, want %.1f%% +- 3" % (share, want)
# the text shows the function from its def, the lines' counts beside them
assert re.search(r"^# two_lines \(prog\.py\) in .*prog\.py, Python", text, re.M), "no header"
assert re.search(r"^\s+\d+\s+def two_lines\(\):$", text, re.M), "no def line"
m = re.search(r"^\s+([\d.]+)%\s+(\d+)\s+" + str(zl) + r"\s+zlib\.compress", text, re.M)
assert m and int(m.group(2)) == n[0], "zlib's line in the text: %s" % (m and m.group(0))
PY
# a name with its file; a method by the last part of its qualname
expect_exit 0 "$DCPROF" annotate -i "$TMP/py.data" 'spin (prog.py)'
grep -q 'while time.thread_time() < end:' "$TMP/out" ||
	die "annotate 'spin (prog.py)' shows no line of it: $(cat "$TMP/out")"
expect_exit 0 "$DCPROF" annotate -i "$TMP/py.data" fill
grep -q '^# Box.fill (prog.py) in ' "$TMP/out" ||
	die "annotate fill does not show Box.fill: $(cat "$TMP/out")"
# the file gone: the lines' counts alone, said
mv "$TMP/prog.py" "$TMP/moved.py"
expect_exit 0 "$DCPROF" annotate -i "$TMP/py.data" two_lines
grep -q 'cannot be read here: the sampled lines alone' "$TMP/out" ||
	die "annotate without the source does not say so: $(cat "$TMP/out")"
mv "$TMP/moved.py" "$TMP/prog.py"

# off-CPU: the lock's wait under the function that waits
expect_exit 0 "$DCPROF" export -i "$TMP/py.data" --format folded --value off-cpu -o "$TMP/off.folded"
python3 - "$TMP/off.folded" "$TMP/truth.json" <<'PY' || die "the lock's wait is off"
import json, sys
waited = json.load(open(sys.argv[2]))["waited"] * 1e9
under = 0
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    f = stack.split(";")
    if "wait_lock (prog.py)" in f and "Thread.run (threading.py)" in f:
        under += int(n)
print("wait_lock: %.3f s off the CPU under Thread.run > wait_lock; the script waited %.3f s" %
      (under / 1e9, waited / 1e9))
assert waited > 0.5e9, "the script waited only %.3f s" % (waited / 1e9)
assert abs(under - waited) <= 0.1 * waited, "%.3f s, want %.3f +- 10%%" % (under / 1e9, waited / 1e9)
PY

# pprof: functions with their file, lines where the script says
expect_exit 0 "$DCPROF" export -i "$TMP/py.data" --format pprof -o "$TMP/py.pb.gz"
gzip -dc "$TMP/py.pb.gz" >"$TMP/py.pb" || die "the pprof export is not gzip"
protoc --decode perftools.profiles.Profile --proto_path="$TOP/proto" \
	"$TOP/proto/profile.proto" <"$TMP/py.pb" >"$TMP/py.pprof.txt" ||
	die "protoc cannot decode the export"
python3 - "$TMP/py.pprof.txt" "$TMP/truth.json" "$TMP/prog.py" <<'PY' || die "pprof's Python functions are off"
import ast, json, re, sys
text = open(sys.argv[1]).read()
truth = json.load(open(sys.argv[2]))
strings = [ast.literal_eval("b" + s).decode() for s in re.findall(r'^string_table: (".*")$', text, re.M)]
funcs = {}
for m in re.finditer(r"^function \{\n(.*?)^\}", text, re.M | re.S):
    body = dict(re.findall(r"^\s+(\w+): (\d+)$", m.group(1), re.M))
    funcs[int(body["id"])] = (strings[int(body.get("name", 0))], strings[int(body.get("filename", 0))])
lines = set()
for m in re.finditer(r"^\s+line \{\n(.*?)^\s+\}", text, re.M | re.S):
    body = dict(re.findall(r"^\s+(\w+): (\d+)$", m.group(1), re.M))
    name, path = funcs[int(body["function_id"])]
    lines.add((name, path, int(body.get("line", 0))))
for fn in ("two_lines (prog.py)", "gen_body (prog.py)", "coro_body (prog.py)", "wait_lock (prog.py)"):
    got = [(p, l) for n, p, l in lines if n == fn]
    assert got and all(p == sys.argv[3] for p, _ in got), "%s: %s" % (fn, got)
zl = truth["line_numbers"]["zlib"]
assert ("two_lines (prog.py)", sys.argv[3], zl) in lines, "no location at two_lines' line %d" % zl
print("pprof: the Python functions with %s and their lines" % sys.argv[3])
PY

# flame graphs: Python frames are of their own type
expect_exit 0 "$DCPROF" flamegraph -i "$TMP/py.data" -o "$TMP/py.svg" --format svg
python3 - "$TMP/py.svg" <<'PY' || die "the flame graph does not set Python frames apart"
import re, sys
svg = open(sys.argv[1]).read()
frames = re.findall(r'<g><title>([^<]*)</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"', svg)
# the page's and the SVG's palette for Python calls: orchid, red above
# green, blue high; no other kind has both
orchid = lambda r, g, b: b >= 220 and r - g >= 60
py = [(t, orchid(*map(int, c))) for t, *c in frames if " in [python:" in t]
other = [t for t, *c in frames if " in [python:" not in t and orchid(*map(int, c))]
assert len(py) >= 8, "only %d Python frames drawn" % len(py)
assert all(ok for _, ok in py), "Python frames not in orchid: %s" % [t for t, ok in py if not ok][:3]
assert not other, "other frames in orchid: %s" % other[:3]
print("flame graph: %d Python frames in orchid, no other" % len(py))
PY
# the page: Python frames of type 8, named "python" in its types
expect_exit 0 "$DCPROF" flamegraph -i "$TMP/py.data" -o "$TMP/py.html"
python3 - "$TMP/py.html" <<'PY' || die "the page does not set Python frames apart"
import json, re, sys
d = json.loads(re.search(r'<script type="application/json" id="fg-data">(.*?)</script>',
                         open(sys.argv[1]).read(), re.S).group(1))
assert d["types"][8] == "python", d["types"]
k, nodes, S = d["stride"], d["nodes"], d["strings"]
kinds = {(S[nodes[i + 1]].startswith("[python:"), nodes[i + 2]) for i in range(0, len(nodes), k)}
assert (True, 8) in kinds and not {t for p, t in kinds if p} - {8}, kinds
assert 8 not in {t for p, t in kinds if not p}, kinds
print("page: Python frames of type 8, no other")
PY

# a script running before the recorder starts: top names its Python
# functions
cat >"$TMP/run.py" <<'PY'
import time
def top_burn():
    t = time.time()
    while time.time() - t < 6:
        pass
print("started", flush=True)
top_burn()
PY
"$PY" "$TMP/run.py" >"$TMP/run.out" &
run=$!
wait_line "$TMP/run.out" started 10 || die "run.py did not start"
expect_exit 0 "$DCPROF" top -g --stdio --iterations 1 --delay 1.5 -p "$run"
grep -q 'top_burn (run.py)' "$TMP/out" || die "top does not name the Python function: $(head -20 "$TMP/out")"
kill "$run" 2>/dev/null
wait "$run" 2>/dev/null

# continuous periods pushed to a receiver that decides as Pyroscope does: a
# function that runs after a period without a sample of its process is
# named too (the process's code map is kept from one period to the next
# whether or not a period sampled it), in the files and in the requests,
# with its file and lines
cat >"$TMP/idle.py" <<'PY'
import time
def burn(sec):
    t = time.time()
    while time.time() - t < sec:
        pass
def early_burn():
    # long enough for the recorder to start and to find the Python process
    burn(1.5)
def late_burn():
    burn(0.8)
print("started", flush=True)
early_burn()
time.sleep(2.2)
late_burn()
PY
"$PY" "$TMP/idle.py" >"$TMP/idle.out" &
idle=$!
wait_line "$TMP/idle.out" started 10 || die "idle.py did not start"
spawn_server "$TMP/port" python3 "$TOP/tests/tools/push_receiver.py" "$TMP/recv" \
	"$TMP/port" '{"mode": "pyroscope"}'
mkdir -m 700 "$TMP/periods"
expect_exit 0 "$DCPROF" record -g --continuous "$TMP/periods" --period 1 -p "$idle" \
	--push "http://127.0.0.1:$PORT"
wait "$idle"
grep -q "^dcprof: push: [1-9][0-9]* requests taken" "$TMP/err" ||
	die "the periods were not pushed: $(cat "$TMP/err")"
python3 - "$TMP"/recv/*.profile.json <<'PY' || die "the pushed profiles lack the Python functions"
import json, sys
seen = {}
for path in sys.argv[1:]:
    for p, _ in json.load(open(path)):
        st = p["string_table"]
        fn = {f["id"]: (st[f.get("name", 0)], st[f.get("filename", 0)]) for f in p.get("function", [])}
        for loc in p.get("location", []):
            for line in loc.get("line", []):
                name, file = fn[line["function_id"]]
                seen.setdefault(name, set()).add((file, line.get("line", 0)))
for f in ("early_burn (idle.py)", "late_burn (idle.py)", "burn (idle.py)"):
    got = seen.get(f, set())
    assert got and all(file.endswith("/idle.py") and line > 0 for file, line in got), (f, got)
print("pushed: early_burn, late_burn and burn with idle.py and their lines")
PY
expect_exit 0 "$DCPROF" export -i "$TMP/periods" --format folded -o "$TMP/periods.folded"
for fn in early_burn late_burn; do
	grep -q "$fn (idle.py);burn (idle.py)" "$TMP/periods.folded" ||
		die "the periods do not name $fn: $(head -5 "$TMP/periods.folded")"
done
expect_exit 0 "$DCPROF" report -i "$TMP/periods"
! grep -q '\[python:.*\[unresolved\]' "$TMP/out" ||
	die "the periods hold unnamed Python frames: $(head -20 "$TMP/out")"

pass
