# SPDX-License-Identifier: GPL-2.0-only
"""The host's facts saved with every run: its CPU flags that decide how KVM
delivers an IPI, its power state (cpuidle, cpufreq, SMT, isolation), KVM's
module parameters, and the warnings that make every figure of a run
untrustworthy (a host that is itself a VM, too few CPUs)."""
from ipibench import machine
from ipibench.kvmhost import modparam


# The CPU flags /proc/cpuinfo shows ("flags" and, since Linux 5.8, "vmx flags")
# that decide how KVM delivers an IPI: AMD's AVIC and x2AVIC (AVIC without
# x2AVIC emulates every xAPIC access once a vCPU has been in x2APIC mode, see
# results/saved.py, SavedBoot.avic_without_x2avic), virtual NMIs, the pause filter;
# Intel's APIC-access virtualization, APIC-register virtualization, virtual
# interrupt delivery, posted interrupts, IPI virtualization, TPR shadow, PLE
# and the preemption timer; x2apic and hypervisor (the host is itself a VM).
CPU_FLAGS = ("svm", "avic", "x2avic", "vnmi", "pausefilter", "pfthreshold",
             "vmx", "vapic", "vapic_reg", "vid", "posted_intr", "ipi_virt", "tpr_shadow",
             "flexpriority", "ple", "preemption_timer", "x2apic", "hypervisor")


def cpuinfo_facts(text):
    """(model name, the CPU_FLAGS the first CPU shows, sorted) from /proc/cpuinfo's
    text; (None, None) without it, so that a reader tells 'no x2avic' from
    'not read'."""
    if text is None:
        return None, None
    model, flags, seen = None, set(), set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in seen and key in ("model name", "flags", "vmx flags"):
            continue  # the first CPU's lines only
        seen.add(key)
        if key == "model name":
            model = value.strip()
        elif key in ("flags", "vmx flags"):
            flags.update(value.split())
    return model, sorted(f for f in CPU_FLAGS if f in flags)


def cpuinfo_family(text):
    """(vendor_id, CPU family as a number) of the first CPU in
    /proc/cpuinfo's text, each None where not read: the facts an erratum
    that KVM keys on a family needs (host_class.py)."""
    vendor = family = None
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "vendor_id" and vendor is None:
            vendor = value
        elif key == "cpu family" and family is None:
            family = int(value) if value.isdigit() else None
        if vendor is not None and family is not None:
            break
    return vendor, family


def cpu_family(environ=None):
    """This host's cpuinfo_family()."""
    return cpuinfo_family(machine.read("/proc/cpuinfo", environ))


def idle_states(ls, rd):
    """cpu0's cpuidle states in order, [{"name", "enabled"}] ("enabled" None
    when its disable file is not read); None without the folder. ls and rd
    list and read under the host's CPU folder (read_power)."""
    found = ls("cpu0", "cpuidle")
    if found is None:
        return None
    out = []
    for d in sorted((d for d in found if d.startswith("state") and d[5:].isdigit()),
                    key=lambda d: int(d[5:])):
        off = rd("cpu0", "cpuidle", d, "disable")
        out.append({"name": rd("cpu0", "cpuidle", d, "name"),
                    "enabled": {"0": True, "1": False}.get(off)})
    return out


