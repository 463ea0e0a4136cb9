# SPDX-License-Identifier: GPL-2.0-only
"""QEMU as run.sh drives it, in pure functions: the command line of a boot,
the one table that turns QEMU's exit status into run.sh's exit code
(docs/exit-codes.md), the version check and the results directory's label.
tests/host/test_qemu.py holds their cases."""
import re

# run.sh's exit codes (docs/exit-codes.md), from their one home.
from ipibench.exit_codes import (EX_APICV_INHIBITED, EX_BADCMD, EX_BUILD, EX_CRASH,  # noqa: F401
                                 EX_DEPS, EX_ERROR, EX_FAILURE, EX_INTERRUPTED, EX_NEEDS_KVM,
                                 EX_NOTHING_RAN, EX_OK, EX_PRESET, EX_QEMU, EX_QEMU_OLD, EX_SAVE,
                                 EX_TIMEOUT, EX_UNAVAILABLE, EX_USAGE)

# Codes that stop a matrix at once: they would fail every boot after it too.
SETUP_CODES = (EX_USAGE, EX_DEPS, EX_BUILD, EX_INTERRUPTED, EX_PRESET, EX_QEMU_OLD, EX_SAVE,
               EX_UNAVAILABLE, EX_NEEDS_KVM)

MIN_QEMU = "8.1"
# The multiboot image (QEMU's multiboot loader, GRUB) and the PVH one (the
# ELF64: QEMU -kernel on any machine, Cloud Hypervisor, Firecracker).
IMAGE, PVH_IMAGE, ISO = "build/ipibench.elf32", "build/ipibench.elf", "build/ipibench.iso"

# run.sh's --machine values. microvm is QEMU's microvm as microVM monitors
# present a guest (Firecracker, Cloud Hypervisor): no 8259, no PIT, no RTC,
# the ISA serial port and isa-debug-exit kept, -nodefaults for the rest,
# booted through PVH (its firmware, SeaBIOS's microvm build, hands the
# ELF64 over); its ACPI is
# hardware-reduced (a MADT, no PM timer). microvm-noacpi adds acpi=off: the
# CPUs then come from the firmware's Intel MP table.
MACHINES = ("pc", "q35", "microvm", "microvm-noacpi")
MICROVM = "microvm,pic=off,pit=off,rtc=off,isa-serial=on"


def machine_arg(machine):
    """QEMU's -M value for a --machine value."""
    if machine == "microvm-noacpi":
        return MICROVM + ",acpi=off"
    return MICROVM if machine == "microvm" else machine


def kernel_image(machine, pvh=False):
    """The image -kernel boots: PVH's when asked and on microvm, as its peers
    boot, else multiboot's."""
    return PVH_IMAGE if pvh or machine.startswith("microvm") else IMAGE


# Every KVM boot with an in-kernel PIT discards its lost ticks. QEMU's
# kvm-pit defaults to lost_tick_policy=delay, for which kvm_pit_realizefn()
# asks nothing of KVM, and KVM_CREATE_PIT2 left reinjection on
# (kvm_create_pit() -> kvm_pit_set_reinject(), arch/x86/kvm/i8254.c) and
# with it APICV_INHIBIT_REASON_PIT_REINJ for the VM's life: on AMD, AVIC is
# inhibited (VMX's inhibit mask ignores that reason), and an AVIC on/off
# A/B would compare "off" with "inhibited". discard makes QEMU send
# KVM_REINJECT_CONTROL, whose kvm_vm_ioctl_reinject() clears the inhibit.
# The guest stops the PIT after calibration (kernel/pit.c): no tick lost
# counts. QEMU makes kvm-pit only with an in-kernel irqchip that is not
# split and a PIT at all (kvm_pit_in_kernel()): microvm (pit=off),
# kernel-irqchip=split or off, and pit=off have none.
PIT_POLICY = "kvm-pit.lost_tick_policy"
PIT_DISCARD = ("-global", f"{PIT_POLICY}=discard")
NO_KVM_PIT = re.compile(r"(^|,)(pit=off|kernel-irqchip=(split|off))(,|$)")


