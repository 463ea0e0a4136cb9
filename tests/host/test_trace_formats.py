#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/trace_read.py and the host-class model against every kernel
release's trace format (tests/host/kvm-trace-formats.conf, the TP_printk
strings read from the kernels' trees): for each host class, what its KVM
emits for a send, a halted target's wake and a hypercall, rendered as each
release that can host the class prints it, must parse, be attributed, and
match the class's predictions; one planted exit a send must diverge,
naming the row. The inhibit events of each release (kvm_apicv_update_request
before 5.19, kvm_apicv_inhibit_changed with or without names) must make an
accelerated class's records judged as unaccelerated.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import sys

from harness import check, registry

import kvm_trace_render as R
from ipibench.kvmhost import host_model as HM
from ipibench.kvmhost import trace as KT
from ipibench.kvmhost import trace_read as TR
from fixtures import main

CASES, case = registry()
SENDER, TARGET = 101, 102
ITERATIONS = 4
APIC = 0xfee00000

# The records of a scenario: (backend, bench, metric, variant, target_state).
RECORDS = (("xapic", "send-cost", "send", "none", "running"),
           ("x2apic", "send-cost", "send", "none", "running"),
           ("x2apic", "single", "round-trip", "ack-after-eoi", "running"),
           ("x2apic", "single-halt", "round-trip", "block", "halt"),
           ("xapic", "single-halt", "round-trip", "block", "halt"),
           ("hv-ipi", "single-halt", "round-trip", "block", "halt"),
           ("xapic", "self", "send-to-handler", "sti-nop", "self"),
           ("x2apic", "self", "send-to-handler", "sti-nop", "self"),
           ("x2apic-pv-eoi", "send-cost", "send", "none", "running"),
           ("hv-ipi", "send-cost", "send", "none", "running"),
           ("kvm-pv-ipi", "send-cost", "send", "none", "running"))


# What KVM emits, per ISA: each an exit and the events that name it.
def svm_xapic(reg, write):
    # NPF: EXITINFO1 the #PF error code (bit 1 write), EXITINFO2 the address.
    return [("kvm_exit", {"reason": "npf", "info1": 0x100000004 | (2 if write else 0),
                          "info2": APIC + reg})]


def vmx_xapic(reg, write):
    return [("kvm_exit", {"reason": "APIC_ACCESS", "info1": reg | (1 << 12 if write else 0)})]


def msr(isa, ecx, write=True):
    reason = ("msr" if isa == "svm" else ("MSR_WRITE" if write else "MSR_READ"))
    return [("kvm_exit", {"reason": reason, "info1": int(write)}),
            ("kvm_msr", {"rw": "write" if write else "read", "ecx": ecx, "data": 0xfd})]


def hypercall(isa, hv):
    ev = ("kvm_hv_hypercall", {"code": 0x0b, "fast": "fast"}) if hv else \
        ("kvm_hypercall", {"nr": 10})
    return [("kvm_exit", {"reason": "hypercall" if isa == "svm" else "VMCALL"}), ev]


def hlt(isa, release):
    # SVM's idle-HLT intercept ("idle-halt") appears after 6.14.
    name = "HLT" if isa == "vmx" else ("idle-halt" if release >= (6, 19) else "hlt")
    return [("kvm_exit", {"reason": name})]


def miss():
    return [("kvm_exit", {"reason": "avic_incomplete_ipi"}),
            ("kvm_avic_incomplete_ipi", {"icrh": 1, "icrl": 0x4fd, "id": 1, "index": 1})]


def trapped(isa):
    """KVM without APIC virtualization: what each record's iteration exits
    (PV EOI armed: x2apic-pv-eoi's target takes no EOI exit)."""
    xapic = svm_xapic if isa == "svm" else vmx_xapic
    eoi, icr = msr(isa, 0x80b), msr(isa, 0x830)
    return {"xapic send-cost": (xapic(0x300, False) + xapic(0x310, True) + xapic(0x300, True),
                                xapic(0xb0, True)),
            "x2apic send-cost": (icr, eoi), "x2apic single": (icr, eoi),
            "x2apic single-halt": (icr, ["halt"] + eoi),
            "xapic single-halt": (xapic(0x300, False) + xapic(0x310, True) + xapic(0x300, True),
                                  ["halt"] + xapic(0xb0, True)),
            "hv-ipi single-halt": (hypercall(isa, True), ["halt"] + eoi),
            "xapic self": (xapic(0x300, False) + xapic(0x300, True) + xapic(0xb0, True), []),
            "x2apic self": (msr(isa, 0x83f) + eoi, []),
            "x2apic-pv-eoi send-cost": (icr, []),
            "hv-ipi send-cost": (hypercall(isa, True), eoi),
            "kvm-pv-ipi send-cost": (hypercall(isa, False), eoi)}


