#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/qemu.py: QEMU's command line for every preset under every
accelerator and machine (microvm and its PVH image included, paused for
--pin and --perf-kvm), the status decoding table of docs/exit-codes.md,
labels, QEMU's version, and the matrix's setup codes.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry
from fixtures import PRESETS, FakeKvm, main

from ipibench import exit_codes as E
from ipibench import jobs as J
from ipibench import options as O
from ipibench.boot import accel as A
from ipibench.boot import qemu as Q
from ipibench.boot import run as B


CASES, case = registry()


def compose(preset, accel, machine, kvm=None, cpu="", **kw):
    p = PRESETS[preset]
    accel, cpu, _ = A.choose(accel, cpu, preset, p["cpu"], machine, True, kvm or FakeKvm())
    return accel, Q.command_line("qemu-system-x86_64", accel, machine, cpu, str(p["smp"]), "256M",
                                 "plan=check", preset_extra=p["extra"], **kw)


@case("run.sh command line: every preset x kvm, tcg, tcg-single x pc, q35")
def _(_s):
    for name, p in PRESETS.items():
        for accel, arg, base in (("kvm", "kvm", "host"), ("tcg", "tcg", "max"),
                                 ("tcg-single", "tcg,thread=single", "max")):
            for machine in ("pc", "q35"):
                got, cmd = compose(name, accel, machine)
                where = f"{name}/{accel}/{machine}: {cmd}"
                want_cpu = base + ("," + p["cpu"] if p["cpu"] else "")
                check(got == accel, where)
                check(cmd[:13] == ["qemu-system-x86_64", "-accel", arg, "-M", machine, "-cpu",
                                   want_cpu, "-smp", str(p["smp"]), "-m", "256M", "-nodefaults",
                                   "-display"], where)
                tail = ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", *p["extra"],
                        "-kernel", "build/ipibench.elf32", "-append", "plan=check"]
                check(cmd[-len(tail):] == tail, where)
                check("-S" not in cmd and "-qmp" not in cmd, where)


@case("run.sh command line: one exactly; --iso, extra QEMU arguments, paused for --pin/--perf-kvm")
def _(_s):
    cmd = Q.command_line("/q", "tcg-single", "q35", "max,x2apic=on", "2", "256M", "")
    check(cmd == ["/q", "-accel", "tcg,thread=single", "-M", "q35", "-cpu", "max,x2apic=on",
                  "-smp", "2", "-m", "256M", "-nodefaults", "-display", "none", "-no-reboot",
                  "-serial", "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
                  "-kernel", "build/ipibench.elf32", "-append", ""], f"{cmd}")
    cmd = Q.command_line("q", "kvm", "pc", "host", "4", "1G", "", iso=True, preset_extra=["-a"],
                         extra=["-device", "x"], runtime_dir="/tmp/r", pidfile=True)
    check(cmd[-14:] == ["-a", "-device", "x", "-global", "kvm-pit.lost_tick_policy=discard",
                        "-cdrom", "build/ipibench.iso", "-boot", "d", "-S",
                        "-qmp", "unix:/tmp/r/qmp.sock,server=on,wait=off", "-pidfile",
                        "/tmp/r/qemu.pid"] and "-kernel" not in cmd, f"{cmd}")
    cmd = Q.command_line("q", "kvm", "pc", "host", "4", "1G", "", runtime_dir="/tmp/r")
    check(cmd[-3:] == ["-S", "-qmp", "unix:/tmp/r/qmp.sock,server=on,wait=off"], f"{cmd}")
    check(Q.cpu_value("max", "") == "max" and Q.cpu_value("host", "a,b") == "host,a,b", "cpu_value")


@case("run.sh command line: every KVM boot discards the in-kernel PIT's lost ticks (else "
      "AVIC is inhibited for the VM's life), once; TCG's lines have no such global; the "
      "policy each line gives, as results.json records it")
