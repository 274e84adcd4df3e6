#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
OpenTelemetry profiles requests (ExportProfilesServiceRequest) decoded by
python3-protobuf with the Python that protoc makes of the repository's
proto/otlp_profiles.proto, checked against the schema's rules, and
flattened for the tests:

  - every table of the dictionary has its entry 0, and that entry is the
    zero value ("" for strings; for links, empty ids or ids of zeros);
  - every *_index and *_strindex is inside its table; a stack names real
    locations (not 0), a sample a real stack; attribute keys are not
    repeated in one list of indices;
  - each Profile has one sample type, each sample one value, and no two
    samples of a Profile share an identity (stack, attributes, link),
    which the schema asks to be one sample.

usage: otlp_check.py PBDIR FILE
  prints the flattened request as JSON; exits 1 with the violations.
Imported by otlp_receiver.py (load, violations, flatten).
"""
import json
import sys


def load(pbdir):
    sys.path.insert(0, pbdir)
    import otlp_profiles_pb2
    return otlp_profiles_pb2


def violations(req):
    d = req.dictionary
    errs = []
    if not req.HasField("dictionary"):
        return ["the request has no dictionary"]
    tables = ["mapping_table", "location_table", "function_table",
              "link_table", "string_table", "attribute_table", "stack_table"]
    for name in tables:
        if len(getattr(d, name)) == 0:
            errs.append("%s has no entry 0" % name)
    if errs:
        return errs
    if d.string_table[0] != "":
        errs.append("string_table[0] is %r" % d.string_table[0])
    for name in ("mapping_table", "location_table", "function_table",
                 "attribute_table", "stack_table"):
        zero = getattr(d, name)[0]
        if zero.ByteSize() != 0:
            errs.append("%s[0] is not the zero value: %s" % (name, zero))
    link = d.link_table[0]
    if link.trace_id not in (b"", bytes(16)) or \
            link.span_id not in (b"", bytes(8)):
        errs.append("link_table[0] is not the zero value")

    def check(kind, i, n, where, nonzero=False):
        if not 0 <= i < n:
            errs.append("%s: %s index %d outside its table of %d" %
                        (where, kind, i, n))
        elif nonzero and i == 0:
            errs.append("%s: %s index 0 (none) where one is needed" %
                        (where, kind))

    ns, na = len(d.string_table), len(d.attribute_table)

    def attrs(indices, where):
        keys = []
        for i in indices:
            check("attribute", i, na, where, True)
            if 0 < i < na:
                keys.append(d.attribute_table[i].key_strindex)
        if len(keys) != len(set(keys)):
            errs.append("%s: an attribute key twice" % where)

    for k, m in enumerate(d.mapping_table):
        where = "mapping_table[%d]" % k
        check("string", m.filename_strindex, ns, where)
        attrs(m.attribute_indices, where)
    for k, loc in enumerate(d.location_table):
        where = "location_table[%d]" % k
        check("mapping", loc.mapping_index, len(d.mapping_table), where)
        for line in loc.lines:
            check("function", line.function_index, len(d.function_table),
                  where, True)
        attrs(loc.attribute_indices, where)
    for k, f in enumerate(d.function_table):
        where = "function_table[%d]" % k
        for field in ("name_strindex", "system_name_strindex",
                      "filename_strindex"):
            check("string", getattr(f, field), ns, where)
    for k, a in enumerate(d.attribute_table):
        where = "attribute_table[%d]" % k
        check("string", a.key_strindex, ns, where, k != 0)
        check("string", a.unit_strindex, ns, where)
    for k, st in enumerate(d.stack_table):
        for i in st.location_indices:
            check("location", i, len(d.location_table),
                  "stack_table[%d]" % k, True)
    for rp in req.resource_profiles:
        for sp in rp.scope_profiles:
            for pk, p in enumerate(sp.profiles):
                where = "profile %d" % pk
                check("string", p.sample_type.type_strindex, ns, where, True)
                check("string", p.sample_type.unit_strindex, ns, where, True)
                check("string", p.period_type.type_strindex, ns, where)
                check("string", p.period_type.unit_strindex, ns, where)
                attrs(p.attribute_indices, where)
                ids = set()
                for sk, s in enumerate(p.samples):
                    w = "%s sample %d" % (where, sk)
                    ident = (s.stack_index, tuple(sorted(s.attribute_indices)),
                             s.link_index)
                    if ident in ids:
                        errs.append("%s: the identity of an earlier sample" % w)
                    ids.add(ident)
                    check("stack", s.stack_index, len(d.stack_table), w, True)
                    check("link", s.link_index, len(d.link_table), w)
                    attrs(s.attribute_indices, w)
                    if len(s.values) != 1:
                        errs.append("%s: %d values" % (w, len(s.values)))
    return errs


def any_value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def flatten(req):
    d = req.dictionary
    st = d.string_table

    def attr_map(indices):
        return {st[d.attribute_table[i].key_strindex]:
                any_value(d.attribute_table[i].value) for i in indices}

    def frames(stack_index):
        out = []
        # the root first; a location's lines end with the function
        # that holds the inlined ones
        for li in reversed(d.stack_table[stack_index].location_indices):
            for line in reversed(d.location_table[li].lines):
                out.append(st[d.function_table[line.function_index]
                              .name_strindex])
        return out

    res = {"resources": [], "mappings": []}
    for k, m in enumerate(d.mapping_table):
        if k:
            res["mappings"].append({"file": st[m.filename_strindex],
                                    "attrs": attr_map(m.attribute_indices)})
    for rp in req.resource_profiles:
        r = {"attrs": {kv.key: any_value(kv.value)
                       for kv in rp.resource.attributes},
             "scopes": []}
        for sp in rp.scope_profiles:
            s = {"name": sp.scope.name, "version": sp.scope.version,
                 "profiles": []}
            for p in sp.profiles:
                s["profiles"].append({
                    "type": st[p.sample_type.type_strindex],
                    "unit": st[p.sample_type.unit_strindex],
                    "period_type": st[p.period_type.type_strindex],
                    "period_unit": st[p.period_type.unit_strindex],
                    "period": p.period,
                    "time_unix_nano": p.time_unix_nano,
                    "duration_nano": p.duration_nano,
                    "samples": [{"stack": frames(x.stack_index),
                                 "value": x.values[0],
                                 "attrs": attr_map(x.attribute_indices)}
                                for x in p.samples],
                })
            r["scopes"].append(s)
        res["resources"].append(r)
    return res


def main():
    pb = load(sys.argv[1])
    req = pb.ExportProfilesServiceRequest()
    req.ParseFromString(open(sys.argv[2], "rb").read())
    errs = violations(req)
    if errs:
        sys.exit("\n".join(errs[:20]))
    json.dump(flatten(req), sys.stdout)


if __name__ == "__main__":
    main()