def behaviour(cls):
    """(isa, {record: (the sender's events, the target's events)}) as the
    class's KVM makes them; "halt" is the target's HLT exit and its wake.
    Written from KVM's code per class (the model's why column), apart from
    the model file: what this catches is the reading of each release's
    lines, not a wrong prediction (only real hosts can show that)."""
    if cls in ("svm-no-avic", "vmx-no-apicv"):
        isa = cls[:3]
        return isa, trapped(isa)
    if cls in ("avic", "avic-1235", "avic-ipiv-off"):
        b = trapped("svm")  # hybrid AVIC traps every x2APIC MSR
        # A blocked target's IsRunning is clear: the doorbell misses.
        b["xapic single-halt"] = (miss(), ["halt"])
        b["xapic send-cost"] = (miss() if cls == "avic-ipiv-off" else [], [])
        b["xapic self"] = ([], [])  # the shorthand and the EOI in hardware
        # No PV EOI while AVIC is active: the EOI MSR write traps.
        b["x2apic-pv-eoi send-cost"] = (msr("svm", 0x830), msr("svm", 0x80b))
        return "svm", b
    if cls in ("x2avic", "x2avic-ipiv-off"):
        send = miss() if cls == "x2avic-ipiv-off" else []
        return "svm", {"xapic send-cost": (send, []), "x2apic send-cost": (send, []),
                       "x2apic single": (send, []), "x2apic single-halt": (miss(), ["halt"]),
                       "xapic single-halt": (miss(), ["halt"]),
                       "hv-ipi single-halt": (hypercall("svm", True), ["halt"]),
                       "xapic self": ([], []), "x2apic self": ([], []),
                       "x2apic-pv-eoi send-cost": (send, []),
                       "hv-ipi send-cost": (hypercall("svm", True), []),
                       "kvm-pv-ipi send-cost": (hypercall("svm", False), [])}
    ipiv = cls == "apicv-ipiv"
    icr = [] if ipiv else msr("vmx", 0x830)
    return "vmx", {"xapic send-cost": ([] if ipiv else [("kvm_exit", {"reason": "APIC_WRITE",
                                                                      "info1": 0x300})], []),
                   "x2apic send-cost": (icr, []), "x2apic single": (icr, []),
                   "x2apic single-halt": (icr, ["halt"]),
                   "xapic single-halt": ([] if ipiv else [("kvm_exit", {"reason": "APIC_WRITE",
                                                                        "info1": 0x300})],
                                         ["halt"]),
                   "hv-ipi single-halt": (hypercall("vmx", True), ["halt"]),
                   "xapic self": ([], []), "x2apic self": ([], []),
                   "x2apic-pv-eoi send-cost": (icr, []),
                   "hv-ipi send-cost": (hypercall("vmx", True), []),
                   "kvm-pv-ipi send-cost": (hypercall("vmx", False), [])}


# The releases each class can be met on, and be judged on (kernel_before).
SINCE = {"svm-no-avic": (4, 19), "vmx-no-apicv": (4, 19), "apicv": (5, 9), "avic": (6, 1),
         "avic-1235": (6, 1),
         "x2avic": (6, 1), "apicv-ipiv": (6, 1), "avic-ipiv-off": (6, 19),
         "x2avic-ipiv-off": (6, 19)}


class Capture:
    """A trace being written in one release's format."""

    def __init__(self, release, isa):
        self.release, self.isa, self.ts, self.lines = release, isa, 10.0, []

    def emit(self, tid, event, **values):
        self.ts += 1e-5
        vcpu = 0 if tid == SENDER else 1
        if event == "kvm_exit" and self.isa == "svm" and "info2" not in values:
            values["info2"] = 0
        self.lines += R.line(self.release, event, tid, self.ts, vcpu=vcpu, **values)
        if event == "kvm_exit":
            self.pending = tid

    def events(self, tid, evs):
        for e in evs:
            if e == "halt":
                for name, values in hlt(self.isa, self.release):
                    self.emit(tid, name, **values)
                self.emit(tid, "kvm_vcpu_wakeup", waited="wait", ns=2000000)
                self.emit(tid, "kvm_entry", rip=0x1000)
                continue
            name, values = e
            self.emit(tid, name, **values)
            if name in ("kvm_msr", "kvm_hypercall", "kvm_hv_hypercall",
                        "kvm_avic_incomplete_ipi") or \
                    (name == "kvm_exit" and values["reason"] in ("npf", "APIC_ACCESS",
                                                                 "APIC_WRITE")):
                self.emit(tid, "kvm_entry", rip=0x1000)

    def mark(self, val):
        self.emit(SENDER, "kvm_exit", reason="io" if self.isa == "svm" else "IO_INSTRUCTION",
                  info1=0xed0000)
        self.emit(SENDER, "kvm_pio", rw="write", port=0xed, size=4, count=1, val=val)

    def inhibit(self, release):
        if R.has(release, "kvm_apicv_update_request"):
            self.emit(SENDER, "kvm_apicv_update_request", activate="deactivate", bit=4)
        elif release >= (6, 12):
            self.emit(SENDER, "kvm_apicv_inhibit_changed", set="set", reason=9,
                      inhibits=0x200, sp=" ", names="PIT_REINJ")
        else:
            self.emit(SENDER, "kvm_apicv_inhibit_changed", set="set", reason=9, inhibits=0x200)


