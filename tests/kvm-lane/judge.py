#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judge the framed consoles of a KVM-lane run exactly like plain boot
tests: exit status, the correctness suite's TAP lines, the JSON records;
and, here where real KVM runs, that every backend the preset's flags offer
actually ran (of those its backends= names, where its command line has one):
a SKIP of such a backend is a failure.

usage: tests/kvm-lane/judge.py [--label L] [--lane NAME]
                               [--expect-failure PATTERN | --expect-error PATTERN |
                                --expect-triple-fault PATTERN | --expect-reset]
                               OUTDIR FRAME...
A FRAME is a preset, or TAG.PRESET (lane.sh --job): the preset says which
backends must run. OUTDIR is lane.sh's --out, or a run.sh results folder of
a lane boot (its console.log; FRAME names its preset, and the guest's end
record gives its status). Prints one TAP line per frame ("TAG: PRESET" unless
--label L names it "L: FRAME"), behind "kvm-lane: " or --lane's NAME (the
Xen lane's frames: xen-lane); exit 1 if any failed. With
--expect-failure, a frame passes only when its guest ended in FAILURE and
its console matches PATTERN: the lane proving it can fail; --expect-error
the same for ERROR (the stall watchdog ending a run), --expect-triple-fault
for a reset with no status line (the Xen lane: its console shows Xen's
report of the triple fault). With
--expect-reset, only when the guest's own triple fault (debug=triple-fault)
reset it and the lane did not take that for the outer emulator's fault.

A frame that lane.sh ran a second time (a reset with the outer TCG's
signature: a guest RIP inside the L1 host's kvm_amd; or the outer kernel
soft-locked during it, and a fresh outer VM ran it again) is judged on its
second run; a note says so. Only the second kind may excuse an expected
fault's frame: a guest's own triple fault never earns a rerun."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "host"))
from ipibench.record_lines import record_lines  # noqa: E402
VALIDATE = [os.path.join(HERE, "..", "..", "run.sh"), "validate"]

# Backends that must pass (not SKIP) in each preset: what its -cpu flags offer.
# `-cpu host` offers KVM_HC_SEND_IPI unless a preset turns it off, so kvm-pv-ipi
# runs beside the Hyper-V backends and proves the guest OS ID is switched off
# and on again. hv-flush / hv-flush-xmm are the suite's checks of the four
# flush hypercalls in their slow and XMM-fast forms (labels, not backends).
# The NMI backends run wherever their Fixed twin does, and
# x2apic-pv-eoi wherever x2APIC is (QEMU offers kvm-pv-eoi by default).
# native is the suite's check of the native shootdown, over a Fixed backend
# of the last group (under nested KVM its TLB effect goes unseen: the check
# shows that no stale translation is left).
HV = ["x2apic", "x2apic-nmi", "x2apic-pv-eoi", "hv-ipi", "hv-ipi-slow", "hv-ipi-ex",
      "hv-ipi-ex-pad", "kvm-pv-ipi", "kvm-pv-ipi-nmi", "hv-flush", "native"]
HV_XMM = HV + ["hv-ipi-ex-xmm", "hv-flush-xmm"]
MUST_RUN = {
    "x2apic": ["xapic", "xapic-nmi", "x2apic", "x2apic-nmi", "x2apic-cluster", "x2apic-pv-eoi",
               "native"],
    "xapic": ["xapic", "xapic-nmi", "native"],
    "hv": HV,
    "hv-xmm": HV_XMM,
    "hv-xmm-4": HV_XMM,
    "hv-vapic": ["hv-icr", "kvm-pv-ipi", "kvm-pv-ipi-nmi"],
    "kvm-pv": ["kvm-pv-ipi", "kvm-pv-ipi-nmi", "x2apic-pv-eoi"],
    # The Xen lane (host/lane/xen-lane.sh): Xen's vlapic in both modes, every
    # destination and delivery mode, and Xen's event channels; no KVM PV EOI.
    "xen-pvh": ["xapic", "xapic-nmi", "xapic-logical", "x2apic", "x2apic-nmi",
                "x2apic-cluster", "native", "xen-evtchn"],
    # HVM with viridian: the same, and every Hyper-V backend but the XMM-fast
    # ones (viridian offers no XMM input, CPUID 0x40000003 EDX[4]).
    "xen-viridian": ["xapic", "xapic-nmi", "xapic-logical", "x2apic", "x2apic-nmi",
                     "x2apic-cluster", "native", "hv-icr", "hv-ipi", "hv-ipi-slow", "hv-ipi-ex",
                     "hv-ipi-ex-pad", "hv-flush", "xen-evtchn"],
}
# Labels in MUST_RUN that are not backends: the suite's flush checks.
NOT_BACKENDS = ("hv-flush", "hv-flush-xmm", "native")


