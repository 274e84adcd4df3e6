#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
Test receivers of dcprof's push that decide as the real servers do, in the
order their code does (read in grafana/pyroscope and parca-dev/parca):

pyroscope  POST /ingest (pkg/ingester/pyroscope/ingest_handler.go):
  1. multi-tenant: no X-Scope-OrgID -> 401 (pkg/util/http/auth.go, dskit)
  2. name= parsed as labelset.Parse does (api/model/labelset) -> 400
  3. the body: gzip or raw (pkg/pprof RawFromBytesWithLimit), its
     decompressed size over max_profile_size_bytes -> 422
  4. the distributor (pkg/distributor/distributor.go pushSeries): the
     rate limiter's burst (labels + profile bytes) -> 429; ValidateProfile
     (pkg/validation/validate.go: empty profile, ingestion window, size,
     samples, sample labels, ids, value lengths, string indexes, '-' in a
     sample type, UTF-8) -> 422
  5. pprofsplit: each string sample label made a series label, numeric
     ones skipped; ValidateLabels (max 30 names, lengths, duplicates) -> 422
  6. 200 with an empty body
  Every error body is {"code": ..., "message": ...} (ErrorWithStatus).
parca      the UI fallback (pkg/server/fallback.go): any path but the API
  answers 200 text/html; POST /api/profiles/writeraw (the gRPC gateway of
  ProfileStoreService/WriteRaw): JSON, base64 raw profiles; the normalizer's
  rules (pkg/normalizer: __name__ required, label names, duplicates, gzip,
  parse) -> 400; the profile type a PromQL metric name -> 500; else 200 {}.

Each request is logged in OUT/NNNN.json with the verdict, and the decoded
profile of each accepted one in OUT/NNNN.profile.json.

