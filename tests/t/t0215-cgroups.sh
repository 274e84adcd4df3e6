#!/bin/bash
# The cgroup of every sample, on both backends: three workloads of known
# CPU time (1.5, 0.9 and 0.6 s by their own clock) in three cgroups made
# here under the cgroup v2 hierarchy (found in /proc/mounts), laid out as
# docker's systemd driver, a kubelet's burstable pod and a plain service
# name them. report --sort cgroup gives each its share within 3 points;
# the unit, container and pod derived from each path; docker's name of the
# container read from its metadata; -G records one cgroup alone and counts
# the rest; a cgroup removed and made again is two rows; --cgroup filters
# a recording; --no-cgroups and a -G of no cgroup.
. "$(dirname "$0")/test-lib.sh"
need gcc python3
need_root
need_bpf_backend

CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG" ] || die "no cgroup v2 hierarchy in /proc/mounts"
BURN=$(build_workload cpu_burn)
REL=/dcptest.$$
BASE=$CG$REL
ID1=$(printf '%064x' $((RANDOM * 65536 + RANDOM)))
ID2=$(printf '%056x%08x' $RANDOM $RANDOM)
POD=1f2e3d4c-5b6a-4789-8abc-$(printf '%012x' $RANDOM)
DOCKER=$REL/dcptest.slice/docker-$ID1.scope
KUBE=$REL/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-$ID2.scope
SERVICE=$REL/nginx.service
META=/var/lib/docker/containers/$ID1

cleanup_cgroups() {
	local d
	# the deepest first; a cgroup with a process left in it stays
	find "$BASE" -depth -type d 2>/dev/null | while read -r d; do
		rmdir "$d" 2>/dev/null
	done
	[ -n "${META_MADE:-}" ] && rm -rf "$META"
}
trap 'cleanup_cgroups; _cleanup' EXIT
mkdir -p "$CG$DOCKER" "$CG$KUBE" "$CG$SERVICE" ||
	die "cannot make cgroups under $CG"
# docker's own record of the container's name, as the daemon writes it
if [ ! -e "$META" ]; then
	META_MADE=1
	mkdir -p "$META"
	printf '{"ID":"%s","Name":"/web-test","State":{}}' "$ID1" \
		>"$META/config.v2.json"
fi

