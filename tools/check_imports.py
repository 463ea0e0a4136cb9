#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The import rules of docs/architecture.md, checked on every C and header
file of the guest (who may include whom, and which calls a benchmark may not
make) and on every module of the host application (which rooms of
host/ipibench may import which, and that none edits sys.path). Prints TAP
(one line, with each violation on a '#' line below it) and exits 1 on a
violation.

usage: tools/check_imports.py [--self-test]
  --self-test  plant one violation of each rule in a scratch copy of the
               tree and check that each is caught (and that the real tree
               is clean): the check itself cannot rot into one that passes.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Folders of the guest, each a unit. include/ holds the shared headers; the
# ones below belong to one unit and are that unit's interface to the core or
# its own business (a sibling or a benchmark must not include them).
UNITS = ("boot", "kernel", "ipi", "apic", "hyperv", "kvm", "xen", "harness", "bench", "suite",
         "lib", "include")
# Headers in include/ that belong to some units: those may include them, no other.
OWNED_HEADERS = {
    "include/hyperv.h": ("hyperv",),   # Hyper-V internals: hypercalls, VP indices, the call page
    "include/bench.h": ("harness", "bench", "suite"),  # the harness's interface
}
BACKENDS = ("apic", "hyperv", "kvm", "xen")

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
    "xen": {"include", "lib"},
    "harness": {"include", "lib"},
    "bench": {"include", "lib", "harness"},
    "suite": {"include", "lib", "harness"},
}
# The one kernel file that runs the plan, and so may see the suite and the benchmarks.
PLAN_RUNNERS = {"kernel/plan.c", "kernel/plan.h"}
PLAN_UNITS = ("bench", "suite", "harness")
# A benchmark reaches hypervisors only through struct ipi_ops and struct flush_ops.
BENCH_FORBIDDEN_CALLS = re.compile(
    r"\b(hv_[a-z0-9_]+|kvm_hypercall[a-z0-9_]*|xen_hypercall[a-z0-9_]*)\s*\(")
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


# The host application's rooms (host/ipibench/<room>...), lowest first; a
# room imports from its own layer and the layers below it, never above:
# the KVM host's readers know nothing of results, results nothing of
# comparing them, the readers nothing of running a boot, and only the
# command line sees everything.
HOST = "host/ipibench"
HOST_LAYERS = (
    ("base", ("ipibench", "machine", "exit_codes", "jobs", "write", "presets",
              "record_lines", "command_line", "owner")),
    ("kvmhost", ("kvmhost", "xenhost")),
    ("results", ("results",)),
    ("compare", ("compare",)),
    ("readers", ("report", "history_plot", "readers", "lab", "model_table")),
    ("boot", ("boot", "options")),
    ("cli", ("cli", "__main__")),
)
HOST_RANK = {room: i for i, (_, rooms) in enumerate(HOST_LAYERS) for room in rooms}


