# SPDX-License-Identifier: GPL-2.0-only
"""Which accelerator a boot gets, and when run.sh refuses to fall back to TCG
(docs/host-tools.md, "A configuration that needs KVM").

choose() is the rule, pure but for the KVM it is handed: HostKvm asks the
host's /dev/kvm and QEMU; the tests hand it a stand-in."""
import os
import stat
import subprocess

import ipibench_results as R
from ipibench_qemu import EX_NEEDS_KVM, EX_USAGE, cpu_value, machine_arg


class HostKvm:
    """This host's KVM as QEMU binary `qemu` sees it."""

    def __init__(self, qemu):
        self.qemu = qemu

    def usable(self):
        try:
            return stat.S_ISCHR(os.stat("/dev/kvm").st_mode) and \
                os.access("/dev/kvm", os.R_OK | os.W_OK)
        except OSError:
            return False

    def software(self):
        """Why this KVM is not hardware virtualization, or None. PVM (module
        kvm_pvm) runs guests in software on a host without VMX/SVM: RDTSC
        traps, interrupt delivery waits for unrelated exits, KVM_HC_SEND_IPI
        may never return. It boots the guest, but its figures measure PVM."""
        sysfs = os.environ.get("IPIBENCH_SYSFS", "/sys")
        if os.path.isdir(os.path.join(sysfs, "module", "kvm_pvm")):
            return ("this host's /dev/kvm is PVM (module kvm_pvm: virtualization in software, "
                    "not VMX/SVM; RDTSC and every exit cost its software path)")
        return None

    def probe(self, model, machine):
        """None when KVM can create this VM, else QEMU's complaint.

        Some hosts offer a /dev/kvm that cannot run every vCPU model (nested or
        PVM-based KVM refusing an MSR QEMU sets for -cpu host). Create the
        machine (a --machine value) paused and quit at once: if that fails, KVM
        cannot run it."""
        p = subprocess.run(["timeout", "-k", "2", "20", self.qemu, "-accel", "kvm", "-cpu", model,
                            "-M", machine_arg(machine), "-nodefaults", "-display", "none", "-S",
                            "-monitor", "stdio"], input="quit\n", stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, errors="replace")
        if p.returncode == 0:
            return None
        lines = [x for x in p.stderr.rstrip("\n").split("\n") if not x.startswith("QEMU")]
        return "; ".join(x.strip() for x in lines[:2] if x.strip())  # one line


def refuse_or_fall_back(model, why, preset, allow_fallback, kvm_present):
    """--accel auto found no KVM that runs the vCPU model (why says why): the
    notices of a fall back to TCG, or R.ToolError(31).

    Under TCG every Hyper-V and KVM PV backend SKIPs, so a model that asks
    for them would pass having tested none of it: stop, with the ways to run
    it, unless --allow-fallback accepted TCG. Other models (the x2apic and
    xapic presets) mean as much under TCG and fall back with a notice
    (without /dev/kvm, the run's own notice says so)."""
    need = ",".join(R.kvm_only_flags(model))
    what = f"preset {preset}" if preset else f"-cpu {model}"
    if not need:
        return [f"run.sh: {why}; using TCG"] if kvm_present else []
    if allow_fallback:
        return [f"run.sh: warning: {why}; running {what} under TCG as --allow-fallback asks: "
                f"only KVM offers {need}, so every backend these add will SKIP"]
    lane = f"./run.sh --accel kvm-in-tcg --preset {preset or 'NAME'}"
    if not preset:
        lane += " (the lane boots presets only: ./run.sh list)"
    raise R.ToolError(EX_NEEDS_KVM,
                   f"{what} needs KVM, the only accelerator that offers {need}, but {why}. "
                   "Under TCG every backend these add would SKIP and the run pass having "
                   f"tested none of it: run it under real KVM nested in TCG with {lane}, or "
                   "accept TCG knowingly with --allow-fallback (or --accel tcg)")


def choose(accel, cpu, preset, preset_cpu, machine, allow_fallback, kvm):
    """(accelerator, -cpu value, notices) of a boot: auto becomes kvm or
    tcg-single; the preset's flags go on the accelerator's base model (host
    under KVM, max under TCG) unless --cpu named one. Raises ToolError 2 or 31."""
    notes, base = [], cpu
    if accel == "auto":
        model = cpu_value(base or "host", preset_cpu)
        if not kvm.usable():
            why = "there is no usable /dev/kvm"
        elif kvm.software():
            why = kvm.software()
        else:
            refusal = kvm.probe(model, machine)
            if refusal is None:
                accel = "kvm"
            else:
                why = f"/dev/kvm cannot run -cpu {model} here ({refusal})"
        if accel != "kvm":
            notes = refuse_or_fall_back(model, why, preset, allow_fallback, kvm.usable())
            if kvm.software() and notes:
                notes[-1] += "; --accel kvm uses it anyway, every figure then marked kvm-software"
            accel = "tcg-single"
            if base.startswith("host"):
                base = "max" + base[len("host"):]
    elif accel == "kvm":
        if not kvm.usable():
            raise R.ToolError(EX_USAGE, "--accel kvm: /dev/kvm is missing or not accessible")
        if kvm.software():
            notes.append(f"run.sh: warning: {kvm.software()}: these figures measure that "
                         "path, not a hardware hypervisor's")
    elif accel not in ("tcg", "tcg-single", "kvm-in-tcg"):
        raise R.ToolError(EX_USAGE, "--accel takes kvm, tcg, tcg-single, kvm-in-tcg or auto, "
                       f"not '{accel}'")
    if not base:
        base = "host" if accel == "kvm" else "max"
    return accel, cpu_value(base, preset_cpu), notes
