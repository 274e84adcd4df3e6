#!/bin/bash
# annotate of a kernel function (issue 41: it said "'[kernel.kallsyms]' is
# not a file"), on a recording of dd reading /dev/zero, whose time is in
# the kernel:
#  - without -k: read from /proc/kcore at the function's /proc/kallsyms
#    address, as root on a kernel that has /proc/kcore, each direct call's
#    target named as /proc/kallsyms names that address; else refused in
#    one line that says why and names -k; as a user, refused the same way;
#  - with -k VMLINUX, an ELF image of the recorded kernel: the code at
#    VMLINUX's _text plus the function's offset from _text, named by
#    VMLINUX's symbols, also for a user. The image here is linked by the
#    test with the running kernel's build id and known code where the
#    sampled function lies: a call to a function of its own, then nops to
#    the function's end as /proc/kallsyms gives it. An image of another
#    build id is refused in one line.
. "$(dirname "$0")/test-lib.sh"
need gcc python3 setpriv dd
need_root
need_perf_events

F=$TMP/k.data
expect_exit 0 "$DCPROF" record -o "$F" -- dd if=/dev/zero of=/dev/null bs=1M count=20000
expect_exit 0 "$DCPROF" report -i "$F" --format json --sort symbol
# the kernel function with most samples whose name /proc/kallsyms holds
# once: its samples, address, offset from _text and extent (up to the
# next text symbol of the kernel image)
python3 - "$TMP/out" >"$TMP/ksym" <<'PY' || die "no kernel function of a unique name sampled in dd's reads of /dev/zero"
import collections, json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r.get("kernel")]
syms = []
for line in open("/proc/kallsyms"):
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
syms.sort()
count = collections.Counter(n for a, n in syms)
text = next(a for a, n in syms if n == "_text")
r = next(r for r in rows if count[r["symbol"]] == 1)
addr = next(a for a, n in syms if n == r["symbol"])
end = min(a for a, n in syms if a > addr)
print(r["symbol"], r["samples"], addr, addr - text, end - addr)
PY
read -r K N KADDR KOFF KSIZE <"$TMP/ksym"
echo "$K: $N samples, at 0x$(printf %x "$KADDR"), _text+0x$(printf %x "$KOFF"), $KSIZE bytes"

# --- /proc/kcore, or the reason --------------------------------------------
if [ -r /proc/kcore ]; then
	expect_exit 0 "$DCPROF" annotate "$K" -i "$F" --format json
	python3 - "$TMP/out" "$KADDR" "$N" <<'PY' || die "annotate from /proc/kcore is wrong"
import json, re, sys
f = json.load(open(sys.argv[1]))["functions"][0]
assert f["file"] == "/proc/kcore", f["file"]
assert f["address"] == int(sys.argv[2]), (f["address"], sys.argv[2])
assert f["samples"] == int(sys.argv[3]), f["samples"]
names = {}
for line in open("/proc/kallsyms"):
    a, t, n = line.split()[:3]
    names.setdefault(int(a, 16), n)
calls = 0
for i in f["instructions"]:
    m = re.match(r"call (0x[0-9a-f]+)( <(.*)>)?$", i["text"])
    if m and int(m.group(1), 16) in names:
        calls += 1
        assert m.group(3) == names[int(m.group(1), 16)], i["text"]
print("read from /proc/kcore at its kallsyms address, %d calls named" % calls)
PY
else
	expect_exit 1 "$DCPROF" annotate "$K" -i "$F"
	one_line_error
	cat "$TMP/err"
	grep -q "^dcprof: cannot annotate '$K': .*/proc/kcore.*; or give an image of the kernel with -k VMLINUX$" "$TMP/err" ||
		die "the refusal does not say why /proc/kcore cannot be read"
fi

