#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/calibrate.py (the Linux calibration, issue 46) on hand-written
frames: a Linux batch and its row, each a marker window of a small
trace, read by the same trace reader as the lane's. A send and an EOI the
row has and Linux skips (PV EOI) must be UNEXPLAINED; a TSC-deadline write
Linux pays is named by its rule; a difference within 0.05 is the same; a
batch that did not make its IPIs fails whatever its exits; the jobs and
the usage. The lane's own frames are judged in tests/kvm-lane
(calibration_test). One TAP line per case, "ok - tools: ..."."""
import json
import os
import sys
import tempfile

from harness import check, registry, run_cmd, REPO
from fixtures import main

from ipibench.kvmhost import calibrate

CASES, case = registry()


def _ev(tid, ts, body):
    return f" qemu-system-x86-{tid} [000] d..1.  {ts:.6f}: {body}"


def window(mark, n, sender, target):
    """A marker window of n iterations: each, the sender's exits (MSR
    numbers written) and the target's, on vCPU threads 10 and 11."""
    lines = [_ev(10, 1.0, "kvm_exit: vcpu 0 reason io rip 0x1 info1 0x00ed0000 info2 0x0"),
             _ev(10, 1.0000001, f"kvm_pio: pio_write at 0xed size 4 count 1 val {mark << 1:#x}")]
    t = 1.0001
    for _ in range(n):
        for tid, msrs in ((10, sender), (11, target)):
            for msr in msrs:
                lines += [_ev(tid, t, f"kvm_exit: vcpu {tid - 10} reason msr rip 0x2 "
                                      "info1 0x1 info2 0x0"),
                          _ev(tid, t + 1e-7, f"kvm_msr: msr_write {msr:x} = 0x1")]
                t += 1e-5
    lines += [_ev(10, t, "kvm_exit: vcpu 0 reason io rip 0x5 info1 0x00ed0000 info2 0x0"),
              _ev(10, t + 1e-7, f"kvm_pio: pio_write at 0xed size 4 count 1 val "
                                f"{mark << 1 | 1:#x}")]
    return lines


ICR, EOI, DEADLINE = 0x830, 0x80b, 0x6e0


def frames(d, linux_target=(), status="SUCCESS", cal=1.0):
    """linux.x2apic (membarrier single: an ICR write, the target's given
    exits) and calib.x2apic (x2apic-pv-eoi's single round-trip
    ack-after-eoi: an ICR write, nothing on the target) in folder d."""
    n = 20
    rec = {"record": "result", "schema": 1, "bench": "linux-membarrier", "metric": "op", "variant": "single",
           "backend": "linux", "sender": 0, "targets": "1", "ntargets": 1, "status": status,
           "iterations": n, "mark": 1, "attempts": 1,
           "guest_interrupts": {"CAL": [0, int(cal * n)], "LOC": [1, 1]}}
    env = {"record": "env", "schema": 1, "linux": {"release": "6.12-test", "idle_driver": "none",
                                      "boot_lines": ["kvm-guest: APIC: eoi() replaced"]}}
    row = {"record": "result", "schema": 1, "bench": "single", "metric": "round-trip",
           "variant": "ack-after-eoi", "backend": "x2apic-pv-eoi", "sender": 0, "targets": "1",
           "iterations": n, "mark": 1}
    for name, recs, target in (("linux.x2apic", [env, rec], linux_target),
                               ("calib.x2apic", [row], ())):
        with open(os.path.join(d, name + ".log"), "w") as f:
            f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
        with open(os.path.join(d, name + ".trace"), "w") as f:
            f.write("\n".join(["# ipibench-trace: windows-only"] +
                              window(1, n, [ICR], list(target))) + "\n")


def op_lines(d, **kw):
    frames(d, **kw)
    lines, bad = calibrate.calibrate(d, "x2apic")
    return [x for x in lines if x.startswith("  membarrier single")], lines, bad


@case("calibrate: a Linux batch that pays what its row does matches it, judged exit by exit")
def _(s):
    with tempfile.TemporaryDirectory() as d:
        head, lines, bad = op_lines(d)
        check(head and head[0].endswith(": matches"), "\n".join(lines))
        check(any("sender  msr (ICR)" in x and "1.00 |  1.00  same" in x for x in lines),
              "\n".join(lines))
        # The other three operations have no records here: counted, named.
        check(bad == 3 and lines[-1] == "calibration x2apic: 4 operations, "
              "3 unexplained differences", lines[-1])
        check("idle: HLT, no cpuidle driver: default_idle()" in lines[0], lines[0])


@case("calibrate: the row's EOI exit that PV EOI spares Linux is UNEXPLAINED; "
      "Linux's TSC-deadline write is named by its rule")
