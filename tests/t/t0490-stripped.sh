#!/bin/bash
# Functions without symbols (docs/SYMBOLS.md): a binary stripped with
# `strip -s` (no .symtab, .eh_frame kept) shows its three hot functions as
# three rows named FILE+0xSTART, START the file offset of the function's
# symbol in the unstripped binary, with their shares within 3 points of
# the truth the workload measures; the folded export groups them the same
# way; `annotate FILE+0xSTART` disassembles each, `annotate` of a real
# name says where the unnamed samples are and to give --debuginfo-dir;
# report --resymbolize --debuginfo-dir with the debug file gives the real
# names back, counted as found by symbols, the made names apart in the
# text (and without it keeps the made ones). A .eh_frame that is garbage, truncated
# or randomly damaged falls back to one name per address, no crash.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 objcopy strip readelf nm
need_perf_events
test_seed

SPLIT=$(build_workload split)
cp "$SPLIT" "$TMP/split.full"
BID=$(readelf -n "$SPLIT" | awk '/Build ID/ { print $3 }')
[ -n "$BID" ] || die "workload has no build id"
DBG=$TMP/debug
mkdir -p "$DBG/.build-id/${BID:0:2}"
objcopy --only-keep-debug "$SPLIT" "$DBG/.build-id/${BID:0:2}/${BID:2}.debug" ||
	die "objcopy failed"
strip -s "$SPLIT" || die "strip failed"
readelf -SW "$SPLIT" | grep -q ' \.symtab ' && die "strip -s left .symtab"
readelf -SW "$SPLIT" | grep -q ' \.eh_frame ' || die "no .eh_frame to find functions by"

# The truth for the starts: each hot function's symbol in the unstripped
# binary, its address turned into a file offset through the PT_LOAD
# segment holding it (as dcprof stores symbol starts), and its size.
nm -S --defined-only "$TMP/split.full" >"$TMP/nm.txt" || die "nm failed"
readelf -lW "$TMP/split.full" >"$TMP/phdrs.txt" || die "readelf -l failed"
python3 - "$TMP/nm.txt" "$TMP/phdrs.txt" >"$TMP/starts" <<'PY' ||
import sys
loads = []
for line in open(sys.argv[2]):
    f = line.split()
    if f and f[0] == "LOAD":
        off, vaddr, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        loads.append((off, vaddr, filesz))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4 and f[3] in ("work_fifty", "work_thirty", "work_twenty"):
        addr, size = int(f[0], 16), int(f[1], 16)
        seg = [s for s in loads if s[1] <= addr < s[1] + s[2]]
        assert seg, "no segment holds " + f[3]
        print(f[3], "%x" % (addr - seg[0][1] + seg[0][0]), size)
PY
	die "cannot compute the starts"
[ "$(wc -l <"$TMP/starts")" = 3 ] || die "nm does not give the three functions: $(cat "$TMP/starts")"
name_of() { awk -v f="$1" '$1 == f { print "split+0x" $2 }' "$TMP/starts"; }

F=$TMP/strip.data
expect_exit 0 "$DCPROF" record -o "$F" -- "$SPLIT" 3 --truth
grep '^split: ' "$TMP/out" >"$TMP/truth" || die "split printed no truth"

# Three distinct rows at the symbols' starts, shares within 3 points,
# nothing of the binary left [unresolved].
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol
cp "$TMP/out" "$TMP/report.json"
python3 - "$TMP/report.json" "$TMP/starts" "$SPLIT" \
	>"$TMP/made" <<'PY' || die "the stripped functions are not found"
import json, re, sys
d = json.load(open(sys.argv[1]))
starts = {l.split()[0]: l.split()[1] for l in open(sys.argv[2])}
rows = {}
for r in d["rows"]:
    if r["file"] == sys.argv[3]:
        rows[r["symbol"]] = rows.get(r["symbol"], 0) + r["samples"]
        # PLT stubs keep their names from .dynsym (strip -s leaves it)
        assert re.fullmatch(r"split\+0x[0-9a-f]+|[A-Za-z_][\w.]*@plt",
                            r["symbol"]), \
            "a frame of the binary is named %r" % r["symbol"]
names = {f: "split+0x" + s for f, s in starts.items()}
assert len(set(names.values())) == 3
for f, n in names.items():
    sys.stderr.write("%s as %s: %d samples\n" % (f, n, rows.get(n, 0)))
    print(f, n, rows.get(n, 0))