def read_power(environ=None):
    """The host's power state, which moves figures on one host while no KVM
    parameter changes: cpuidle's driver, governor and cpu0's
    states, cpufreq's driver and governor (cpu0), boost and turbo, SMT, and
    the CPUs kept from the scheduler or the tick. Each None where its file
    is not there or not readable (cpufreq is absent in most VMs)."""
    def rd(*path):
        return machine.read("/sys/devices/system/cpu/" + "/".join(path), environ)

    def ls(*path):
        return machine.listdir("/sys/devices/system/cpu/" + "/".join(path), environ)
    return {"cpuidle_driver": rd("cpuidle", "current_driver"),
            # current_governor since Linux 5.8; current_governor_ro before
            "cpuidle_governor": rd("cpuidle", "current_governor") or
            rd("cpuidle", "current_governor_ro"),
            "cpuidle_states": idle_states(ls, rd),
            "cpufreq_driver": rd("cpu0", "cpufreq", "scaling_driver"),
            "cpufreq_governor": rd("cpu0", "cpufreq", "scaling_governor"),
            "boost": rd("cpufreq", "boost"),  # acpi-cpufreq, amd-pstate
            "intel_no_turbo": rd("intel_pstate", "no_turbo"),
            "amd_pstate": rd("amd_pstate", "status"),
            "smt_control": rd("smt", "control"), "smt_active": rd("smt", "active"),
            "isolated": rd("isolated"), "nohz_full": rd("nohz_full")}


def host_facts(qemu_version, environ=None):
    """What the host was: every fact that changes how IPIs are delivered,
    read through the seam (machine.py), as a snapshot (machine.snapshot)."""
    with machine.snapshot():
        text = machine.read("/proc/cpuinfo", environ)
        model, flags = cpuinfo_facts(text)
        vendor, family = cpuinfo_family(text)
        return dict(machine.kernel(environ), cpu_model=model, cpus=machine.cpus(environ),
                    cpu_vendor=vendor, cpu_family=family, cpu_flags=flags,
                    qemu_version=qemu_version,
                    kvm_params=modparam.read_all(environ), power=read_power(environ),
                    kernel_cmdline=machine.read("/proc/cmdline", environ))


def cpu_flags(environ=None):
    """The CPU_FLAGS this host shows (cpuinfo_facts()), None when not read."""
    return cpuinfo_facts(machine.read("/proc/cpuinfo", environ))[1]


def kvm_software(environ=None):
    """Why this host's KVM is not hardware virtualization, or None. PVM
    (module kvm_pvm) runs guests in software on a host without VMX/SVM:
    RDTSC traps, interrupt delivery waits for unrelated exits,
    KVM_HC_SEND_IPI may never return. It boots the guest, but its figures
    measure PVM."""
    if machine.isdir("/sys/module/kvm_pvm", environ):
        return ("this host's /dev/kvm is PVM (module kvm_pvm: virtualization in software, "
                "not VMX/SVM; RDTSC and every exit cost its software path)")
    return None


def host_warnings(host, records):
    """What the host knows that makes this run's figures untrustworthy, as
    [{id, text}] (the guest's own checks are in its env record's "trust")."""
    accel = host.get("accel") or ""
    out = []
    if accel.startswith("tcg"):
        out.append(("tcg", "QEMU TCG: every instruction emulated; only behaviour counts"))
    elif accel == "kvm-in-tcg":
        out.append(("kvm-in-tcg", "KVM nested inside QEMU TCG: every figure doubly emulated; "
                    "behaviour and exit counts only"))
    elif accel == "xen-in-tcg":
        traced = any(isinstance(r.get("exits"), dict) and "sender" in r["exits"]
                     for r in records)
        out.append(("xen-in-tcg", "Xen nested inside QEMU TCG: every figure doubly emulated; "
                    + ("behaviour and exit counts only" if traced else
                       "behaviour only (Xen's exits were not traced: --exits)")))
    elif accel == "kvm":
        why = kvm_software()
        if why:
            out.append(("kvm-software", why))
        env = next((r for r in records if r.get("record") == "env"), {})
        vcpus = (env.get("cpus") or {}).get("count") if isinstance(env.get("cpus"), dict) else None
        host_cpus = machine.usable_cpus()
        if isinstance(vcpus, int) and host_cpus and vcpus > host_cpus:
            out.append(("overcommit", f"{vcpus} vCPUs on {host_cpus} host CPUs: a target's "
                        "vCPU may not be running when its IPI arrives"))
    return [{"id": i, "text": t} for i, t in out]
