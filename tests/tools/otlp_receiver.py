#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
A test receiver of OTLP/HTTP profiles that decides in the order of
Pyroscope's OTLP handler (pkg/ingester/otlp/ingest_handler.go), which an
OpenTelemetry collector's OTLP/HTTP receiver answers alike:

  1. multi-tenant: no X-Scope-OrgID -> 401
  2. a path other than /v1development/profiles -> 404
  3. Content-Type not application/x-protobuf (or application/protobuf)
     -> 415
  4. Content-Encoding: gzip decompressed, else the body as it is; a body
     that is not gzip -> 400
  5. the body parsed as an ExportProfilesServiceRequest with python3-
     protobuf (protoc's Python of proto/otlp_profiles.proto) -> 400; no
     dictionary or no resource profiles -> 400; the dictionary's rules
     (otlp_check.violations: zero entries, every index in range) -> 400
  6. 200, Content-Type application/x-protobuf, the body an
     ExportProfilesServiceResponse (with "reject": N, a partial success
     of N rejected profiles)

"html": true answers every request 200 text/html, as a web UI that knows
no such path does; "answer": {"type": T, "body": B} answers every request
200 with that content type and body (B's code points as bytes), as an
endpoint of another API does. Each request is logged in OUT/NNNN.json with its
verdict, and the flattened request (otlp_check.flatten) of each one taken
in OUT/NNNN.flat.json.

usage: otlp_receiver.py OUT PORTFILE PBDIR CONFIG_JSON
CONFIG: {"multitenant": bool, "html": bool, "answer": {...}, "reject": N,
         "port": 0}
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otlp_check  # noqa: E402
from push_receiver import Refused, serve  # noqa: E402


def decide(req, cfg, pb):
    if cfg.get("multitenant") and not req.headers.get("X-Scope-OrgID"):
        raise Refused(401, "Failed to extract tenant ID from HTTP request")
    if req.path.split("?")[0] != "/v1development/profiles":
        raise Refused(404, "404 page not found")
    ctype = req.headers.get("Content-Type", "")
    if ctype not in ("application/x-protobuf", "application/protobuf"):
        raise Refused(415, "Unsupported Content-Type: %s" % ctype)
    body = req.body
    if req.headers.get("Content-Encoding", "").lower() == "gzip":
        try:
            body = gzip.decompress(body)
        except Exception:
            raise Refused(400, "Failed to read request body")
    r = pb.ExportProfilesServiceRequest()
    try:
        r.ParseFromString(body)
    except Exception:
        raise Refused(400, "Failed to parse protobuf request")
    if not r.HasField("dictionary"):
        raise Refused(400, "missing profile metadata dictionary")
    if not r.resource_profiles:
        raise Refused(400, "missing resource profiles")
    errs = otlp_check.violations(r)
    if errs:
        raise Refused(400, "failed to convert otel profile: " +
                      "; ".join(errs[:5]))
    return r, len(body)


def main():
    out, portfile, pbdir = sys.argv[1], sys.argv[2], sys.argv[3]
    cfg = json.loads(sys.argv[4])
    pb = otlp_check.load(pbdir)

    def handle(req, rec, base):
        try:
            if cfg.get("html"):
                rec["verdict"] = "html"
                req.answer(200, "text/html; charset=utf-8",
                           b"<!doctype html><html><body>UI</body></html>")
            elif cfg.get("answer"):
                rec["verdict"] = "other"
                req.answer(200, cfg["answer"]["type"],
                           cfg["answer"]["body"].encode("latin-1"))
            else:
                r, raw = decide(req, cfg, pb)
                rec["verdict"], rec["raw_len"] = "taken", raw
                with open(base + ".flat.json", "w") as f:
                    json.dump(otlp_check.flatten(r), f)
                resp = pb.ExportProfilesServiceResponse()
                if cfg.get("reject"):
                    ps = resp.partial_success
                    ps.rejected_profiles = cfg["reject"]
                    ps.error_message = "profile type not allowed"
                req.answer(200, "application/x-protobuf",
                           resp.SerializeToString())
        except Refused as e:
            rec["verdict"] = "refused"
            rec["status"], rec["message"] = e.status, e.message
            req.answer(e.status, "text/plain; charset=utf-8",
                       (e.message + "\n").encode())

    serve(out, portfile, cfg.get("port", 0), handle)

if __name__ == "__main__":
    main()
