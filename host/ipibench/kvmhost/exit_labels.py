# SPDX-License-Identifier: GPL-2.0-only
"""What an exit of a KVM trace is called, and what its label says: the
names of what it touched, and which exits a send path causes itself (the
judged ones) or that trapped an APIC access.

An exit is labelled by its reason and, where a following event on the same
thread says more, by what it touched: the local APIC register an NPF or
APIC-access exit hit ("npf (ICR)"), the MSR ("msr (EOI)"), the port
("io (0x80)"), the hypercall ("vmmcall (HvCallSendSyntheticClusterIpi fast)",
"vmmcall (KVM_HC_SEND_IPI)"). kvmhost/trace_read.py gives each exit its
label; compare, gate, history and the host-class model judge the labels
through this module."""
import re

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
# Xen's hypercalls by number (public/xen.h), as a Xen trace names them
# (xenhost/xentrace.py: TRC_HVM_VMMCALL gives RAX); bit 31 set is viridian's
# Hyper-V call, whose code (in RCX) Xen's trace does not give.
XEN_HCS = {12: "memory_op", 24: "vcpu_op", 29: "sched_op", 32: "event_channel_op",
           34: "hvm_op"}
XEN_VIRIDIAN_CALL = 0x80000000
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
AVIC_IPI_FAILURE = {0: "invalid int type", 1: "target not running", 2: "invalid target",
                    3: "invalid backing page", 4: "invalid ipi vector"}


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


def exit_reason(reason):
    """An exit's reason as labelled: the idle-HLT intercept's is hlt."""
    return "hlt" if reason == IDLE_HLT else reason


def exit_detail(reason, info1, info2):
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
        # exit_detail names an NPF only when it hit the APIC page.
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


def kind_sum(side, kind):
    """(exits per iteration, {label: value}) of one side's exits of an
    apic_kind()."""
    hit = {k: v for k, v in side.items() if apic_kind(k) == kind}
    return round(sum(hit.values()), 4), hit