def scenario(cls, release, plant=False, inhibited=False):
    """(trace lines, console records) of the five RECORDS on a host of cls
    printing release's formats; plant: one x2APIC ID read more a send."""
    isa, does = behaviour(cls)
    if inhibited:
        does = trapped(isa)
    cap, recs = Capture(release, isa), []
    if inhibited:
        cap.inhibit(release)
    for mark, (backend, bench, metric, variant, state) in enumerate(RECORDS, 1):
        sender_evs, target_evs = does[f"{backend} {bench}"]
        if plant:
            sender_evs = msr(isa, 0x802, write=False) + sender_evs
        cap.mark(mark << 1)
        for _ in range(ITERATIONS):
            cap.events(SENDER, sender_evs)
            cap.events(TARGET, target_evs)
            cap.mark(TR.REGION_END)
        cap.mark(mark << 1 | 1)
        recs.append(json.dumps({"record": "result", "schema": 1, "bench": bench,
                                "metric": metric, "variant": variant, "backend": backend,
                                "target_state": state, "sender": 0, "targets": "1",
                                "ntargets": 1, "status": "SUCCESS", "iterations": ITERATIONS,
                                "mark": mark}, separators=(",", ":")))
    return cap.lines, recs


def judged(cls, release, **kw):
    lines, log = scenario(cls, release, **kw)
    trace = TR.parse(lines)
    recs = KT.attach(trace, KT.records(log), kernel=".".join(map(str, release)) + ".0")
    return trace, HM.judge(recs, cls, kernel=".".join(map(str, release)) + ".0")


@case("trace formats: every class's KVM, in every release's format that can host it, parses "
      "whole and matches the class's model; a planted exit a send diverges, naming the row")
def _(ctx):
    model = HM.load()
    for cls, since in SINCE.items():
        rows_of = HM.rows_of(model, cls)[0]
        modelled = sum((b, bench, metric, v) in rows_of and
                       not HM.unmodelled_why(cls, {"backend": b, "bench": bench})
                       for b, bench, metric, v, _ in RECORDS)
        check(modelled >= 8, f"{cls}: {modelled} of the records have rows")
        for rel in (r for r in R.RELEASES if r >= since):
            trace, res = judged(cls, rel)
            where = f"{cls} on {'.'.join(map(str, rel))}"
            check(trace.unparsed == 0, f"{where}: {trace.unparsed} lines not parsed")
            check(res["matched"] == modelled and not res["diverging"], f"{where}: {res}")
            _, bad = judged(cls, rel, plant=True)
            rows = {d["row"]: d["what"] for d in bad["diverging"]}
            check(len(rows) == modelled, f"{where}, planted: {bad}")
            check(rows.get("x2apic send-cost send none", "").startswith("sender "),
                  f"{where}, planted: {rows}")


@case("trace formats: a kernel that traces no inhibit (before 5.9) leaves an accelerated "
      "class not modelled; the unaccelerated classes are judged on any")
def _(ctx):
    for rel in (r for r in R.RELEASES if r < (5, 9)):
        _, res = judged("apicv", rel)
        check(res["unmodelled"] == len(RECORDS) and not res["matched"], f"apicv on {rel}: {res}")
        _, res = judged("vmx-no-apicv", rel)
        check(res["matched"] >= 8 and not res["diverging"], f"vmx-no-apicv on {rel}: {res}")


@case("trace formats: each release's inhibit event (kvm_apicv_update_request, "
      "kvm_apicv_inhibit_changed with or without names) makes the records inhibited, judged "
      "as the unaccelerated class")
def _(ctx):
    for cls in ("apicv", "x2avic"):
        for rel in (r for r in R.RELEASES if r >= SINCE[cls]):
            trace, res = judged(cls, rel, inhibited=True)
            where = f"{cls} inhibited on {'.'.join(map(str, rel))}"
            check(trace.unparsed == 0 and trace.inhibits, f"{where}: {trace.inhibits}")
            check(res["matched"] >= 8 and not res["diverging"], f"{where}: {res}")
    trace = TR.parse(R.line((6, 6), "kvm_apicv_inhibit_changed", 1, 1.0, set="set", reason=9,
                            inhibits=0x201))
    check(trace.inhibits == {"bit 0", "bit 9"}, f"6.6's mask without names: {trace.inhibits}")
    trace = TR.parse(R.line((5, 15), "kvm_apicv_update_request", 1, 1.0, bit=4) +
                     R.line((5, 15), "kvm_apicv_update_request", 1, 2.0, activate="activate",
                            bit=4))
    check(not trace.inhibits and [a[1] for a in trace.apicv] == ["set", "cleared"],
          f"5.15's request and its undoing: {trace.inhibits} {trace.apicv}")
    # 5.x traces only the flips: A set (traced), B set, A cleared (both
    # silent), B cleared (traced as "activate bit=B"): active again.
    trace = TR.parse(R.line((5, 10), "kvm_apicv_update_request", 1, 1.0, bit=2) +
                     R.line((5, 10), "kvm_apicv_update_request", 1, 2.0, activate="activate",
                            bit=4))
    check(not trace.inhibits, f"5.10: the flip back to active leaves {trace.inhibits}")


if __name__ == "__main__":
    sys.exit(main(CASES))
