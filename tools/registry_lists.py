#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The lists kept by hand beside the guest's backend registry, checked
against it as the build reads it (build/guest-keys.json, tools/guest_keys.py
from the linked kernel), a make step: a new backend that misses one of them
fails the build, with the line to add, not a boot test minutes later.

- docs/timed-regions.md's Backends table: one row per backend, in the
  registry's order (the order help=1, backends= and the plan use);
- tests/kvm-lane/judge.py's MUST_RUN: every backend it names exists.

The lists generated from the registry (docs/guest-keys.md,
docs/record-fields.md, the fuzz target's words) need no check.

usage: tools/registry_lists.py KEYS.json STAMP  (writes STAMP when all agree)"""
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGIONS = os.path.join(REPO, "docs", "timed-regions.md")


def registry(keys_file):
    with open(keys_file, encoding="utf-8") as f:
        keys = {k["key"]: k for k in json.load(f)["keys"]}
    return keys["backends"]["choices"]


def regions_table():
    """The backend names of timed-regions.md's Backends table, in order: the
    first cell of each row of the first table under that heading."""
    with open(REGIONS, encoding="utf-8") as f:
        text = f.read()
    if "\n## Backends\n" not in text:
        return None
    rows, seen_table = [], False
    for line in text.split("\n## Backends\n", 1)[1].split("\n"):
        if line.startswith("|"):
            seen_table = True
            cell = line.split("|")[1]
            m = re.fullmatch(r"\s*`([a-z0-9-]+)`\s*", cell)
            if m:
                rows.append(m.group(1))
        elif seen_table or line.startswith("#"):
            break
    return rows


def judged_backends():
    sys.path.insert(0, os.path.join(REPO, "tests", "kvm-lane"))
    import judge  # noqa: E402  (tests/kvm-lane is not a package)
    return ({b for names in judge.MUST_RUN.values() for b in names}
            - set(judge.NOT_BACKENDS))


def problems(backends):
    out = []
    table = regions_table()
    if table is None:
        out.append("docs/timed-regions.md has no '## Backends' heading")
    elif table != backends:
        for name in backends:
            if name not in table:
                out.append(f"docs/timed-regions.md: the Backends table has no row `{name}` "
                           "(what it sends with, its delivery)")
        for name in table:
            if name not in backends:
                out.append(f"docs/timed-regions.md: the Backends table's `{name}` is no "
                           "registered backend")
        if sorted(table) == sorted(backends):
            out.append(f"docs/timed-regions.md: the Backends table's rows are not in the "
                       f"registry's order: {', '.join(backends)}")
    for name in sorted(judged_backends() - set(backends)):
        out.append(f"tests/kvm-lane/judge.py: MUST_RUN names `{name}`, no registered backend")
    return out


def main(argv):
    if len(argv) != 3:
        print(__doc__.rsplit("\n\n", 1)[-1], file=sys.stderr)
        return 2
    found = problems(registry(argv[1]))
    for line in found:
        print(f"registry_lists: {line}", file=sys.stderr)
    if found:
        return 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("the hand-kept backend lists agree with the registry\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
