#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge the framed consoles of a KVM-lane run exactly like plain boot
tests: exit status, the correctness suite's TAP lines, the JSON records;
and, here where real KVM runs, that every backend the preset's flags offer
actually ran: a SKIP of such a backend is a failure.

usage: tests/kvm-lane/judge.py [--label L] [--expect-failure PATTERN] OUTDIR PRESET...
Prints one TAP line per preset; exit 1 if any failed. With
--expect-failure, a preset passes only when its guest ended in FAILURE and
its console matches PATTERN: the lane proving it can fail."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATE = os.path.join(HERE, "..", "..", "tools", "validate.py")

# Backends that must pass (not SKIP) in each preset: what its -cpu flags offer.
# `-cpu host` offers KVM_HC_SEND_IPI unless a preset turns it off, so kvm-pv-ipi
# runs beside the Hyper-V backends and proves the guest OS ID is switched off
# and on again. hv-flush / hv-flush-xmm are the suite's checks of the four
# flush hypercalls in their slow and XMM-fast forms (labels, not backends).
HV = ["x2apic", "hv-ipi", "hv-ipi-slow", "hv-ipi-ex", "kvm-pv-ipi", "hv-flush"]
HV_XMM = HV + ["hv-ipi-ex-xmm", "hv-flush-xmm"]
MUST_RUN = {
    "x2apic": ["xapic", "x2apic", "x2apic-cluster"],
    "xapic": ["xapic"],
    "hv": HV,
    "hv-xmm": HV_XMM,
    "hv-xmm-4": HV_XMM,
    "hv-vapic": ["hv-icr", "kvm-pv-ipi"],
    "kvm-pv": ["kvm-pv-ipi"],
}


def figures(log, name):
    """Whether the benchmarks produced a SUCCESS figure for a MUST_RUN name."""
    for line in log.splitlines():
        if not line.startswith('{"record":"result"'):
            continue
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("status") != "SUCCESS":
            continue
        if name.startswith("hv-flush"):
            v = r.get("variant", "")
            xmm = "-xmm" in v and "-as-slow" not in v
            if r.get("bench") == "flush" and r.get("metric") == "call" \
                    and (xmm if name == "hv-flush-xmm" else "-slow" in v):
                return True
        elif r.get("backend") == name:
            return True
    return False


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
    benchmarks_ran = '{"record":"result"' in log
    flush_ran = '"bench":"flush"' in log
    for backend in MUST_RUN.get(preset, []):
        skipped = re.search(rf"^ok \d+ - {re.escape(backend)}: .*# SKIP (.*)$", log, re.M)
        if backend not in present:
            problems.append(f"backend {backend} did not run")
        elif skipped and not re.search(rf"^ok \d+ - {re.escape(backend)}: (?!.*# SKIP)", log,
                                       re.M):
            problems.append(f"backend {backend} skipped: {skipped.group(1)}")
        elif backend.startswith("hv-flush") and not flush_ran:
            continue  # the suite's checks prove these calls; no flush figures asked for
        elif benchmarks_ran and not figures(log, backend):
            problems.append(f"backend {backend}: no SUCCESS result record (no figures)")
    return problems, notes


def judge_failure(outdir, preset, pattern):
    """The negative test: the guest must end in FAILURE with the named cause."""
    try:
        status = open(os.path.join(outdir, preset + ".status")).read().strip()
        log = open(os.path.join(outdir, preset + ".log"), errors="replace").read()
    except OSError as e:
        return [f"no output for the preset: {e}"], []
    problems = []
    if status != "71":
        problems.append(f"inner QEMU exit {status}, expected 71 (FAILURE)")
    if not re.search(pattern, log, re.M):
        problems.append(f"console lacks /{pattern}/")
    return problems, []


def main(argv):
    label, expect = "", None
    while argv and argv[0] in ("--label", "--expect-failure"):
        if argv[0] == "--label":
            label = argv[1] + ": "
        else:
            expect = argv[1]
        argv = argv[2:]
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    bad = 0
    for preset in argv[1:]:
        if expect:
            problems, notes = judge_failure(argv[0], preset, expect)
        else:
            problems, notes = judge(argv[0], preset)
        print(f"{'not ok' if problems else 'ok'} - kvm-lane: {label}{preset}")
        for p in problems + [f"note: {n}" for n in notes]:
            print(f"#   {p}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
