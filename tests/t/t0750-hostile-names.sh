#!/bin/bash
# Hostile names, recorded system-wide in one run:
#  - the fault_names binary at a path with spaces, a newline, a tab and an
#    invalid UTF-8 byte ($'we ird\n\t\xff.bin' in a directory with spaces),
#    running as a process whose comm is 15 bytes with control characters,
#    a quote and a backslash;
#  - a copy at a path that really ends in " (deleted)" (not deleted), and a
#    copy deleted while it runs;
#  - a memfd: executable (memfd_create with a newline and \xff in its name,
#    then fexecve) and code in anonymous executable memory.
# Then `report` and `cookies`, text and JSON, and `export --format folded`
# must: exit 0; print no raw control bytes (other than newline ends of
# lines) on stdout; the JSON parse with python3 (with the names recoverable:
# the odd path's spaces survive and the comm is in the JSON); the folded
# output has one line per stack: every line ends with " COUNT"; the samples
# of every hostile process are there.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_perf_events
cp "$DCPROF" "$TMP/dcprof" && DCPROF=$TMP/dcprof || die "cannot copy dcprof"

# one build id each: a cookie is a file identity, named by its first path
DIR="$TMP/dir with spaces"
mkdir "$DIR" || die "cannot create '$DIR'"
ODD="$DIR/"$'we ird\n\t\xff.bin'
FAKE="$DIR/fake (deleted)"
GONE="$DIR/gone.bin"
i=0
for f in "$ODD" "$FAKE" "$GONE" "$TMP/names"; do
	i=$((i + 1))
	mv "$(build_workload fault_names -Wl,--build-id=0x"$(printf "bad%05x%08x" $i $((RANDOM * RANDOM)))")" \
		"$f" || die "cannot build '$f'"
done
NAMES=$TMP/names

F=$TMP/names.data
"$DCPROF" record -a -o "$F" --duration 5 --flush-interval 0.2 --ready-fd 3 >"$TMP/rec.out" \
	2>"$TMP/rec.err" 3>"$TMP/rec.ready" &
REC=$!
_spawned+=("$REC")
wait_line "$TMP/rec.ready" '^recording$' 30
i=0
for run in "$ODD file" "$FAKE file" "$GONE file" "$NAMES memfd" "$NAMES anon"; do
	i=$((i + 1))
	mode=${run##* }
	spawn "${run% *}" "$mode" 3 "$TMP/ready$i"
	pids[i]=$SPAWNED
done
for i in 1 2 3 4 5; do wait_file "$TMP/ready$i"; done
echo "pids: odd ${pids[1]}, fake ${pids[2]}, gone ${pids[3]}, memfd ${pids[4]}, anon ${pids[5]}"
# delete GONE once the recorder has its mapping: the working file's
# cookies (flushed every 0.2 s) name it
for ((n = 0; n < 200; n++)); do
	"$DCPROF" cookies -i "$F" 2>/dev/null | grep -qF "$GONE" && break
	sleep 0.05
done
[ "$n" -lt 200 ] || die "the recorder did not see '$GONE' within 10 s"
rm "$GONE" || die "cannot delete '$GONE'"
wait "$REC"
rc=$?
[ "$rc" -eq 0 ] || die "record exited $rc: $(cat "$TMP/rec.err")"

ctl() { # fail if stdout of the last command holds a raw control byte
	if LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]' "$TMP/out" >"$TMP/ctl"; then
		die "'$1' prints raw control bytes: $(head -c 300 "$TMP/ctl" | od -c | head -5)"
	fi
}
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid,file,symbol
ctl report
cp "$TMP/out" "$TMP/report.txt"
expect_exit 0 "$DCPROF" cookies -i "$F"
ctl cookies
cp "$TMP/out" "$TMP/cookies.txt"
expect_exit 0 "$DCPROF" report -i "$F" --sort comm,pid,file,symbol --format json
ctl "report --format json"
cp "$TMP/out" "$TMP/report.json"
expect_exit 0 "$DCPROF" cookies -i "$F" --format json
ctl "cookies --format json"
cp "$TMP/out" "$TMP/cookies.json"