PY
# the rows of the made names, as the functions they stand for
awk '{ print $1, $3 }' "$TMP/made" | check_split_shares "$TMP/truth" 2000 3 ||
	die "the stripped functions are not found"

# every view groups them the same way: the folded stacks too
expect_exit 0 "$DCPROF" export --format folded -i "$F"
for f in work_fifty work_thirty work_twenty; do
	n=$(name_of $f)
	want=$(awk -v f=$f '$1 == f { print $3 }' "$TMP/made")
	got=$(grep -F ";$n " "$TMP/out" | awk '{ s += $NF } END { print s + 0 }')
	[ "$got" = "$want" ] ||
		die "folded stacks give $n $got samples, the report $want"
done

# annotate NAME+0xSTART: the function's code, from its start, its size
for f in work_fifty work_thirty work_twenty; do
	n=$(name_of $f)
	expect_exit 0 "$DCPROF" annotate -i "$F" --format json "$n"
	python3 - "$TMP/out" "$TMP/starts" "$TMP/made" $f <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
f = sys.argv[4]
start, size = [(int(l.split()[1], 16), int(l.split()[2]))
               for l in open(sys.argv[2]) if l.split()[0] == f][0]
samples = [int(l.split()[2]) for l in open(sys.argv[3]) if l.split()[0] == f][0]
fn = d["functions"]
assert len(fn) == 1, "%d functions" % len(fn)
fn = fn[0]
assert fn["start"] == start and fn["size"] == size, \
    "annotated %x+%d, want %x+%d" % (fn["start"], fn["size"], start, size)
ins = fn["instructions"]
assert len(ins) >= 5 and all(i["text"] for i in ins), "no code shown"
assert ins[0]["offset"] == start
assert sum(i["samples"] for i in ins) == samples == fn["samples"], \
    "samples %d, want %d" % (sum(i["samples"] for i in ins), samples)
PY
		die "annotate $n is wrong: $(head -c 300 "$TMP/out")"
done
expect_exit 0 "$DCPROF" annotate -i "$F" "$(name_of work_thirty)"
grep -Eq '^ +[0-9]+\.[0-9]+% +[0-9]+ +[0-9a-f]+: +[a-z]' "$TMP/out" ||
	die "annotate's text shows no instruction: $(head -c 300 "$TMP/out")"
# a function asked for by its real name: not there, and where to look
# (before: "no samples in 'work_fifty'" alone)
expect_exit 1 "$DCPROF" annotate -i "$F" work_fifty
grep "no samples in 'work_fifty'.* functions of '$SPLIT' without symbols" \
	"$TMP/err" | grep -q -- '--debuginfo-dir' ||
	die "annotate of a stripped function's real name gives no hint: $(cat "$TMP/err")"

# without a debug file, naming again keeps the made names
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol \
	--resymbolize
for f in work_fifty work_thirty work_twenty; do
	n=$(name_of $f)
	[ "$(json_get "$TMP/out" "sum(r['samples'] for r in d['rows'] if r['symbol'] == '$n')")" = \
		"$(awk -v f=$f '$1 == f { print $3 }' "$TMP/made")" ] ||
		die "--resymbolize without a debug file changed $n"
done
[ "$(json_get "$TMP/out" "d['resymbolize']['symbols_after'] - d['resymbolize']['symbols_before']")" = 0 ] ||
	die "--resymbolize without a debug file counts new symbols: $(json_get "$TMP/out" "d['resymbolize']")"

# with the debug file, the real names come back, with the same samples
check_real_names() {
	python3 - "$1" "$TMP/made" <<'PY' || die "the real names are not back"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {}
for r in d["rows"]:
    rows[r["symbol"]] = rows.get(r["symbol"], 0) + r["samples"]
for l in open(sys.argv[2]):
    f, n, samples = l.split()
    assert rows.get(f) == int(samples), "%s: %s, want %s" % (f, rows.get(f), samples)
    assert n not in rows, "%s is still there" % n
PY
}
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol \
	--resymbolize --debuginfo-dir "$DBG"