def figures(log, name):
    """Whether the benchmarks produced a SUCCESS figure for a MUST_RUN name."""
    for _, r, _ in record_lines(log, "result"):
        if r is None or r.get("status") != "SUCCESS":
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


# A run.sh results folder's guest status, from the console's end record, as
# the inner QEMU's exit status would have said it (docs/exit-codes.md).
END_STATUS = {"SUCCESS": "65", "SKIP": "67", "ERROR": "69", "FAILURE": "71"}


def frame_log(outdir, frame):
    """A frame's console: lane.sh's split of outer.log, or, in a run.sh
    results folder (a lane boot through `run.sh --accel kvm-in-tcg`), its
    console.log."""
    own = os.path.join(outdir, frame + ".log")
    run = os.path.join(outdir, "console.log")
    return run if not os.path.exists(own) and os.path.exists(run) else own


def read_frame(outdir, frame):
    """A frame's inner exit status and console. In a run.sh results folder
    the status is the one the guest's end record states."""
    path = frame_log(outdir, frame)
    with open(path, errors="replace") as f:
        log = f.read().replace("\r", "")
    if os.path.basename(path) == "console.log":
        ends = re.findall(r'^\{"record":"end",.*"status":"([A-Z-]+)"', log, re.M)
        return (END_STATUS.get(ends[-1], ends[-1]) if ends else "none (no end record)"), log
    with open(os.path.join(outdir, frame + ".status")) as f:
        status = f.read().strip()
    return status, log


def console_tail(log, n=8):
    """The last lines of a console that ended badly, records left out: where
    the guest was when it stopped (a reset leaves no message of its own)."""
    lines = [l for l in log.splitlines() if l.strip() and not l.startswith("{")]
    return ["console: " + l[:200] for l in lines[-n:]]


def reruns(outdir, frame):
    """lane.sh's '@@@ lane-rerun NAME ...' lines for a frame, as (host-rip
    reruns: 'host-rip=... kvm_amd=...', soft-lockup reruns: the watchdog's
    message)."""
    try:
        outer = open(os.path.join(outdir, "outer.log"), errors="replace").read()
    except OSError:
        return [], []
    found = re.findall(rf"^@@@ lane-rerun {re.escape(frame)} (.*)$", outer, re.M)
    outer = ("soft-lockup:", "outer-oops:")
    lockups = [r.split(":", 1)[1].strip() for r in found if r.startswith(outer)]
    return [r for r in found if not r.startswith(outer)], lockups


def rerun_notes(outdir, frame):
    host_rip, lockups = reruns(outdir, frame)
    return (["ran twice: the first boot reset with no SHUTDOWN exit: KVM's reset, not the"
             " guest's triple fault, see outer.log"
             if r.startswith("no-shutdown-exit") else
             "ran twice: the first boot's bound ended in the firmware, before the guest's"
             " first line (the outer TCG under load), see outer.log"
             if r.startswith("firmware") else
             f"ran twice: dom0's {r.split(':', 1)[1].strip()}: not the guest's fault, see"
             " outer.log"
             if r.startswith("xl-signal") else
             f"ran twice: the first boot reset with the outer TCG's signature ({r}):"
             " not the guest's fault, see outer.log" for r in host_rip]
            + [f"ran twice: the outer VM's kernel "
               f"{'oopsed' if 'Oops' in r else 'soft-locked'} in it ({r}); a fresh outer VM"
               " ran it again: not the guest's fault, see outer.log" for r in lockups])


def preset_of(frame):
    """The preset of a frame: its name, or what follows TAG."""
    return frame.rsplit(".", 1)[-1]