def _global_policy(word):
    """The policy a -global value sets for kvm-pit, in either spelling
    (kvm-pit.lost_tick_policy=V, driver=kvm-pit,property=...,value=V), or None."""
    if word.startswith(PIT_POLICY + "="):
        return word.split("=", 1)[1]
    parts = dict(p.split("=", 1) for p in word.split(",") if "=" in p)
    if parts.get("driver") == "kvm-pit" and parts.get("property") == "lost_tick_policy":
        return parts.get("value")
    return None


def pit_policy(cmdline, accel):
    """The in-kernel PIT's lost-tick policy of a QEMU command line: the last
    -global that sets it (QEMU applies them in order), else QEMU's default
    "delay" under KVM; None where the VM has no in-kernel PIT (TCG, microvm,
    a split irqchip, pit=off) or the line is not this boot's (the lanes
    start their inner QEMU themselves: lane.sh discards, as here, unless a
    preset sets a policy)."""
    words = [str(w) for w in cmdline or ()]
    if accel != "kvm" or any(NO_KVM_PIT.search(w) for w in words):
        return None
    found = [_global_policy(v) for k, v in zip(words, words[1:]) if k == "-global"]
    found = [f for f in found if f is not None]
    return found[-1] if found else "delay"


def command_line(qemu, accel, machine, cpu, smp, memory, append, iso=False, preset_extra=(),
                 extra=(), runtime_dir=None, pidfile=False, pvh=False, host_read=None):
    """The QEMU command line of one boot. machine: a --machine value (MACHINES);
    pvh: boot the PVH image (--pvh). runtime_dir: start paused (-S) with a QMP
    socket there (--pin, --perf-kvm); pidfile: and write QEMU's pid there.
    host_read: the directory of host reads (host_stats=1, kernel/host_read.c):
    QMP's socket there (that of runtime_dir when there is one), and COM2 a
    pipe chardev whose FIFO hostread.in the host answers the guest through
    (hoststats.make_fifos makes it first)."""
    boot = ["-cdrom", ISO, "-boot", "d"] if iso else \
        ["-kernel", kernel_image(machine, pvh), "-append", append]
    # One host thread running every vCPU in turn: spinning vCPUs then cost
    # nothing to the others (40x faster at -smp 6 on two host cores).
    accel_arg = "tcg,thread=single" if accel == "tcg-single" else accel
    cmd = [qemu, "-accel", accel_arg, "-M", machine_arg(machine), "-cpu", cpu, "-smp", smp,
           "-m", memory,
           "-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
           *(["-chardev", f"pipe,id=hostread,path={host_read}/hostread", "-serial",
              "chardev:hostread"] if host_read else []),
           *preset_extra, *extra, *boot]
    if pit_policy(cmd, accel) == "delay" and not any(
            _global_policy(str(w)) for w in (*preset_extra, *extra)):
        cmd[-len(boot):-len(boot)] = list(PIT_DISCARD)
    if host_read and not runtime_dir:
        cmd += ["-qmp", f"unix:{host_read}/qmp.sock,server=on,wait=off"]
    if runtime_dir:
        cmd += ["-S", "-qmp", f"unix:{runtime_dir}/qmp.sock,server=on,wait=off"]
        if pidfile:
            cmd += ["-pidfile", f"{runtime_dir}/qemu.pid"]
    return cmd


def cpu_value(base, preset_cpu):
    """A preset's -cpu flags appended to the base model."""
    return base + ("," + preset_cpu if preset_cpu else "")


