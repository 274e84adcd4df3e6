#!/bin/bash
# Demangling: two instances of a C++ template and a Rust (legacy) symbol
# are reported by their demangled names, and by their raw names with
# --no-demangle.
. "$(dirname "$0")/test-lib.sh"
need g++ python3
need_perf_events

W=$TMP/sym_cxx
g++ -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$W" \
	"$TOP/tests/workloads/sym_cxx.cc" || die "cannot build sym_cxx"
F=$TMP/cxx.data

expect_exit 0 "$DCPROF" record -o "$F" -- "$W" 3
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol \
	--comm sym_cxx
cp "$TMP/out" "$TMP/demangled.json"
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol \
	--comm sym_cxx --no-demangle
cp "$TMP/out" "$TMP/raw.json"

python3 - "$TMP/demangled.json" "$TMP/raw.json" <<'PY' || die "names are wrong"
import json, sys
dem = {r["symbol"]: r["samples"] for r in json.load(open(sys.argv[1]))["rows"]}
raw = {r["symbol"]: r["samples"] for r in json.load(open(sys.argv[2]))["rows"]}
print("demangled:", sorted(dem, key=lambda s: -dem[s])[:6])
print("raw:", sorted(raw, key=lambda s: -raw[s])[:6])
for want in ("shapes::Box<int>::spin(unsigned long)",
             "shapes::Box<double>::spin(unsigned long)",
             "mycrate::spin"):
    assert dem.get(want, 0) >= 300, "%r has %d samples" % (want, dem.get(want, 0))
for want in ("_ZN6shapes3BoxIiE4spinEm", "_ZN6shapes3BoxIdE4spinEm",
             "_ZN7mycrate4spin17h0123456789abcdefE"):
    assert raw.get(want, 0) >= 300, "%r has %d samples" % (want, raw.get(want, 0))
assert not any(s.startswith("_Z") for s in dem if dem[s] >= 100), \
    "mangled names left in the demangled report"
PY

# the text report marks user and kernel code as perf does
expect_exit 0 "$DCPROF" report -i "$F" --sort symbol --comm sym_cxx
grep -q '\[\.\] mycrate::spin' "$TMP/out" ||
	die "no '[.] mycrate::spin' in the text report: $(head -c 1500 "$TMP/out")"

pass
