#!/bin/bash
# exclusive: a busy Python process and its recorder (slow under a sanitizer) starve what runs beside them, and its own interpreter tables must be built within a short warm-up
# Python frames in the BPF backend's stacks (Debian's /usr/bin/python3,
# CPython 3.11, without frame pointers; and pyenv's 3.12.1 and 3.13.0
# where they are installed), recorded with `record -g`:
#  - three functions burning 50/30/20 of a thread's CPU time by its own
#    clock (time.thread_time): their shares, counted on every stack they
#    are in, within 3 points of the script's own figures;
#  - each under its Python caller chain; called through C
#    (operator.call), the C frames and the interpreter's
#    _PyEval_EvalFrameDefault that runs it sit between it and its caller;
#  - the line of each function's frame is the one sys._getframe().f_lineno
#    gave the script for its call;
#  - zlib.compress called in a loop from a Python function: zlib's deflate
#    under that function;
#  - the names stay in the profile once the process is gone;
#  - 3.12 on, started with -X perf: CPython's trampolines (one copy per
#    code object of a few instructions, in anonymous memory, without a
#    frame pointer) are named from its /tmp/perf-PID.map as py::FUNC:FILE, each
#    function's share by its trampoline frames is its share by its Python
#    frames within 2 points, and the stacks still reach the root;
#  - a process started before recording (-p), two threads in Python, and
#    with --off-cpu its main thread's time.sleep under the Python function
#    that sleeps;
#  - the ring backend says once that Python frames need the BPF backend.
. "$(dirname "$0")/test-lib.sh"
need gcc
need_bpf_backend
need_python311
folded_tool

cat >"$TMP/prog.py" <<'PY'
import json, operator, os, sys, time, zlib

LINES = {}


def spin(sec):
    end = time.thread_time() + sec
    while time.thread_time() < end:
        pass


def work_a():
    LINES["work_a"] = sys._getframe().f_lineno + 1
    spin(0.005)


def work_b():
    LINES["work_b"] = sys._getframe().f_lineno + 1
    spin(0.003)


def work_c():
    LINES["work_c"] = sys._getframe().f_lineno + 1
    spin(0.002)


def timed(took, name, fn):
    t = time.thread_time()
    operator.call(fn)  # C calls fn: Python frames nest in native ones
    took[name] += time.thread_time() - t


def caller_a(took):
    timed(took, "work_a", work_a)


def caller_b(took):
    timed(took, "work_b", work_b)


def caller_c(took):
    timed(took, "work_c", work_c)


def pack(data):
    for _ in range(40):
        zlib.compress(data, 9)


def squeeze():
    data = bytes(range(256)) * 4096
    end = time.thread_time() + 0.6
    while time.thread_time() < end:
        pack(data)


def main():
    took = {"work_a": 0.0, "work_b": 0.0, "work_c": 0.0}
    for _ in range(300):
        caller_a(took)
        caller_b(took)
        caller_c(took)
    squeeze()
    print("truth " + json.dumps({"took": took, "lines": LINES, "pid": os.getpid()}))


main()
PY

# run_prog INTERPRETER COMM NAME: prog.py recorded, its stacks checked
run_prog() {
	local py=$1 comm=$2 name=$3
	# the interpreter's unwind tables into the cache first: a large
	# libpython's takes seconds to build, its samples until then walked
	# by frame pointers, which do not reach the interpreter's frames; from
	# a process that lives long enough for them to be built while it runs
	expect_exit 0 "$DCPROF" record -g -o "$TMP/warm.data" -- "$py" -c 'import operator, time, zlib
end = time.time() + 1
while time.time() < end:
    pass'
	expect_exit 0 "$DCPROF" record -g -o "$TMP/$name.data" -- "$py" "$TMP/prog.py"
	grep '^truth ' "$TMP/out" | cut -d' ' -f2- >"$TMP/$name.truth.json" ||
		die "$name: the script printed no truth"
	grep -q 'backend: bpf' <("$DCPROF" report -i "$TMP/$name.data" 2>&1) ||
		die "$name: not recorded with the BPF backend"
	"$TMP/folded" -u -l "$TMP/$name.data" >"$TMP/$name.folded" ||
		die "cannot read $name.data"
	expect_exit 0 "$DCPROF" report -i "$TMP/$name.data"
	cp "$TMP/out" "$TMP/$name.report.txt"
	python3 - "$TMP/$name.folded" "$TMP/$name.truth.json" "$comm" <<'PY' || die "$name: Python frames are off"
import json, re, sys
truth = json.load(open(sys.argv[2]))
rows = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] == sys.argv[3]:
        rows.append((frames[1:], int(n)))

def name(f):  # "work_a (prog.py):14" -> "work_a (prog.py)"
    return re.sub(r":\d+$", "", f)

def at(frames, fn):  # the index of fn's frame, or -1
    for i, f in enumerate(frames):
        if name(f) == fn + " (prog.py)":
            return i
    return -1

