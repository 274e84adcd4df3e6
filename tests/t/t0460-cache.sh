#!/bin/bash
# The symbol cache: the kernel's symbols, and an inflated copy of a
# compressed separate debug file (libc's, when Debian's libc6-dbg is
# installed), written by the first recording and read by the next and by
# report --resymbolize; names and lines resolved through the cache equal
# those resolved without it; a
# damaged entry is derived again; a symlink is never followed, and a
# directory that others could write is not used.
. "$(dirname "$0")/test-lib.sh"
need python3 dd
need_perf_events

C=$TMP/cache
# dd with small blocks: most of the time in the kernel and in libc.
rec() {
	DCPROF_CACHE_DIR=$1 expect_exit 0 "$DCPROF" record -vv -o "$2" -- \
		dd if=/dev/zero of=/dev/null bs=64 count=500000
}
# The names of a profile, resolved again now with cache directory $1.
names() {
	DCPROF_CACHE_DIR=$1 "$DCPROF" report -i "$F" --resymbolize \
		--format json --tree callee --percent-limit 0 >"$2" 2>/dev/null ||
		die "report --resymbolize failed with cache '$1'"
}
F=$TMP/one.data

rec "$C" "$F"
[ "$(stat -c %a "$C")" = 700 ] || die "cache directory mode $(stat -c %a "$C")"
K=$(cd "$C" && ls kernel-symbols-* 2>/dev/null)
[ -n "$K" ] || die "no kernel symbols cached: $(ls -la "$C")"
[ "$(stat -c %a "$C/$K")" = 600 ] || die "entry mode $(stat -c %a "$C/$K")"
# kentry FILE [PREFIX]: check the entry's layout (docs/SYMBOLS.md) and
# print its count; with PREFIX, rewrite it with every name so prefixed
kentry() {
	python3 - "$@" <<'PY'
import struct, sys
path = sys.argv[1]
d = open(path, "rb").read()
magic = b"dcprof kernel symbols 2\n"
assert d[:24] == magic, d[:24]
count, names_size = struct.unpack_from("<QQ", d, 24)
assert len(d) == 40 + 16 * count + names_size, (len(d), count, names_size)
ents = [struct.unpack_from("<QII", d, 40 + 16 * i) for i in range(count)]
names = d[40 + 16 * count:]
assert names.endswith(b"\0")
if len(sys.argv) > 2:
    # the names in a list joined once: += on bytes copies the whole blob
    # each time (minutes for 120,000 names)
    parts, size, out = [], 0, []
    for off, name, local in ents:
        n = sys.argv[2].encode() + names[name:names.index(b"\0", name)] + b"\0"
        out.append(struct.pack("<QII", off, size, local))
        parts.append(n)
        size += len(n)
    open(path, "wb").write(magic + struct.pack("<QQ", count, size) +
                           b"".join(out) + b"".join(parts))
print(count)
PY
}
n=$(kentry "$C/$K") || die "damaged kernel symbols entry"
echo "kernel symbols cached: $n"
[ "$n" -ge 1000 ] || die "only $n kernel symbols cached"

rec "$C" "$TMP/two.data"
grep -q "kernel symbols from the cache" "$TMP/err" ||
	die "the second recording did not read the cache: $(cat "$TMP/err")"

# Same names, lines and inline chains with and without the cache.
names "" "$TMP/nocache.json"
names "$C" "$TMP/cache.json"
cmp -s "$TMP/nocache.json" "$TMP/cache.json" ||
	die "names differ through the cache"
grep -q '"kernel":true' "$TMP/cache.json" || die "no kernel frame named"

# The entry is what names kernel frames: a doctored copy shows.
cp "$C/$K" "$TMP/kept"
kentry "$C/$K" cached_ >/dev/null || die "cannot doctor the entry"
DCPROF_CACHE_DIR=$C "$DCPROF" report -i "$F" --resymbolize --format json \
	--sort symbol >"$TMP/doctored.json" 2>/dev/null || die "report failed"
python3 - "$TMP/doctored.json" <<'PY' || die "kernel frames not named from the cache"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["kernel"]]
assert rows and all(r["symbol"].startswith("cached_") for r in rows), rows[:3]
PY
cp "$TMP/kept" "$C/$K"

# libc's compressed debug file, when there is one.
LIBC=$(awk '$NF ~ /libc\.so\.6$/ { print $NF; exit }' /proc/self/maps)
ID=$(python3 - "$LIBC" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
for i in range(shnum):
    sh = shoff + i * shentsize
    typ, = struct.unpack_from("<I", d, sh + 4)
    off, size = struct.unpack_from("<QQ", d, sh + 0x18)
    if typ == 7:  # SHT_NOTE
        p = off
        while p + 12 <= off + size:
            nsz, dsz, t = struct.unpack_from("<III", d, p)
            name = p + 12
            desc = name + ((nsz + 3) & ~3)
            if t == 3 and d[name:name + 3] == b"GNU":
                print(d[desc:desc + dsz].hex())
                sys.exit(0)
            p = desc + ((dsz + 3) & ~3)
PY
)
DBG=/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug
if [ -n "$ID" ] && [ -e "$DBG" ] &&
	python3 - "$DBG" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum = struct.unpack_from("<HH", d, 0x3a)
sys.exit(0 if any(struct.unpack_from("<Q", d, shoff + i * shentsize + 8)[0] & 0x800
                  for i in range(shnum)) else 1)
PY
then
	[ -s "$C/debug-$ID" ] || die "libc's compressed debug file was not inflated into the cache"
	grep -q "DWARF of '.*' from the cache '$C/debug-$ID'" "$TMP/err" ||
		die "the second recording did not use the inflated copy"
	[ "$(stat -c %s "$C/debug-$ID")" -gt "$(stat -c %s "$DBG")" ] ||
		die "the cached copy is not inflated"
	echo "libc's debug file inflated: $(stat -c %s "$DBG") -> $(stat -c %s "$C/debug-$ID") bytes"
else
	skip_part "no compressed debug file '$DBG' for '$LIBC' (install libc6-dbg): inflation untested"
fi

# A damaged (truncated) entry is not used, and is derived again.
head -c 100000 "$C/$K" >"$TMP/cut" && cat "$TMP/cut" >"$C/$K"
rec "$C" "$TMP/three.data"
grep -q "kernel symbols from the cache" "$TMP/err" &&
	die "a truncated entry was used"
kentry "$C/$K" >/dev/null || die "the damaged entry was not rewritten"

# A symlink planted as the entry is neither followed nor kept.
echo "precious" >"$TMP/target"
rm -f "$C/$K"
ln -s "$TMP/target" "$C/$K"
rec "$C" "$TMP/four.data"
[ "$(cat "$TMP/target")" = precious ] || die "the symlink's target was written"
[ -f "$C/$K" ] && [ ! -L "$C/$K" ] || die "the symlink is still the entry"

# A cache directory others may write, or a symlink to one: not used.
chmod 777 "$C"
rec "$C" "$TMP/five.data"
grep -q "not using the symbol cache" "$TMP/err" ||
	die "a world-writable cache was used: $(cat "$TMP/err")"
chmod 700 "$C"
ln -s "$C" "$TMP/link"
rec "$TMP/link" "$TMP/six.data"
grep -q "not using the symbol cache.*symlink" "$TMP/err" ||
	die "a symlinked cache was used: $(cat "$TMP/err")"

# Off: nothing written.
rec "" "$TMP/seven.data"
grep -q "cache" "$TMP/err" && die "cache used with DCPROF_CACHE_DIR empty"
pass
