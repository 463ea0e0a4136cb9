#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Runs the cases of several test files of tests/host in one process, as
tests/run's tools group does: one python3 start, and one Context (the
stand-in QEMU, the synthetic result sets) made for all of them, not one a
file. The files are those that run with fixtures.main; each also runs on its
own (python3 tests/host/test_qemu.py).

usage: together.py FILE... [--case TEXT]... [--list]
  FILE       a test file of tests/host (its path or its name)
  --case, --case-exact, --list  as in every test file (harness.selected),
             over all the files' cases
Exit status: 1 when a case failed, 2 for a FILE that is not one, else 0."""
import importlib
import os
import sys

from harness import selected
import fixtures

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    files, options, i = [], [], 0
    while i < len(argv):
        if argv[i] in ("--case", "--case-exact") and i + 1 < len(argv):
            options += argv[i:i + 2]
            i += 2
            continue
        (options if argv[i].startswith("--") else files).append(argv[i])
        i += 1
    if not files:
        print("usage: together.py FILE... [--case TEXT]... [--list]", file=sys.stderr)
        return 2
    cases = []
    for f in files:
        name, where = os.path.basename(f), os.path.dirname(f)
        if not (name.startswith("test_") and name.endswith(".py") and
                os.path.isfile(os.path.join(HERE, name)) and
                (not where or os.path.realpath(where) == HERE)):
            print(f"together.py: {f} is not a test file of {HERE}", file=sys.stderr)
            return 2
        cases += importlib.import_module(name[:-3]).CASES
    return 1 if fixtures.run(selected(cases, options), select=False) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