usage: push_receiver.py OUT PORTFILE CONFIG_JSON
CONFIG: {"mode": "pyroscope"|"parca", "multitenant": bool,
         "max_samples": 16000, "max_bytes": 4194304, "burst": 2097152,
         "fail_first": N (422 of the ingester's kind to the first N),
         "clock_offset_s": S (the server's clock S seconds ahead),
         "port": 0}
"""
import base64, gzip, json, os, re, sys, time, urllib.parse
import http.server

# ---- protobuf wire format, enough for profile.proto -----------------------


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def msg(b, spec):
    """spec: field -> (name, kind) kind: int, ints, str, msg:spec, msgs"""
    out = {n: ([] if k in ("ints", "strs") or k[0] == "msgs" else 0)
           for n, k in spec.values()}
    for f, wt, v in fields(b):
        if f not in spec:
            continue
        n, k = spec[f]
        if k == "int":
            out[n] = signed(v)
        elif k == "ints":
            out[n] += [signed(x) for x in ints(wt, v)]
        elif k == "strs":
            out[n].append(v.decode("utf-8", "surrogateescape"))
        elif k[0] == "msgs":
            out[n].append(msg(v, k[1]))
        elif k[0] == "msg":
            out[n] = msg(v, k[1])
    return out


VT = {1: ("type", "int"), 2: ("unit", "int")}
LABEL = {1: ("key", "int"), 2: ("str", "int"), 3: ("num", "int"),
         4: ("num_unit", "int")}
SAMPLE = {1: ("location_id", "ints"), 2: ("value", "ints"),
          3: ("label", ("msgs", LABEL))}
LINE = {1: ("function_id", "int"), 2: ("line", "int")}
LOCATION = {1: ("id", "int"), 2: ("mapping_id", "int"), 3: ("address", "int"),
            4: ("line", ("msgs", LINE))}
FUNCTION = {1: ("id", "int"), 2: ("name", "int"), 3: ("system_name", "int"),
            4: ("filename", "int")}
MAPPING = {1: ("id", "int"), 5: ("filename", "int"), 6: ("build_id", "int")}
PROFILE = {1: ("sample_type", ("msgs", VT)), 2: ("sample", ("msgs", SAMPLE)),
           3: ("mapping", ("msgs", MAPPING)),
           4: ("location", ("msgs", LOCATION)),
           5: ("function", ("msgs", FUNCTION)), 6: ("string_table", "strs"),
           9: ("time_nanos", "int"), 10: ("duration_nanos", "int"),
           11: ("period_type", ("msg", VT)), 12: ("period", "int")}


def decode_profile(raw):
    return msg(raw, PROFILE)


# ---- Pyroscope's rules ----------------------------------------------------

LABEL_RUNE = re.compile(r"^[a-zA-Z0-9_.]+$")
SERVICE_RUNE = re.compile(r"^[a-zA-Z0-9_./-]+$")


class Refused(Exception):
    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status, self.message = status, message


def labelset_parse(name):
    """api/model/labelset Parse: APP{k=v,...}"""
    labels, state, key, value = {}, "name", "", ""
    for r in name + "{":
        if state == "name":
            if r == "{":
                state = "tags"
                svc = value.strip()
                if not svc:
                    raise Refused(400, "name: service name is required")
                if not SERVICE_RUNE.match(svc):
                    raise Refused(400, "name: invalid service name: %s" % svc)
                labels["__name__"] = svc
            else:
                value += r
        elif state == "tags":
            if r == "}":
                state = "done"
            elif r == "=":
                state, value = "value", ""
            else:
                key += r
        elif state == "value":
            if r in ",}":
                state = "tags"
                k = key.strip()
                if k != "__name__":
                    if not k:
                        raise Refused(400, "name: label name is required")
                    if not LABEL_RUNE.match(k):
                        raise Refused(400, "name: invalid label name: %s" % k)
                labels[k] = value.strip()
                key = ""
            else:
                value += r
    return labels


def metric_name(p):
    """og/convert/pprof RawProfile.metricName"""
    st = p["string_table"]
    types = [st[t["type"]] for t in p["sample_type"]]
    if "wall" in types:
        return "wall"
    s = ""
    for s in types:
        if "cpu" in s:
            return "process_cpu"
        if "alloc_" in s or "inuse_" in s or s in ("space", "objects"):
            return "memory"
        if "mutex_" in s:
            return "mutex"
        if "block_" in s:
            return "block"
        if "goroutines" in s:
            return "goroutines"
    return s


def validate_profile(p, raw_len, cfg, now_ns):
    """pkg/validation ValidateProfile, in its order"""
    st = p["string_table"]
    if not p["sample_type"]:
        raise Refused(422, "empty profile")
    t = p["time_nanos"]
    if t > 0 and not (now_ns - 3600e9 < t < now_ns + 600e9):
        raise Refused(422, "profile with labels '{}' is outside of ingestion window (profile timestamp: %d)" % t)
    if cfg["max_bytes"] and raw_len > cfg["max_bytes"]:
        raise Refused(422, "the profile with labels '{}' exceeds the size limit (max_profile_size_byte, actual: %d, limit: %d)" % (raw_len, cfg["max_bytes"]))
    if cfg["max_samples"] and len(p["sample"]) > cfg["max_samples"]:
        raise Refused(422, "the profile with labels '{}' exceeds the samples count limit (max_profile_stacktrace_samples, actual: %d, limit: %d)" % (len(p["sample"]), cfg["max_samples"]))
    for s in p["sample"]:
        if len(s["label"]) > 100:
            raise Refused(422, "the profile with labels '{}' exceeds the sample labels limit")
    if any(l["id"] == 0 for l in p["location"]):
        raise Refused(422, "location id is 0")
    if any(f["id"] == 0 for f in p["function"]):
        raise Refused(422, "function id is 0")
    for s in p["sample"]:
        if len(s["value"]) != len(p["sample_type"]):
            raise Refused(422, "sample value length mismatch")
    if not st or st[0] != "":
        raise Refused(422, "string 0 should be empty string")
    n = len(st)
    for vt in p["sample_type"]:
        if vt["type"] >= n:
            raise Refused(422, "sample type type string index out of range")
    for s in p["sample"]:
        for l in s["label"]:
            if l["str"] >= n or l["key"] >= n:
                raise Refused(422, "sample label string index out of range")
    for f in p["function"]:
        if max(f["name"], f["system_name"], f["filename"]) >= n:
            raise Refused(422, "function name string index out of range")
    for m in p["mapping"]:
        if max(m["filename"], m["build_id"]) >= n:
            raise Refused(422, "mapping file name string index out of range")
    for vt in p["sample_type"]:
        if "-" in st[vt["type"]]:
            raise Refused(422, "sample type contains -")
    for s in st:
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise Refused(422, "invalid utf8 string hex")


def validate_labels(ls):
    """pkg/validation ValidateLabels with the default limits"""
    if len(ls) > 30:
        raise Refused(422, "profile series '%s' has %d label names; limit 30" % (ls, len(ls)))
    for k, v in ls:
        if len(k) > 1024:
            raise Refused(422, "profile with labels '%s' has label name too long: '%s'" % (ls, k))
        if len(v) > 2048:
            raise Refused(422, "profile with labels '%s' has label value too long: '%s'" % (ls, v))
    names = [k for k, _ in ls]
    if len(set(names)) != len(names):
        raise Refused(422, "profile with labels '%s' has duplicate label name" % ls)


def pyroscope(req, cfg):
    if cfg.get("multitenant") and not req.headers.get("X-Scope-OrgID"):
        raise Refused(401, "no org id")
    u = urllib.parse.urlsplit(req.path)
    if u.path != "/ingest":
        raise Refused(404, "404 page not found")
    q = urllib.parse.parse_qs(u.query)
    labels = labelset_parse(q.get("name", [""])[0])
    if q.get("format", [""])[0] != "pprof":
        raise Refused(422, "not pprof")
    body = req.body
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)
        except Exception as e:
            raise Refused(422, "parsing IngestInput-pprof failed gzip: %s" % e)
    if cfg["max_bytes"] and len(body) > cfg["max_bytes"]:
        raise Refused(422, "parsing IngestInput-pprof failed decompressed size exceeds maximum allowed size of %d bytes" % cfg["max_bytes"])
    try:
        p = decode_profile(body)
    except Exception as e:
        raise Refused(422, "parsing IngestInput-pprof failed proto: %s" % e)
    if cfg.get("fail_first", 0) > 0:
        cfg["fail_first"] -= 1
        raise Refused(422, "pushing IngestInput-pprof failed push series with index 0 and id  failed: rpc error: code = Unavailable desc = at least 1 live replicas required, could only find 0")
    # createLabels: __name__, __delta__, pyroscope_spy, service_name, then
    # the name's labels but those beginning with __
    series = [("__name__", metric_name(p)), ("__delta__", "false"),
              ("pyroscope_spy", q.get("spyName", ["unknown"])[0])]
    if "service_name" not in labels:
        series.append(("service_name", labels["__name__"]))
    series += [(k, v) for k, v in labels.items() if not k.startswith("__")]
    size = sum(len(k) + len(v) for k, v in series) + len(body)
    if cfg["burst"] and size > cfg["burst"]:
        raise Refused(429, "push rate limit (4.0 MiB) exceeded while adding %d B" % size)
    validate_profile(p, len(body), cfg,
                     time.time_ns() + int(cfg.get("clock_offset_s", 0) * 1e9))
    # pprofsplit: a series per set of string sample labels
    st = p["string_table"]
    numeric = 0
    groups = {}
    for s in p["sample"]:
        extra = []
        for l in s["label"]:
            if l["str"] <= 0:
                numeric += 1
                continue
            extra.append((st[l["key"]], st[l["str"]]))
        groups.setdefault(tuple(sorted(extra)), 0)
    for g in groups:
        names = dict(series)
        for k, v in g:
            names.setdefault(k, v)
        validate_labels(sorted(names.items()))
    return p, {"labels": labels, "numeric_labels": numeric,
               "series": len(groups), "query": q}


# ---- Parca's rules ----------------------------------------------------------

PROM_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
PROM_METRIC = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")


def parca(req, cfg):
    u = urllib.parse.urlsplit(req.path)
    if u.path != "/api/profiles/writeraw" or req.command != "POST":
        return None  # the UI fallback
    try:
        w = json.loads(req.body)
    except ValueError as e:
        raise Refused(400, "invalid character: %s" % e)
    out = []
    for series in w.get("series", []):
        ls, name = {}, ""
        for l in series.get("labels", {}).get("labels", []):
            if l["name"] == "__name__":
                name = l["value"]
                continue
            if not PROM_LABEL.match(l["name"]):
                raise Refused(400, "invalid label name: %s" % l["name"])
            if l["name"] in ls:
                raise Refused(400, "duplicate label name: %s" % l["name"])
            ls[l["name"]] = l["value"]
        if not name:
            raise Refused(400, "missing __name__ label")
        for sample in series.get("samples", []):
            raw = base64.b64decode(sample["rawProfile"])
            if raw[:2] == b"\x1f\x8b":
                try:
                    raw = gzip.decompress(raw)
                except Exception as e:
                    raise Refused(500, "decompressing profile: %s" % e)
            try:
                p = decode_profile(raw)
            except Exception as e:
                raise Refused(400, "failed to parse profile: %s" % e)
            st = p["string_table"]
            for vt in p["sample_type"]:
                pt = p["period_type"] or {"type": 0, "unit": 0}
                ptype = "%s:%s:%s:%s:%s" % (name, st[vt["type"]], st[vt["unit"]],
                                            st[pt["type"]], st[pt["unit"]])
                if not PROM_METRIC.match(ptype):
                    raise Refused(500, "invalid profile type at row 0 (%s)" % ptype)
            out.append((p, {"labels": ls, "name": name}))
    return out


# ---- the server -------------------------------------------------------------


def serve(out, portfile, port, handle):
    """
    An HTTP server on 127.0.0.1:port (0: any) whose port is written to
    portfile once it listens; handle(req, rec, base) answers each request
    (req.answer(status, ctype, body), req.body the body) and fills rec,
    which is logged in OUT/NNNN.json (base is OUT/NNNN).
    """
    os.makedirs(out, exist_ok=True)
    seen = [0]

    class Receiver(http.server.BaseHTTPRequestHandler):
        def answer(self, status, ctype, body):
            self.send_response(status)
            if ctype:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            self.body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen[0] += 1
            base = os.path.join(out, "%04d" % seen[0])
            rec = {"line": self.requestline, "headers": dict(self.headers),
                   "len": len(self.body)}
            handle(self, rec, base)
            with open(base + ".json.tmp", "w") as f:
                json.dump(rec, f)
            os.rename(base + ".json.tmp", base + ".json")

        do_GET = do_POST

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", port), Receiver)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    server.serve_forever()


def main():
    out, portfile, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    cfg.setdefault("max_samples", 16000)
    cfg.setdefault("max_bytes", 4 << 20)
    cfg.setdefault("burst", 2 << 20)

    def handle(req, rec, base):
        try:
            if cfg["mode"] == "parca":
                got = parca(req, cfg)
                if got is None:
                    rec["verdict"] = "html"
                    req.answer(200, "text/html; charset=utf-8",
                               b"<!doctype html><html><head><title>Parca</title></head></html>")
                else:
                    rec["verdict"] = "taken"
                    with open(base + ".profile.json", "w") as f:
                        json.dump([[p, i] for p, i in got], f)
                    req.answer(200, "application/json", b"{}")
            else:
                p, info = pyroscope(req, cfg)
                rec["verdict"] = "taken"
                with open(base + ".profile.json", "w") as f:
                    json.dump([[p, info]], f)
                req.answer(200, None, b"")
        except Refused as e:
            rec["verdict"], rec["status"], rec["message"] = "refused", e.status, e.message
            code = {400: "invalid_argument", 401: "unauthenticated",
                    404: "not_found", 422: "unknown", 429: "resource_exhausted",
                    500: "unknown"}.get(e.status, "unknown")
            req.answer(e.status, "application/json",
                       json.dumps({"code": code, "message": e.message}).encode())

    serve(out, portfile, cfg.get("port", 0), handle)

if __name__ == "__main__":
    main()