def _(s):
    with tempfile.TemporaryDirectory() as d:
        frames(d)
        # The row holds an EOI exit a target (x2apic's, not x2apic-pv-eoi's).
        with open(os.path.join(d, "calib.x2apic.trace"), "w") as f:
            f.write("\n".join(["# ipibench-trace: windows-only"] +
                              window(1, 20, [ICR], [EOI])) + "\n")
        lines, _ = calibrate.calibrate(d, "x2apic")
        eoi = [x for x in lines if "targets msr (EOI)" in x]
        check(eoi and "0.00 |  1.00  UNEXPLAINED" in eoi[0], "\n".join(lines))
    with tempfile.TemporaryDirectory() as d:
        head, lines, _ = op_lines(d, linux_target=[DEADLINE])
        check(head and head[0].endswith(": 1 named difference"), "\n".join(lines))
        note = [x for x in lines if "targets msr (TSC_DEADLINE)" in x]
        check(note and "1.00 |  0.00  Linux more [1]" in note[0], "\n".join(lines))
        check(any(x.startswith("  [1] Linux's timer") for x in lines), "\n".join(lines))


@case("calibrate: a difference within 0.05 an operation is the same; a batch that did not "
      "make its IPIs fails, its guest counts said")
def _(s):
    check(calibrate.compare("linux-membarrier", {"exits": {"sender": {"msr (ICR)": 1.04}}},
                            {"exits": {"sender": {"msr (ICR)": 1.0}}})[0][4] == "same",
          "1.04 against 1.00")
    check(calibrate.compare("linux-membarrier", {"exits": {"sender": {"msr (ICR)": 1.06}}},
                            {"exits": {"sender": {"msr (ICR)": 1.0}}})[0][4] == "unexplained",
          "1.06 against 1.00: no rule covers a membarrier's extra send")
    # A rule names a difference only as far as its cause reaches: PV EOI
    # refused now and then, not PV EOI gone (an EOI exit an IPI).
    for eoi, verdict in ((0.3, "explained"), (1.0, "unexplained")):
        got = calibrate.compare("linux-membarrier", {"exits": {"targets": {"msr (EOI)": eoi}}},
                                {"exits": {"targets": {}}})[0]
        check(got[4] == verdict and (verdict == "explained" or
                                     "more than its rule's cause can make" in got[5]),
              f"{eoi} EOI exits an IPI: {got}")
    # An operation that sends two IPIs reads one send an IPI, but not one
    # IPI an operation: that count fails.
    check(calibrate.ipi_count({"iterations": 20, "ntargets": 1, "ipis": 22}) == [],
          "1.10 IPIs an operation: the scheduler's own beside it")
    check(calibrate.ipi_count({"iterations": 20, "ntargets": 1, "ipis": 40})[0][4] ==
          "unexplained", "2.00 IPIs an operation passed")
    # Per IPI the target took: 22 IPIs for 20 operations (two of the
    # scheduler's own) hold 1.10 sends an operation to 1.00.
    took = {"iterations": 20, "ntargets": 1, "ipis": 22}
    for sent, verdict in ((1.1, "same"), (1.3, "unexplained")):
        got = calibrate.compare("linux-munmap", dict(took, exits={"sender": {"msr (ICR)": sent}}),
                                {"exits": {"sender": {"msr (ICR)": 1.0}}})[0]
        check(got[4] == verdict, f"{sent} sends an operation, 22 IPIs in 20: {got}")
    with tempfile.TemporaryDirectory() as d:
        head, lines, bad = op_lines(d, status="INVALID", cal=0.5)
        check(head and "did not make its IPIs" in head[0] and "vCPU 1: CAL 0.50" in head[0],
              "\n".join(lines))
        check(bad == 4, f"{bad} unexplained")


@case("calibrate: the lane jobs of a preset; the shootdown's IPIs against KVM's PV flush; "
      "usage errors exit 2")
def _(s):
    jobs = calibrate.jobs("/k/vmlinuz", "/k/init.cpio", ["kvm-pv"])
    check(jobs[0].startswith("calib.kvm-pv | exits | plan=bench ") and
          jobs[0].endswith(" backends=x2apic-pv-eoi"), jobs[0])
    check(jobs[1].startswith("linux.kvm-pv | exits linux image=/k/vmlinuz "
                             "initrd=/k/init.cpio "), jobs[1])
    words = calibrate.shootdown_words({"iterations": 10, "ntargets": 1,
                                       "guest_interrupts": {"TLB": [0, 7]}})
    check(words.startswith("flushed by IPI: 0.70 a target an operation") and
          "0.30 without one" in words, words)
    env = {"PYTHONPATH": os.path.join(REPO, "host")}
    for argv in (["/nowhere"], ["/nowhere", "xapic"], ["/nowhere", "x2apic", "--rows"],
                 ["--jobs", "k", "i", "nope"]):
        rc, _, err = run_cmd([sys.executable, "-m", "ipibench.kvmhost.calibrate", *argv],
                             env=env)
        check(rc == 2 and "presets: x2apic, kvm-pv, hv, hv-xmm" in err, f"{argv}: {rc} {err}")
    rc, out, _ = run_cmd([sys.executable, "-m", "ipibench.kvmhost.calibrate", "/nowhere",
                          "x2apic"], env=env)
    check(rc == 1 and "no traced linux.x2apic and calib.x2apic frames" in out, f"{rc} {out}")


if __name__ == "__main__":
    sys.exit(main(CASES))