def _(_s):
    def pit(cmd):
        return [w for w in cmd if "lost_tick_policy" in w]
    plain = Q.command_line("q", "kvm", "q35", "host", "2", "256M", "plan=check")
    check(pit(plain) == ["kvm-pit.lost_tick_policy=discard"] and
          plain[plain.index("-kernel") - 2] == "-global", f"no preset: {plain}")
    preset = Q.command_line("q", "kvm", "q35", "host", "2", "256M", "",
                            preset_extra=PRESETS["x2apic"]["extra"])
    check(pit(preset) == ["kvm-pit.lost_tick_policy=discard"], f"x2apic preset: {preset}")
    asked = Q.command_line("q", "kvm", "q35", "host", "2", "256M", "",
                           extra=["-global", "kvm-pit.lost_tick_policy=delay"])
    check(pit(asked) == ["kvm-pit.lost_tick_policy=delay"], f"the user's own: {asked}")
    tcg = Q.command_line("q", "tcg", "q35", "max", "2", "256M", "")
    check(pit(tcg) == [], f"TCG: {tcg}")
    check((Q.pit_policy(plain, "kvm"), Q.pit_policy(asked, "kvm"), Q.pit_policy(["q"], "kvm"),
           Q.pit_policy(tcg, "tcg"), Q.pit_policy(plain, "kvm-in-tcg")) ==
          ("discard", "delay", "delay", None, None), "pit_policy")
    # QEMU applies -global in order: the last one wins, in either spelling,
    # and run.sh adds none beside the user's own.
    late = Q.command_line("q", "kvm", "q35", "host", "2", "256M", "",
                          preset_extra=PRESETS["x2apic"]["extra"],
                          extra=["-global", "kvm-pit.lost_tick_policy=delay"])
    check(Q.pit_policy(late, "kvm") == "delay", f"the last -global: {late}")
    long_form = Q.command_line("q", "kvm", "q35", "host", "2", "256M", "", extra=[
        "-global", "driver=kvm-pit,property=lost_tick_policy,value=delay"])
    check(pit(long_form) == ["driver=kvm-pit,property=lost_tick_policy,value=delay"] and
          Q.pit_policy(long_form, "kvm") == "delay",
          f"the long spelling: {long_form}")
    # No in-kernel PIT, no policy and no global: microvm (pit=off), a split
    # or userspace irqchip, pit=off (kvm_pit_in_kernel() in QEMU).
    micro = Q.command_line("q", "kvm", "microvm", "host", "2", "256M", "")
    split = Q.command_line("q", "kvm", "q35,kernel-irqchip=split", "host", "2", "256M", "")
    check(pit(micro) == [] and pit(split) == [] and Q.pit_policy(micro, "kvm") is None and
          Q.pit_policy(split, "kvm") is None and
          Q.pit_policy(["q", "-M", "pc,pit=off"], "kvm") is None, f"{micro} {split}")


@case("run.sh command line: --machine microvm and microvm-noacpi, the PVH image, no legacy "
      "devices; the lane told the machine")
def _(_s):
    base = ["pic=off", "pit=off", "rtc=off", "isa-serial=on"]
    for machine, acpi in (("microvm", []), ("microvm-noacpi", ["acpi=off"])):
        cmd = Q.command_line("q", "tcg-single", machine, "max", "4", "256M", "plan=check",
                             preset_extra=["-global", "x"])
        where = f"{machine}: {cmd}"
        check(cmd[cmd.index("-M") + 1].split(",") == ["microvm", *base, *acpi], where)
        check(cmd[-4:] == ["-kernel", "build/ipibench.elf", "-append", "plan=check"], where)
        check(["-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio", "-device",
               "isa-debug-exit,iobase=0xf4,iosize=0x04", "-global", "x"] ==
              cmd[cmd.index("-nodefaults"):cmd.index("-kernel")], where)
        o = O.parse_run(["--machine", machine], "/")
        lane = B.Boot.lane_machine(type("Boot", (), {"o": o})())
        check(lane == ["--machine", cmd[cmd.index("-M") + 1]], f"{machine}: lane {lane}")
        check(Q.kernel_image(machine) == Q.PVH_IMAGE, machine)
    for machine in ("pc", "q35"):
        check(Q.machine_arg(machine) == machine and Q.kernel_image(machine) == Q.IMAGE, machine)
        cmd = Q.command_line("q", "kvm", machine, "host", "2", "256M", "", pvh=True)
        check(cmd[-4:-2] == ["-kernel", "build/ipibench.elf"], f"--pvh on {machine}: {cmd}")
        check(O.parse_run(["--machine", machine, "--pvh"], "/").pvh, f"--pvh on {machine}")
        o = O.parse_run(["--machine", machine], "/")
        check(B.Boot.lane_machine(type("Boot", (), {"o": o})()) == [], f"{machine}: lane")
    check(Q.default_label("", "tcg-single", "microvm-noacpi", "2") ==
          "tcg-single-microvm-noacpi-smp2", "label")