def judge(outdir, frame):
    problems, notes = [], []
    preset = preset_of(frame)
    try:
        status, log = read_frame(outdir, frame)
    except OSError as e:
        return [f"no output for the frame: {e}"], notes
    notes += rerun_notes(outdir, frame)
    if status not in ("65", "67"):
        problems.append(f"inner QEMU exit {status}, expected 65 (SUCCESS) or 67 (SKIP)")
        notes += console_tail(log)
    for line in log.splitlines():
        if line.startswith("not ok"):
            problems.append(f"suite: {line}")
    # plan=bench runs no suite (a figures frame whose preset's suite another
    # boot proves): each offered backend must then have figures.
    suite = not re.search(r"^cmdline: .*\bplan=bench\b", log, re.M)
    if suite and not re.search(r"^check: \d+ passed, 0 failed", log, re.M):
        problems.append("no correctness-suite summary with 0 failed")
    v = subprocess.run(VALIDATE + ["--require", "env,end",
                        frame_log(outdir, frame)],
                       stdout=subprocess.PIPE, text=True)
    if v.returncode:
        problems += ["records: " + l for l in v.stdout.splitlines()[:5]]
    present = set(re.findall(r"^ok \d+ - ([a-z0-9-]+): ", log, re.M))
    # A frame whose command line names its backends is judged on those.
    listed = re.search(r"^cmdline: .*\bbackends=(\S+)", log, re.M)
    listed = set(listed.group(1).split(",")) if listed else None
    benchmarks_ran = '{"record":"result"' in log
    flush_ran = '"bench":"flush"' in log
    for backend in MUST_RUN.get(preset, []):
        if listed is not None and backend not in listed and backend not in NOT_BACKENDS:
            continue
        skipped = re.search(rf"^ok \d+ - {re.escape(backend)}: .*# SKIP (.*)$", log, re.M)
        if not suite:
            if backend == "native" or (backend.startswith("hv-flush") and not flush_ran):
                continue  # a check's label: its figures are the backends' flush rows
            if not figures(log, backend):
                problems.append(f"backend {backend}: no SUCCESS result record (no figures)")
        elif backend not in present:
            problems.append(f"backend {backend} did not run")
        elif skipped and not re.search(rf"^ok \d+ - {re.escape(backend)}: (?!.*# SKIP)", log,
                                       re.M):
            problems.append(f"backend {backend} skipped: {skipped.group(1)}")
        elif backend == "native" or (backend.startswith("hv-flush") and not flush_ran):
            continue  # the suite's checks prove these calls; no flush figures asked for
        elif benchmarks_ran and not figures(log, backend):
            problems.append(f"backend {backend}: no SUCCESS result record (no figures)")
    # Checks the command line left out (skip=): named, never silent.
    named = re.findall(r"^ok \d+ - ([a-z0-9-]+): .*# SKIP (skip=\S+) on the command line$",
                       log, re.M)
    for why in sorted({w for _, w in named}):
        notes.append(f"{sum(w == why for _, w in named)} checks SKIPped by {why} "
                     "(docs/guest-keys.md lists them, docs/xen.md says why tpr-hold exists)")
    return problems, notes


# What a deliberately broken guest must end in: (inner QEMU exit status, its
# meaning, the console line that proves the fault was the one injected).
EXPECT_RESET = ("0", "the guest reset", r"^debug: empty IDT and #UD on the BSP: a triple fault")


def judge_expected(outdir, frame, status_want, meaning, pattern):
    """The negative tests: the guest must end as broken on purpose (FAILURE
    naming the cause, or its own reset), and the lane must not have run it
    again for a reset: only the outer emulator's faults earn a second run.
    (A soft lockup of the outer kernel is not the guest's: noted.)"""
    try:
        status, log = read_frame(outdir, frame)
    except OSError as e:
        return [f"no output for the frame: {e}"], []
    problems = []
    if status != status_want:
        problems.append(f"inner QEMU exit {status}, expected {status_want} ({meaning})")
    if not re.search(pattern, log, re.M):
        problems.append(f"console lacks /{pattern}/")
    host_rip, _ = reruns(outdir, frame)
    problems += [f"the lane took the guest's own fault for the outer emulator's ({r})"
                 for r in host_rip]
    return problems, [n for n in rerun_notes(outdir, frame) if "soft-locked" in n]


def main(argv):
    label, expect, reset, lane = "", None, False, "kvm-lane"
    want = ("71", "FAILURE")
    while argv and argv[0] in ("--label", "--lane", "--expect-failure", "--expect-error",
                               "--expect-triple-fault", "--expect-reset"):
        if argv[0] == "--lane":
            lane = argv[1]
            argv = argv[2:]
            continue
        if argv[0] == "--expect-reset":
            reset = True
            argv = argv[1:]
            continue
        if argv[0] == "--label":
            label = argv[1] + ": "
        else:
            expect = argv[1]
            if argv[0] == "--expect-error":
                want = ("69", "ERROR")
            elif argv[0] == "--expect-triple-fault":
                want = ("0", "a reset with no status line")
        argv = argv[2:]
    if len(argv) < 2:
        print(__doc__.strip())
        return 2
    bad = 0
    for frame in argv[1:]:
        if reset:
            problems, notes = judge_expected(argv[0], frame, *EXPECT_RESET)
        elif expect:
            problems, notes = judge_expected(argv[0], frame, *want, expect)
        else:
            problems, notes = judge(argv[0], frame)
        name = label + frame if label or "." not in frame else ": ".join(frame.rsplit(".", 1))
        print(f"{'not ok' if problems else 'ok'} - {lane}: {name}")
        for p in problems + [f"note: {n}" for n in notes]:
            print(f"#   {p}")
        bad += bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