# run.py CGROUP=SECONDS...: each burner in its cgroup (joined before the
# exec), all at once; prints each one's CPU ns by its rusage
cat >"$TMP/run.py" <<'PY'
import os, sys
kids = {}
for arg in sys.argv[2:]:
    path, secs = arg.split("=")
    pid = os.fork()
    if pid == 0:
        with open(path + "/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
        os.execv(sys.argv[1], [sys.argv[1], secs])
    kids[pid] = path
for _ in kids:
    pid, status, ru = os.wait4(-1, 0)
    print("took %s %d" % (kids[pid], int((ru.ru_utime + ru.ru_stime) * 1e9)))
PY

# shares FILE TRUTH: the three cgroups' shares of their own sum against
# the CPU time each took
shares() {
	# the cgroups as the report names them: below the hierarchy's mount
	sed -n "s|^took $CG/|took /|p" "$2" >"$2.rel"
	report_counts "$1" cgroup | check_split_shares "$2.rel" 2000 3 ||
		die "cgroup shares are off ($1)"
}

for backend in bpf perf; do
	F=$TMP/$backend.data
	expect_exit 0 "$DCPROF" record --backend "$backend" -o "$F" -- \
		python3 "$TMP/run.py" "$BURN" "$CG$DOCKER=1.5" "$CG$KUBE=0.9" \
		"$CG$SERVICE=0.6"
	cp "$TMP/out" "$TMP/truth.$backend"
	expect_exit 0 "$DCPROF" report -i "$F" --sort cgroup --format json
	cp "$TMP/out" "$TMP/cgroup.$backend.json"
	shares "$TMP/cgroup.$backend.json" "$TMP/truth.$backend"

	# the names each layout gives, in text as in JSON
	expect_exit 0 "$DCPROF" report -i "$F" --sort cgroup,unit,container,pod \
		--format json
	python3 - "$TMP/out" "$DOCKER" "$KUBE" "$SERVICE" "$ID1" "$ID2" "$POD" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
docker, kube, service, id1, id2, pod = sys.argv[2:]
by = {r["cgroup"]: r for r in d["rows"]}
want = {
    docker: ("docker-%s.scope" % id1, "docker:%s web-test" % id1[:12], "-"),
    kube: ("cri-containerd-%s.scope" % id2, "containerd:%s" % id2[:12],
           "%s (burstable)" % pod),
    service: ("nginx.service", "-", "-"),
}
for path, (unit, container, p) in want.items():
    r = by.get(path)
    assert r, "no row of %s in %s" % (path, list(by))
    got = (r["unit"], r["container"], r["pod"])
    assert got == (unit, container, p), "%s: %s, want %s" % (path, got, (unit, container, p))
    assert r["cgroup_id"] > 0, r
print("names: ok")
PY
		die "names of the cgroups ($backend)"

	# off the CPU: a sleep of the service's is the service's time
	expect_exit 0 "$DCPROF" record --backend "$backend" --off-cpu \
		-o "$TMP/off.data" -- sh -c \
		"echo \$\$ >'$CG$SERVICE/cgroup.procs' && exec sleep 0.5"
	expect_exit 0 "$DCPROF" report -i "$TMP/off.data" --value off-cpu \
		--sort cgroup --format json
	ms=$(json_get "$TMP/out" "sum(r['ms'] for r in d['rows'] if r['cgroup'] == '$SERVICE')")
	python3 -c "import sys; sys.exit(not 450 <= float(sys.argv[1]) <= 700)" "$ms" ||
		die "the service's sleep off the CPU: $ms ms ($backend)"

	# -G: the service alone; the others' samples counted
	expect_exit 0 "$DCPROF" record --backend "$backend" -G "$SERVICE" \
		-o "$TMP/g.data" -- python3 "$TMP/run.py" "$BURN" \
		"$CG$DOCKER=0.4" "$CG$SERVICE=0.4"
	expect_exit 0 "$DCPROF" report -i "$TMP/g.data" --sort cgroup --format json
	python3 - "$TMP/out" "$SERVICE" <<'PY' || die "-G on the $backend backend"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["cgroup"]: r["samples"] for r in d["rows"]}
other = d["stats"]["samples_other_cgroups"]
print("kept %s, other cgroups %d" % (rows, other))
assert list(rows) == [sys.argv[2]], rows
assert 300 <= rows[sys.argv[2]] <= 500, rows
assert other >= 300, "the docker cgroup's samples: %d counted" % other
PY
done

# pprof's labels: each sample of a burner carries its cgroup's
# cgroup_labels FILE: the (container_id, systemd_unit, pod_uid) label
# values of the burners' samples of a profile (decoded, gzip or not)
cgroup_labels() {
	python3 - "$1" "$TOP/tests/tools" <<'PY'
import gzip, json, sys
sys.path.insert(0, sys.argv[2])
import push_receiver
raw = open(sys.argv[1], "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
p = push_receiver.decode_profile(raw)
st = p["string_table"]
seen = set()
for s in p["sample"]:
    l = {st[x["key"]]: st[x["str"]] for x in s.get("label", []) if x.get("str")}
    if l.get("comm") == "cpu_burn":
        seen.add((l.get("container_id", "-"), l.get("systemd_unit", "-"),
                  l.get("pod_uid", "-"), l.get("cgroup", "-")[-14:]))
print(json.dumps(sorted(seen)))
PY
}
expect_exit 0 "$DCPROF" export --format pprof -i "$TMP/bpf.data" -o "$TMP/out.pb.gz"
got=$(cgroup_labels "$TMP/out.pb.gz")
want=$(python3 -c 'import json, sys; print(json.dumps(sorted([
    [sys.argv[1], "docker-%s.scope" % sys.argv[1], "-", "%s.scope" % sys.argv[1][-8:]],
    [sys.argv[2], "cri-containerd-%s.scope" % sys.argv[2], sys.argv[3], "%s.scope" % sys.argv[2][-8:]],
    ["-", "nginx.service", "-", "/nginx.service"]])))' "$ID1" "$ID2" "$POD")
