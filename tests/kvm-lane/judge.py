#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge the framed consoles of a KVM-lane run exactly like plain boot
tests: exit status, the correctness suite's TAP lines, the JSON records;
and, here where real KVM runs, that every backend the preset's flags offer
actually ran: a SKIP of such a backend is a failure.

usage: tests/kvm-lane/judge.py OUTDIR PRESET...
Prints one TAP line per preset; exit 1 if any failed."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATE = os.path.join(HERE, "..", "..", "tools", "validate.py")

# Backends that must pass (not SKIP) in each preset: what its -cpu flags offer.
MUST_RUN = {
    "x2apic": ["xapic", "x2apic", "x2apic-cluster"],
    "xapic": ["xapic"],
    "hv": ["x2apic", "hv-ipi", "hv-ipi-ex"],
    "hv-xmm": ["x2apic", "hv-ipi", "hv-ipi-ex", "hv-ipi-ex-xmm"],
    "hv-xmm-4": ["x2apic", "hv-ipi", "hv-ipi-ex", "hv-ipi-ex-xmm"],
    "hv-vapic": ["hv-icr"],
    "kvm-pv": ["kvm-pv-ipi"],
}
# Backends that exist only once issue 5 lands; until then their absence is
# reported, not failed (they are listed in the kernel's `backends=` key).
FUTURE = {"hv-icr", "hv-ipi", "hv-ipi-ex", "hv-ipi-ex-xmm", "kvm-pv-ipi"}


def judge(outdir, preset):
    problems, notes = [], []
    try:
        status = open(os.path.join(outdir, preset + ".status")).read().strip()
        log = open(os.path.join(outdir, preset + ".log"), errors="replace").read()
    except OSError as e:
        return [f"no output for the preset: {e}"], notes
    log = log.replace("\r", "")
    if status not in ("65", "67"):
        problems.append(f"inner QEMU exit {status}, expected 65 (SUCCESS) or 67 (SKIP)")
    for line in log.splitlines():
        if line.startswith("not ok"):
            problems.append(f"suite: {line}")
    if not re.search(r"^check: \d+ passed, 0 failed", log, re.M):
        problems.append("no correctness-suite summary with 0 failed")
    v = subprocess.run([sys.executable, VALIDATE, "--require", "env,end",
                        os.path.join(outdir, preset + ".log")],
                       stdout=subprocess.PIPE, text=True)
    if v.returncode:
        problems += ["records: " + l for l in v.stdout.splitlines()[:5]]
    present = set(re.findall(r"^ok \d+ - ([a-z0-9-]+): ", log, re.M))
    for backend in MUST_RUN.get(preset, []):
        skipped = re.search(rf"^ok \d+ - {re.escape(backend)}: .*# SKIP (.*)$", log, re.M)
        if backend not in present:
            (notes if backend in FUTURE else problems).append(
                f"backend {backend} did not run")
        elif skipped and not re.search(rf"^ok \d+ - {re.escape(backend)}: (?!.*# SKIP)", log,
                                       re.M):
            problems.append(f"backend {backend} skipped: {skipped.group(1)}")
    return problems, notes


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    bad = 0
    for preset in argv[1:]:
        problems, notes = judge(argv[0], preset)
        print(f"{'not ok' if problems else 'ok'} - kvm-lane: {preset}")
        for p in problems + [f"note: {n}" for n in notes]:
            print(f"#   {p}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
