# SPDX-License-Identifier: GPL-2.0-only
"""Which accelerator a boot gets, and when run.sh refuses to fall back to TCG
(docs/host-tools.md, "A configuration that needs KVM").

choose() is the rule, pure but for the KVM it is handed: HostKvm asks the
host's /dev/kvm (through the seam, machine.py) and QEMU; the tests hand it a
stand-in, or point the seam at a fixture host (IPIBENCH_HOST_ROOT)."""
import errno
import os
import stat
import subprocess

from ipibench import machine
from ipibench.boot.qemu import cpu_value, machine_arg
from ipibench.exit_codes import EX_NEEDS_KVM, EX_USAGE, ToolError
from ipibench.kvmhost import facts
from ipibench.presets import kvm_only_flags

# What a path that is not a character device is, for the message.
FILE_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
              (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
              (stat.S_ISSOCK, "a socket"))


class HostKvm:
    """This host's KVM as QEMU binary `qemu` sees it: its /dev/kvm and
    modules, through the seam (machine.py) with environ (os.environ)."""

    def __init__(self, qemu, environ=None):
        self.qemu = qemu
        self.environ = os.environ if environ is None else environ
        self.path = machine.KVM_DEVICE

    def open_device(self, flags):
        """The device opened; a fixture host's "kvm.errno" stands in for
        an EACCES that a test run as root cannot meet otherwise."""
        return machine.open_device(self.path, flags, self.environ)

    def unusable(self):
        """Why no VM can be made through the device, or None: missing, not a
        character device, or not accessible, with the system's own words.
        Opened, not judged by os.access(): root passes any mode check, yet
        opens no device node on a nodev mount, nor one without its driver."""
        try:
            mode = os.stat(machine.path(self.path, self.environ)).st_mode
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.ENOTDIR):
                return f"{self.path} is missing ({e.strerror})"
            return f"{self.path} is not accessible ({e.strerror})"
        if not stat.S_ISCHR(mode):
            kind = next((k for test, k in FILE_KINDS if test(mode)), "something else")
            return f"{self.path} is not a character device (it is {kind})"
        try:
            os.close(self.open_device(os.O_RDWR | os.O_CLOEXEC))
        except OSError as e:
            if e.errno in (errno.ENODEV, errno.ENXIO):
                return (f"{self.path} is not accessible ({e.strerror}: no KVM module "
                        "behind it; kvm_intel or kvm_amd not loaded?)")
            return f"{self.path} is not accessible ({e.strerror})"
        return None

    def usable(self):
        return self.unusable() is None

    def software(self):
        """Why this KVM is not hardware virtualization, or None (kvmhost/facts.py)."""
        return facts.kvm_software(self.environ)

    def probe(self, model, machine):
        """None when KVM can create this VM, else QEMU's complaint.

        Some hosts offer a /dev/kvm that cannot run every vCPU model (nested or
        PVM-based KVM refusing an MSR QEMU sets for -cpu host; this sandbox's
        also refuses hv-vpindex): decide by trying, never by the file. Create
        the machine (a --machine value) paused and quit at once: if that
        fails, KVM cannot run it."""
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
    notices of a fall back to TCG, or ToolError(31).

    Under TCG every Hyper-V and KVM PV backend SKIPs, so a model that asks
    for them would pass having tested none of it: stop, with the ways to run
    it, unless --allow-fallback accepted TCG. Other models (the x2apic and
    xapic presets) mean as much under TCG and fall back with a notice
    (without /dev/kvm, the run's own notice says so)."""
    need = ",".join(kvm_only_flags(model))
    what = f"preset {preset}" if preset else f"-cpu {model}"
    if not need:
        return [f"run.sh: {why}; using TCG"] if kvm_present else []
    if allow_fallback:
        return [f"run.sh: warning: {why}; running {what} under TCG as --allow-fallback asks: "
                f"only KVM offers {need}, so every backend these add will SKIP"]
    lane = f"./run.sh --accel kvm-in-tcg --preset {preset or 'NAME'}"
    if not preset:
        lane += " (the lane boots presets only: ./run.sh list)"
    raise ToolError(EX_NEEDS_KVM,
                   f"{what} needs KVM, the only accelerator that offers {need}, but {why}. Under TCG every backend these add would SKIP and the run pass having tested none of it: run it under real KVM nested in TCG with {lane}, or accept TCG knowingly with --allow-fallback (or --accel tcg)")


# The model a software KVM (PVM) runs when --cpu names none: QEMU's -cpu
# host asks it to set MSRs it refuses (QEMU aborts in kvm_buf_set_msrs on
# MSR 0x10a, IA32_ARCH_CAPABILITIES), which qemu64 does not advertise. QEMU
# picks other MSRs from KVM's own list, whatever the model, so the probe
# (-S still writes every MSR, cpu_synchronize_all_post_init()) is what makes
# it sure; the model is on the QEMU line results.json keeps.
SOFTWARE_MODEL = "qemu64"


def software_model(base, preset_cpu, machine, kvm):
    """(-cpu base, notices) for --accel kvm on a software KVM: qemu64 where
    --cpu named none; whichever model, probed before the boot, and
    ToolError(31) naming a --cpu that works when the KVM refuses it."""
    notes = []
    if not base:
        base = SOFTWARE_MODEL
        notes.append(f"run.sh: -cpu {SOFTWARE_MODEL}: a software KVM refuses the MSRs -cpu host "
                     "sets (--cpu names another)")
    model = cpu_value(base, preset_cpu)
    refusal = kvm.probe(model, machine)
    if refusal is not None:
        other = "" if base == SOFTWARE_MODEL else f"; --cpu {SOFTWARE_MODEL} is the model it runs"
        raise ToolError(EX_NEEDS_KVM, f"--accel kvm: this host's software KVM cannot run -cpu {model} ({refusal}){other}")
    return base, notes


def extras_asked(o):
    """The options of run options o that read this host's KVM itself (its
    exits, its vCPU threads), in the order --help lists them."""
    return [n for n, on in (("--pin", o.pin is not None), ("--perf-kvm", o.perf_kvm),
                            ("--exits", o.exits)) if on]


def choose(accel, cpu, preset, preset_cpu, machine, allow_fallback, kvm, extras=()):
    """(accelerator, -cpu value, notices) of a boot: auto becomes kvm or
    tcg-single; the preset's flags go on the accelerator's base model (host
    under KVM, max under TCG) unless --cpu named one. extras: the options
    asked that read KVM itself (extras_asked). Raises ToolError 2, or 31
    for KVM asked for or needed and not usable here (docs/exit-codes.md)."""
    notes, base = [], cpu
    if accel == "auto":
        model = cpu_value(base or "host", preset_cpu)
        usable = kvm.usable()
        if not usable:
            why = kvm.unusable()
        elif kvm.software():
            why = kvm.software()
        else:
            refusal = kvm.probe(model, machine)
            if refusal is None:
                accel = "kvm"
            else:
                why = f"/dev/kvm cannot run -cpu {model} here ({refusal})"
        if accel != "kvm" and extras:
            # --exits, --pin and --perf-kvm read this host's KVM itself: they
            # ask for KVM as plainly as --accel kvm does.
            raise ToolError(EX_NEEDS_KVM, f"{' and '.join(extras)} needs KVM, but {why}; the KVM lane runs real KVM nested in TCG on any host: --accel kvm-in-tcg")
        if accel != "kvm":
            notes = refuse_or_fall_back(model, why, preset, allow_fallback, usable)
            if usable and kvm.software() and notes:
                notes[-1] += "; --accel kvm uses it anyway, every figure then marked kvm-software"
            accel = "tcg-single"
            if base.startswith("host"):
                base = "max" + base[len("host"):]
    elif accel == "kvm":
        if not kvm.usable():
            raise ToolError(EX_NEEDS_KVM, f"--accel kvm: KVM is not usable here: {kvm.unusable()}; the KVM lane runs real KVM nested in TCG on any host: --accel kvm-in-tcg")
        soft = kvm.software()
        if soft and extras:
            raise ToolError(EX_NEEDS_KVM, f"--accel kvm with {' and '.join(extras)}: {soft}: exit counts and vCPU placement there measure that software path, never a hardware hypervisor's; plain --accel kvm still boots (its figures marked kvm-software), and the KVM lane runs real KVM: --accel kvm-in-tcg")
        if soft:
            notes.append(f"run.sh: warning: {soft}: these figures measure that "
                         "path, not a hardware hypervisor's")
            base, note = software_model(base, preset_cpu, machine, kvm)
            notes += note
    elif accel not in ("tcg", "tcg-single", "kvm-in-tcg", "xen-in-tcg", "xen"):
        raise ToolError(EX_USAGE, f"--accel takes kvm, tcg, tcg-single, kvm-in-tcg, xen-in-tcg or auto, not '{accel}'")
    if not base:
        base = "host" if accel == "kvm" else "max"
    return accel, cpu_value(base, preset_cpu), notes