check_real_names "$TMP/out"
# the made names counted as named: the gain is in the symbols' count
# (before it, the report said "13 named addresses, 13 before")
python3 - "$TMP/out" <<'PY' || die "--resymbolize does not count the names found: $(json_get "$TMP/out" "d['resymbolize']")"
import json, sys
r = json.load(open(sys.argv[1]))["resymbolize"]
assert r["symbols_after"] >= r["symbols_before"] + 3, r
assert r["symbols_after"] <= r["resolved_after"], r
PY
cp "$TMP/out" "$TMP/resym.json"
# the text line counts the made names apart from the symbols' (before, it
# counted both as named): the debug file turns made names into symbols
expect_exit 0 "$DCPROF" report -i "$F" --resymbolize --debuginfo-dir "$DBG"
python3 - "$TMP/resym.json" "$TMP/out" <<'PY' || die "the text does not count made names apart: $(grep '^# resymbolized' "$TMP/out")"
import json, re, sys
r = json.load(open(sys.argv[1]))["resymbolize"]
line = next(l for l in open(sys.argv[2]) if l.startswith("# resymbolized"))
print(line.strip())
m = re.search(r": (\d+) addresses named by symbols and (\d+) given made names "
              r"\(file\+0xSTART, from \.eh_frame\); before, (\d+) and (\d+)$", line)
assert m, line
sym, made, sym0, made0 = map(int, m.groups())
assert (sym, made) == (r["symbols_after"], r["resolved_after"] - r["symbols_after"]), r
assert (sym0, made0) == (r["symbols_before"], r["resolved_before"] - r["symbols_before"]), r
assert made < made0, "the debug file left as many made names"
PY
expect_exit 0 "$DCPROF" report -i "$F" --resymbolize --debuginfo-dir "$DBG" --write
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol
check_real_names "$TMP/out"
# stored real names are not replaced by made ones when the debug file is gone
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort comm,file,symbol \
	--resymbolize
check_real_names "$TMP/out"

# A damaged .eh_frame: garbage, cut short (its section header's size), or
# random bytes. Each falls back to names per address, and nothing crashes.
damage() { # KIND FILE
	python3 - "$1" "$2" "$RANDOM" <<'PY'
import random, struct, sys
kind, path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(path, "rb").read())
assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "64-bit LE ELF only"
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return shoff + i * shentsize
stroff, = struct.unpack_from("<Q", b, sh(shstrndx) + 0x18)
for i in range(shnum):
    name, = struct.unpack_from("<I", b, sh(i))
    end = b.index(b"\0", stroff + name)
    if b[stroff + name:end] == b".eh_frame":
        off, size = struct.unpack_from("<QQ", b, sh(i) + 0x18)
        break
else:
    sys.exit("no .eh_frame")
if kind == "garbage":
    b[off:off + size] = b"\xff" * size
elif kind == "truncated":
    struct.pack_into("<Q", b, sh(i) + 0x20, 30)  # its first entries cut
else:
    r = random.Random(seed)
    for _ in range(max(1, size // 16)):
        b[off + r.randrange(size)] = r.randrange(256)
open(path, "wb").write(b)
PY
}
for kind in garbage truncated random; do
	BAD=$TMP/bad-$kind
	cp "$SPLIT" "$BAD"
	damage $kind "$BAD" || die "cannot damage .eh_frame ($kind)"
	expect_exit 0 "$DCPROF" record -o "$TMP/$kind.data" -- "$BAD" 1
	expect_exit 0 "$DCPROF" report -i "$TMP/$kind.data" --format json \
		--sort comm,file,symbol
	python3 - "$TMP/out" "$BAD" "$kind" <<'PY' ||
import json, re, sys
d = json.load(open(sys.argv[1]))
base = sys.argv[2].rsplit("/", 1)[1]
rows = [r for r in d["rows"] if r["file"] == sys.argv[2]]
assert sum(r["samples"] for r in rows) >= 300, "too few samples"
for r in rows:
    # PLT stubs keep their names from .dynsym, as in the stripped binary
    assert re.fullmatch(re.escape(base) + r"\+0x[0-9a-f]+|[A-Za-z_][\w.]*@plt",
                        r["symbol"]), \
        "a frame is named %r" % r["symbol"]
if sys.argv[3] != "random":
    # per address: the hot loops alone are several instructions each
    assert len(rows) >= 6, "only %d rows: not named per address" % len(rows)
PY
		die "a $kind .eh_frame gives wrong names: $(head -c 300 "$TMP/out")"
	# the other views read it too
	expect_exit 0 "$DCPROF" export --format folded -i "$TMP/$kind.data"
	expect_exit 0 "$DCPROF" report -i "$TMP/$kind.data" --resymbolize
done

pass