@case("run.sh status decoding: every row, each code one exit_codes.MEANINGS documents "
      "(docs/exit-codes.md is written from them)")
def _(_s):
    rows = [(65, "1.0", 0, "SUCCESS"), (67, "1.0", 0, "SKIP"), (69, "1.0", 3, "ERROR"),
            (71, "1.0", 4, "FAILURE"), (73, "1.0", 5, "CRASH"), (75, "1.0", 6, "BAD-CMDLINE"),
            (124, "300.5", 7, "TIMEOUT"), (137, "300.001", 7, "TIMEOUT"),
            (137, "12.999", 8, "QEMU-KILLED (signal 9)"), (143, "1.0", 8, "QEMU-KILLED (signal 15)"),
            (134, "1.0", 8, "QEMU-KILLED (signal 6)"),
            (1, "1.0", 8, "QEMU-FAILED (QEMU could not start or load the image)"),
            (0, "1.0", 8, "QEMU-EXITED (guest reset or powered off without a status: "
             "triple fault?)"), (2, "1.0", 8, "QEMU-UNKNOWN (exit 2)"),
            (126, "1.0", 8, "QEMU-UNKNOWN (exit 126)"), (66, "1.0", 8, "QEMU-UNKNOWN (exit 66)")]
    documented = {m.code for m in E.MEANINGS}
    for rc, secs, code, what in rows:
        got = Q.decode_status(rc, secs, 300 if rc in (124, 137) else 10)
        check(got == (code, what), f"QEMU exit {rc} after {secs} s: {got}, expected {code} {what}")
        check(code in documented, f"exit {code} has no row in exit_codes.MEANINGS")
    log = ("qemu-system-x86_64: terminating on signal 2 from pid 9 (bash)\nguest text\n"
           "qemu-system-x86_64: terminating on signal 15 from pid 10 (timeout)\n")
    check(Q.decode_status(0, "1.0", 10, log) ==
          (8, "QEMU-KILLED (signal 15: QEMU was told to terminate)"), "the last signal line")
    check(Q.terminating_signal("no such line\n") == "", "no signal line")
    # The guest's statuses are (b << 1) | 1 of b = 0x20 + status: never 0 or 1.
    for n, (rc, _, code, word) in enumerate(rows[:6]):
        check(rc == ((0x20 + n) << 1) | 1, f"{word}: QEMU exit {rc}")
    check(Q.exit_word(0) == "SUCCESS or SKIP" and Q.exit_word(7) == "TIMEOUT" and
          Q.exit_word(31) == "see docs/exit-codes.md", "exit words")


@case("run.sh labels, QEMU's version, exit statuses of signals, the matrix's setup codes")
def _(_s):
    check(Q.sanitize("a b/c") == "a_b_c" and Q.sanitize(".hidden") == "hidden" and
          Q.sanitize("..x") == ".x" and Q.sanitize("6,sockets=2") == "6_sockets_2", "sanitize")
    check(Q.default_label("hv", "kvm", "q35", "4") == "hv-kvm-q35-smp4" and
          Q.default_label("", "tcg", "pc", "2") == "tcg-pc-smp2", "default label")
    check(Q.parse_version("QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2)\nCopyright")
          == "10.0", "10.0.2")
    check(Q.parse_version("something else") is None, "no version")
    check(Q.older("7.2") and not Q.older("8.1") and not Q.older("10.0") and Q.older("8.0"),
          "against 8.1")
    msg = Q.too_old("q", "/usr/bin/q", "QEMU emulator version 7.2.0 (Debian 1:7.2+dfsg-7)")
    check(msg.startswith("QEMU 7.2 (/usr/bin/q) is too old: ipibench needs 8.1 or later"), msg)
    check(Q.too_old("q", "/q", "QEMU emulator version 8.1.0") is None, "8.1 is enough")
    check("cannot tell the version of q ('q --version' names none)" in Q.too_old("q", "", ""),
          "no version")
    check(J.exit_status(-9) == 137 and J.exit_status(65) == 65, "exit_status")
    check(sorted(Q.SETUP_CODES) == [2, 9, 10, 11, 26, 27, 28, 29, 31], "setup codes")
    check("or at once 2, 9, 10, 11, 26, 27, 28, 29 or 31." in O.USAGE_MATRIX, "matrix help")


if __name__ == "__main__":
    sys.exit(main(CASES))
