#!/bin/bash
# Inline frames: hot() is always_inline in caller_seventy() (70% of the
# time) and caller_thirty() (30%). The flat report attributes the samples
# to the two callers; the call tree shows hot as an inlined frame under
# each, carrying the callers' samples, with the 70/30 split within 3 points;
# the stored details carry DWARF file:line.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_perf_events

W=$(build_workload sym_inline)
F=$TMP/inline.data

expect_exit 0 "$DCPROF" record -g -o "$F" -- "$W" 3
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol \
	--comm sym_inline
cp "$TMP/out" "$TMP/flat.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --tree caller \
	--comm sym_inline
cp "$TMP/out" "$TMP/tree.json"
expect_exit 0 "$DCPROF" report -i "$F" --tree callee --comm sym_inline
grep -q "hot (inlined)" "$TMP/out" ||
	die "the text tree shows no inlined frame: $(head -c 2000 "$TMP/out")"

python3 - "$TMP/flat.json" "$TMP/tree.json" <<'PY' || die "inline frames are wrong"
import json, sys
flat = json.load(open(sys.argv[1]))
tree = json.load(open(sys.argv[2]))

rows = {r["symbol"]: r["samples"] for r in flat["rows"]}
assert "hot" not in rows, "the flat view must attribute to the callers: %r" % rows
a, b = rows.get("caller_seventy", 0), rows.get("caller_thirty", 0)
assert a + b >= 1500, "only %d samples in the callers" % (a + b)

def walk(nodes):
    for n in nodes:
        yield n
        yield from walk(n["children"])

callers = {}
for n in walk(tree["tree"]["roots"]):
    if n["name"] in ("caller_seventy", "caller_thirty") and not n["inline"]:
        callers.setdefault(n["name"], []).append(n)
tot = {}
for name in ("caller_seventy", "caller_thirty"):
    assert name in callers, "no %s node in the tree" % name
    node = max(callers[name], key=lambda n: n["samples"])
    kids = [k for k in node["children"] if k["name"] == "hot"]
    assert kids, "%s has no hot child" % name
    assert kids[0]["inline"] is True, "hot under %s is not marked inline" % name
    share = kids[0]["samples"] / node["samples"]
    print("%s: %d samples, %.0f%% in inlined hot" % (name, node["samples"], 100 * share))
    assert share >= 0.8, "hot carries only %.0f%% of %s" % (100 * share, name)
    tot[name] = kids[0]["samples"]
s = tot["caller_seventy"] + tot["caller_thirty"]
share = 100.0 * tot["caller_seventy"] / s
print("hot under caller_seventy: %.1f%% (want 70%%)" % share)
assert abs(share - 70) <= 3, "split %.1f%%, want 70 +- 3" % share
PY

# The stored details: file:line of the inlined call (call site) and of
# the address inside hot.
"${SAN_PRELOAD[@]}" python3 - "$F" "$BUILD/libdcprof.so" <<'PY' || die "no DWARF details"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[2])
class Frame(ctypes.Structure):
    _fields_ = [("cookie", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("offset", ctypes.c_uint64)]
class Row(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("comm", ctypes.c_char_p), ("pid", ctypes.c_uint32),
                ("frames", ctypes.POINTER(Frame)), ("nr_frames", ctypes.c_uint32),
                ("count", ctypes.c_uint64)]
class Exp(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("name", ctypes.c_char_p), ("raw_name", ctypes.c_char_p),
                ("file", ctypes.c_char_p), ("line", ctypes.c_uint32),
                ("is_inline", ctypes.c_bool)]
lib.dcp_profile_open.restype = ctypes.c_void_p
lib.dcp_profile_nr_rows.argtypes = [ctypes.c_void_p]
lib.dcp_profile_nr_rows.restype = ctypes.c_size_t
lib.dcp_profile_row.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Row)]
lib.dcp_profile_frame_expand.argtypes = [ctypes.c_void_p, ctypes.POINTER(Frame),
                                         ctypes.POINTER(Exp), ctypes.c_size_t]
p = lib.dcp_profile_open(sys.argv[1].encode())
assert p, "cannot open"
seen = 0
for i in range(lib.dcp_profile_nr_rows(p)):
    r = Row(sz=ctypes.sizeof(Row))
    lib.dcp_profile_row(p, i, ctypes.byref(r))
    if r.comm != b"sym_inline" or not r.nr_frames:
        continue
    out = (Exp * 8)()
    out[0].sz = ctypes.sizeof(Exp)
    n = lib.dcp_profile_frame_expand(p, r.frames[0], out, 8)
    if n == 2 and out[1].name == b"hot":
        assert out[0].name in (b"caller_seventy", b"caller_thirty"), out[0].name
        assert not out[0].is_inline and out[1].is_inline
        assert out[0].file and out[0].file.endswith(b"sym_inline.c"), out[0].file
        assert out[1].file and out[1].file.endswith(b"sym_inline.c"), out[1].file
        assert out[0].line in (34, 42), "call site line %d" % out[0].line
        assert 24 <= out[1].line <= 27, "line in hot %d" % out[1].line
        seen += 1
assert seen, "no leaf frame expanded into caller + inlined hot"
print("%d expanded leaf frames checked" % seen)
PY

pass