[ "$got" = "$want" ] || die "pprof's cgroup labels: $got, want $want"

# the push of continuous mode: container and unit labels by default
spawn python3 "$TOP/tests/tools/push_receiver.py" "$TMP/recv" "$TMP/port" \
	'{"mode": "pyroscope"}'
wait_file "$TMP/port"
spawn sh -c 'exec "$@" >/dev/null' sh python3 "$TMP/run.py" "$BURN" \
	"$CG$DOCKER=1" "$CG$SERVICE=1"
expect_exit 0 "$DCPROF" record -a --continuous "$TMP/periods" --period 1 \
	--duration 2 --push "http://127.0.0.1:$(cat "$TMP/port")"
wait "$SPAWNED"
grep -q "^dcprof: push: [1-9][0-9]* requests taken" "$TMP/err" ||
	die "the periods were not pushed: $(cat "$TMP/err")"
for f in "$TMP"/recv/*.profile.json; do
	python3 -c 'import json, sys
for p, info in json.load(open(sys.argv[1])):
    st = p["string_table"]
    for s in p["sample"]:
        l = {st[x["key"]]: st[x["str"]] for x in s.get("label", []) if x.get("str")}
        print(json.dumps([l.get("comm"), l.get("container_id", "-"), l.get("systemd_unit", "-"), sorted(l)]))' "$f"
done | sort -u >"$TMP/pushed"
grep -q "^\[\"cpu_burn\", \"$ID1\", \"docker-$ID1.scope\", \[\"comm\", \"container_id\", \"systemd_unit\"\]\]$" "$TMP/pushed" ||
	die "no docker samples labelled: $(cat "$TMP/pushed")"
grep -q '^\["cpu_burn", "-", "nginx.service", \["comm", "systemd_unit"\]\]$' "$TMP/pushed" ||
	die "no service samples labelled: $(cat "$TMP/pushed")"

# a flame graph a level of containers above the processes: the burners'
# samples under each
expect_exit 0 "$DCPROF" flamegraph -i "$TMP/bpf.data" --by container -o "$TMP/fg.html"
expect_exit 0 "$DCPROF" report -i "$TMP/bpf.data" --sort container,comm --format json
python3 - "$TMP/fg.html" "$TMP/out" <<'PY' || die "flamegraph --by container"
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="fg-data">(.*?)</script>', html, re.S)
d = json.loads(m.group(1))
K, nodes, S = d["stride"], d["nodes"], d["strings"]
path, got = [], {}
for i in range(len(nodes) // K):
    depth = nodes[i * K + 3]
    del path[depth:]
    path.append(S[nodes[i * K]])
    if depth == 2:
        got[tuple(path[1:])] = nodes[i * K + 4]
want = {(r["container"], r["comm"]): r["samples"]
        for r in json.load(open(sys.argv[2]))["rows"]}
burners = {k: v for k, v in want.items() if k[1] == "cpu_burn"}
assert len(burners) == 3, want
for k, v in burners.items():
    assert got.get(k) == v, "%s: %s in the graph, %d in the report" % (k, got.get(k), v)
print("flame graph by container:", burners)
PY

# the text tree's process level says the unit
expect_exit 0 "$DCPROF" report -i "$TMP/bpf.data" --tree caller --sort unit
grep -q "^ *[0-9.]*% *[0-9.]*%  cpu_burn (nginx.service) (process)$" "$TMP/out" ||
	die "the tree's process level: $(head -c 800 "$TMP/out")"

# top groups by container as report does
spawn sh -c 'exec "$@" >/dev/null' sh python3 "$TMP/run.py" "$BURN" \
	"$CG$DOCKER=1.5"
expect_exit 0 "$DCPROF" top -p "$SPAWNED" --stdio --iterations 1 --delay 1 \
	--sort container,comm
grep -Eq "^ +[0-9.]+% +[0-9.]+% +[0-9]+  docker:${ID1:0:12} web-test  cpu_burn$" "$TMP/out" ||
	die "top --sort container: $(cat "$TMP/out")"
wait "$SPAWNED"

# a cgroup removed and made again under the same path: two rows
AGAIN=$CG$REL/again.service
expect_exit 0 "$DCPROF" record -o "$TMP/again.data" -- sh -c "
	mkdir '$AGAIN' && python3 '$TMP/run.py' '$BURN' '$AGAIN=0.3' &&
	rmdir '$AGAIN' && mkdir '$AGAIN' &&
	python3 '$TMP/run.py' '$BURN' '$AGAIN=0.3'"
expect_exit 0 "$DCPROF" report -i "$TMP/again.data" --sort cgroup --format json
python3 - "$TMP/out" "$REL/again.service" <<'PY' || die "a cgroup made again"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["rows"] if r["cgroup"] == sys.argv[2]]
assert len(rows) == 2, rows
assert rows[0]["cgroup_id"] != rows[1]["cgroup_id"], rows
assert all(r["samples"] >= 200 for r in rows), rows
PY
expect_exit 0 "$DCPROF" report -i "$TMP/again.data" --sort cgroup
grep -q "again.service #" "$TMP/out" || die "text rows of one path show no ids"

# --cgroup filters a recording: a parent keeps what is below it
expect_exit 0 "$DCPROF" report -i "$TMP/bpf.data" --cgroup "$REL/kubepods.slice" \
	--sort cgroup --format json
[ "$(json_get "$TMP/out" '[r["cgroup"] for r in d["rows"]]')" = "[\"$KUBE\"]" ] ||
	die "--cgroup kept $(cat "$TMP/out" | head -c 300)"

# --no-cgroups: rows without one
expect_exit 0 "$DCPROF" record --no-cgroups -o "$TMP/no.data" -- "$BURN" 0.2
expect_exit 0 "$DCPROF" report -i "$TMP/no.data" --sort cgroup --format json
[ "$(json_get "$TMP/out" 'sorted(set(r["cgroup"] for r in d["rows"]))')" = '["-"]' ] ||
	die "--no-cgroups still recorded cgroups"

# no cgroup v2 hierarchy (unmounted in a mount namespace of its own): one
# line, and the recording as before; -G cannot be honoured then
unshare -m sh -c "umount '$CG' && exec '$DCPROF' record -o '$TMP/nov2.data' -- '$BURN' 0.2" \
	>"$TMP/out" 2>"$TMP/err" || die "recording without cgroup v2: $(cat "$TMP/err")"
grep -c "no cgroup v2 hierarchy is mounted" "$TMP/err" | grep -qx 1 ||
	die "without cgroup v2: $(cat "$TMP/err")"
expect_exit 0 "$DCPROF" report -i "$TMP/nov2.data" --sort cgroup,comm --format json
[ "$(json_get "$TMP/out" '[r["cgroup"] for r in d["rows"] if r["comm"] == "cpu_burn"]')" = '["-"]' ] ||
	die "rows without cgroup v2: $(head -c 400 "$TMP/out")"
unshare -m sh -c "umount '$CG' && exec '$DCPROF' record -G /x -o '$TMP/nov2g.data' -- true" \
	>"$TMP/out" 2>"$TMP/err" && die "-G without cgroup v2 recorded"
one_line_error "$TMP/err"

# a cgroup that is not there: one line, no profile
expect_exit 1 "$DCPROF" record -G /no/such/cgroup.$$ -o "$TMP/none.data" -- true
one_line_error "$TMP/err"
grep -q "no cgroup '/no/such/cgroup.$$'" "$TMP/err" || die "$(cat "$TMP/err")"
[ ! -e "$TMP/none.data" ] || die "a profile was written"
pass
