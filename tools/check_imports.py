#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The import rules of docs/architecture.md, checked on every C and header
file of the guest: who may include whom, and which calls a benchmark may not
make. Prints TAP (one line, with each violation on a '#' line below it) and
exits 1 on a violation.

usage: tools/check_imports.py [--self-test]
  --self-test  plant one violation of each rule in a scratch copy of the
               tree and check that each is caught (and that the real tree
               is clean): the check itself cannot rot into one that passes.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Folders of the guest, each a unit. include/ holds the shared headers; the
# ones below belong to one unit and are that unit's interface to the core or
# its own business (a sibling or a benchmark must not include them).
UNITS = ("boot", "kernel", "ipi", "apic", "hyperv", "kvm", "harness", "bench", "suite", "lib",
         "include")
# Headers in include/ that belong to some units: those may include them, no other.
OWNED_HEADERS = {
    "include/hyperv.h": ("hyperv",),   # Hyper-V internals: hypercalls, VP indices, the call page
    "include/bench.h": ("harness", "bench", "suite"),  # the harness's interface
}
BACKENDS = ("apic", "hyperv", "kvm")

# What each unit may include: its own folder, and these.
ALLOWED = {
    "lib": set(),                                  # lib/ builds for the host: nothing else
    "include": {"include", "lib"},
    "boot": {"include", "lib"},
    "kernel": {"include", "lib"},                  # + bench/ in kernel/plan.c only (below)
    "ipi": {"include", "lib"},                     # the core: never a backend, never bench/
    "apic": {"include", "lib"},
    "hyperv": {"include", "lib"},
    "kvm": {"include", "lib"},
    "harness": {"include", "lib"},
    "bench": {"include", "lib", "harness"},
    "suite": {"include", "lib", "harness"},
}
# The one kernel file that runs the plan, and so may see the suite and the benchmarks.
PLAN_RUNNERS = {"kernel/plan.c", "kernel/plan.h"}
PLAN_UNITS = ("bench", "suite", "harness")
# A benchmark reaches hypervisors only through struct ipi_ops and struct flush_ops.
BENCH_FORBIDDEN_CALLS = re.compile(r"\b(hv_[a-z0-9_]+|kvm_hypercall[a-z0-9_]*)\s*\(")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def unit_of(path):
    top = path.split("/", 1)[0]
    return top if top in UNITS else None


def sources(root):
    for unit in UNITS:
        base = os.path.join(root, unit)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def violations(root):
    found = []
    for path in sources(root):
        unit = unit_of(path)
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            target = unit_of(inc)
            if target is None:
                found.append(f"{path}: includes '{inc}', outside the guest's folders")
                continue
            owners = OWNED_HEADERS.get(inc)
            if owners and unit not in owners and \
                    not (inc == "include/bench.h" and path in PLAN_RUNNERS):
                found.append(f"{path}: includes {inc}, which belongs to "
                             f"{', '.join(o + '/' for o in owners)}")
                continue
            if target == unit or target in ALLOWED[unit]:
                continue
            if unit == "kernel" and target in PLAN_UNITS and path in PLAN_RUNNERS:
                continue
            why = ("a sibling backend" if unit in BACKENDS and target in BACKENDS
                   else f"{target}/ is not among {unit}/'s imports")
            found.append(f"{path}: includes {inc}: {why}")
        if unit == "bench":
            for m in BENCH_FORBIDDEN_CALLS.finditer(strip_comments(text)):
                found.append(f"{path}: calls {m.group(1)}() directly; a benchmark goes "
                             "through struct ipi_ops / struct flush_ops")
    return found


def tap(problems, ok_name, bad_name):
    """One TAP line for a check, its problems on '#' lines; 1 on failure."""
    if problems:
        print(f"not ok - lint: {bad_name}")
        for p in problems:
            print(f"#   {p}")
        return 1
    print(f"ok - lint: {ok_name}")
    return 0


def report(root):
    return tap(violations(root), f"import rules ({sum(1 for _ in sources(root))} files)",
               "import rules (docs/architecture.md)")


# One planted violation per rule: (file to append to, line, words the report must contain).
PLANTS = [
    ("lib/fmt.c", '#include "include/percpu.h"', "lib/fmt.c: includes include/percpu.h"),
    ("apic/xapic.c", '#include "hyperv/nothing.h"', "a sibling backend"),
    ("kvm/pv_ipi.c", '#include "include/hyperv.h"', "belongs to hyperv/"),
    ("bench/point.c", '#include "apic/apic.h"', "apic/ is not among bench/'s imports"),
    ("bench/self.c", '#include "include/hyperv.h"', "belongs to hyperv/"),
    ("bench/self.c", "static void planted(void) { hv_call_run(0, 0, 0); }", "calls hv_call_run()"),
    ("ipi/core.c", '#include "suite/suite.h"', "suite/ is not among ipi/'s imports"),
    ("kernel/smp.c", '#include "include/bench.h"', "belongs to harness/, bench/, suite/"),
    ("kernel/tsc.c", '#include "harness/kut_view.h"', "harness/ is not among kernel/'s imports"),
    ("bench/point.c", '#include "suite/suite.h"', "suite/ is not among bench/'s imports"),
    ("harness/engine.c", '#include "bench/nothing.h"', "bench/ is not among harness/'s imports"),
]


def self_test(root):
    problems = []
    if violations(root):
        problems.append("the tree itself has violations")
    for path, line, words in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            for unit in UNITS:
                if os.path.isdir(os.path.join(root, unit)):
                    shutil.copytree(os.path.join(root, unit), os.path.join(tmp, unit))
            with open(os.path.join(tmp, path), "a") as f:
                f.write("\n" + line + "\n")
            found = violations(tmp)
            if not any(words in v for v in found):
                problems.append(f"planted '{line}' in {path}: not caught ({found})")
    return tap(problems, f"import rules catch planted violations ({len(PLANTS)} plants)",
               "import rules catch planted violations")


def main():
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    if "--self-test" in sys.argv[1:]:
        return self_test(root)
    return report(root)


if __name__ == "__main__":
    sys.exit(main())
