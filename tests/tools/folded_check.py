# SPDX-License-Identifier: MIT
"""A test aid: checks over a profile's folded user stacks (tests/tools/
folded.c -u).

usage: python3 folded_check.py FOLDED COMM EXPR...

Each EXPR is Python run in turn with, in scope: rows (the (frames, count)
pairs of the rows of command name COMM, frames root first, the name
dropped), count(pred) (the samples of the rows whose frames pred accepts),
has_seq(frames, seq) (seq appears in frames, in a row), has_ordered(frames,
seq) (in order, not necessarily adjacent), whole_stack(frames)
(the stack begins at a program's root) and sys. An AssertionError fails
the check with its message and exit status 1.
"""
import sys

rows = []
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] == sys.argv[2]:
        rows.append((frames[1:], int(n)))


def has_seq(frames, seq):
    n = len(seq)
    return any(frames[i:i + n] == seq for i in range(len(frames) - n + 1))


def has_ordered(frames, seq):
    """seq appears in frames in order, not necessarily adjacent"""
    i = 0
    for f in frames:
        if i < len(seq) and f == seq[i]:
            i += 1
    return i == len(seq)


def count(pred):
    return sum(c for f, c in rows if pred(f))


# a user stack from its root: main, the start in libc, a thread's start;
# _start of a stripped program is named after its file ("xz+0x3aa0"), so
# a stack is whole too when it begins there and goes through the start in
# libc
ROOTS = ("main", "__libc_start_call_main", "_start", "start_thread", "clone3")


def whole_stack(f):
    return bool(f) and (f[0] in ROOTS or
                        (len(f) > 2 and f[2] == "__libc_start_call_main"))


try:
    for expr in sys.argv[3:]:
        exec(expr)
except AssertionError as e:
    print("check failed: %s" % e, file=sys.stderr)
    sys.exit(1)