# The guest writes byte b = 0x20 + status to isa-debug-exit; QEMU exits
# (b << 1) | 1. This is the only place that knows the mapping.
GUEST = {65: (EX_OK, "SUCCESS"), 67: (EX_OK, "SKIP"), 69: (EX_ERROR, "ERROR"),
         71: (EX_FAILURE, "FAILURE"), 73: (EX_CRASH, "CRASH"), 75: (EX_BADCMD, "BAD-CMDLINE")}


def terminating_signal(console):
    """N of QEMU's last "terminating on signal N" line, or ''."""
    sig = None
    for line in console.split("\n"):
        m = re.match(r".*terminating on signal ([0-9]*)", line)
        if m:
            sig = m.group(1)
    return sig or ""


def decode_status(rc, seconds, timeout, console=""):
    """(run.sh exit code, status text) of a boot whose QEMU (under timeout(1))
    exited rc after seconds (text, "12.345") of timeout; console: its log.

    timeout(1) exits 124 when it stopped QEMU, 137 when it had to kill it, and
    128 + N when QEMU died of signal N (it re-raises the signal); QEMU itself
    exits 0 after SIGTERM, SIGINT or SIGHUP and says so on stderr, which goes
    to the log; QEMU's own failures (cannot start, cannot load) exit 1."""
    if rc in GUEST:
        return GUEST[rc]
    if rc == 124:
        return EX_TIMEOUT, "TIMEOUT"
    if rc == 0:
        sig = terminating_signal(console)
        if sig:
            return EX_QEMU, f"QEMU-KILLED (signal {sig}: QEMU was told to terminate)"
        return EX_QEMU, "QEMU-EXITED (guest reset or powered off without a status: triple fault?)"
    if rc == 1:
        return EX_QEMU, "QEMU-FAILED (QEMU could not start or load the image)"
    if rc == 137 and int(str(seconds).split(".")[0]) >= int(timeout):
        return EX_TIMEOUT, "TIMEOUT"
    if rc > 128:
        return EX_QEMU, f"QEMU-KILLED (signal {rc - 128})"
    return EX_QEMU, f"QEMU-UNKNOWN (exit {rc})"


def exit_word(code):
    """What a run.sh exit code means, for a matrix's summary."""
    return {0: "SUCCESS or SKIP", 3: "ERROR", 4: "FAILURE", 5: "CRASH", 6: "BAD-CMDLINE",
            7: "TIMEOUT", 8: "QEMU failed or was killed",
            EX_APICV_INHIBITED: "APICV-INHIBITED",
            EX_NOTHING_RAN: "NOTHING-RAN (guest SKIP: nothing asked for ran)"}.get(
                code, "see docs/exit-codes.md")


def parse_version(text):
    """"8.1" from the first line of `qemu-system-x86_64 --version`, or None."""
    first = text.split("\n", 1)[0]
    m = re.match(r".*version ([0-9]+\.[0-9]+)", first)
    return m.group(1) if m else None


def older(version, minimum=MIN_QEMU):
    """version < minimum, both "major.minor"."""
    return tuple(map(int, version.split("."))) < tuple(map(int, minimum.split(".")))


def too_old(binary, path, version_text):
    """Why this QEMU cannot be used (None when it can): binary as named, path
    where it was found, version_text what --version printed."""
    v = parse_version(version_text)
    if v is None:
        return (f"cannot tell the version of {binary} ('{binary} --version' names none); "
                f"ipibench needs QEMU {MIN_QEMU} or later")
    if not older(v):
        return None
    return (f"QEMU {v} ({path}) is too old: ipibench needs {MIN_QEMU} or later (x2APIC under "
            "TCG); tools/deps.sh build installs it (from bookworm-backports on Debian 12), or "
            "point QEMU= at a newer build")


def sanitize(label):
    """A label as a directory name: only [A-Za-z0-9_.-], no leading dot."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
    return s[1:] if s.startswith(".") else s


def default_label(preset, accel, machine, smp):
    return f"{preset + '-' if preset else ''}{accel}-{machine}-smp{smp}"
