#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The lists kept by hand beside a registry, checked against it, a make
step: a new backend or preset that misses one of them fails the build,
with the line to add, not a boot test minutes later. The backend registry
is read as the build reads it (build/guest-keys.json, tools/guest_keys.py
from the linked kernel); the presets from their files.

- docs/timed-regions.md's Backends table: one row per backend, in the
  registry's order (the order help=1, backends= and the plan use);
- tests/kvm-lane/judge.py's MUST_RUN: every backend it names exists;
- docs/paravirt.md's preset table: every preset whose -cpu flags need KVM
  (hv-*, kvm-pv-*), and no name presets.conf lacks;
- docs/xen.md's preset table: every Xen preset, in xen-presets.conf's order.

The lists generated from the registry (docs/guest-keys.md,
docs/record-fields.md, the fuzz target's words) need no check.

usage: tools/registry_lists.py KEYS.json STAMP  (writes STAMP when all agree)"""
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGIONS = os.path.join(REPO, "docs", "timed-regions.md")
PARAVIRT = os.path.join(REPO, "docs", "paravirt.md")
XEN = os.path.join(REPO, "docs", "xen.md")
sys.path.insert(0, os.path.join(REPO, "host"))
from ipibench.presets import kvm_only_flags, load_presets, PRESETS  # noqa: E402
from ipibench.boot import guest_keys  # noqa: E402
from ipibench.boot.xen_lane import load_xen_presets  # noqa: E402


def registry(keys_file):
    keys = guest_keys.load(keys_file)
    if not keys or not keys.get("backends", {}).get("choices"):
        raise SystemExit(f"registry_lists: {keys_file} lists no backends (make writes it)")
    return keys["backends"]["choices"]


def first_column(path, heading=None):
    """The `names` in the first cell of each row of the first table of path
    (under `## heading` when given), in order; None without the heading."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if heading:
        if f"\n## {heading}\n" not in text:
            return None
        text = text.split(f"\n## {heading}\n", 1)[1]
    rows, seen_table = [], False
    for line in text.split("\n"):
        if line.startswith("|"):
            seen_table = True
            rows += re.findall(r"`([a-z0-9-]+)`", line.split("|")[1])
        elif seen_table or (heading and line.startswith("#")):
            break
    return rows


def regions_table():
    """The backend names of timed-regions.md's Backends table, in order."""
    return first_column(REGIONS, "Backends")


def preset_problems():
    out = []
    presets = load_presets(PRESETS)
    listed = first_column(PARAVIRT) or []
    for name in presets:
        if kvm_only_flags(presets[name]["cpu"]) and name not in listed:
            out.append(f"docs/paravirt.md: the preset table has no row `{name}` (its -cpu "
                       "flags, vCPUs, what it runs)")
    for name in listed:
        if name not in presets:
            out.append(f"docs/paravirt.md: the preset table's `{name}` is not in presets.conf")
    xen = list(load_xen_presets())
    if first_column(XEN, "The presets") != xen:
        out.append(f"docs/xen.md: the table under 'The presets' must list {', '.join(xen)}, "
                   "in xen-presets.conf's order")
    return out


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
    return out + preset_problems()


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
        f.write("the hand-kept lists agree with the backend and preset registries\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
