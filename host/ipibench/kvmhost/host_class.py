# SPDX-License-Identifier: GPL-2.0-only
"""Which class of KVM host a run's exits come from (docs/exits-and-apicv.md,
"Comparing AVIC (or APICv) on and off"): the facts that decide how KVM
delivers an IPI, read from what every run saves (the CPU flags of
kvmhost/facts.py, the module parameters, the kernel release, the
accelerator), never from this machine. The class names what the host can
accelerate; whether this VM was accelerated is the records' apic_accel and
the trace's inhibits, which the exits table shows beside it.

classify() is the seam the host-class model (issue 42, item 6) hangs its
predictions on: one name per class, and the facts that chose it."""

from ipibench.kvmhost import wake as kvm_wake

# name: what a KVM developer calls such a host, and what it accelerates.
CLASSES = {
    "pvm": "KVM in software (module kvm_pvm): no VMX or SVM, RDTSC and every exit its "
           "software path",
    "lane": "KVM on SVM without AVIC, nested inside TCG (the KVM lane): every APIC access "
            "traps, exactly as tests/kvm-lane/exits.expect states",
    "svm-no-avic": "AMD SVM without AVIC (kvm_amd.avic=N, or a CPU without it): every xAPIC "
                   "access an NPF exit, every x2APIC MSR an MSR exit",
    "avic": "AMD AVIC without x2AVIC (Zen 1 to 3), IPI virtualization on: xAPIC MMIO "
            "accelerated; x2APIC MSRs trapped (hybrid AVIC, 6.0+) or AVIC inhibited by x2APIC "
            "(before 6.0)",
    "avic-1235": "AMD AVIC on a family with erratum #1235 (Zen 1 and 2, family 17h, before "
                 "6.17; Hygon family 18h until 9a12fa5213cf), IPI virtualization on: as avic, "
                 "but a send to a target that is blocking may miss its exit",
    "avic-ipiv-off": "AMD AVIC with IPI virtualization off (kvm_amd.enable_ipiv=N: forced on "
                     "Zen 1 and 2 by 8de4a1c8164e and on Hygon family 18h by 9a12fa5213cf): "
                     "IsRunning never set (d921665e01ba), so every IPI to another vCPU exits",
    "x2avic-ipiv-off": "AMD x2AVIC with IPI virtualization off (kvm_amd.enable_ipiv=N on a Zen 4 "
                       "or later host): IsRunning never set, every IPI to another vCPU exits",
    "x2avic": "AMD x2AVIC (Zen 4 and later), IPI virtualization on: xAPIC MMIO and x2APIC "
              "MSRs accelerated",
    "vmx-no-apicv": "Intel VMX without APICv (kvm_intel.enable_apicv=N, or a CPU without it): "
                    "every APIC access and EOI exits",
    "apicv": "Intel APICv without IPI virtualization: EOI, TPR and delivery virtualized; each "
             "ICR write exits",
    "apicv-ipiv": "Intel APICv with IPI virtualization (Sapphire Rapids and later, "
                  "kvm_intel.enable_ipiv=Y): unicast physical Fixed ICR writes do not exit",
    "unknown": "the facts do not decide it",
}

YES, NO = ("Y", "y", "1"), ("N", "n", "0")


def _param(kvm_params, name):
    """'Y', 'N' or None (not read) for a bool module parameter."""
    v = str((kvm_params or {}).get(name, "")).strip()
    return "Y" if v in YES else "N" if v in NO else None


def classify(accel, cpu_flags, kvm_params, software=None, kernel=None, family=None):
    """(class name, why) for a run: accel as results.json's host.accel,
    cpu_flags the host's CPU_FLAGS (None: not read), kvm_params the traced
    KVM's module parameters, software why this host's KVM is not hardware
    virtualization (facts.kvm_software()), or None; kernel the traced KVM's
    release, where known (x2AVIC is KVM's from 6.0, 4d1d7942e36a); family
    (vendor_id, CPU family) of facts.cpuinfo_family(), where read."""
    if accel == "kvm-in-tcg":
        return "lane", "accel kvm-in-tcg: the lane's L1 KVM, SVM without AVIC"
    if accel != "kvm":
        return "unknown", f"accel {accel or 'not recorded'}: no KVM ran the guest"
    if software:
        return "pvm", software
    if not isinstance(cpu_flags, (list, tuple)):
        return "unknown", "the host's CPU flags were not read"
    flags = {f for f in cpu_flags if isinstance(f, str)}
    if "svm" in flags:
        if "x2avic" in flags and kvm_wake.kernel_before(kernel, (6, 0)):
            flags = flags - {"x2avic"}  # the CPU's, but this KVM does not use it
        return _classify_svm(flags, kvm_params, family)
    if "vmx" in flags:
        return _classify_vmx(kvm_params)
    return "unknown", "neither svm nor vmx among the host's CPU flags"