def host_room(module):
    """'ipibench.results.files' -> 'results'; 'ipibench' -> 'ipibench'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def host_sources(root):
    for dirpath, _, files in os.walk(os.path.join(root, HOST)):
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def host_imports(tree):
    """(line, module) of every ipibench import, at any depth (a function's too)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == "ipibench":
            if n.module == "ipibench":  # from ipibench import boot: the room is the name
                for a in n.names:
                    yield n.lineno, "ipibench." + a.name
            else:
                yield n.lineno, n.module
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == "ipibench":
                    yield n.lineno, a.name


_trees = {}


def parse(text):
    """ast.parse, once per distinct text: the self-test judges the same
    files again after each plant."""
    if text not in _trees:
        _trees[text] = ast.parse(text)
    return _trees[text]


def host_violations(root):
    found = []
    for path in host_sources(root):
        module = os.path.splitext(path)[0].replace("host/", "", 1).replace("/", ".")
        module = module.removesuffix(".__init__")
        with open(os.path.join(root, path), errors="replace") as f:
            try:
                tree = parse(f.read())
            except SyntaxError as e:
                found.append(f"{path}:{e.lineno}: not Python: {e.msg}")
                continue
        room = host_room(module)
        rank = HOST_RANK.get(room)
        if rank is None:
            found.append(f"{path}: room {room!r} is in no layer of HOST_LAYERS")
            continue
        for line, target in host_imports(tree):
            other = host_room(target)
            if other not in HOST_RANK and target.count(".") == 1 and \
                    not os.path.exists(os.path.join(root, HOST, other + ".py")) and \
                    not os.path.isdir(os.path.join(root, HOST, other)):
                other = "ipibench"  # a name of ipibench/__init__.py (REPO)
            if HOST_RANK.get(other, len(HOST_LAYERS)) > rank:
                found.append(f"{path}:{line}: imports {target}: "
                             f"{HOST_LAYERS[rank][0]} may not import from a layer above it")
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and n.attr in ("path",) and \
                    isinstance(n.value, ast.Name) and n.value.id == "sys":
                found.append(f"{path}:{n.lineno}: touches sys.path (run.sh's PYTHONPATH "
                             "finds the package)")
    return found


# The host's facts are read through one seam (host/ipibench/machine.py), so
# that a test can point it at a fixture host; its own test is the one test
# that reads the real machine. Anywhere else in the host package or its
# tests: no path under /proc, /sys or /dev (but the null device) that is not
# handed to the seam itself (machine.read("/proc/cpuinfo")), no uname, CPU
# count or affinity of os.
SEAM = f"{HOST}/machine.py"
SEAM_TEST = "tests/host/test_machine.py"
HOST_TESTS = "tests/host"
HOST_PATH = re.compile(r"/(proc|sys|dev)(/\S*)?")
HOST_CALLS = ("uname", "cpu_count", "sched_getaffinity")


def host_path_literal(node):
    """The /proc, /sys or /dev path a string constant or f-string begins
    with, or None."""
    if isinstance(node, ast.JoinedStr) and node.values and \
            isinstance(node.values[0], ast.Constant) and isinstance(node.values[0].value, str):
        m = HOST_PATH.match(node.values[0].value)
        return node.values[0].value if m and m.end() == len(node.values[0].value) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if HOST_PATH.fullmatch(node.value) and node.value != "/dev/null":
            return node.value
    return None


def host_read_violations(root):
    found = []
    tests = os.path.join(root, HOST_TESTS)
    paths = list(host_sources(root)) + sorted(
        os.path.join(HOST_TESTS, f) for f in (os.listdir(tests) if os.path.isdir(tests) else [])
        if f.endswith(".py"))
    for path in paths:
        if path in (SEAM, SEAM_TEST):
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            found += file_reads(path, f.read())
    return found


_reads = {}


def file_reads(path, text):
    """host_read_violations of one file's text, once per distinct text (as
    parse())."""
    if (path, text) in _reads:
        return _reads[path, text]
    found = []
    try:
        tree = parse(text)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])  # host_violations says so
    handed = {id(a) for c in ast.walk(tree) if isinstance(c, ast.Call) and
              isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name) and
              c.func.value.id == "machine"
              for arg in c.args for a in ast.walk(arg)}
    for n in ast.walk(tree):
        lit = host_path_literal(n) if id(n) not in handed else None
        if lit:
            found.append(f"{path}:{n.lineno}: reads the host outside the seam ('{lit}'): "
                         f"use {SEAM}")
        elif isinstance(n, ast.Attribute) and n.attr in HOST_CALLS and \
                isinstance(n.value, ast.Name) and n.value.id == "os":
            found.append(f"{path}:{n.lineno}: reads the host outside the seam (os.{n.attr}): "
                         f"use {SEAM}")
    _reads[path, text] = found
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
    files = sum(1 for _ in sources(root)) + sum(1 for _ in host_sources(root))
    return tap(violations(root) + host_violations(root) + host_read_violations(root),
               f"import rules ({files} files)", "import rules (docs/architecture.md)")


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
    (f"{HOST}/results/stats.py", "from ipibench.boot import run",
     "imports ipibench.boot: results may not"),
    (f"{HOST}/kvmhost/trace.py", "from ipibench.results import files",
     "imports ipibench.results: kvmhost may not"),
    (f"{HOST}/exit_codes.py", "def planted():\n    from ipibench.compare.model import Side",
     "imports ipibench.compare.model: base may not"),
    (f"{HOST}/report/command.py", "import ipibench.boot.run",
     "imports ipibench.boot.run: readers may not"),
    (f"{HOST}/boot/run.py", "from ipibench import cli", "imports ipibench.cli: boot may not"),
    (f"{HOST}/compare/gate.py", "import sys\nsys.path.insert(0, '.')", "touches sys.path"),
    (f"{HOST}/report/what_ran.py", "CPUS = open('/proc/cpuinfo').read()",
     "reads the host outside the seam ('/proc/cpuinfo')"),
    ("tests/host/test_history.py", "MODEL = open('/proc/cpuinfo').read()",
     "test_history.py:"),
    ("tests/host/test_save.py", "def planted(pid):\n    return open(f'/proc/{pid}/stat')",
     "reads the host outside the seam ('/proc/')"),
    (f"{HOST}/kvmhost/facts.py", "import os\nCPUS = os.cpu_count()", "(os.cpu_count)"),
]


def self_test(root):
    problems = []
    if violations(root) or host_violations(root) or host_read_violations(root):
        problems.append("the tree itself has violations")
    # One scratch copy; each plant is appended, judged, and taken out again.
    with tempfile.TemporaryDirectory() as tmp:
        for unit in UNITS + (HOST, HOST_TESTS):
            if os.path.isdir(os.path.join(root, unit)):
                shutil.copytree(os.path.join(root, unit), os.path.join(tmp, unit),
                                ignore=shutil.ignore_patterns("__pycache__"))
        for path, line, words in PLANTS:
            with open(os.path.join(tmp, path)) as f:
                before = f.read()
            with open(os.path.join(tmp, path), "a") as f:
                f.write("\n" + line + "\n")
            found = violations(tmp) + host_violations(tmp) + host_read_violations(tmp)
            if not any(words in v for v in found):
                problems.append(f"planted '{line}' in {path}: not caught ({found})")
            with open(os.path.join(tmp, path), "w") as f:
                f.write(before)
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