# a user: no kernel addresses, no /proc/kcore
U=nobody
id "$U" >/dev/null 2>&1 || die "no user '$U'"
chmod 755 "$TMP"
chmod 644 "$F"
as_user() { setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups "$@"; }
expect_exit 1 as_user "$DCPROF" annotate "$K" -i "$F"
one_line_error
cat "$TMP/err"
grep -q "^dcprof: cannot annotate '$K': .*\(hides its addresses\|/proc/kcore\).*-k VMLINUX$" "$TMP/err" ||
	die "a user's refusal does not say why"

# --- -k VMLINUX ------------------------------------------------------------
# (the image's code is x86-64's, as the machines the suite runs on)
[ "$(uname -m)" = x86_64 ] || die "the image of this test is x86-64 code, not $(uname -m)'s"
# the running kernel's build id, from its notes
BID=$(python3 - <<'PY'
import struct
b = open("/sys/kernel/notes", "rb").read()
i = 0
while i + 12 <= len(b):
    nsz, dsz, typ = struct.unpack_from("<III", b, i)
    name = b[i + 12:i + 12 + nsz]
    desc = i + 12 + (nsz + 3) // 4 * 4
    if typ == 3 and name.rstrip(b"\0") == b"GNU":
        print(b[desc:desc + dsz].hex())
        break
    i = desc + (dsz + 3) // 4 * 4
PY
)
[ -n "$BID" ] || die "no build id in /sys/kernel/notes"
TEXT=0xffffffff81000000
cat >"$TMP/vmlinux.S" <<ASM
	.text
	.globl _text
_text:
	ret
	.globl dcprof_target
	.type dcprof_target, @function
dcprof_target:
	ret
	.size dcprof_target, 1
	.section .kfunc, "ax"
	.globl kfunc
	.type kfunc, @function
kfunc:
	call dcprof_target
	.fill $KSIZE - 5, 1, 0x90
	.size kfunc, $KSIZE
ASM
link_image() { # OUT BUILD_ID
	gcc -nostdlib -no-pie -static -Wl,-e,_text -Wl,--build-id=0x"$2" \
		-Wl,--section-start=.text=$TEXT \
		-Wl,--section-start=.kfunc=0x$(printf %x $((TEXT + KOFF))) \
		-o "$1" "$TMP/vmlinux.S" || die "cannot link a kernel image"
}
link_image "$TMP/vmlinux" "$BID"
chmod 644 "$TMP/vmlinux"
for who in root user; do
	if [ $who = root ]; then
		expect_exit 0 "$DCPROF" annotate "$K" -i "$F" -k "$TMP/vmlinux" --format json
	else
		expect_exit 0 as_user "$DCPROF" annotate "$K" -i "$F" --vmlinux "$TMP/vmlinux" --format json
	fi
	python3 - "$TMP/out" "$TMP/vmlinux" "$(printf 0x%x $((TEXT + KOFF)))" "$KSIZE" "$N" "$TEXT" <<'PY' ||
import json, sys
out, path = sys.argv[1:3]
addr, size, n, text = (int(x, 0) for x in sys.argv[3:])
f = json.load(open(out))["functions"][0]
assert f["file"] == path, f["file"]
assert (f["address"], f["size"], f["samples"]) == (addr, size, n), (f["address"], f["size"], f["samples"])
texts = [i["text"] for i in f["instructions"]]
want = ["call 0x%x <dcprof_target>" % (text + 1)] + ["nop"] * (size - 5)
assert texts == want, texts[:4]
assert sum(i["samples"] for i in f["instructions"]) == n
print("the image's code at _text+offset: the call named, %d nops, %d samples" % (size - 5, n))
PY
		die "annotate -k (as $who) does not show the image's code at the function's offset"
done

# an image of another build
link_image "$TMP/other" "$(echo "$BID" | tr 0-9a-f 1-9a-f0)"
expect_exit 1 "$DCPROF" annotate "$K" -i "$F" -k "$TMP/other"
one_line_error
grep -q "^dcprof: cannot annotate '$K': '$TMP/other' is not the profile's kernel (its build id differs)$" "$TMP/err" ||
	die "an image of another kernel build is not refused: $(cat "$TMP/err")"
pass