total = sum(n for _, n in rows)
took = truth["took"]
counts = {fn: sum(n for f, n in rows if at(f, fn) >= 0) for fn in took}
inside = sum(counts.values())
print("%s samples: %d, %d in the three functions" % (sys.argv[3], total, inside))
assert inside >= 1500, "only %d samples in the three functions" % inside
for fn, sec in took.items():
    want = 100.0 * sec / sum(took.values())
    share = 100.0 * counts[fn] / inside
    print("%s: %.1f%% (the script's clock: %.1f%%)" % (fn, share, want))
    assert abs(share - want) <= 3, "%s: %.1f%%, want %.1f%% +- 3" % (fn, share, want)

# each function under its Python caller chain, the C frames of the call
# from timed (operator.call) and the interpreter's frame that runs the
# function between them, its line the one the script saw
for fn in took:
    caller = "caller_" + fn[-1]
    line = truth["lines"][fn]
    good = lines_ok = 0
    bad = None
    for f, n in rows:
        i = at(f, fn)
        j = at(f, "timed")
        if i < 0:
            continue
        between = f[j + 1:i]
        if (2 <= j < i and name(f[j - 1]) == caller + " (prog.py)" and
                name(f[j - 2]) == "main (prog.py)" and
                not any(g.endswith(".py)") or ".py):" in g for g in between) and
                any(g.startswith("_PyEval_EvalFrameDefault") for g in between) and
                any(g.startswith("_PyEval_EvalFrameDefault") for g in f[:j - 2])):
            good += n
        elif bad is None or n > bad[1]:
            bad = (f, n)
        if f[i].endswith(":%d" % line):
            lines_ok += n
    print("%s: %d of %d under main > %s > timed > C > eval, %d at line %d" %
          (fn, good, counts[fn], caller, lines_ok, line))
    assert good >= 0.97 * counts[fn], "%s is not under its callers; the most samples (%d) on %s" % (
        fn, bad[1], " > ".join(bad[0]))
    assert lines_ok >= 0.9 * counts[fn], "%s is not at line %d" % (fn, line)

# zlib's C code under the Python function that calls it
packed = sum(n for f, n in rows if at(f, "pack") >= 0)
deflate = [(f, n) for f, n in rows
           if any(g.startswith("deflate") for g in f)]
in_deflate = sum(n for _, n in deflate)
under = sum(n for f, n in deflate
            if 0 <= at(f, "pack") < min(i for i, g in enumerate(f) if g.startswith("deflate"))
            and at(f, "squeeze") == at(f, "pack") - 1)
print("pack: %d samples; deflate: %d, %d of them under squeeze > pack" %
      (packed, in_deflate, under))
assert in_deflate >= 200, "only %d samples in deflate" % in_deflate
assert under >= 0.95 * in_deflate, "deflate is not under pack"
PY
}

run_prog "$PY" python3 py

# the profile names its Python frames on its own: the process is gone
grep -q 'spin (prog.py)' "$TMP/py.report.txt" ||
	die "the report names no Python function: $(head -30 "$TMP/py.report.txt")"
grep -q '^# python: ' "$TMP/py.report.txt" ||
	die "the report shows no Python counts"

# run_perf INTERPRETER COMM NAME: prog.py started with -X perf, its
# trampoline frames against its Python frames (after run_prog, whose
# recording put the interpreter's unwind tables into the cache)
run_perf() {
	local py=$1 comm=$2 name=$3 pid
	expect_exit 0 "$DCPROF" record -g -o "$TMP/$name.data" -- "$py" -X perf "$TMP/prog.py"
	pid=$(sed -n 's/^truth .*"pid": \([0-9]*\).*/\1/p' "$TMP/out")
	[ -n "$pid" ] || die "$name: the script printed no truth"
	# CPython leaves its map behind: moved into $TMP
	mv "/tmp/perf-$pid.map" "$TMP/$name.map" ||
		die "$name: -X perf wrote no /tmp/perf-$pid.map"
	grep -q "py::work_a:$TMP/prog.py\$" "$TMP/$name.map" ||
		die "$name: no work_a in its perf map: $(head -5 "$TMP/$name.map")"
	"$TMP/folded" -u "$TMP/$name.data" >"$TMP/$name.folded" ||
		die "cannot read $name.data"
	python3 - "$TMP/$name.folded" "$comm" "$TMP/prog.py" <<'PY' || die "$name: trampoline frames are off: $(sed -n '/^# unwound/,/^# python/p' <("$DCPROF" report -i "$TMP/$name.data" 2>&1))"
import sys
comm, path = sys.argv[2], sys.argv[3]
rows = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] == comm:
        rows.append((frames[1:], int(n)))
fns = ("work_a", "work_b", "work_c")
tramp = {fn: "py::%s:%s" % (fn, path) for fn in fns}
pyf = {fn: fn + " (prog.py)" for fn in fns}
by_py = {fn: sum(n for f, n in rows if pyf[fn] in f) for fn in fns}
by_tramp = {fn: sum(n for f, n in rows if tramp[fn] in f) for fn in fns}
inside = sum(by_py.values())
print("%s: %d samples in the three functions by Python frames, %d by trampolines" %
      (comm, inside, sum(by_tramp.values())))
