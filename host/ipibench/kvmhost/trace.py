#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Exit accounting from a KVM ftrace capture (run.sh --exits): what the hypervisor
did for each record of a run.

Input: the text of the kernel's trace file (tracefs `trace`, or `trace-cmd
report`, which prints the same lines) with the kvm events enabled, and the
guest's console log with phase markers (markers=1). The guest writes
mark << 1 to port 0xed just before a sampling's first measured iteration
and mark << 1 | 1 just after its last, on the vCPU that measures; every
result record of that sampling carries "mark". Each kvm_exit between the
two markers belongs to the sampling: on the marking vCPU's thread to the
sender, on any other vCPU thread to the targets. A round trip and a flush
also write 0xfffffffe right after each region closes: a target's exit after the
sender's latest send exit and before that mark was inside the region
("targets_in_region"), one after it between regions. kvm_vcpu_wakeup on a
target thread says how a halted target came back ("target_wakeups": poll,
when it came back without blocking, halt polling or the check before the
block having seen the IPI; wait, when the vCPU had blocked). Exits outside every window
(boot, backend switches, printing) are counted once, as "outside".

An exit is labelled by its reason and, where a following event on the same
thread says more, by what it touched: the local APIC register an NPF or
APIC-access exit hit ("npf (ICR)"), the MSR ("msr (EOI)"), the port
("io (0x80)"), the hypercall ("vmmcall (HvCallSendSyntheticClusterIpi fast)",
"vmmcall (KVM_HC_SEND_IPI)"). The markers' own port writes are not counted.

APICv/AVIC events (kvm_apicv_inhibit_changed, kvm_avic_*) are collected with
their times, so a record can say whether the accelerated path was inhibited
while it ran. That state alone proves nothing: each record also says whether
its APIC was accelerated in the way that counts (apic_accel), from its own
exits: an IPI path's APIC register access that left guest mode (an NPF or
APIC-access exit on the APIC page, an x2APIC or Hyper-V APIC MSR exit, AVIC's
unaccelerated-access exit) is a trap, and one per iteration or more says "no".

A capture may hold exits of the marker windows only (the KVM lane gates
them in the kernel, host/lane/lane.sh): its first lines say so
("# ipibench-trace: windows-only"), and how many events the ring buffer
overwrote ("# ipibench-trace: lost N"); the exits outside every record are
then not known, and said to be.

usage: PYTHONPATH=host python3 -m ipibench.kvmhost.trace TRACE CONSOLE_LOG [--json]
Pure: no access to anything but the two files; host-tested on captured
traces (tests/fixtures/traces) and fuzzed.
"""
import bisect
import collections
import json
import re
import sys

from ipibench.record_lines import record_lines

MARK_PORT = 0xed
# Written by a round trip (single, single-halt) or a flush right after its region closed,
# on every iteration, warm-up included (include/bench.h,
# BENCH_MARK_REGION_END); only those inside a marker window are read.
REGION_END = 0xfffffffe
TRACE_FILE = "kvm-trace.txt"  # its name in a results directory
# Threads are named like "qemu-system-x86-161" (comm-pid); the flags column
# ("d..1.") is absent when the tracer prints no irq info.
# Numbers are bounded (a pid fits 10 digits, a value 16 hex digits): a
# corrupt capture must not make int() chew on thousands of digits.
LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<tid>\d{1,10})\s+(?:\(\s*[-\d]{1,10}\)\s+)?"
                  r"\[(?P<cpu>\d{1,5})\](?:\s+(?P<flags>[^\s:]+))?\s+"
                  r"(?P<ts>\d{1,12}\.\d{1,9}):\s+(?P<event>[a-z0-9_]+):\s*(?P<body>.*)$")
EXIT = re.compile(r"^(?:vcpu \d{1,6} )?reason (?P<reason>\S+)(?: \S+)?\s+"
                  r"rip (?P<rip>0x[0-9a-f]{1,16})"
                  r"(?: info1 (?P<info1>0x[0-9a-f]{1,16}) info2 (?P<info2>0x[0-9a-f]{1,16}))?"
                  r"(?: info (?P<i1>[0-9a-f]{1,16}) (?P<i2>[0-9a-f]{1,16}))?")
MSR = re.compile(r"^msr_(?P<dir>read|write) (?P<msr>[0-9a-f]{1,8}) = (?P<val>0x[0-9a-f]{1,16})")
PIO = re.compile(r"^pio_(?P<dir>read|write) at (?P<port>0x[0-9a-f]{1,4}) size (?P<size>\d{1,2}) "
                 r"count (?P<count>\d{1,10})(?: val (?P<val>0x[0-9a-f]{1,16}))?")
HYPERCALL = re.compile(r"^nr (?P<nr>0x[0-9a-f]{1,16})")
SET_IRQ = re.compile(r"^gsi (?P<gsi>\d{1,5}) level (?P<level>-?\d{1,3})")
HV_HYPERCALL = re.compile(r"^code (?P<code>0x[0-9a-f]{1,8}) (?P<fast>fast|slow|[01])?")
# kvm_vcpu_wakeup (virt/kvm/kvm_main.c, kvm_vcpu_halt()): how a halted vCPU
# came back: "poll time N ns, polling valid" when halt polling saw the wake,
# "wait time N ns, ..." when the vCPU had blocked.
WAKEUP = re.compile(r"^(?P<how>poll|wait) time (?P<ns>-?\d{1,20}) ns")
# kvm_apicv_inhibit_changed (5.19 on): "set reason=9, inhibits=0x200", the
# reason's number and every inhibit now in force, their names appended
# ("inhibits=0x200 PIT_REINJ", joined with '|') from 6.12 on; without
# names an inhibit is its bit ("bit 9"): the enum's order is the kernel's.
INHIBIT = re.compile(r"^(?P<what>set|cleared) reason=(?P<reason>[^,\s]+),?"
                     r"(?: inhibits=(?P<mask>0x[0-9a-f]{1,16})\s*(?P<names>.*))?")
# Before it, kvm_apicv_update_request (5.7 to 5.18): "deactivate bit=4",
# traced only where the VM's APICv flips (kvm_request_apicv_update()
# returns first when the inhibits were and stay both none or both some):
# deactivate sets the first inhibit (the bit), activate clears the last.
# Inhibits set and cleared while another held go untraced.
UPDATE_REQUEST = re.compile(r"^(?P<what>activate|deactivate) bit=(?P<bit>\d{1,2})\b")

# Local APIC registers by offset (SDM vol. 3A table 11-1).
APIC_REGS = {0x20: "ID", 0x80: "TPR", 0xb0: "EOI", 0xd0: "LDR", 0xe0: "DFR", 0xf0: "SVR",
             0x300: "ICR", 0x310: "ICR2", 0x320: "LVT timer", 0x380: "timer ICR",
             0x390: "timer CCR", 0x3e0: "timer DCR"}
# x2APIC MSRs (0x800 + offset >> 4) and the Hyper-V synthetic APIC MSRs.
MSR_NAMES = {0x830: "ICR", 0x80b: "EOI", 0x83f: "SELF_IPI", 0x808: "TPR", 0x802: "ID",
             0x80d: "LDR", 0x80f: "SVR", 0x832: "LVT timer", 0x838: "timer ICR",
             0x83e: "timer DCR", 0x40000070: "HV_EOI", 0x40000071: "HV_ICR",
             0x40000072: "HV_TPR", 0x40000000: "HV_GUEST_OS_ID", 0x40000001: "HV_HYPERCALL",
             0x40000002: "HV_VP_INDEX", 0x6e0: "TSC_DEADLINE", 0x1b: "APIC_BASE"}
HV_CALLS = {0x0002: "HvCallFlushVirtualAddressSpace", 0x0003: "HvCallFlushVirtualAddressList",
            0x0013: "HvCallFlushVirtualAddressSpaceEx", 0x0014: "HvCallFlushVirtualAddressListEx",
            0x000b: "HvCallSendSyntheticClusterIpi", 0x0015: "HvCallSendSyntheticClusterIpiEx"}
KVM_HCS = {1: "KVM_HC_VAPIC_POLL_IRQ", 5: "KVM_HC_KICK_CPU", 9: "KVM_HC_CLOCK_PAIRING",
           10: "KVM_HC_SEND_IPI", 11: "KVM_HC_SCHED_YIELD", 12: "KVM_HC_MAP_GPA_RANGE"}
APIC_BASE = 0xfee00000
# The exits a send path causes itself: APIC accesses, MSRs, hypercalls, HLT. The
# rest ("interrupt", "vintr", ...) is the host's doing and varies with its load.
# An NMI's own: SVM without vNMI intercepts the IRET after injecting an NMI
# (svm_inject_nmi() -> svm_set_iret_intercept()); VMX with virtual NMIs
# takes an NMI-window exit when a second NMI is pending while NMIs are
# blocked (vmx_enable_nmi_window(); without virtual NMIs it falls back to
# interrupt-window exits).
JUDGED = re.compile(r"^(npf|msr|hypercall|vmmcall|vmcall|hlt|APIC_ACCESS|APIC_WRITE|"
                    r"EOI_INDUCED|MSR_|VMCALL|HLT|EPT_|avic|iret|IRET|NMI_WINDOW)")
# Exits per iteration are counts: one register access more per send is +1.00,
# host noise a few hundredths. compare, gate and history report a change
# beyond this.
EXITS_TOLERANCE = 0.05
# What the host-class model calls a divergence: half an exit an iteration.
# Its predictions are whole exits an iteration, and what the host's load
# adds is a share of them (a PV EOI that a host interrupt between the
# injection and the EOI cancelled, apic_sync_pv_eoi_from_guest(); an AVIC
# doorbell that missed a descheduled target). gate and history judge a rise
# with a count test instead (compare/model.py, exit_rises()).
EXITS_STEP = 0.5
# Registers of the IPI path AVIC and APICv can complete in guest mode, by the
# names above (a read is "NAME read"); the timer's never are, under either,
# whatever the backend, so an exit on one of them says nothing about the
# IPI path's acceleration.
TIMER_REGS = {"LVT timer", "timer ICR", "timer CCR", "timer DCR", "TSC_DEADLINE"}
APIC_MSR_NAMES = {"ICR", "EOI", "SELF_IPI", "TPR", "ID", "LDR", "SVR", "HV_EOI", "HV_ICR",
                  "HV_TPR"}
# Trap-like exits of an access VMX's APIC virtualization could not complete
# (SDM 29.4.3.3, 29.1.2): APIC-write, and EOI-induced for a level vector.
VMX_APIC_TRAPS = ("APIC_WRITE", "EOI_INDUCED")
# AVIC's exit when an IPI's target is not running (APM vol. 2 15.29.9.2): the
# doorbell missed, KVM delivers it; the ICR write itself was accelerated.
DOORBELL_MISS = ("avic_incomplete_ipi", "AVIC_INCOMPLETE_IPI")
# Why AVIC did not complete an IPI: the id field of kvm_avic_incomplete_ipi
# (enum avic_ipi_failure_cause, arch/x86/kvm/svm/avic.c). Only "target not
# running" is a doorbell miss with the ICR write itself accelerated; an
# invalid interrupt type (any non-Fixed IPI: NMI, INIT ...) or target means
# KVM emulated the whole send: a trapped access.
AVIC_IPI = re.compile(r"\bid[= ](?P<id>\d{1,3})\b")
AVIC_IPI_FAILURE = {0: "invalid int type", 1: "target not running", 2: "invalid target",
                    3: "invalid backing page", 4: "invalid ipi vector"}
# The header lines a windows-only capture starts with (lane.sh --exits).
# pit-traced: kvm_set_irq was enabled for the VM's PIT thread, so no GSI 0
# event at all means a silent PIT (pit_ticks 0), not an untraced one (None).
HEADER = re.compile(r"^#\s*ipibench-trace:\s*(?P<key>windows-only|lost|cut|pit-traced)\b"
                    r"\s*(?P<n>\d{1,15})?")


def judged_total(side):
    """Exits per iteration of the judged kinds on one side ({label: value}),
    less AVIC's doorbell misses: a send that found its target not running
    (avic_vcpu_blocking() or avic_vcpu_put() had cleared IsRunning) exits
    or not by when the target blocked or was descheduled, which timing and
    load decide; reported beside the judged exits, never judged (an
    incomplete IPI for any other cause is a trap, and judged)."""
    return round(sum(v for k, v in side.items() if JUDGED.match(k) and not _known_miss(k)), 4)


def _known_miss(label):
    """A doorbell miss whose cause the trace names (kvm_avic_incomplete_ipi
    said "target not running"). One whose cause was not traced (the event
    lost) stays judged: it could be a trapped send (an invalid type,
    target, backing page or vector), which the gate must not lose."""
    reason, detail = _split_label(label)
    return reason in DOORBELL_MISS and detail == "target not running"


class Exit:
    __slots__ = ("tid", "ts", "reason", "detail", "window", "side", "back")

    def __init__(self, tid, ts, reason, detail):
        self.tid, self.ts, self.reason, self.detail = tid, ts, reason, detail
        self.window, self.side = None, None
        self.back = None  # the kvm_entry that ended it, where traced

    def label(self):
        return f"{self.reason} ({self.detail})" if self.detail else self.reason


class Window:
    def __init__(self, mark, tid, begin, inhibits):
        self.mark, self.tid, self.begin, self.end = mark, tid, begin, None
        self.sender = collections.Counter()
        self.targets = collections.Counter()
        self.inhibits = set(inhibits)  # APICv/AVIC inhibits in force at any time inside
        self.inhibit_changed = False   # one was set or cleared inside
        self.region_ends = []          # times the sender marked a region's close
        self.wakeups = collections.Counter()  # halted targets' wakes: "poll" or "wait"
        self.in_region = collections.Counter()  # target exits inside the sender's regions
        self.sends_exit = False        # the sender's sends made exits (a region start to see)
        # AVIC, per iteration (between two region-end marks): the sender's
        # sends that exited "target not running", and the other threads'
        # wakes by kind; at each mark, the poll wakes that a miss of the same
        # iteration explains, in whichever order the two were traced. A
        # miss whose wake slept explains that wake, and no other.
        self.iter_misses = 0
        self.iter_wakes = collections.Counter()
        self.poll_after_miss = 0

    def close_iteration(self):
        unexplained = max(0, self.iter_misses - self.iter_wakes["wait"])
        self.poll_after_miss += min(unexplained, self.iter_wakes["poll"])
        self.iter_misses = 0
        self.iter_wakes.clear()


class Trace:
    """Everything read from one capture."""

    def __init__(self):
        self.windows = {}                    # mark -> Window
        self.outside = collections.Counter()
        self.markers = 0                     # the markers' own port exits
        self.apicv = []                      # (ts, "set"|"cleared", reason)
        self.avic = collections.Counter()    # AVIC events by name, whole capture
        self.events = collections.Counter()  # every event name seen
        self.unparsed = 0
        self.inhibits = set()                # APICv/AVIC inhibits in force now (while parsing)
        self.windows_only = False            # exits traced inside marker windows only
        self.lost = 0                        # events the ring buffer overwrote
        self.cut = False                     # the capture ends early (not all of it came)
        # kvm_set_irq of GSI 0 (the PIT's line; lane.sh traces no other GSI)
        # raised after the first marker: the guest stops the PIT before its
        # plan (kernel/pit.c), so a tick here is the host's timer running
        # on through the regions. KVM raises the line only when the last
        # tick was acked or lost ticks are discarded (pit_do_work(): with
        # QEMU's default reinject policy and the line masked, one raise,
        # then none while the timer runs on); the presets discard. None:
        # not traced (no "pit-traced" header, no kvm_set_irq event).
        self.pit_ticks = None


def _apic_reg(off, write):
    name = APIC_REGS.get(off & 0xff0, f"APIC {off & 0xff0:#x}")
    return name if write else f"{name} read"


# AMD's idle-HLT intercept (APM vol. 2 15.9, "Idle HLT Intercept"): where
# the CPU has it, KVM sets INTERCEPT_IDLE_HLT instead of INTERCEPT_HLT
# (init_vmcb(), arch/x86/kvm/svm/svm.c), and a HLT with no interrupt
# pending exits with SVM_EXIT_IDLE_HLT, which kvm_exit prints "idle-halt"
# (SVM_EXIT_REASONS, arch/x86/include/uapi/asm/svm.h) and KVM handles as
# a HLT (svm_exit_handlers[SVM_EXIT_IDLE_HLT] = kvm_emulate_halt). It is
# the halted target's HLT exit, labelled "hlt (idle-halt)", and JUDGED
# counts it as one. A HLT with an interrupt already pending (V_INTR or the
# vAPIC's IRR) makes no exit at all there, where HLT's intercept exits and
# KVM returns at once: on such a host a row's HLT count can fall.
IDLE_HLT = "idle-halt"


def _exit_reason(reason):
    return "hlt" if reason == IDLE_HLT else reason


def _exit_detail(reason, info1, info2):
    """The APIC register an MMIO exit touched; reads say so ("ICR read");
    the idle-HLT intercept's name (IDLE_HLT)."""
    if reason == IDLE_HLT:
        return IDLE_HLT
    if reason == "npf" and info2 is not None and 0 <= info2 - APIC_BASE < 0x1000:
        # SVM: info1 is the #PF error code, bit 1 = write (APM vol. 2 15.25.6).
        return _apic_reg(info2 - APIC_BASE, bool((info1 or 0) & 2))
    if reason == "APIC_ACCESS" and info1 is not None:
        # VMX: exit qualification 11:0 offset, 15:12 access type, 1 = write (SDM 28.2.1).
        return _apic_reg(info1 & 0xfff, (info1 >> 12) & 0xf == 1)
    if reason == "APIC_WRITE" and info1 is not None:
        # VMX APIC-write (trap-like): exit qualification 11:0 the offset written (SDM 28.2.1).
        return _apic_reg(info1 & 0xff0, True)
    if reason == "EOI_INDUCED":
        # VMX EOI-induced: a level vector's EOI, which virtualization left to KVM.
        return "EOI"
    if reason == "avic_unaccelerated_access" and info1 is not None:
        # AVIC: EXITINFO1 bits 11:4 the offset, bit 32 set for a write;
        # EXITINFO2 the vector (APM vol. 2 15.29.9.1;
        # avic_unaccelerated_access_interception() reads them so).
        return _apic_reg(info1 & 0xff0, bool(info1 >> 32 & 1))
    return None


def _mask_bits(mask):
    return {f"bit {i}" for i in range(64) if mask >> i & 1}


def _inhibit_change(event, body, now):
    """(the inhibits in force after this event, "set" or "cleared", what it
    names) of an APICv/AVIC inhibit event in either kernel's form, or None
    for a body neither reads."""
    if event == "kvm_apicv_update_request":
        p = UPDATE_REQUEST.match(body)
        if not p:
            return None
        bit = f"bit {p['bit']}"
        if p["what"] == "deactivate":
            return {bit}, "set", bit
        return set(), "cleared", bit
    p = INHIBIT.match(body)
    if not p:
        return None
    names = (p["names"] or "").replace("|", " ").split()
    if p["mask"]:
        after = set(names) or _mask_bits(int(p["mask"], 16))
    else:
        after = now | {p["reason"]} if p["what"] == "set" else now - {p["reason"]}
    return after, p["what"], " ".join(names) or f"reason {p['reason']}"


def parse(lines):
    """Reads the capture; returns a Trace with every exit attributed."""
    t = Trace()
    last = {}          # tid -> the latest Exit on that thread, awaiting detail
    open_window = None
    exits = []
    for raw in lines:
        m = LINE.match(raw)
        if not m:
            h = HEADER.match(raw.strip())
            if h and h["key"] == "windows-only":
                t.windows_only = True
            elif h and h["key"] == "cut":
                t.cut = True
            elif h and h["key"] == "pit-traced":
                t.pit_ticks = t.pit_ticks or 0
            elif h and h["n"]:
                t.lost += int(h["n"])
            elif raw.strip() and not raw.lstrip().startswith("#"):
                t.unparsed += 1
            continue
        tid, ts, event, body = int(m["tid"]), float(m["ts"]), m["event"], m["body"]
        t.events[event] += 1
        if event == "kvm_exit":
            e = EXIT.match(body)
            if not e:
                t.unparsed += 1
                continue
            info1 = int(e["info1"] or e["i1"] or "0", 16) if (e["info1"] or e["i1"]) else None
            info2 = int(e["info2"] or e["i2"] or "0", 16) if (e["info2"] or e["i2"]) else None
            x = Exit(tid, ts, _exit_reason(e["reason"]), _exit_detail(e["reason"], info1, info2))
            if open_window is not None:
                x.window = open_window
                x.side = "sender" if tid == open_window.tid else "targets"
            last[tid] = x
            exits.append(x)
        elif event == "kvm_entry":
            x = last.get(tid)
            if x is not None and x.back is None:
                x.back = ts
        elif event == "kvm_pio":
            p = PIO.match(body)
            x = last.get(tid)
            if not p:
                t.unparsed += 1
                continue
            port = int(p["port"], 16)
            if port == MARK_PORT and p["dir"] == "write" and p["val"] is not None:
                # Its own exit, when traced (a windows-only capture starts
                # tracing exits at the begin marker's port write, after its exit).
                if x is not None and x.reason in ("io", "IO_INSTRUCTION") and x.detail is None:
                    x.detail = "marker"
                t.markers += 1
                open_window = _marker(t, open_window, int(p["val"], 16), tid, ts)
            elif x is not None and x.reason in ("io", "IO_INSTRUCTION") and x.detail is None:
                x.detail = f"{port:#x}"
        elif event == "kvm_set_irq":
            p = SET_IRQ.match(body)
            if not p:
                t.unparsed += 1
                continue
            t.pit_ticks = t.pit_ticks or 0
            # pit_do_work() raises the line, then lowers it: count the raise.
            if p["gsi"] == "0" and p["level"] != "0" and t.markers:
                t.pit_ticks += 1
        elif event == "kvm_msr":
            p = MSR.match(body)
            x = last.get(tid)
            if p and x is not None and x.detail is None and x.reason.lower().startswith("msr"):
                msr = int(p["msr"], 16)
                name = MSR_NAMES.get(msr, f"{msr:#x}")
                x.detail = name if p["dir"] == "write" else f"{name} read"
        elif event == "kvm_hypercall":
            p = HYPERCALL.match(body)
            x = last.get(tid)
            if p and x is not None and x.detail is None:
                nr = int(p["nr"], 16)
                x.detail = KVM_HCS.get(nr, f"KVM hypercall {nr}")
        elif event == "kvm_hv_hypercall":
            p = HV_HYPERCALL.match(body)
            x = last.get(tid)
            if p and x is not None and x.detail is None:
                code = int(p["code"], 16)
                fast = "fast" if p["fast"] in ("fast", "1") else "slow"
                x.detail = f"{HV_CALLS.get(code, f'Hyper-V call {code:#x}')} {fast}"
        elif event in ("kvm_apicv_inhibit_changed", "kvm_apicv_update_request"):
            change = _inhibit_change(event, body, t.inhibits)
            if change is None:
                t.unparsed += 1
                continue
            t.inhibits, what, said = change
            t.apicv.append((ts, what, said))
            if open_window is not None:
                open_window.inhibits |= t.inhibits
                open_window.inhibit_changed = True
        elif event == "kvm_vcpu_wakeup":
            p = WAKEUP.match(body)
            if not p:
                t.unparsed += 1
            elif open_window is not None and tid != open_window.tid:
                open_window.wakeups[p["how"]] += 1
                open_window.iter_wakes[p["how"]] += 1
        elif event == "kvm_avic_incomplete_ipi":
            t.avic[event] += 1
            p = AVIC_IPI.search(body)
            x = last.get(tid)
            if p and x is not None and x.reason in DOORBELL_MISS and x.detail is None:
                x.detail = AVIC_IPI_FAILURE.get(int(p["id"]), f"failure {p['id']}")
                if p["id"] == "1" and open_window is not None and tid == open_window.tid:
                    open_window.iter_misses += 1
        elif event.startswith("kvm_avic_"):
            t.avic[event] += 1
    for x in exits:
        if x.detail == "marker":
            continue
        if x.window is None:
            t.outside[x.label()] += 1
        else:
            (x.window.sender if x.side == "sender" else x.window.targets)[x.label()] += 1
    _regions(exits)
    return t


def _regions(exits):
    """Where windows have region marks: which target exits fell inside the
    sender's timed region (after its latest send exit, before the next
    region mark) rather than between regions. An exit counts as inside when
    it was over (its kvm_entry, where traced; else its start) before the
    mark: one that began inside and ended after cost the region nothing."""
    sends = collections.defaultdict(list)
    for x in exits:
        if x.window is not None and x.window.region_ends and x.side == "sender" \
                and x.detail != "marker" and JUDGED.match(x.label()):
            sends[x.window.mark].append(x.ts)
    for mark, ts in sends.items():
        ts.sort()
    for x in exits:
        if x.window is not None and x.window.region_ends:
            x.window.sends_exit = bool(sends.get(x.window.mark))
    for x in exits:
        w = x.window
        if w is None or not w.region_ends or x.side != "targets":
            continue
        send = bisect.bisect_left(sends[w.mark], x.ts)
        end = bisect.bisect_left(w.region_ends, x.back if x.back is not None else x.ts)
        last_send = sends[w.mark][send - 1] if send else None
        last_end = w.region_ends[end - 1] if end else None
        if last_send is not None and (last_end is None or last_send > last_end):
            w.in_region[x.label()] += 1


def _marker(t, open_window, val, tid, ts):
    if val == REGION_END:
        if open_window is not None and open_window.tid == tid:
            open_window.region_ends.append(ts)
            # The iteration is over: its wake, if any, came before the mark.
            open_window.close_iteration()
        return open_window
    mark, end = val >> 1, val & 1
    if not end:
        w = Window(mark, tid, ts, t.inhibits)
        t.windows[mark] = w
        return w
    if open_window is not None and open_window.mark == mark:
        open_window.end = ts
        open_window.close_iteration()
    return None


def records(log_lines):
    """The result records of a console log that carry a mark."""
    return [r for _, r, _ in record_lines([line.strip() for line in log_lines], "result")
            if r is not None and isinstance(r.get("mark"), int)]


def _sampling(r):
    """What one sampling's records share: its mark and the run they measure
    (benchmark, variant, backend, sender, targets); only the metric differs."""
    return (r.get("mark"), r.get("bench"), r.get("variant"), r.get("backend"),
            r.get("sender"), r.get("targets"))


def sampling_iterations(recs):
    """{_sampling: measured iterations} of each sampling. A figure withheld
    for timing (a one-way SKIP: TSC skew) says iterations 0, yet its
    sampling ran and was traced like its measured siblings, which share its
    mark and its run: it takes theirs, so that whether a row has exit data
    never depends on whether its timing figure could be reported. A record
    whose mark no measured record of its own run shares gets none."""
    out = {}
    for r in recs:
        n = r.get("iterations")
        if isinstance(r.get("mark"), int) and isinstance(n, int) and n > 0:
            out[_sampling(r)] = max(out.get(_sampling(r), 0), n)
    return out


def per_iteration(counter, iterations):
    return {label: round(n / iterations, 4) for label, n in counter.most_common()}


def slow_eoi(cmdline):
    """Whether a guest command line armed debug=slow-eoi (kernel/options.c:
    debug takes a comma-separated list)."""
    for word in str(cmdline or "").split():
        key, _, value = word.partition("=")
        if key == "debug" and ({"slow-eoi", "all"} & set(value.split(","))):
            return True
    return False


def cmdline_of(lines):
    """The guest's command line, from a console's env record ("" if none)."""
    for _, rec, _ in record_lines([line.strip() for line in lines], "env"):
        return str(rec.get("cmdline", "")) if rec is not None else ""
    return ""


# Why a target's exits cannot be placed against the sender's region without
# debug=slow-eoi: the region-end mark (an OUT) is written after the closing
# RDTSCP, so an exit the target makes between the two reads as inside,
# and nothing but slow-eoi's wait fixes which side of both its EOI falls.
IN_REGION_UNKNOWN = ("without debug=slow-eoi no causality orders a target's exits against "
                     "the sender's region end, whose mark trails its closing RDTSCP by one exit")


def exits_unknown(r, why):
    """A record's exits when nothing says what they were: unknown, and why
    (no marker window in the trace; a Xen-lane run, which traces none)."""
    r["exits"] = {"status": why, "apic_accel": "unknown", "apic_accel_why": why}


def attach(trace, recs, cmdline=None, kvm_params=None, kernel=None):
    """Adds "exits" to each record: per measured iteration, sender and targets,
    the inhibits traced, and whether the APIC was accelerated (apic_accel).
    cmdline: the guest's (cmdline_of); targets_in_region is reported only
    under debug=slow-eoi, where causality orders the target's EOI against the
    region (before it for ack-after-eoi, after the region-end mark for the
    count-first order), else it is unknown, with why. kvm_params: the host's
    module parameters as run.sh read them ("kvm_amd.enable_ipiv": "N"...),
    which settle what AVIC's incomplete-IPI exits mean (apic_accel); kernel:
    the release of the kernel whose KVM was traced, where known (wake_path)."""
    causal = slow_eoi(cmdline)
    counts = sampling_iterations(recs)
    for r in recs:
        n = counts.get(_sampling(r))
        w = trace.windows.get(r["mark"])
        if not n or w is None or w.end is None:
            why = "no complete marker window in the trace" if n else \
                "no measured record of this sampling (its mark and run) says how many " \
                "iterations it measured"
            if trace.lost:
                why += f" ({trace.lost} events were lost: the trace's ring buffer overflowed)"
            exits_unknown(r, why)
            continue
        r["exits"] = {"iterations": n,
                      "sender": per_iteration(w.sender, n),
                      "targets": per_iteration(w.targets, n),
                      "window_s": round(w.end - w.begin, 6),
                      **({"targets_in_region": per_iteration(w.in_region, n)}
                         if w.region_ends and w.sends_exit and causal else {}),
                      **({"targets_in_region_why": "the sends made no exit (accelerated): the "
                          "region's start is not in the trace"}
                         if w.region_ends and not w.sends_exit else {}),
                      **({"targets_in_region_why": IN_REGION_UNKNOWN}
                         if w.region_ends and w.sends_exit and not causal else {}),
                      **({"target_wakeups": per_iteration(w.wakeups, n),
                          "poll_wakes_after_miss": round(w.poll_after_miss / n, 4)}
                         if w.wakeups else {}),
                      "apicv": ("inhibited: " + " ".join(sorted(w.inhibits))) if w.inhibits
                      else "no inhibit traced",
                      **({"apicv_changed_inside": True} if w.inhibit_changed else {})}
        r["exits"]["apic_accel"], r["exits"]["apic_accel_why"] = apic_accel(r, kvm_params)
        r["exits"]["apic_accel_sides"] = apic_accel_sides(r, kvm_params)
        wake = wake_path(r, kvm_params, kernel)
        if wake:
            r["exits"]["wake"], r["exits"]["wake_why"] = wake
            shares = wake_counts(r, kvm_params, kernel)
            if shares:
                r["exits"]["wake_counts"] = shares
    return recs


def attach_console(trace, lines, kvm_params=None):
    """attach() over a console log's lines: its marked records, and the
    guest's command line from its env record (what debug=slow-eoi settles)."""
    return attach(trace, records(lines), cmdline_of(lines), kvm_params)


def ipiv_off(kvm_params):
    """Whether the host's KVM says AVIC's IPI virtualization is off:
    kvm_amd.enable_ipiv=N (Linux 6.17 and later; forced off on Zen 1 and 2
    by 8de4a1c8164e, on Hygon family 18h by 9a12fa5213cf). KVM then never
    sets a vCPU's IsRunning bit (d921665e01ba), so every send to another
    vCPU exits "target not running", whether the target blocked or not."""
    return str((kvm_params or {}).get("kvm_amd.enable_ipiv", "")) in ("N", "n", "0")


def wake_path(rec, kvm_params=None, kernel=None):
    """(what, why) of a halted target's wakes, from the host's evidence in a
    record's exits: "poll" (KVM's halt polling, or its check before
    blocking, saw the IPI), "block" (the vCPU had blocked), "mixed" (both,
    counted per iteration), or "unknown" (no wake traced: the target did not
    exit on HLT, as with -overcommit cpu-pm=on, or kvm_vcpu_wakeup is not on
    this kernel). kvm_vcpu_wakeup's waited says which, except on AVIC: a
    send that exited "target not running" found IsRunning clear, which
    kvm_vcpu_block() does (avic_vcpu_blocking()) before its first
    kvm_vcpu_check_block(), so that wake took the block path (the doorbell
    missed, KVM kicked the vCPU) even when the check then caught it and it
    is traced waited=0. Each such send is paired with a poll wake of the
    target in the same iteration, between two region-end marks, in either
    order: AVIC sets the target's IRR before the sender's exit, so the
    target's kvm_vcpu_check_block() can end its halt (waited=0) before the
    sender's handler traces kvm_avic_incomplete_ipi (poll_wakes_after_miss,
    from parse()); a
    record without that count (written before it was kept) falls back to
    the window's totals, misses capping the polls. Only where IPI
    virtualization is on: with kvm_amd.enable_ipiv=N (ipiv_off) every send
    misses, blocked target or polling, so the label is kvm_vcpu_wakeup's
    waited, as KVM's own poll accounting counts it (a kick in the window
    before kvm_vcpu_block()'s first check is then a poll: cross_check_wake).
    Before Linux 5.17 (f6c60d081e2c) kvm_vcpu_block() ran
    kvm_arch_vcpu_blocking() before its halt-polling loop, so IsRunning
    was clear while KVM polled and a
    miss proves no block there either; a distribution kernel that
    backported the rework says the same release: with misses on a kernel
    that says it is older (kernel, where known) the label is unknown.
    None for a record whose target did not halt."""
    split = _wake_split(rec, kvm_params, kernel)
    if split is None:
        return None
    poll, block, miss, no_ipiv = split
    if poll + block <= EXITS_TOLERANCE:
        return "unknown", ("no wake from HLT traced (kvm_vcpu_wakeup): the target made no "
                           "HLT exit, or the event is not on this kernel")
    if _release_unreadable(miss, kvm_params, kernel):
        return "unknown", (f"{miss:.2f} doorbell misses per iteration on a kernel that says "
                           f"{kernel}: before 5.17 KVM polled with IsRunning clear, so a miss "
                           "proves no block, unless the distribution backported the 5.17 "
                           "rework; neither reading is taken (waited: "
                           f"{poll:.2f} poll, {block:.2f} block per iteration)")
    why = f"per iteration {poll:.2f} without a block, {block:.2f} after one"
    if no_ipiv and miss > EXITS_TOLERANCE:
        why += (f" (from kvm_vcpu_wakeup's waited: with kvm_amd.enable_ipiv=N every send "
                f"finds the target not running, {miss:.2f} per iteration here, so a miss "
                "says nothing of the wake)")
    elif miss > EXITS_TOLERANCE:
        why += (f" ({miss:.2f} sends found the target not running on AVIC: a block path "
                "whatever the wakeup's waited says)")
    if block <= EXITS_TOLERANCE:
        return "poll", why
    if poll <= EXITS_TOLERANCE:
        return "block", why
    return "mixed", why


def _release_unreadable(miss, kvm_params, kernel):
    """Misses on a kernel that says it is older than 5.17, with IPI
    virtualization on: the release alone cannot tell what they mean.
    Upstream before 5.17 polled with IsRunning clear (a miss proves no
    block); a distribution kernel that backported f6c60d081e2c (RHEL 9's
    5.14) does not."""
    return miss > EXITS_TOLERANCE and kernel_before(kernel, (5, 17)) and not ipiv_off(kvm_params)


def kernel_before(release, version):
    """Whether a kernel release ("5.15.0-91-generic") is older than version
    ((5, 17)); False where it cannot be read."""
    m = re.match(r"^(\d+)\.(\d+)", str(release or ""))
    return bool(m) and (int(m.group(1)), int(m.group(2))) < version


def _wake_split(rec, kvm_params, kernel=None):
    """(poll, block, AVIC misses, IPI virtualization off) per iteration of a
    halted target's traced wakes, as wake_path() reads them; None for a
    record whose target did not halt."""
    e = rec.get("exits") or {}
    if rec.get("target_state") != "halt" or "sender" not in e:
        return None
    wakes = e.get("target_wakeups") or {}
    poll, wait = float(wakes.get("poll", 0)), float(wakes.get("wait", 0))
    miss = _kind_sum(e["sender"], "doorbell")[0]
    total = poll + wait
    no_ipiv = ipiv_off(kvm_params) or kernel_before(kernel, (5, 17))
    if no_ipiv:
        block = min(total, wait)
    elif "poll_wakes_after_miss" in e:
        block = min(total, wait + float(e["poll_wakes_after_miss"]))
    else:
        block = min(total, max(wait, miss))
    return total - block, block, miss, no_ipiv


def wake_counts(rec, kvm_params=None, kernel=None):
    """{"poll", "block"}: a halted target's wakes per iteration as
    wake_path() classes them (an AVIC miss a block, whatever kvm_vcpu_wakeup's
    waited said), for compare's blocked share; None where it gives none."""
    split = _wake_split(rec, kvm_params, kernel)
    if split is None or split[0] + split[1] <= EXITS_TOLERANCE or \
            _release_unreadable(split[2], kvm_params, kernel):
        return None
    return {"poll": round(split[0], 4), "block": round(split[1], 4)}


# The wake classes that claim something: "unknown" on either side is none.
WAKE_CLAIMS = ("poll", "block", "mixed")


def cross_check_wake(rec):
    """Where KVM's trace (exits.wake) and its statistics (host_stats.wake,
    hoststats.py) both say how a halted target woke and say different
    things, the record says so in exits.wake_disagrees, and neither label
    is changed. They can differ without either being wrong: a kick after
    kvm_vcpu_block() has run kvm_arch_vcpu_blocking() and
    prepare_to_rcuwait() but before its first kvm_vcpu_check_block() is
    waited=0 for kvm_vcpu_wakeup (KVM's own poll accounting,
    update_halt_poll_stats(..., !waited)) and a halt_wakeup in the
    statistics. True when they disagree."""
    e, h = rec.get("exits"), rec.get("host_stats")
    if not isinstance(e, dict) or not isinstance(h, dict):
        return False
    trace, stats = e.get("wake"), h.get("wake")
    if trace not in WAKE_CLAIMS or stats not in WAKE_CLAIMS or trace == stats:
        e.pop("wake_disagrees", None)
        return False
    e["wake_disagrees"] = (f"the trace says {trace}, KVM's statistics say {stats}: neither "
                           "is taken (a kick between kvm_arch_vcpu_blocking() and the first "
                           "kvm_vcpu_check_block() is waited=0 in the trace and a "
                           "halt_wakeup in the statistics; else one reading is wrong)")
    return True


def _split_label(label):
    reason, _, detail = label.partition(" (")
    return reason, detail[:-1] if detail.endswith(")") else detail


def apic_kind(label):
    """What an exit label says of the APIC: "trap" (an access that left guest
    mode), "doorbell" (AVIC's incomplete IPI), "msr?" (an MSR exit the trace
    does not name: kvm_msr missing), or None (nothing of the APIC, or the
    timer's registers, which no APIC virtualization completes)."""
    reason, detail = _split_label(label)
    reg = detail[:-len(" read")] if detail.endswith(" read") else detail
    if reason in DOORBELL_MISS:
        return "doorbell" if detail in ("", "target not running") else "trap"
    if reg in TIMER_REGS:
        return None
    if reason == "npf":
        # _exit_detail names an NPF only when it hit the APIC page.
        return "trap" if detail else None
    if reason in ("APIC_ACCESS", "avic_unaccelerated_access", "AVIC_UNACCELERATED_ACCESS") \
            or reason in VMX_APIC_TRAPS:
        return "trap"
    if reason.lower().startswith("msr"):
        if not detail:
            return "msr?"
        if reg in APIC_MSR_NAMES or re.match(r"^0x8[0-9a-f]{2}$", reg):
            return "trap"
    return None


def _kind_sum(side, kind):
    hit = {k: v for k, v in side.items() if apic_kind(k) == kind}
    return round(sum(hit.values()), 4), hit


def apic_accel(rec, kvm_params=None):
    """("yes" | "no" | "unknown", why) for a record with exits: was its APIC
    accelerated in the way that counts? Read from its exits per iteration,
    never from the inhibit state alone: AVIC or APICv can be on and not
    inhibited while the path still traps (x2APIC without x2AVIC, an ICR
    write without IPI virtualization)."""
    e = rec["exits"]
    traps = {side: _kind_sum(e[side], "trap") for side in ("sender", "targets")}
    total = round(traps["sender"][0] + traps["targets"][0], 4)
    if total > EXITS_TOLERANCE:
        parts = []
        for side in ("sender", "targets"):
            n, hit = traps[side]
            if n > 0:
                what = ", ".join(k for k, _ in sorted(hit.items(), key=lambda kv: -kv[1]))
                parts.append(f"{n:.2f} on the {side} ({what})")
        return "no", f"{total:.2f} trapped APIC accesses per iteration: " + "; ".join(parts)
    unnamed = round(sum(_kind_sum(e[side], "msr?")[0] for side in ("sender", "targets")), 4)
    if unnamed > EXITS_TOLERANCE:
        return "unknown", (f"{unnamed:.2f} MSR exits per iteration whose MSR the trace does "
                           "not name (kvm_msr not traced): APIC accesses among them cannot "
                           "be told")
    if rec.get("backend") in (None, "none"):
        return "unknown", "the record sends no IPI: nothing of the APIC to judge"
    if str(e.get("apicv", "")).startswith("inhibited"):
        return "unknown", ("no trapped APIC access, but APICv/AVIC was inhibited ("
                           + e["apicv"].split(":", 1)[-1].strip() + ") while it ran: the "
                           "record touched no APIC register an exit would show")
    miss = round(sum(_kind_sum(e[side], "doorbell")[0] for side in ("sender", "targets")), 4)
    ipiv = str((kvm_params or {}).get("kvm_amd.enable_ipiv", ""))
    if miss > 0 and ipiv_off(kvm_params):
        # kvm_amd.enable_ipiv=N: KVM never sets a vCPU's IsRunning bit
        # (d921665e01ba), so AVIC completes no IPI to another vCPU and KVM
        # delivers each one itself, halted target or spinning. Linux 6.17
        # forces it off on family 17h (Zen 1, Zen 2: erratum #1235,
        # 8de4a1c8164e) and 7.1 on Hygon family 18h (9a12fa5213cf).
        return "no", (f"{miss:.2f} avic_incomplete_ipi per iteration and kvm_amd.enable_ipiv="
                      f"{ipiv} on the host: KVM never sets IsRunning, AVIC's IPI "
                      "virtualization is off and KVM delivered each IPI")
    running = rec.get("target_state") in ("spin", "self")
    if miss > EXITS_TOLERANCE and running and not ipiv and ipiv_absent(kvm_params):
        # Before 6.17 (d921665e01ba added enable_ipiv) avic_vcpu_load() sets
        # IsRunning for every vCPU it loads that is not blocking: a spinning
        # target's miss is the host's scheduling (avic_vcpu_put() cleared
        # it), nothing else.
        return "yes", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running target: "
                       "the host descheduled it (kvm_amd has no enable_ipiv, a kernel before "
                       "6.17, which sets IsRunning for every loaded vCPU not blocking); no "
                       "trapped APIC access")
    if miss > EXITS_TOLERANCE and running and not ipiv:
        # A spinning target is running (a self IPI's target is the sender
        # itself), unless the host descheduled its vCPU (avic_vcpu_put()
        # clears IsRunning): with every send of a one-target record missing,
        # the likelier cause is IsRunning never set (enable_ipiv off, above),
        # which this host's parameters, not read, would have told; fewer is
        # the host's scheduling. Neither is proven.
        if miss >= 1 - EXITS_TOLERANCE and rec.get("ntargets", 1) == 1:
            return "unknown", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running "
                               "target: every send found it not running, as when KVM never "
                               "sets IsRunning (kvm_amd.enable_ipiv=N: Zen 1/2 since Linux "
                               "6.17) or when the host deschedules it for every send; "
                               "kvm_amd.enable_ipiv was not read")
        return "unknown", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running "
                           "target: some sends found it not running (descheduled by the host, "
                           "or IsRunning never set); kvm_amd.enable_ipiv was not read")
    why = "no trapped APIC access in its exits on either side"
    if miss > 0:
        why += (f"; {miss:.2f} avic_incomplete_ipi per iteration (doorbell misses: a target "
                "was not running, KVM delivered those)")
    return "yes", why


def ipiv_absent(kvm_params):
    """kvm_amd was read (its avic parameter is there) and has no enable_ipiv:
    a kernel before 6.17, on which a loaded vCPU's IsRunning is always set."""
    p = kvm_params or {}
    return "kvm_amd.avic" in p and "kvm_amd.enable_ipiv" not in p


def apic_accel_sides(rec, kvm_params=None):
    """{"sender": [verdict, why], "targets": [verdict, why]}: apic_accel()
    for each side apart, so that APICv without IPIv (the sender's ICR write
    trapped, the targets' EOI and delivery virtualized) and hybrid AVIC (an
    x2APIC access trapped on either side, the doorbell still rung) do not
    read as one flat "no". The sender's ICR write counts as accelerated even
    where AVIC then missed a doorbell (the target not running: KVM
    delivered that IPI, which is the wake path's question, not the APIC's)."""
    e = rec["exits"]
    out = {}
    for side in ("sender", "targets"):
        n, hit = _kind_sum(e[side], "trap")
        unnamed = _kind_sum(e[side], "msr?")[0]
        if n > EXITS_TOLERANCE:
            what = ", ".join(k for k, _ in sorted(hit.items(), key=lambda kv: -kv[1]))
            out[side] = ["no", f"{n:.2f} trapped APIC accesses per iteration ({what})"]
        elif unnamed > EXITS_TOLERANCE:
            out[side] = ["unknown", f"{unnamed:.2f} MSR exits per iteration the trace does "
                         "not name"]
        elif str(e.get("apicv", "")).startswith("inhibited"):
            out[side] = ["unknown", "no trapped APIC access, but APICv/AVIC was inhibited"]
        else:
            out[side] = ["yes", "no trapped APIC access"]
    miss = _kind_sum(e["sender"], "doorbell")[0]
    if miss > EXITS_TOLERANCE and out["sender"][0] == "yes" and ipiv_off(kvm_params):
        out["sender"] = ["no", f"{miss:.2f} sends per iteration exited 'target not running': "
                         "with kvm_amd.enable_ipiv=N KVM never sets IsRunning and delivers "
                         "every IPI itself"]
    elif miss > EXITS_TOLERANCE and out["sender"][0] == "yes":
        out["sender"][1] += (f"; {miss:.2f} doorbell misses per iteration (target not "
                             "running: KVM delivered those)")
    if rec.get("backend") in (None, "none"):
        out["sender"] = ["unknown", "the record sends no IPI"]
    return out


def _side_text(d):
    """The send path's own exits first, then the host's (interrupt, vintr),
    each by count: host noise never reorders what the path did."""
    if not d:
        return "none"
    order = sorted(d.items(), key=lambda kv: (not JUDGED.match(kv[0]), -kv[1]))
    return " ".join(f"{v:.2f} {k}" for k, v in order)


def table(recs, summ):
    """Lines a person reads: one per record, then what fell outside.
    summ: summary() of the trace (what results.json keeps as run.exits)."""
    out = []
    for r in recs:
        e = r.get("exits", {})
        name = f"{r['backend']} {r['bench']} {r['metric']}"
        if r.get("variant") not in (None, "none"):
            name += f" {r['variant']}"
        if "status" in e:
            out.append(f"{name}: {e['status']}")
            continue
        inside = "" if "targets_in_region" not in e else \
            f" (inside the sender's region: {_side_text(e['targets_in_region'])})"
        if "targets_in_region_why" in e:
            inside = f" (inside the sender's region: unknown, {e['targets_in_region_why']})"
        if "wake" in e:
            inside += f"; woken: {e['wake']} ({e.get('wake_why', '')})"
        if "wake_disagrees" in e:
            inside += f"; the wake evidence disagrees: {e['wake_disagrees']}"
        accel = ""
        sides = e.get("apic_accel_sides")
        if isinstance(sides, dict):
            accel = (f" | accelerated on the sender: {sides['sender'][0]}, on the targets: "
                     f"{sides['targets'][0]}")
        if "apic_accel" in e:
            accel += f" | APIC accelerated: {e['apic_accel']} ({e.get('apic_accel_why', '')})"
        out.append(f"{name}: sender {_side_text(e['sender'])} | targets "
                   f"{_side_text(e['targets'])}{inside}{accel}")
    if summ.get("outside") is None:
        out.append("outside every record: not traced (exits were traced inside the records' "
                   f"marker windows only); markers {summ['markers']}")
    else:
        outside = collections.Counter(summ["outside"])
        top = ", ".join(f"{n} {k}" for k, n in outside.most_common(6))
        out.append(f"outside every record: {sum(outside.values())} exits ({top}); "
                   f"markers {summ['markers']}")
    if summ.get("cut"):
        out.append("cut short: the trace ends before the boot did; the records after its "
                   "end have no exits")
    if summ.get("lost"):
        out.append(f"lost: {summ['lost']} events, the oldest, overwritten in the trace's ring "
                   "buffer: the first records' exits may be short")
    if summ["apicv_inhibits"]:
        out.append("APICv/AVIC inhibits for this VM: " + ", ".join(
            f"{i['change']} at {i['at_s']:.3f} s, now {i['now']}"
            for i in summ["apicv_inhibits"]))
    return out


# The module parameter that turns APIC virtualization on, per vendor module.
APICV_PARAMS = (("kvm_amd.avic", "AVIC", "kvm_amd"), ("kvm_intel.enable_apicv", "APICv", "kvm_intel"))


def apicv_line(kvm_params, trace):
    """One line: what the module allows, and what this VM had."""
    module = "module parameter not read"
    name = "APICv/AVIC"
    for key, what, mod in APICV_PARAMS:
        if key in kvm_params:
            name = what
            on = kvm_params[key] in ("1", "Y", "y")
            module = f"{'enabled' if on else 'disabled'} in {mod} ({key}={kvm_params[key]})"
            for ipiv in ("kvm_intel.enable_ipiv", "kvm_amd.enable_ipiv"):
                if key.split(".")[0] == ipiv.split(".")[0] and ipiv in kvm_params:
                    module += f", IPI virtualization {kvm_params[ipiv]}"
    if not trace.apicv:
        vm = "no inhibit change traced"
    else:
        first = next((a for a in trace.apicv if a[1] == "set"), trace.apicv[0])
        last = trace.apicv[-1]
        vm = (f"inhibited for this VM from {first[0]:.2f} s: {last[2]}" if last[2] and
              not last[2].startswith("reason") else f"inhibits changed {len(trace.apicv)} times")
        if last[1] == "cleared" and not trace.inhibits:
            vm = f"active from {last[0]:.2f} s (inhibits cleared)"
    return f"{name}: {module}; {vm}"


def apicv_inhibited(recs):
    """The records measured while an APICv/AVIC inhibit was in force."""
    return [r for r in recs if str(r.get("exits", {}).get("apicv", "")).startswith("inhibited")]


def summary(trace):
    """What results.json keeps of the capture as a whole."""
    return {"trace": TRACE_FILE,
            "traced": "marker windows" if trace.windows_only else "whole boot",
            "outside": None if trace.windows_only else dict(trace.outside.most_common()),
            "markers": trace.markers, "unparsed": trace.unparsed, "lost": trace.lost,
            "cut": trace.cut,
            "apicv_inhibits": [{"at_s": ts, "change": what, "now": reasons}
                               for ts, what, reasons in trace.apicv],
            "avic_events": dict(trace.avic), "events": dict(trace.events),
            "pit_ticks": trace.pit_ticks}


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    with open(argv[1], errors="replace") as f:
        trace = parse(f)
    with open(argv[2], errors="replace") as f:
        lines = f.read().splitlines()
    recs = attach_console(trace, lines)
    if "--json" in argv[3:]:
        json.dump({"records": [{k: r[k] for k in ("bench", "metric", "variant", "backend",
                                                 "sender", "targets", "iterations", "mark",
                                                 "exits") if k in r} for r in recs],
                   "outside": dict(trace.outside), "markers": trace.markers,
                   "apicv": trace.apicv, "events": dict(trace.events)}, sys.stdout, indent=1)
        print()
    else:
        print("\n".join(table(recs, summary(trace))))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