python3 - "$TMP/report.json" "$TMP/cookies.json" "$ODD" "$FAKE" "$GONE" "${pids[4]}" <<'PY' || die "the hostile names are not in the JSON outputs"
import json, sys
rep = json.load(open(sys.argv[1]))
cks = json.load(open(sys.argv[2]))
odd, fake, gone = sys.argv[3:6]
memfd_pid = int(sys.argv[6])
comm = "\x01h\tos\"ti\\le\x1b[7\x7f"
# a JSON string holds text: a path of invalid UTF-8 can only be carried
# escaped or replaced, so compare what must survive: the valid parts
def like(s, want):
    return (s == want or s == want.encode("utf-8", "surrogateescape")
            .decode("utf-8", "replace")) or ("we ird" in s and "\n" in s
                                               and ".bin" in s)
rows = [r for r in rep["rows"] if r["comm"] == comm]
by_file = {}
for r in rows:
    by_file[r["file"]] = by_file.get(r["file"], 0) + r["samples"]
print("files sampled under the hostile comm:", {k: v for k, v in by_file.items()})
assert rows, "no row has the hostile comm: %s" % sorted(
    set(r["comm"] for r in rep["rows"]))[:20]
assert any(like(f, odd) for f in by_file), "odd path missing"
assert any(f == fake for f in by_file), "' (deleted)' path missing"
assert any(f == gone or f.startswith(gone) for f in by_file), "deleted binary missing"
assert any(f.startswith("[anon") for f in by_file), "anonymous code missing"
names = [c.get("name") or "" for c in cks["cookies"]]
paths = [p for c in cks["cookies"] for p in c.get("paths", [])]
# the memfd runs a copy of the names binary: the same identity, so its
# samples go to that cookie, which must list the memfd by its own name
# (memfd_create's "hostile\n\xff\x01 mem"; other memfds run on the system)
def is_our_memfd(p):
    return p.startswith("/memfd:hostile\n") and " mem" in p
mine = [c for c in cks["cookies"] if any(is_our_memfd(p) for p in
        [c.get("name") or ""] + c.get("paths", []))]
assert mine, "no cookie lists the memfd: %r" % [p for p in names + paths
                                               if "memfd" in p]
memfd_rows = [r for r in rep["rows"] if r["pid"] == memfd_pid]
memfd_files = {}
for r in memfd_rows:
    memfd_files[r["file"]] = memfd_files.get(r["file"], 0) + r["samples"]
print("the memfd process (pid %d): %s; cookie %s" % (memfd_pid, memfd_files,
      [(c["name"], c["paths"]) for c in mine]))
n = sum(v for f, v in memfd_files.items() if any(f == c["name"] for c in mine))
assert n >= 100, "%d samples of the memfd process in its memfd's cookie" % n
assert any(like(p, odd) for p in paths), "odd path missing from cookies"
PY

expect_exit 0 "$DCPROF" export --format folded -i "$F"
ctl "export --format folded"
cp "$TMP/out" "$TMP/folded.txt"
python3 - "$TMP/folded.txt" "$TMP/report.json" <<'PY' || die "folded output is not one line per stack"
import json, re, sys
raw = open(sys.argv[1], "rb").read()
lines = raw.split(b"\n")
assert lines[-1] == b"", "no newline at the end"
lines = lines[:-1]
total = 0
for l in lines:
    m = re.match(rb"^(.+) ([0-9]+)$", l)
    assert m, "not 'STACK COUNT': %r" % l[:200]
    total += int(m.group(2))
want = sum(r["samples"] for r in json.load(open(sys.argv[2]))["rows"])
print("%d folded lines, %d samples (report: %d)" % (len(lines), total, want))
assert total == want, (total, want)
assert any(b"hostile_spin" in l for l in lines)
PY
pass