# The modules clear these parameters where the CPU lacks the feature
# (svm_hardware_setup() for avic, without AVIC or nested paging;
# avic_hardware_setup() forces enable_ipiv off, 8de4a1c8164e, 9a12fa5213cf;
# vmx's hardware_setup() for enable_apicv and enable_ipiv), so each reads as
# what KVM granted: the parameters decide, and of the CPU flags only x2avic,
# which KVM's x2avic_enabled reads. (kvm_amd.avic's "auto" of 6.18 reads N
# until avic_hardware_setup() resolves it.)
# Erratum #1235 (missed VM exits on the sender of an IPI to a target that
# is blocking): the families 8de4a1c8164e (AMD 17h, 6.17) and 9a12fa5213cf
# (Hygon 18h) turn IPI virtualization off on. Its race sits where KVM clears
# IsRunning as a vCPU blocks (avic_vcpu_blocking()): the suite's wake check
# and single-halt's late-wake count catch a vCPU left blocked, whatever the
# cause, but do not aim at that moment.
ERRATUM_1235 = (("AuthenticAMD", 0x17), ("HygonGenuine", 0x18))


def _classify_svm(flags, kvm_params, family=None):
    avic = _param(kvm_params, "kvm_amd.avic")
    if avic is None:
        return "unknown", "svm, kvm_amd.avic not read"
    if avic == "N":
        return "svm-no-avic", "kvm_amd.avic=N"
    x2 = "x2avic" in flags
    ipiv = _param(kvm_params, "kvm_amd.enable_ipiv")
    if ipiv == "N":
        return ("x2avic-ipiv-off" if x2 else "avic-ipiv-off"), \
            "kvm_amd.avic=Y, kvm_amd.enable_ipiv=N" + (", x2avic" if x2 else "")
    # No parameter before 6.17 (d921665e01ba): IPI virtualization always on.
    why = "kvm_amd.avic=Y, " + ("kvm_amd.enable_ipiv=Y" if ipiv else
                                "no kvm_amd.enable_ipiv (before 6.17: always on)")
    # KVM keys the erratum on the family alone (no such CPU has x2AVIC).
    if isinstance(family, (list, tuple)) and len(family) == 2 and \
            (family[0], family[1]) in ERRATUM_1235:
        return "avic-1235", why + f", {family[0]} family {family[1]:#x} (erratum #1235)"
    return ("x2avic", why + ", x2avic") if x2 else ("avic", why + ", no x2avic")


def _classify_vmx(kvm_params):
    apicv = _param(kvm_params, "kvm_intel.enable_apicv")
    if apicv is None:
        return "unknown", "vmx, kvm_intel.enable_apicv not read"
    if apicv == "N":
        if _param(kvm_params, "kvm_intel.flexpriority") == "N":
            # No APIC-access page: an xAPIC access is an EPT misconfig
            # that names no register (vmx-no-apicv's rows assume the page).
            return "unknown", "kvm_intel.enable_apicv=N, kvm_intel.flexpriority=N"
        return "vmx-no-apicv", "kvm_intel.enable_apicv=N"
    ipiv = _param(kvm_params, "kvm_intel.enable_ipiv")
    if ipiv == "Y":
        return "apicv-ipiv", "kvm_intel.enable_apicv=Y, kvm_intel.enable_ipiv=Y"
    return "apicv", "kvm_intel.enable_apicv=Y, " + (
        "kvm_intel.enable_ipiv=N" if ipiv else "no kvm_intel.enable_ipiv: a kernel without IPIv")


def line(name, why):
    """The exits table's line for it."""
    return f"host class: {name} ({why}): {CLASSES[name]}"
