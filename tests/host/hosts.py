#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The fixture hosts: folders that stand for / under the seam
(host/ipibench/machine.py, IPIBENCH_HOST_ROOT), one per kind of machine the
suite meets, so that no test reads the machine it happens to run on.

  intel-kvm   Intel Sapphire Rapids, hardware KVM, APICv with IPI virtualization
  amd-avic    AMD Zen 4 (EPYC 9654), hardware KVM, AVIC and x2AVIC on
  hygon       Hygon Dhyana (family 18h), hardware KVM, AVIC on, IPIv off
  pvm         AMD EPYC without SVM, KVM in software (module kvm_pvm)
  no-kvm      no /dev/kvm and no KVM module (a container, most CI machines)
  kvm-closed  Intel with /dev/kvm that cannot be opened (EACCES)

tests/run runs every group on DEFAULT but tools and tools-run, whose cases
spread over all six (tests/host/on_hosts.py).

usage: hosts.py DIR [NAME]  write host NAME's tree (default: DEFAULT) under
                            DIR/NAME, print its path
       hosts.py DIR --all   write every host's tree under DIR, print DIR
       hosts.py --list      the names"""
import os
import sys

# The suite's host when a test names none: TCG boots, no probe of KVM.
DEFAULT = "no-kvm"

KERNEL = {"proc/sys/kernel/osrelease": "6.12.57-fixture",
          "proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC Debian 6.12.57-1 (fixture)",
          "proc/sys/kernel/arch": "x86_64",
          "proc/cmdline": "BOOT_IMAGE=/vmlinuz-6.12.57-fixture root=/dev/vda1 ro quiet",
          "sys/devices/system/cpu/online": "0-7",
          "sys/devices/system/cpu/smt/control": "on",
          "sys/devices/system/cpu/smt/active": "1",
          "sys/devices/system/cpu/cpuidle/current_driver": "acpi_idle",
          "sys/devices/system/cpu/cpuidle/current_governor": "menu",
          "sys/devices/system/cpu/cpu0/cpuidle/state0/name": "POLL",
          "sys/devices/system/cpu/cpu0/cpuidle/state0/disable": "0",
          "sys/devices/system/cpu/cpu0/cpuidle/state1/name": "C1",
          "sys/devices/system/cpu/cpu0/cpuidle/state1/disable": "0",
          "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver": "acpi-cpufreq",
          "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance"}
# Its 8 CPUs: 4 cores of 2 SMT threads, CPU i and i + 4 siblings (as Linux
# numbers them on Intel and AMD: first threads first).
for _c in range(8):
    KERNEL.update({f"sys/devices/system/cpu/cpu{_c}/topology/physical_package_id": "0",
                   f"sys/devices/system/cpu/cpu{_c}/topology/core_id": str(_c % 4),
                   f"sys/devices/system/cpu/cpu{_c}/topology/thread_siblings_list":
                   f"{_c % 4},{_c % 4 + 4}"})
KVM = {"sys/module/kvm/parameters/halt_poll_ns": "200000",
       "sys/module/kvm/parameters/halt_poll_ns_grow": "2",
       "sys/module/kvm/parameters/halt_poll_ns_shrink": "0"}


def cpuinfo(vendor, model, family, flags, vmx_flags=None):
    """/proc/cpuinfo of two CPUs (the readers take the first one's lines)."""
    out = []
    for n in range(2):
        out += [f"processor\t: {n}", f"vendor_id\t: {vendor}", f"cpu family\t: {family}",
                f"model name\t: {model}", f"flags\t\t: fpu tsc msr apic {flags}"]
        if vmx_flags:
            out.append(f"vmx flags\t: {vmx_flags}")
        out.append("")
    return "\n".join(out) + "\n"


INTEL = cpuinfo("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+", 6, "vmx x2apic tsc_deadline_timer",
                "vnmi preemption_timer posted_intr invvpid ept_x_only flexpriority apicv tsc_offset "
                "vtpr mtf vapic ept vpid unrestricted_guest vapic_reg vid ple ipi_virt")
INTEL_KVM = {"sys/module/kvm_intel/parameters/enable_apicv": "Y",
             "sys/module/kvm_intel/parameters/enable_ipiv": "Y",
             "sys/module/kvm_intel/parameters/ple_gap": "128"}

HOSTS = {
    "intel-kvm": dict(KERNEL, **KVM, **INTEL_KVM, **{
        "proc/sys/kernel/hostname": "fixture-intel", "proc/cpuinfo": INTEL, "dev/kvm": None}),
    "amd-avic": dict(KERNEL, **KVM, **{
        "proc/sys/kernel/hostname": "fixture-amd",
        "proc/cpuinfo": cpuinfo("AuthenticAMD", "AMD EPYC 9654 96-Core Processor", 25,
                                "svm x2apic npt nrip_save avic v_vmsave_vmload vgif x2avic "
                                "vnmi pausefilter pfthreshold"),
        "sys/module/kvm_amd/parameters/avic": "Y",
        "sys/module/kvm_amd/parameters/vnmi": "Y",
        "sys/module/kvm_amd/parameters/enable_ipiv": "Y",
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_driver": "amd-pstate-epp",
        "sys/devices/system/cpu/amd_pstate/status": "active", "dev/kvm": None}),
    "hygon": dict(KERNEL, **KVM, **{
        "proc/sys/kernel/hostname": "fixture-hygon",
        "proc/cpuinfo": cpuinfo("HygonGenuine", "Hygon C86 7285 32-core Processor", 24,
                                "svm x2apic npt nrip_save avic pausefilter pfthreshold"),
        "sys/module/kvm_amd/parameters/avic": "Y",
        "sys/module/kvm_amd/parameters/vnmi": "N",
        "sys/module/kvm_amd/parameters/enable_ipiv": "N", "dev/kvm": None}),
    "pvm": dict(KERNEL, **KVM, **{
        "proc/sys/kernel/hostname": "fixture-pvm",
        "proc/cpuinfo": cpuinfo("AuthenticAMD", "AMD EPYC", 25, "x2apic hypervisor"),
        "sys/devices/system/cpu/online": "0-1",
        "sys/module/kvm_pvm/parameters/nx_huge_pages": "N", "dev/kvm": None}),
    "no-kvm": dict(KERNEL, **{
        "proc/sys/kernel/hostname": "fixture-nokvm",
        "proc/cpuinfo": cpuinfo("GenuineIntel", "Intel(R) Xeon(R) Processor", 6, "x2apic hypervisor"),
        "sys/devices/system/cpu/online": "0-1"}),
    "kvm-closed": dict(KERNEL, **KVM, **INTEL_KVM, **{
        "proc/sys/kernel/hostname": "fixture-closed", "proc/cpuinfo": INTEL,
        "dev/kvm": None, "dev/kvm.errno": "EACCES"}),
}


def make(where, name, dev_kvm=None, tracefs=False):
    """Writes host NAME's tree under where/NAME (again if there); its path.
    "dev/kvm" is a link to the null device: a character device that opens.
    dev_kvm makes it something else: "file", "directory", or an errno name
    its open fails with; tracefs adds a stand-in tracefs with KVM's events
    (harness.stand_in_tracefs)."""
    root = os.path.join(where, name)
    for rel, text in HOSTS[name].items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if text is None:
            if os.path.lexists(p):
                os.remove(p)
            os.symlink(os.devnull, p)
            continue
        with open(p, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    dev = os.path.join(root, "dev", "kvm")
    if dev_kvm in ("file", "directory"):
        os.remove(dev)
        os.mkdir(dev) if dev_kvm == "directory" else open(dev, "w").close()
    elif dev_kvm:
        with open(dev + ".errno", "w") as f:
            f.write(dev_kvm + "\n")
    if tracefs:
        from harness import stand_in_tracefs
        stand_in_tracefs(os.path.join(root, "sys", "kernel", "tracing"))
    return root


def main(argv):
    if argv == ["--list"]:
        print("\n".join(HOSTS))
        return 0
    if argv[1:] == ["--all"]:
        for name in HOSTS:
            make(argv[0], name)
        print(argv[0])
        return 0
    if len(argv) not in (1, 2) or argv[1:] and argv[1] not in HOSTS:
        print(__doc__.rsplit("usage:", 1)[1].rstrip(), file=sys.stderr)
        return 2
    print(make(argv[0], argv[1] if argv[1:] else DEFAULT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