assert inside >= 1500, "only %d samples in the three functions" % inside
for fn in fns:
    a = 100.0 * by_py[fn] / inside
    b = 100.0 * by_tramp[fn] / max(sum(by_tramp.values()), 1)
    print("%s: %.1f%% by Python frames, %.1f%% by trampolines" % (fn, a, b))
    assert abs(a - b) <= 2, "%s: %.1f%% by trampolines, %.1f%% by Python frames" % (fn, b, a)

# each Python frame of prog.py entered through its own trampoline, named,
# and the stacks through them whole, down to _start
py_stacks = [(f, n) for f, n in rows if any(g.endswith(" (prog.py)") for g in f)]
total = sum(n for _, n in py_stacks)
paired = rooted = unnamed = 0
for f, n in py_stacks:
    if f[0] == "_start":
        rooted += n
    if any(g.startswith("[") for g in f):
        unnamed += n
    last = None
    ok = True
    for g in f:
        if g.startswith("py::"):
            last = g
        elif g.endswith(" (prog.py)"):
            ok = ok and last == "py::%s:%s" % (g[:-len(" (prog.py)")], path)
            last = None
    paired += n if ok else 0
print("%d stacks with Python frames: %d each frame under its trampoline, %d whole, %d with unnamed frames" %
      (total, paired, rooted, unnamed))
bad = max(((f, n) for f, n in py_stacks if f[0] != "_start"), key=lambda x: x[1], default=None)
assert paired >= 0.97 * total, "Python frames without their trampoline"
assert rooted >= 0.97 * total, "stacks end early; the most samples (%d) on %s" % (
    bad[1], " > ".join(bad[0])) if bad else "no stacks"
assert unnamed <= 0.01 * total, "%d samples with unnamed frames" % unnamed
PY
}

# CPython 3.12 and 3.13 (pyenv's, libpython builds), where installed
for v in 3.12.1 3.13.0; do
	py=/root/.pyenv/versions/$v/bin/python${v%.*}
	if [ -x "$py" ]; then
		run_prog "$py" "python${v%.*}" "py${v//./}"
		run_perf "$py" "python${v%.*}" "py${v//./}perf"
	else
		skip_part "no CPython $v at $py"
	fi
done

# a process started before the recording, two threads in Python, a sleep
cat >"$TMP/two.py" <<'PY'
import sys, threading, time


def spin(sec):
    end = time.thread_time() + sec
    while time.thread_time() < end:
        pass


def worker_one():
    spin(2.5)


def worker_two():
    spin(2.5)


def nap():
    # short sleeps: each switch-out during the recording has its stack
    for _ in range(40):
        time.sleep(0.05)


threads = [threading.Thread(target=worker_one), threading.Thread(target=worker_two)]
for t in threads:
    t.start()
print("started", flush=True)
nap()
for t in threads:
    t.join()
PY
"$PY" "$TMP/two.py" >"$TMP/two.out" &
two=$!
wait_line "$TMP/two.out" started 10 || die "two.py did not start"
expect_exit 0 "$DCPROF" record -g --off-cpu -p "$two" --duration 1 -o "$TMP/two.data"
wait "$two"
"$TMP/folded" -u "$TMP/two.data" >"$TMP/two.folded" || die "cannot read two.data"
python3 - "$TMP/two.folded" <<'PY' || die "the threads' Python frames are off"
import sys
rows = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    rows.append((stack.split(";"), int(n)))
total = sum(n for f, n in rows)
for fn in ("worker_one", "worker_two"):
    under = sum(n for f, n in rows
                if "Thread.run (threading.py)" in f and fn + " (two.py)" in f and
                f.index("Thread.run (threading.py)") < f.index(fn + " (two.py)") <
                f.index("spin (two.py)"))
    print("%s: %d of %d samples under Thread.run > %s > spin" % (fn, under, total, fn))
    assert under >= 0.35 * total, "%s has %d of %d samples" % (fn, under, total)
PY
expect_exit 0 "$DCPROF" report -i "$TMP/two.data" --value off-cpu -g --no-children
python3 - "$TMP/out" <<'PY' || die "the sleep is not under nap: $(head -40 "$TMP/out")"
import sys
text = open(sys.argv[1]).read()
i = text.find("nap (two.py)")
assert i >= 0, "no nap (two.py) in the off-CPU tree"
assert text.find("time_sleep", i) > i, "no time_sleep under nap"
print("off-CPU: time.sleep under nap (two.py)")
PY

# the ring backend: native stacks, and one line about Python frames
expect_exit 0 "$DCPROF" record --backend perf -g -o "$TMP/ring.data" -- \
	"$PY" -c 'import time
t = time.time()
while time.time() - t < 0.3: pass'
[ "$(grep -c 'Python frames need the BPF backend' "$TMP/err")" = 1 ] ||
	die "the ring backend did not say once that Python frames need the BPF backend: $(cat "$TMP/err")"

pass
