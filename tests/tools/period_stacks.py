#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
The stacks of each period that record --continuous logged, as the push
tests compare them with what a receiver took: `dcprof export --format
folded --no-comm` of each period file, with the folded format's marks of
kernel (_[k]) and inlined (_[i]) frames taken off, as pprof and OTLP have
no such marks.

stacks(folded, marks) -> Counter(stack -> count) of folded text;
logged(err, dcprof, marks) -> {period file: Counter(stack -> samples)},
for each "dcprof: period 'FILE'" line of the log err; marks: the letters
of the marks taken off ("ki": both).
"""
import collections
import re
import subprocess


def stacks(folded, marks="ki"):
    """Counter(stack -> count) of folded text, the marks taken off."""
    c = collections.Counter()
    for line in folded.splitlines():
        stack, n = line.rsplit(" ", 1)
        c[re.sub(r"_\[[%s]\](?=;|$)" % marks, "", stack)] += int(n)
    return c


def logged(err, dcprof, marks="ki"):
    paths = re.findall(r"^dcprof: period '([^']*)'", open(err).read(), re.M)
    want = {}
    for path in paths:
        folded = subprocess.run([dcprof, "export", "--format", "folded",
                                 "--no-comm", "-i", path],
                                capture_output=True, check=True,
                                text=True).stdout
        want[path] = stacks(folded, marks)
    return want
