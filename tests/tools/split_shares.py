#!/usr/bin/env python3
"""Shares of a known split against the truth the workload measured.

  split_shares.py check TRUTH MIN_TOTAL POINTS [LABEL] <COUNTS
      COUNTS: "NAME COUNT" lines (a name twice: its counts add up; names
      the truth does not have are left out). The truth's names must hold
      at least MIN_TOTAL counts together, and each name's share of them
      must be within POINTS percentage points of its share of the time
      the truth gives. Exit 0 when so, 1 when a share is off or the truth
      cannot be read, 3 when the names hold fewer than MIN_TOTAL counts
      (a caller may treat that as "not judged"), 2 on bad usage.
  split_shares.py counts REPORT [KEY [FILE]]
      print "NAME COUNT" lines of a `report --format json` document: its
      rows' samples summed by the column KEY (default symbol), only the
      rows of the file FILE when given.

TRUTH is a file holding either the workload's truth line, as
tests/workloads/split.c and dispatch.c print it with --truth:
  WORKLOAD: total_ns T NAME_ns NS NAME_ns NS ...
(other lines are ignored), or "took NAME NS" lines, one a name. The
shares are among the truth's names only: the workload measures the CPU
time of each of them, not of whatever else the process ran.
"""
import json
import re
import sys

# split.c's functions: a truth line of the split workload must name these
SPLIT_NAMES = {"work_fifty", "work_thirty", "work_twenty"}


def read_truth(path):
    took = {}
    for line in open(path):
        w = line.split()
        if len(w) >= 5 and w[0].endswith(":") and w[1] == "total_ns":
            if took:
                raise ValueError("more than one truth line in %s" % path)
            pairs = w[3:]
            if len(pairs) % 2 or not all(k.endswith("_ns") for k in pairs[::2]):
                raise ValueError("not a truth line: %r" % line)
            took = {k[:-3]: int(v) for k, v in zip(pairs[::2], pairs[1::2])}
            if w[0] == "split:" and set(took) != SPLIT_NAMES:
                raise ValueError("the split's truth names %s" % sorted(took))
        elif len(w) == 3 and w[0] == "took":
            if w[1] in took:
                raise ValueError("%s twice in %s" % (w[1], path))
            took[w[1]] = int(w[2])
    if len(took) < 2 or sum(took.values()) <= 0:
        raise ValueError("no truth in %s" % path)
    return took


def read_counts(lines):
    counts = {}
    for line in lines:
        if not line.strip():
            continue
        # a name may hold spaces (or be empty): the count is the last word
        m = re.fullmatch(r"(?:(.*)\s)?([0-9]+)\s*", line)
        if not m:
            raise ValueError("not a 'NAME COUNT' line: %r" % line)
        name = m.group(1) or ""
        counts[name] = counts.get(name, 0) + int(m.group(2))
    return counts


def check(truth, min_total, points, label, counts):
    """0 if every share is within points, 1 if one is not, 3 if too few"""
    prefix = label + " " if label else ""
    want = {k: 100.0 * ns / sum(truth.values()) for k, ns in truth.items()}
    total = sum(counts.get(k, 0) for k in want)
    if total < max(min_total, 1):
        print("%sonly %d samples in %s (want %d): %s" % (
            prefix, total, ", ".join(sorted(want)), min_total,
            {k: counts.get(k, 0) for k in sorted(want)}))
        return 3
    off = 0
    for k, w in want.items():
        share = 100.0 * counts.get(k, 0) / total
        print("%s%s: %.1f%% (want %.1f%%)" % (prefix, k, share, w))
        if abs(share - w) > points:
            print("%s%s has %.1f%%, want %.1f%% +- %g" % (
                prefix, k, share, w, points))
            off = 1
    return off


def report_counts(path, key, file):
    counts = {}
    for r in json.load(open(path))["rows"]:
        if file is None or r["file"] == file:
            counts[r[key]] = counts.get(r[key], 0) + r["samples"]
    for k, n in counts.items():
        print("%s %d" % (k, n))


def main(argv):
    if len(argv) >= 5 and argv[1] == "check" and len(argv) <= 6:
        try:
            truth = read_truth(argv[2])
        except (OSError, ValueError) as e:
            print("split_shares: %s" % e)
            return 1
        return check(truth, int(argv[3]), float(argv[4]),
                     argv[5] if len(argv) > 5 else "",
                     read_counts(sys.stdin))
    if 3 <= len(argv) <= 5 and argv[1] == "counts":
        report_counts(argv[2], argv[3] if len(argv) > 3 else "symbol",
                      argv[4] if len(argv) > 4 else None)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
