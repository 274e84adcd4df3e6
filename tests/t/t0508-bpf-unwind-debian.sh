#!/bin/bash
# exclusive: records -a and wants whole stacks of every python3, perl, xz, gzip and sqlite3 on the machine
# The BPF backend's -g on Debian's own python3, perl, xz, gzip and sqlite3,
# built without frame pointers, side by side, recorded -a twice: the
# second time, with the tables in the cache, >= 95% of each program's
# samples reach its root (printed, not checked, under the sanitizers).
. "$(dirname "$0")/test-lib.sh"
need python3 perl xz gzip sqlite3
need_bpf_backend
folded_tool

# record NAME DCPROF-ARGS...: the user stacks in $TMP/NAME.folded
record() { record_folded "$1" --backend bpf "${@:2}"; }
check() { check_folded "$@"; }

# With one symbol cache: the first recording compiles every table while
# it samples (the samples before, walked by frame pointers, are printed,
# not checked), the second reads them from the cache before it samples,
# as every recording after the first on a machine does
head -c 40000000 /dev/urandom >"$TMP/random"
cat >"$TMP/mix.sh" <<SH
/usr/bin/python3 -c 'import time
t = time.time()
def f(n): return sum(i * i for i in range(n))
while time.time() - t < 3.5: f(10000)' &
perl -e '\$t = time; while (time - \$t < 3.5) { \$s = join(",", map { \$_ * 2 } 1..2000); \$s =~ s/2/3/g }' &
(trap 'kill \$c; exit' TERM; while :; do xz -9 -c <"$TMP/random" >/dev/null & c=\$!; wait \$c; done) & x=\$!
(trap 'kill \$c; exit' TERM; while :; do gzip -9 -c <"$TMP/random" >/dev/null & c=\$!; wait \$c; done) & g=\$!
(trap 'kill \$c; exit' TERM; while :; do sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*), sum(x * x % 7) FROM c;' >/dev/null & c=\$!; wait \$c; done) & q=\$!
sleep 3.5
kill \$x \$g \$q
wait
SH
# the programs run already when each recording starts, as -a finds them
record_mix() {
	sh "$TMP/mix.sh" &
	local mix=$!
	sleep 0.7
	record "$1" -a -g -v --duration 2
	wait "$mix"
}
rm -rf "$TMP/cache"
mkdir -m 700 "$TMP/cache"
export DCPROF_CACHE_DIR=$TMP/cache
record_mix mix-cold
grep -q 'unwind tables (.*; 0 read from the cache)' "$TMP/err" ||
	die "the first recording read tables from an empty cache: $(grep unwind "$TMP/err")"
for prog in python3 perl xz gzip sqlite3; do
	python3 "$TOP/tests/tools/folded_check.py" "$TMP/mix-cold.folded" "$prog" \
		'print("first recording, %s: %d samples, %.1f%% whole" % (sys.argv[2], count(lambda f: True), 100.0 * count(whole_stack) / max(count(lambda f: True), 1)))'
done
record_mix mix
grep -q 'unwind tables (.*; [1-9][0-9]* read from the cache)' "$TMP/err" ||
	die "the second recording read no table from the cache: $(grep unwind "$TMP/err")"
# Under the sanitizers the shares are printed, not checked: there the
# recorder builds a large table (python3's, libperl's) in 0.5 to 1.5 s
# (libdw's allocation per row under ASan), and the first recording's stop
# has not always built every one for the cache while the programs lived;
# the tables read from the cache are checked either way.
sanitized=$([ -n "$SAN_CFLAGS" ] && echo True || echo False)
for prog in python3 perl xz gzip sqlite3; do
	check "$TMP/mix.folded" "$prog" "sanitized = $sanitized" '
n = count(lambda f: True)
whole = count(whole_stack)
print("'"$prog"': %d samples, %d (%.1f%%) reach the root" % (n, whole, 100.0 * whole / max(n, 1)))
cut = {}
for f, c in rows:
    if not whole_stack(f):
        cut[";".join(f[:4])] = cut.get(";".join(f[:4]), 0) + c
for k in sorted(cut, key=cut.get, reverse=True)[:3]:
    print("  not whole: %d %s" % (cut[k], k))
assert n >= 100, "only %d samples of '"$prog"'" % n
if not sanitized:
    assert whole >= 0.95 * n, "only %.1f%% of the stacks of '"$prog"' reach the root" % (100.0 * whole / n)
'
done
export DCPROF_CACHE_DIR=

pass
