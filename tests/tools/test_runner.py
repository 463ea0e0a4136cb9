#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host unit tests of run.sh's logic (host/ipibench/cli.py and its modules),
none of which boots the guest: the QEMU command line of every preset under
every accelerator and machine, the status decoding table, the accelerator
and fallback rules against a stand-in KVM, the option parsers and their
errors, and the boot and matrix drivers end to end against a stand-in QEMU
(a shell script): timeout -k, a second Ctrl-C, streaming, the summary; and
the paused start of --pin and --perf-kvm against a stand-in QEMU that speaks
QMP and a stand-in perf; what run.sh prints of a console (progress lines,
redraws on a terminal, the summary) from a made-up console; --memory's
sizes and minimum; the phase records' checks.
One TAP line per case, "ok - tools: run.sh ..."; test_tools.py runs them too."""
import errno
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from harness import HOST, Fail, check, expect, registry, run_cases, run_cmd, stand_in_tracefs
import synth

from ipibench import readers
from ipibench import jobs as J
from ipibench import options as O
from ipibench.boot import accel as A
from ipibench.boot import console as C
from ipibench.boot import matrix as M
from ipibench.boot import qemu as Q
from ipibench.boot import run as B
from ipibench.exit_codes import EX_NOTHING_RAN, ToolError
from ipibench.kvmhost import pin_perf as K
from ipibench.presets import load_presets
from ipibench.presets import PRESETS as PRESETS_CONF
from ipibench.results import validate as V
from ipibench.results.records import record_problems
from ipibench.results.stats import MIN_BOOTS


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


CASES, case = registry()
RUN = os.path.join(REPO, "run.sh")
PRESETS = load_presets(PRESETS_CONF)


def raises(code, fn, *args, **kw):
    """fn(*args) raises a ToolError or UsageError with code: its message."""
    try:
        fn(*args, **kw)
    except (ToolError, O.UsageError) as e:
        check(e.code == code, f"{fn.__name__}{args}: exit {e.code}, expected {code}: {e.message}")
        return e.message
    raise Fail(f"{fn.__name__}{args}: no error, expected exit {code}")


class FakeKvm:
    """A stand-in for HostKvm: usable or not (unusable: why not), software
    or not; probe refuses what matches."""

    def __init__(self, usable=True, refuse=None, why="kernel doesn't allow setting HyperV VP_INDEX",
                 unusable="/dev/kvm is missing (No such file or directory)", software=None):
        self._usable, self.refuse, self.why, self.probed = usable, refuse, why, []
        self._unusable, self._software = unusable, software

    def usable(self):
        return self._usable

    def unusable(self):
        return None if self._usable else self._unusable

    def software(self):
        return self._software

    def probe(self, model, machine):
        self.probed.append((model, machine))
        return self.why if self.refuse and self.refuse(model) else None


# --- the QEMU command line


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
    check(cmd[-12:] == ["-a", "-device", "x", "-cdrom", "build/ipibench.iso", "-boot", "d", "-S",
                        "-qmp", "unix:/tmp/r/qmp.sock,server=on,wait=off", "-pidfile",
                        "/tmp/r/qemu.pid"] and "-kernel" not in cmd, f"{cmd}")
    cmd = Q.command_line("q", "kvm", "pc", "host", "4", "1G", "", runtime_dir="/tmp/r")
    check(cmd[-3:] == ["-S", "-qmp", "unix:/tmp/r/qmp.sock,server=on,wait=off"], f"{cmd}")
    check(Q.cpu_value("max", "") == "max" and Q.cpu_value("host", "a,b") == "host,a,b", "cpu_value")


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


# --- decoding QEMU's status


@case("run.sh status decoding: every row of docs/exit-codes.md")
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
    for rc, secs, code, what in rows:
        got = Q.decode_status(rc, secs, 300 if rc in (124, 137) else 10)
        check(got == (code, what), f"QEMU exit {rc} after {secs} s: {got}, expected {code} {what}")
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


# --- the accelerator and the fallback rules


def hv_refused(model):
    return "hv-" in model


@case("run.sh --accel auto: KVM when it runs the model, else TCG or exit 31 by the model's flags")
def _(_s):
    x2 = PRESETS["x2apic"]["cpu"]
    kvm = FakeKvm()
    check(A.choose("auto", "", "x2apic", x2, "q35", False, kvm) == ("kvm", "host," + x2, []),
          "a KVM that runs the model")
    check(kvm.probed == [("host," + x2, "q35")], f"probed {kvm.probed}")
    # No /dev/kvm: TCG for what TCG offers as well, without a notice of its own.
    for kvm in (FakeKvm(usable=False), ):
        check(A.choose("auto", "", "x2apic", x2, "pc", False, kvm) ==
              ("tcg-single", "max," + x2, []), "no /dev/kvm, x2apic")
        check(kvm.probed == [], "probed without /dev/kvm")
    # A /dev/kvm that refuses the model: a notice, then TCG; --cpu host,... becomes max,...
    acc, cpu, notes = A.choose("auto", "host,+x2apic", "", "", "q35", False,
                               FakeKvm(refuse=lambda m: True, why="failed to set MSR"))
    check((acc, cpu) == ("tcg-single", "max,+x2apic"), f"{acc} {cpu}")
    check(notes == ["run.sh: /dev/kvm cannot run -cpu host,+x2apic here (failed to set MSR); "
                    "using TCG"], f"{notes}")
    # Flags only KVM offers: exit 31 naming the preset, the flags, why, and the ways on.
    hv = PRESETS["hv"]["cpu"]
    msg = raises(31, A.choose, "auto", "", "hv", hv, "q35", False, FakeKvm(refuse=hv_refused))
    for needle in ("preset hv needs KVM, the only accelerator that offers " + hv,
                   "but /dev/kvm cannot run -cpu host," + hv + " here (kernel doesn't allow",
                   "./run.sh --accel kvm-in-tcg --preset hv,", "--allow-fallback (or --accel tcg)"):
        check(needle in msg, f"lacks {needle!r}: {msg}")
    msg = raises(31, A.choose, "auto", "max,hv-vpindex,-hv-ipi", "", "", "q35", False,
                 FakeKvm(usable=False))
    check(msg.startswith("-cpu max,hv-vpindex,-hv-ipi needs KVM, the only accelerator that "
                         "offers hv-vpindex, but /dev/kvm is missing (No such file or "
                         "directory).") and
          "--preset NAME (the lane boots presets only: ./run.sh list)" in msg, msg)
    # --allow-fallback: TCG with a warning that says what will SKIP.
    acc, cpu, notes = A.choose("auto", "", "kvm-pv", "kvm-pv-ipi=on", "q35", True,
                               FakeKvm(usable=False))
    check((acc, cpu) == ("tcg-single", "max,kvm-pv-ipi=on") and len(notes) == 1 and
          notes[0].startswith("run.sh: warning: /dev/kvm is missing (No such file or "
                              "directory); running preset "
                              "kvm-pv under TCG as --allow-fallback asks: only KVM offers "
                              "kvm-pv-ipi=on, so every backend these add will SKIP"), f"{notes}")


@case("run.sh --accel kvm, tcg, tcg-single, kvm-in-tcg: as asked; never a probe")
def _(_s):
    kvm = FakeKvm(refuse=lambda m: True)
    hv = PRESETS["hv"]["cpu"]
    check(A.choose("kvm", "", "hv", hv, "q35", False, kvm) == ("kvm", "host," + hv, []), "kvm")
    check(A.choose("tcg", "", "hv", hv, "q35", False, kvm) == ("tcg", "max," + hv, []), "tcg")
    check(A.choose("tcg-single", "qemu64", "", "", "pc", False, kvm) ==
          ("tcg-single", "qemu64", []), "tcg-single with --cpu")
    check(A.choose("kvm-in-tcg", "", "x2apic", "x", "q35", False, kvm)[0] == "kvm-in-tcg", "lane")
    check(kvm.probed == [], f"probed {kvm.probed}")
    msg = raises(31, A.choose, "kvm", "", "", "", "q35", False, FakeKvm(usable=False))
    check(msg.startswith("--accel kvm: KVM is not usable here: /dev/kvm is missing (No such "
                         "file or directory); "), msg)
    raises(2, A.choose, "kvmm", "", "", "", "q35", False, kvm)


# --- every kind of host KVM (issue 29 item 5): a stand-in device
# (IPIBENCH_DEV_KVM) and module directory (IPIBENCH_SYSFS) make each here;
# tests/tools/test_run.py runs run.sh on each.


class ClosedKvm(A.HostKvm):
    """A character device that opens with EACCES (or err): a 0660 /dev/kvm
    to a user outside its group, which a test run as root cannot meet."""
    err = errno.EACCES

    def open_device(self, path, flags):
        raise OSError(self.err, os.strerror(self.err), path)


def host_kinds(tmp):
    """name -> HostKvm of each kind of host: no /dev/kvm, one that is not a
    character device, one not accessible, a software KVM (PVM) and a
    hardware KVM (/dev/null stands in for its device: any user opens it)."""
    hw_sys, pvm_sys = os.path.join(tmp, "sys-hw"), os.path.join(tmp, "sys-pvm")
    os.makedirs(os.path.join(hw_sys, "module", "kvm"), exist_ok=True)
    os.makedirs(os.path.join(pvm_sys, "module", "kvm_pvm"), exist_ok=True)
    regular = os.path.join(tmp, "kvm-file")
    open(regular, "w").close()

    def kvm(dev, sysfs=hw_sys, kind=A.HostKvm):
        return kind("qemu-system-x86_64", {"IPIBENCH_DEV_KVM": dev, "IPIBENCH_SYSFS": sysfs})
    return {"missing": kvm(os.path.join(tmp, "no", "kvm")), "not a device": kvm(regular),
            "not accessible": kvm("/dev/null", kind=ClosedKvm),
            "software": kvm("/dev/null", pvm_sys),
            "hardware": kvm("/dev/null")}


@case("run.sh's HostKvm on every kind of host: missing, not a device, not accessible, software, "
       "hardware")
def _(_s):
    with tempfile.TemporaryDirectory() as tmp:
        kinds = host_kinds(tmp)
        reasons = {k: kvm.unusable() for k, kvm in kinds.items()}
        for kind, want in (("missing", f"{tmp}/no/kvm is missing (No such file or directory)"),
                           ("not a device", f"{tmp}/kvm-file is not a character device (it is a "
                                            "regular file)"),
                           ("not accessible", "/dev/null is not accessible (Permission denied)"),
                           ("software", None), ("hardware", None)):
            check(reasons[kind] == want and kinds[kind].usable() == (want is None),
                  f"{kind}: {reasons[kind]!r}")
        check([k for k, kvm in kinds.items() if kvm.software()] == ["software"] and
              kinds["software"].software().startswith("this host's /dev/kvm is PVM (module "
                                                      "kvm_pvm"), "software()")
        os.makedirs(os.path.join(tmp, "kvm-dir"))
        why = A.HostKvm("q", {"IPIBENCH_DEV_KVM": os.path.join(tmp, "kvm-dir")}).unusable()
        check(why.endswith("kvm-dir is not a character device (it is a directory)"), why)
        ClosedKvm.err = errno.ENODEV
        try:
            why = ClosedKvm("q", {"IPIBENCH_DEV_KVM": "/dev/null"}).unusable()
        finally:
            ClosedKvm.err = errno.EACCES
        check(why.startswith("/dev/null is not accessible (No such device: no KVM module"), why)
        check(A.HostKvm("q", {}).path == "/dev/kvm", "the default device")


@case("run.sh --accel kvm where KVM is not usable: exit 31 whatever the kind of host; 29 on "
       "hardware KVM")
def _(_s):
    x2, hv = PRESETS["x2apic"]["cpu"], PRESETS["hv"]["cpu"]
    with tempfile.TemporaryDirectory() as tmp:
        kinds = host_kinds(tmp)
        for kind in ("missing", "not a device", "not accessible"):
            why = kinds[kind].unusable()
            for extras in ((), ("--exits",), ("--pin", "--perf-kvm")):
                msg = raises(31, A.choose, "kvm", "", "x2apic", x2, "q35", False, kinds[kind],
                             extras)
                check(msg.startswith(f"--accel kvm: KVM is not usable here: {why}; ") and
                      msg.endswith("--accel kvm-in-tcg"), f"{kind}: {msg}")
            # --accel auto: a preset that needs KVM says which, x2apic falls back silently.
            msg = raises(31, A.choose, "auto", "", "hv", hv, "q35", False, kinds[kind])
            check(f"but {why}. Under TCG" in msg, f"{kind}: {msg}")
            check(A.choose("auto", "", "x2apic", x2, "q35", False, kinds[kind]) ==
                  ("tcg-single", "max," + x2, []), f"{kind}: auto x2apic")
        # Software KVM: --exits, --pin, --perf-kvm are refused; a plain boot warns.
        pvm = kinds["software"]
        for extras in (["--exits"], ["--pin"], ["--pin", "--perf-kvm", "--exits"]):
            msg = raises(31, A.choose, "kvm", "", "x2apic", x2, "q35", False, pvm, extras)
            check(msg.startswith(f"--accel kvm with {' and '.join(extras)}: this host's /dev/kvm "
                                 "is PVM (module kvm_pvm") and "never a hardware hypervisor's" in
                  msg, msg)
        acc, cpu, notes = A.choose("kvm", "", "x2apic", x2, "q35", False, pvm, [])
        check((acc, cpu) == ("kvm", "host," + x2) and len(notes) == 1 and
              notes[0].startswith("run.sh: warning: this host's /dev/kvm is PVM"), f"{notes}")
        # Hardware KVM: KVM as asked, no probe, no refusal; the extras alone say 29.
        hw = FakeKvm(refuse=lambda m: True)
        check(A.choose("kvm", "", "x2apic", x2, "q35", False, hw, ["--pin", "--exits"]) ==
              ("kvm", "host," + x2, []) and hw.probed == [], "hardware: --accel kvm")
        check(A.choose("kvm", "", "x2apic", x2, "q35", False, kinds["hardware"], ["--exits"]) ==
              ("kvm", "host," + x2, []), "hardware (/dev/null): --accel kvm")
        check(A.choose("auto", "", "hv", hv, "q35", False, FakeKvm())[0] == "kvm", "auto")
        check(K.check_extras("kvm", "", False) is None, "hardware: --pin")
        # run.sh's checks before a boot, on each kind (matrix and ab ask them
        # before their first boot): 31 but on hardware, there 29 without
        # tracefs, none with it.
        empty, tracefs = os.path.join(tmp, "no-tracefs"), stand_in_tracefs(
            os.path.join(tmp, "tracefs"))
        os.makedirs(empty)
        o = O.parse_run(["--accel", "kvm", "--exits"], REPO)
        for kind, trace, code in (("missing", empty, 31), ("not a device", empty, 31),
                                  ("software", tracefs, 31), ("hardware", empty, 29)):
            env = B.Env(REPO, REPO, dict(kinds[kind].environ, IPIBENCH_TRACEFS=trace))
            raises(code, B.check_host, env, o, "x2apic", x2)
        env = B.Env(REPO, REPO, dict(kinds["hardware"].environ, IPIBENCH_TRACEFS=tracefs))
        check(B.check_host(env, o, "x2apic", x2) == "kvm", "hardware with tracefs")


@case("run.sh --pin and --perf-kvm: KVM only (exit 29), unless the tests' switch")
def _(_s):
    msg = raises(29, K.check_extras, "tcg-single", "", False)
    check(msg.startswith("--pin needs KVM (accel is tcg-single): under TCG"), msg)
    msg = raises(29, K.check_extras, "tcg", "1,2", True)
    check(msg.startswith("--pin and --perf-kvm needs KVM (accel is tcg)"), msg)
    check(K.check_extras("tcg", "", False, any_accel=True) is None, "IPIBENCH_PIN_ANY_ACCEL")
    check(K.check_extras("kvm", "", False) is None and K.check_extras("tcg", None, False) is None,
          "nothing asked")


# --- options


@case("run.sh run options: values, flags, --pin forms, -- and --help")
def _(_s):
    o = O.parse_run(["--preset", "hv", "--smp", "6,sockets=2,cores=3", "--cpu", "max",
                     "--machine", "pc", "--memory", "1G", "--append", "", "--accel", "tcg",
                     "--timeout", "0", "--label", "x", "--results-dir", "out/d", "--pin=2-3",
                     "--perf-kvm", "--allow-fallback", "--quiet", "--no-save", "--", "-device",
                     "--bogus"], "/c")
    got = (o.preset, o.smp, o.cpu, o.machine, o.memory, o.append, o.accel, o.timeout, o.label,
           o.results_dir, o.pin, o.perf_kvm, o.allow_fallback, o.quiet, o.save, o.qemu_args)
    check(got == ("hv", "6,sockets=2,cores=3", "max", "pc", "1G", "", "tcg", "0", "x", "/c/out/d",
                  "2-3", True, True, True, False, ["-device", "--bogus"]), f"{got}")
    d = O.parse_run([], "/c")
    check((d.machine, d.memory, d.accel, d.timeout, d.pin, d.save, d.iso) ==
          ("q35", "256M", "auto", "300", None, True, False), "defaults")
    check(O.parse_run(["--pin"], "/").pin == "" and O.parse_run(["--pin="], "/").pin == "",
          "--pin alone: every CPU run.sh may use")
    check(O.parse_run(["--results-dir", "/abs"], "/c").results_dir == "/abs", "absolute dir")
    check(O.parse_run(["--append"], "/").append == "", "--append at the end")
    check(O.parse_run(["--smp", "2", "--smp", "3"], "/").smp == "3", "the last one wins")
    # --help ends the parsing: what follows it is not checked, what precedes it is.
    check(O.parse_run(["--machine", "foo", "--help", "--bogus"], "/").help, "--help")
    raises(2, O.parse_run, ["--bogus", "--help"], "/")


@case("run.sh run options: every bad one exits 2 with its message")
def _(_s):
    for argv, msg, usage in ((["--bogus"], "unknown option '--bogus'", True),
                             (["--smp"], "--smp needs a value", False),
                             (["--preset", ""], "--preset needs a value", False),
                             (["--machine", "foo"], "--machine takes pc, q35, microvm or "
                              "microvm-noacpi, not 'foo'", False),
                             (["--machine", "microvm", "--iso"], "--iso boots from a CD drive, "
                              "which microvm has none of: --machine pc or q35", False),
                             (["--pvh", "--iso"], "--iso boots the ISO's multiboot image; --pvh "
                              "needs -kernel", False),
                             (["--timeout", "12x"], "--timeout takes whole seconds, not '12x'",
                              False),
                             (["--iso", "--append", "x"], "--iso boots with the ISO's own command "
                              "line; --append needs -kernel", False),
                             (["--accel", "hvf"], "--accel takes kvm, tcg, tcg-single, kvm-in-tcg "
                              "or auto, not 'hvf'", False)):
        try:
            O.parse_run(argv, "/")
            raise Fail(f"{argv} accepted")
        except O.UsageError as e:
            check(e.code == 2 and e.message == msg, f"{argv}: {e.code} {e.message!r}")
            check((e.usage == O.USAGE_RUN) == usage, f"{argv}: usage {e.usage is not None}")
    # Every option the parser takes is in the help text, and the other way round.
    listed = {w.split("[")[0] for line in O.USAGE_RUN.splitlines() for w in line.split()
              if w.startswith("--") and line.startswith("  -")}
    taken = set(O.RUN_VALUES) | set(O.RUN_FLAGS) | {"--append", "--pin", "--help", "--"}
    check(listed | {"--"} == taken, f"help {sorted(listed)}, parser {sorted(taken)}")


@case("run.sh matrix options: lists, counts, what every boot is passed, and the errors")
def _(_s):
    o = O.parse_matrix(["--presets", "xapic,x2apic,", "--smp", "2,4", "--boots", "3", "--label",
                        "l", "--accel", "tcg", "--machine", "pc", "--append", "plan=boot",
                        "--memory", "1G", "--timeout", "60", "--allow-fallback", "--pin=1",
                        "--perf-kvm", "--pvh", "--exits", "--require-apicv", "--verbose"])
    check((o.names, o.counts, o.boots, o.label, o.accel, o.machine, o.allow_fallback, o.verbose)
          == (["xapic", "x2apic"], ["2", "4"], "3", "l", "tcg", "pc", True, True), f"{vars(o)}")
    check(o.passed == ["--accel", "tcg", "--machine", "pc", "--append", "plan=boot", "--memory",
                       "1G", "--timeout", "60", "--allow-fallback", "--pin=1", "--perf-kvm",
                       "--pvh", "--exits", "--require-apicv"], f"{o.passed}")
    # What a boot makes of them is run's own parse: --exits and --require-apicv on.
    each = O.parse_run(M.boot_argv("x2apic", "2", "c", "/d", False, o.passed), "/")
    check(each.exits and each.require_apicv and each.pvh and each.pin == "1", f"{vars(each)}")
    check(O.parse_matrix(["--presets", "x"]).boots == "5", "5 boots by default")
    check(O.split_list("") == [] and O.split_list("a,,b") == ["a", "", "b"] and
          O.split_list(",a,") == ["", "a"], "split as bash's read -a")
    for argv, msg in ((["--presets", "x", "--boots", "0"], "matrix: --boots takes a positive "
                       "count, not '0'"),
                      (["--presets", "x", "--boots", "00"], "count, not '00'"),
                      (["--presets", "x", "--boots", "-1"], "count, not '-1'"),
                      (["--presets", "x", "--smp", "2,,4"], "matrix: --smp takes vCPU counts, "
                       "not ''"),
                      (["--presets", "x", "--smp", "two"], "matrix: --smp 'two': cpus takes "
                       "a positive count, not 'two'"),
                      (["--presets", "x", "--smp", "2", "--accel", "kvm-in-tcg"],
                       "matrix: --accel kvm-in-tcg boots each preset at its own -smp (the lane "
                       "takes it from host/ipibench/presets.conf): drop --smp"),
                      (["--presets"], "matrix: --presets needs a value"),
                      (["--boots", "2"], "matrix: --presets is required"),
                      (["--presets", "x", "--frob"], "matrix: unknown option '--frob'")):
        msg_got = raises(2, O.parse_matrix, argv)
        check(msg_got.endswith(msg), f"{argv}: {msg_got!r}")
    check(O.parse_matrix(["--help", "--frob"]).help, "--help")


@case("run.sh matrix --smp: QEMU topologies checked as QEMU fills them in, ';' lists, the old "
      "counts, folder names")
def _(_s):
    # Hand vectors: each -smp value, what QEMU boots (cpus, maxcpus) and the folder.
    for spec, cpus, maxcpus, folder in (
            ("8", 8, 8, "smp8"),
            ("cpus=8", 8, 8, "smp8"),
            ("8,sockets=2,cores=2,threads=2", 8, 8, "smp8-s2c2t2"),
            ("sockets=2,cores=3", 6, 6, "smp6-s2c3"),   # no count: the product
            ("8,sockets=2", 8, 8, "smp8-s2"),           # QEMU fills in cores=4
            ("8,threads=2", 8, 8, "smp8-t2"),
            ("8,sockets=2,dies=2,cores=2", 8, 8, "smp8-s2d2c2"),  # threads=1 filled in
            ("4,modules=2,cores=2", 4, 4, "smp4-m2c2"),
            ("4,maxcpus=8", 4, 8, "smp4-max8"),
            ("4,sockets=2,cores=2,threads=2,maxcpus=8", 4, 8, "smp4-s2c2t2-max8"),
            ("threads=2,cores=2,sockets=2", 8, 8, "smp8-s2c2t2")):  # any order, one name
        t = O.smp_topology(spec)
        check((t["cpus"], t["maxcpus"]) == (cpus, maxcpus), f"{spec}: {t}")
        check(O.smp_folder(spec) == folder, f"{spec}: {O.smp_folder(spec)}")
    for spec, msg in (
            ("8,sockets=2,cores=2,threads=1", "sockets 2 x cores 2 x threads 1 = 4 CPUs, but "
             "maxcpus is 8"),
            ("6,sockets=2,cores=2,threads=2", "sockets 2 x cores 2 x threads 2 = 8 CPUs, but "
             "maxcpus is 6"),
            ("8,sockets=3", "sockets 3 does not divide maxcpus 8"),
            ("8,threads=3", "threads 3 does not divide maxcpus 8"),
            ("8,maxcpus=4", "8 CPUs at boot, above maxcpus 4"),
            ("0", "cpus takes a positive count, not '0'"),
            ("08", "cpus takes a positive count, not '08'"),
            ("8,sockets=0", "sockets takes a positive count, not '0'"),
            ("8,cores=", "cores takes a positive count, not ''"),
            ("8,cores=-2", "cores takes a positive count, not '-2'"),
            ("8,clusters=2", "unknown key 'clusters' (x86 takes cpus, maxcpus, sockets, dies, "
             "modules, cores, threads)"),
            ("8,cpus=8", "cpus given twice"),
            ("8,sockets=2,sockets=2", "sockets given twice"),
            ("2,4,sockets=2", "'4' is not key=value (only the first field may be a bare count; "
             "separate -smp values with ';')")):
        got = raises(2, O.smp_topology, spec)
        check(got.startswith(f"matrix: --smp '{spec}': {msg}"), f"{spec}: {got!r}")
    # The rule: ';' always separates; without one, digits and commas are counts.
    for text, items in (("1,2,4", ["1", "2", "4"]), ("2,4,", ["2", "4"]), ("8", ["8"]),
                        ("8,sockets=2,cores=2,threads=2", ["8,sockets=2,cores=2,threads=2"]),
                        ("4;8,sockets=2,cores=2,threads=2",
                         ["4", "8,sockets=2,cores=2,threads=2"]),
                        ("4;8;", ["4", "8"]), ("2;sockets=2,cores=2", ["2", "sockets=2,cores=2"])):
        check(O.split_smp(text) == items, f"{text}: {O.split_smp(text)}")
    for text, msg in (("2,,4", "matrix: --smp takes vCPU counts, not ''"),
                      ("4;;8", "matrix: --smp '4;;8': an empty -smp value between ';'"),
                      ("2,4;8", "matrix: --smp '2,4': '4' is not key=value"),
                      ("4;4", "matrix: --smp '4;4': '4' and '4' are both smp4"),
                      ("8;cpus=8", "'8' and 'cpus=8' are both smp8"),
                      ("4;8,sockets=3", "matrix: --smp '8,sockets=3': sockets 3 does not divide")):
        got = raises(2, O.split_smp, text)
        check(got.startswith(msg) or msg in got, f"{text}: {got!r}")
    o = O.parse_matrix(["--presets", "x2apic,xapic", "--smp", "2;8,sockets=2,cores=2,threads=2"])
    check([c for _, _, c in M.configurations(o, PRESETS)] ==
          ["x2apic-smp2", "x2apic-smp8-s2c2t2", "xapic-smp2", "xapic-smp8-s2c2t2"],
          f"{M.configurations(o, PRESETS)}")
    check([c for _, _, c in M.configurations(O.parse_matrix(["--presets", "hv-xmm-4,x2apic"]),
                                              PRESETS)] == ["hv-xmm-4-smp4", "x2apic-smp2"],
          "each preset's own -smp")
    check("--smp" in M.boot_argv("x", "8,sockets=2,cores=2,threads=2", "c", "/d", False, []) and
          M.boot_argv("x", "8,sockets=2,cores=2,threads=2", "c", "/d", False, [])[3] ==
          "8,sockets=2,cores=2,threads=2", "the -smp value goes to the boot whole")


# --- small rules


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


# --- what run.sh prints of a console (boot/console.py)


def rec(kind, **kw):
    return json.dumps(dict({"record": kind, "schema": 1}, **kw), separators=(",", ":"))


def res(backend, bench, metric, status="SUCCESS", reason=None, p50=100, variant="none", n=1):
    r = {"bench": bench, "metric": metric, "variant": variant, "backend": backend,
         "status": status, "ntargets": n}
    if status == "SUCCESS":
        r["cycles"], r["ns"] = {"p50": p50}, {"p50": p50 // 2}
    else:
        r["reason"] = reason
    return rec("result", **r)


# The guest's reason for a backend that needs Hyper-V, as long as the real one.
HV = ('no Hyper-V interface: QEMU TCG (CPUID 0x40000000 "TCGTCGTCGTCG") emulates none; boot '
      'with -accel kvm and hv-* flags in -cpu')
# One-way figures the TSCs cannot time (bench/point.c): withheld, not SKIPped.
SKEW = "one-way not reported: TSC skew bound 650 cycles (CPU 0 to CPU 1) is not under a tenth " \
    "of the p50 {}"
# A console as the guest prints it: bring-up, the suite (a failure, SKIPs),
# five units (a failure, partial SKIPs, withheld one-way figures, two
# refused backends), the view.
CONSOLE = [
    "ipibench test", "smp: CPU 0 APIC ID 0 online (BSP)", "smp: CPU 1 APIC ID 1 online",
    "smp: 2 of 2 CPUs online", "check: delivery correctness on 2 CPUs",
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    "ok 1 - xapic: switch all 2 CPUs to xapic mode, no test vector left",
    "not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it", "#   and more",
    "ok 3 - xapic: sends from an AP # SKIP one CPU",
    f"ok 4 - hv-icr: every check # SKIP {HV}",
    f"ok 5 - hv-ipi: every check # SKIP {HV}",
    "1..5", "check: 1 passed, 1 failed, 3 skipped",
    rec("check", backend="all", passed=1, failed=1, skipped=3),
    "bench         metric          variant          backend        cpus         p50 cyc",
    rec("phase", index=1, of=5, backend="none", bench="dry-run"),
    "dry-run       loop            none             none           0>none            26",
    res("none", "dry-run", "loop", p50=26),
    rec("phase", index=2, of=5, backend="xapic", bench="single"),
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    res("xapic", "single", "round-trip", p50=4000),
    res("xapic", "single", "one-way", "SKIP", SKEW.format(2910)),
    "bench: FAILURE: single on xapic: CPU 1 lost it",
    res("xapic", "single", "round-trip", "FAILURE", "CPU 1 lost it"),
    res("xapic", "single", "all", "ERROR", "the harness broke"),
    rec("phase", index=3, of=5, backend="xapic", bench="single-halt"),
    res("xapic", "single-halt", "round-trip", p50=5000),
    res("xapic", "single-halt", "one-way", "SKIP", SKEW.format(3520)),
    res("xapic", "single-halt", "hv-path", "SKIP", HV),
    rec("phase", index=4, of=5, backend="hv-icr", bench="all"),
    res("hv-icr", "single", "-", "SKIP", HV),
    res("hv-icr", "single-halt", "-", "SKIP", HV),
    rec("phase", index=5, of=5, backend="hv-ipi", bench="all"),
    res("hv-ipi", "single", "-", "SKIP", HV),
    "view: kvm-unit-tests x86/vmexit.c names, cycles per iteration (mean)",
    "test        xapic", "ipi_halt     5000", "note: ipi_halt here is CPU 0 -> CPU 1",
    rec("end", status="FAILURE", results=9), "ipibench: status FAILURE",
]
# What a person reads of it, a line each 10 ms.
SHOWN = f"""ipibench test
smp: 2 of 2 CPUs online
not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it
#   and more
check xapic: 1 passed, 1 FAILED, 1 skipped (one CPU) ... 0.06 s
check hv-icr, hv-ipi ... SKIP: {HV}
[1/5] dry-run ... 0.03 s
bench: FAILURE: single on xapic: CPU 1 lost it
[2/5] xapic single ... 0.07 s, 1 FAILURE, 1 ERROR; 1 one-way figure withheld (TSC skew)
    withheld: TSC skew bound 650 cycles (CPU 0 to CPU 1) is not under a tenth of the p50 2910
    ERROR: single all: the harness broke
[3/5] xapic single-halt ... 0.04 s, 1 of 2 SKIP: no Hyper-V interface (see above); 1 one-way \
figure withheld (TSC skew)
[4-5/5] hv-icr, hv-ipi ... SKIP: no Hyper-V interface (see above)
ipibench: status FAILURE
"""


def follow(lines, tty=False, step=0.01, upto=None):
    """A Console fed lines[:upto] step seconds apart: (it, what it wrote)."""
    out = []
    c = C.Console(out.append, tty)
    for i, line in enumerate(lines[:upto]):
        c.line(line, i * step)
        c.tick(i * step + step / 2)
    return c, out


def on_screen(text):
    """What a terminal shows of text: each line as its last redraw left it."""
    return "\n".join(line.rsplit("\r\033[K", 1)[-1] for line in text.split("\n"))


@case("run.sh console: the boot facts, a progress line per unit and per suite label, not the rest")
def _(_s):
    c, out = follow(CONSOLE)
    c.finish(len(CONSOLE) * 0.01)
    got = "".join(out)
    check(got == SHOWN, f"printed:\n{got}")
    check("\r" not in got and c.phases == 5, "carriage returns, or phases miscounted")
    # A failure the console already showed is not repeated; a SKIP's reason is
    # said in full once, then by its head; withheld one-way figures are counted
    # apart from the SKIPs, their cause said once, whatever its figures.
    check(got.count("CPU 1 lost it") == 1 and got.count(HV) == 1 and "p50 3520" not in got,
          got)
    # Without times (the lane's log, read afterwards) the same lines, untimed.
    out = []
    C.replay("\n".join(CONSOLE), out.append).finish()
    untimed = SHOWN
    for t in (" 0.06 s", " 0.03 s", " 0.04 s,", " 0.07 s,"):
        untimed = untimed.replace(t, "")
    check("".join(out) == untimed, "".join(out))
    # Whole SKIPs of one cause share a line only when they come together.
    _, out = follow(CONSOLE, step=0.2)
    check("[4/5] hv-icr ... SKIP: no Hyper-V interface (see above)\n[5/5] hv-ipi ... SKIP: no "
          "Hyper-V interface (see above)\n" in "".join(out), "".join(out))


@case("run.sh console on a terminal: the unit in flight redrawn in place, the same lines left")
def _(_s):
    c, out = follow(CONSOLE, tty=True)
    c.finish(len(CONSOLE) * 0.01)
    got = "".join(out)
    check("\r\033[K[2/5] xapic single ... " in got and "check xapic: 1 passed so far ..." in got,
          f"no redraw: {got!r}")
    check(on_screen(got) == SHOWN, f"on screen:\n{on_screen(got)}")
    # Redraws come a few times a second, not with every console line.
    many = ["check: delivery correctness on 2 CPUs"] + \
        [f"ok {i} - xapic: CPU 0 -> CPU 1, vector {i}" for i in range(1, 1001)]
    _, out = follow(many, tty=True, step=0.001)
    check("".join(out).count("\r") < 10, f"{''.join(out).count(chr(13))} redraws")


@case("run.sh console: a boot cut short says where it was (timeout's message)")
def _(_s):
    c, out = follow(CONSOLE, upto=22)  # inside [2/5] xapic single, opened at 0.19 s
    check(c.last_progress(3.29) == "last progress: [2/5] xapic single ... 3.1 s",
          c.last_progress(3.29))
    c.finish(3.29, "TIMEOUT")
    check("".join(out).endswith("[2/5] xapic single ... 3.1 s, stopped: TIMEOUT\n"),
          "".join(out))
    c, _ = follow(CONSOLE, upto=8)  # in the suite
    check(c.last_progress() == "last progress: check xapic: 1 passed so far ...",
          c.last_progress())
    c, _ = follow(CONSOLE[:3] + ["qemu-system-x86_64: terminating on signal 15 from pid 9"])
    check(c.last_progress() == "the guest's last line: 'smp: CPU 1 APIC ID 1 online'",
          c.last_progress())
    check(C.Console().last_progress() == "the guest printed nothing", "empty console")
    log = "ipibench test\nqemu-system-x86_64: -device x: 'x' is not a valid device model name\n"
    check(B.qemu_own_line(log, "qemu-system-x86_64") ==
          "qemu-system-x86_64: -device x: 'x' is not a valid device model name", "QEMU's line")
    check(B.qemu_own_line("timeout: failed to run command 'q'\n", "/x/q") ==
          "timeout: failed to run command 'q'", "the last line otherwise")


SUMMARY_RECORDS = [
    {"record": "env", "cpus": {"count": 4}, "tsc": {"khz": 2000000, "source": "CPUID 0x15"},
     "hypervisor": {"vendor": "KVMKVMKVM"}, "harness_cycles": 30,
     "trust": {"warnings": [{"id": "rdtsc-exits", "text": "RDTSC exits"}]}},
    {"record": "check", "backend": "all", "passed": 90, "failed": 1, "skipped": 2},
] + [json.loads(r) for r in (
    res("x2apic", "self", "send-to-handler", p50=1500, variant="sti-nop"),
    res("x2apic", "self", "send-to-handler", p50=1400, variant="icr-sti-nop"),
    res("x2apic", "send-cost", "send", p50=416),
    res("x2apic", "single", "round-trip", p50=2600),
    res("x2apic", "single-halt", "round-trip", p50=2700),
    res("x2apic", "broadcast", "all-ack", p50=9000, variant="loop", n=3),
    res("x2apic", "broadcast", "all-ack", p50=6000, variant="shorthand", n=3),
    res("x2apic", "broadcast", "all-ack", p50=3000, variant="shorthand", n=1),
    res("x2apic", "flush", "crossover-pages", p50=7000, variant="8p", n=3),
    res("x2apic", "flush", "crossover-pages", p50=7000, variant="1p", n=1),
    res("hv-ipi", "send-cost", "send", p50=900),
    res("hv-ipi", "single", "round-trip", "FAILURE", "CPU 3 lost it"),
    res("hv-ipi", "flush", "crossover-pages", "SKIP", "native stays cheaper", n=3),
    res("kvm-pv-ipi", "single", "-", "SKIP", "no KVM PV interface"),
    res("hv-icr", "single", "-", "SKIP", HV),
    res("hv-vapic", "single", "-", "SKIP", "no Hyper-V interface"),
)] + [{"record": "end", "status": "FAILURE", "results": 16}]


@case("run.sh summary: headline p50s in cycles and ns, warnings, correctness, in 80 columns")
def _(_s):
    lines = C.summary(SUMMARY_RECORDS, {"warnings": [{"id": "vcpus", "text": "more vCPUs"},
                                                     {"id": "x", "text": "RDTSC exits"}]},
                      ["xapic: CPU 0 -> CPU 1: lost it"])
    text = "\n".join(lines)
    row = lambda *cells: "".join(f"{c:>10}" for c in cells)  # noqa: E731
    for want in ("summary: FAILURE; 4 CPUs, hypervisor KVMKVMKVM, TSC 2000000 kHz (CPUID 0x15), "
                 "harness 30 cycles".split("; ")[0], "warning: RDTSC exits", "warning: more vCPUs",
                 "x2apic         cyc" + row(1500, 416, 2600, 2700, 6000, "8p"),
                 "               ns " + row(750, 208, 1300, 1350, 3000),
                 "hv-ipi         cyc" + row("-", 900, "FAIL", "-", "-", "never"),
                 "skipped: kvm-pv-ipi: no KVM PV interface",
                 "skipped: hv-icr: no Hyper-V interface: QEMU TCG",
                 "skipped: hv-vapic: no Hyper-V interface",
                 "correctness: check all: 90 passed, 1 failed, 2 skipped; benchmark records: 10 "
                 "SUCCESS, 4 SKIP, 1 FAILURE".split("; ")[0],
                 "FAILURE: single round-trip on hv-ipi: CPU 3 lost it",
                 "not ok: xapic: CPU 0 -> CPU 1: lost it"):
        check(want in text, f"summary lacks {want!r}:\n{text}")
    check(text.count("RDTSC exits") == 1, "a warning twice")
    check(all(len(line) < C.WIDTH for line in lines) and len(lines) < 30,
          f"{len(lines)} lines, widest {max(map(len, lines))}")
    # No warnings field anywhere (older guests, no results.json): none printed.
    plain = [r for r in SUMMARY_RECORDS if r["record"] != "env"] + [{"record": "env"}]
    check(not any(line.startswith("warning:") for line in C.summary(plain)), "warning")
    check(C.warnings_of({"warnings": ["a", {"id": "b"}, 3]}, {"trust": {"warnings": "x"}})
          == ["a", "b"], "warnings_of")
    # A condition guest and host both saw is said once, in the guest's words.
    check(C.warnings_of({"trust": {"warnings": [{"id": "tcg", "text": "TCG (guest)"}]}},
                        {"warnings": [{"id": "tcg", "text": "TCG (host)"}]}) == ["TCG (guest)"],
          "one condition twice")
    check(C.summary(SUMMARY_RECORDS, {"accel": "kvm"})[0].startswith(
        "summary: FAILURE; 4 CPUs, accel kvm, TSC"), "accel")
    many = C.summary([{"record": "result", "backend": "x", "bench": "single", "status": "ERROR",
                       "reason": f"r{i}"} for i in range(9)], most_failures=5)
    check(many[-2] == "... 4 more in console.log" and many[-1].startswith("proved: "),
          "\n".join(many[-2:]))


@case("run.sh summary of a TCG run that SKIPs: each condition once, what it proved, why, next")
def _(_s):
    tsc = "no invariant TSC (CPUID 0x80000007 EDX[8]) and no kvmclock TSC-stable flag"
    env = {"record": "env", "cpus": {"count": 4}, "tsc": {"khz": 2000000, "source": "PIT"},
           "trust": {"warnings": [{"id": "tcg", "text": "QEMU TCG emulates every instruction: "
                                   "only behaviour counts"}, {"id": "tsc-unstable", "text": tsc}]}}
    kvm = "no KVM PV interface: QEMU TCG has none; boot with -accel kvm and kvm-pv-ipi=on"
    records = [env, {"record": "check", "backend": "all", "passed": 48, "failed": 0,
                     "skipped": 2}] + [json.loads(r) for r in (
        res("x2apic", "single", "round-trip", p50=2600),
        res("x2apic", "single", "one-way", "SKIP", SKEW.format(2600)),
        res("x2apic", "single-halt", "one-way", "SKIP", SKEW.format(2900)),
        res("xapic-nmi", "send-cost", "send", p50=500),
        res("xapic-nmi", "single", "round-trip", "SKIP", "an NMI takes no EOI: nothing to order"),
        res("hv-icr", "single", "-", "SKIP", HV), res("hv-ipi", "single", "-", "SKIP", HV),
        res("kvm-pv-ipi", "single", "-", "SKIP", kvm))] + [{"record": "end", "status": "SKIP"}]
    suite = C.suite_labels("ok 1 - x2apic: self on CPU 0, vector 0x41\n"
                           "ok 2 - xapic-nmi: CPU 0 -> CPU 1, NMI\n"
                           "ok 3 - x2apic (again): CPU 0 -> set {0,2-3}, vector 0x42\n"
                           f"ok 4 - hv-icr: every check # SKIP {HV}\n")
    check(suite == {"x2apic": {"delivery": [2, 0, 0, []]}, "xapic-nmi": {"delivery": [1, 0, 0, []]},
                    "hv-icr": {"backend": [0, 0, 1, [HV]]}}, f"{suite}")
    lines = C.summary(records, {"accel": "tcg-single", "warnings": [
        {"id": "tcg", "text": "QEMU TCG: every instruction emulated"}]}, said={HV},
        suite=suite, saved=True)
    text = "\n".join(lines)
    flat = " ".join(line.strip() for line in lines)
    for want in ("summary: finished, status SKIP (see the end); 4 CPUs, accel tcg-single",
                 f"warning: {tsc}",
                 "skipped: hv-icr, hv-ipi: no Hyper-V interface (see above)",
                 f"skipped: kvm-pv-ipi: {kvm}",
                 "withheld: 2 one-way figures (TSC skew: TSC skew bound 650 cycles",
                 "benchmark records: 2 SUCCESS, 4 SKIP",
                 "proved: on 2 backends every IPI of 3 delivery checks reached exactly the CPUs "
                 "it was sent to, once each; 1 backend SKIPped every check (above); figures are "
                 "emulated (QEMU TCG emulates every instruction): behaviour only, not speed",
                 "why SKIP, exit 0: nothing failed; what could not run is the normal outcome here "
                 "(reasons above): 3 backends under TCG; 3 figures in this configuration",
                 "next: on a KVM host, ./run.sh --accel kvm --preset hv (or kvm-pv; ./run.sh "
                 "list); here, KVM nested in TCG: ./run.sh --accel kvm-in-tcg --preset hv",
                 "./run.sh report DIR (plots), ./run.sh compare DIR OTHER"):
        check(want in flat, f"summary lacks {want!r}:\n{text}")
    # Each condition once: TCG in the closing words alone (the guest's warning
    # and the host's are one), the TSC's warning, the Hyper-V reason by its head.
    check(flat.count("emulate") == 2 and flat.count("invariant TSC") == 1 and HV not in flat and
          "SKIP; " not in flat, text)
    check(all(len(line) < C.WIDTH for line in lines), f"widest {max(map(len, lines))}")
    # The withheld figures' cause, once the console said it, by its name alone.
    again = C.summary(records, said={HV, "withheld: TSC skew"}, suite=suite)
    check("withheld: 2 one-way figures (TSC skew, see above)" in again and
          "--no-save kept none" in " ".join(again), "\n".join(again))
    # Not TCG: no TCG words, and its skips are this configuration's, not TCG's.
    kvm_run = [dict(env, trust={})] + records[1:]
    text = " ".join(line.strip() for line in C.summary(kvm_run, {"accel": "kvm"}, suite=suite))
    check("under TCG" not in text and "emulated" not in text and "(reasons above): 3 backends "
          "and 3 figures in this configuration" in text, text)
    # Not TCG and nothing skipped: no TCG words, no SKIP line; SUCCESS.
    ok = [dict(env, trust={})] + records[1:3] + [{"record": "end", "status": "SUCCESS"}]
    text = "\n".join(C.summary(ok, {"accel": "kvm"}, suite=suite))
    check("emulated" not in text and "why SKIP" not in text and "summary: finished, status "
          "SUCCESS" in text and "--accel kvm " not in text, text)
    # A failing check: the proof says so, by kind; no next steps for a run that failed.
    bad = [env, {"record": "check", "backend": "all", "passed": 47, "failed": 1, "skipped": 0},
           {"record": "end", "status": "FAILURE"}]
    text = " ".join(line.strip() for line in C.summary(bad, suite={"x2apic": {
        "delivery": [40, 0, 0, []], "wake": [7, 1, 0, []]}}))
    check("proved: 1 of 48 checks FAILED (1 wake-from-HLT), on x2apic (the not ok lines above "
          "say how)" in text and "next:" not in text and "summary: FAILURE;" in text, text)
    # run.sh's last line: an exit 0 in words, the rest as decoded.
    check(C.closing("SKIP", 0, 67) == "done, nothing failed (guest status SKIP, exit 0)",
          C.closing("SKIP", 0, 67))
    check(C.closing("SUCCESS", 0, 65).endswith("(guest status SUCCESS, exit 0)") and
          C.closing("FAILURE", 4, 71) == "FAILURE (QEMU exit 71)" and
          C.closing("SUCCESS", 32, 65) == "SUCCESS (QEMU exit 65)", "closing")


# The suite on one CPU as suite/delivery.c names its lines: every cross-CPU
# check SKIPs; then the Hyper-V flush checks, which send no IPI.
ONE_CPU_SUITE = "\n".join([
    "ok 1 - xapic: switch all 1 CPUs to xapic mode, no test vector left",
    "ok 2 - xapic: self on CPU 0, vector 0x41", "ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42",
    "ok 4 - xapic: CPU 0 -> all-but-self, vector 0x43",
    "ok 5 - xapic: CPU 0 -> all-including-self, vector 0x44",
    "ok 6 - xapic: CPU 0 -> set {0}, vector 0x45", "ok 7 - xapic: sends from an AP # SKIP one CPU",
    "ok 8 - xapic: TPR 0x60 holds vector 0x65 on CPU 0 (self-IPI on CPU 0) until TPR drops",
    "ok 9 - xapic: IF=0 holds vector 0x46 on CPU 0 (self-IPI on CPU 0) until STI",
    "ok 10 - xapic: CPU 0 wakes CPU 0 from HLT after 2000 us idle, 5 times, none lost or late "
    "# SKIP one CPU",
    "ok 11 - x2apic-nmi: switch all 1 CPUs to x2apic mode, no test vector left",
    "ok 12 - x2apic-nmi: self on CPU 0, NMI",
    "ok 13 - x2apic-nmi: an NMI sent to itself by CPU 0 is taken through IF=0",
    "ok 14 - x2apic-nmi: an NMI held while in the handler # SKIP one CPU",
    f"ok 15 - hv-icr: every check # SKIP {HV}",
    "ok 16 - hv-flush: HvCallFlushVirtualAddressSpace (slow), CPU 0 -> CPUs {0}",
    "ok 17 - hv-flush: HvCallFlushVirtualAddressList (slow), 2 pages, CPU 0 -> CPUs {0}",
    "ok 18 - hv-flush-xmm: HvCallFlushVirtualAddressSpace (XMM-fast), CPU 0 -> CPUs {0}",
])


@case("run.sh summary proved: delivery checks counted apart, flush labels no backend, "
      "backends checked in part named")
def _(_s):
    suite = C.suite_labels(ONE_CPU_SUITE)
    check({b: {k: n[:3] for k, n in v.items()} for b, v in suite.items()} == {
        "xapic": {"switch": [1, 0, 0], "delivery": [5, 0, 1], "masking": [2, 0, 0],
                  "wake": [0, 0, 1]},
        "x2apic-nmi": {"switch": [1, 0, 0], "delivery": [1, 0, 0], "nmi": [1, 0, 1]},
        "hv-icr": {"backend": [0, 0, 1]}, "hv-flush": {"flush": [2, 0, 0]},
        "hv-flush-xmm": {"flush": [1, 0, 0]}}, f"{suite}")
    text = C.proved(suite, [], False)
    check(text == "proved: on 2 backends every IPI of 6 delivery checks reached exactly the "
          "CPUs it was sent to, once each; also passed: 2 mode-switch, 2 TPR/IF=0 masking, 1 "
          "NMI masking checks; 3 flush checks passed (hv-flush, hv-flush-xmm: each "
          "flush completed, and no target read through a stale translation after it); "
          "xapic: 8 passed, 2 skipped (one CPU); "
          "x2apic-nmi: 3 passed, 1 skipped (one CPU); 1 backend SKIPped every check (above)",
          text)
    # A failure says of which kind; the check record alone (no TAP lines) claims no more
    # than that every check it ran passed.
    bad = C.suite_labels(ONE_CPU_SUITE.replace("ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42",
                                               "not ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42: "
                                               "CPU 0 counted it twice"))
    check(C.proved(bad, [], False) == "proved: 1 of 14 checks FAILED (1 delivery), on xapic "
          "(the not ok lines above say how)", C.proved(bad, [], False))
    check(C.proved({}, [{"record": "check", "passed": 9, "failed": 0}], False) ==
          "proved: passed every correctness check it ran (9 checks: delivery, TPR/IF=0 "
          "masking, wake from HLT, mode switch)", C.proved({}, [{"passed": 9}], False))
    # Why SKIP: TCG named only for the skips that are TCG's.
    why = C.why_skip({}, [], [], True, suite)
    check(why == "why SKIP, exit 0: nothing failed; what could not run is the normal outcome "
          "here (reasons above): 1 backend under TCG; 3 checks in this configuration", why)
    one = {b: v for b, v in suite.items() if b != "hv-icr"}
    check("under TCG" not in C.why_skip({}, [], [], True, one), C.why_skip({}, [], [], True, one))


@case("run.sh console and summary: SKIP reasons grouped by the whole reason, a repeat of "
      "the same one shortened, another detail said in full")
def _(_s):
    # Of one head and one shape (its figures aside), but two different bits.
    vapic = "no Hyper-V feature: CPUID 0x40000003 EAX[4] is 0"
    ipi = "no Hyper-V feature: CPUID 0x40000003 EAX[11] is 0"
    lines = [rec("phase", index=1, of=3, backend="hv-icr", bench="single"),
             res("hv-icr", "single", "round-trip", p50=10),
             res("hv-icr", "single", "hv-path", "SKIP", vapic),
             rec("phase", index=2, of=3, backend="hv-ipi", bench="single"),
             res("hv-ipi", "single", "round-trip", p50=10),
             res("hv-ipi", "single", "hv-path", "SKIP", ipi),
             rec("phase", index=3, of=3, backend="hv-icr", bench="send-cost"),
             res("hv-icr", "send-cost", "send", p50=10),
             res("hv-icr", "send-cost", "hv-path", "SKIP", vapic),
             rec("end", status="SKIP", results=6)]
    c, out = follow(lines)
    c.finish(1)
    got = "".join(out)
    check(f"    SKIP: {vapic}\n" in got and f"    SKIP: {ipi}\n" in got and
          "[3/3] hv-icr send-cost ... 0.03 s, 1 of 2 SKIP: no Hyper-V feature (see above)"
          in got, got)
    # The summary: one line per reason, a reason said before by its head.
    kvm = "no KVM PV interface: kvm-pv-ipi is off in -cpu"
    recs = [json.loads(res(b, "single", "-", "SKIP", why)) for b, why in
            (("hv-icr", vapic), ("hv-ipi", ipi), ("hv-ipi-ex", ipi), ("kvm-pv-ipi", kvm))]
    flat = " ".join(x.strip() for x in C.summary(recs, said={vapic}))
    check("skipped: hv-icr: no Hyper-V feature (see above)" in flat and
          f"skipped: hv-ipi, hv-ipi-ex: {ipi}" in flat and f"skipped: kvm-pv-ipi: {kvm}" in
          flat, flat)


@case("run.sh console: trust warnings and a SKIP or SUCCESS status left to the summary; "
      "QEMU's topoext warning explained")
def _(_s):
    ht = ("qemu-system-x86_64: warning: This family of AMD CPU doesn't support "
          "hyperthreading(2). Please configure -smp options properly or try enabling topoext "
          "feature.")
    _, out = follow([ht, "ipibench test", "warning: tcg: QEMU TCG emulates every instruction",
                     "warning: tsc-unstable: no invariant TSC", "ipibench: status SKIP",
                     "ipibench: status SUCCESS", "ipibench: status FAILURE"])
    lines = "".join(out).splitlines()
    check(lines[:3] == [ht, C.QEMU_HT_WHY, "ipibench test"] and
          lines[3:] == ["ipibench: status FAILURE"], f"{lines}")
    check("+topoext to -cpu" in C.QEMU_HT_WHY, C.QEMU_HT_WHY)


@case("run.sh build: make's output as one line on success, all of it on failure")
def _(s):
    steps = "".join(f"  CC       build/kernel/f{i}.o\n" for i in range(60)) + \
        "  LD       build/ipibench.linked.elf\n  OBJCOPY  build/ipibench.elf32\n" \
        "  OBJCOPY  build/ipibench.elf\n"
    check(B.build_lines(steps, "the guest") == ["run.sh: built the guest: 60 CC, 1 LD, 2 "
                                                "OBJCOPY (make V=1 shows each command)"],
          f"{B.build_lines(steps, 'the guest')}")
    check(B.build_lines("", "the guest") == [], "nothing built, nothing said")
    # What is no step (nasm's and ld's warnings: C's are errors) is shown as make printed it.
    warn = "kernel/entry.asm:12: warning: uninitialized space declared in .text section"
    check(B.build_lines(f"  NASM     build/boot/x.o\n{warn}\n  LD       build/x.elf\n",
                        "the ISO") == [warn, "run.sh: built the ISO: 1 NASM, 1 LD (make V=1 "
                                       "shows each command)"], "other lines")
    check(B.build_lines("ld: warning: x.o: missing .note.GNU-stack section\n", "the guest") ==
          ["ld: warning: x.o: missing .note.GNU-stack section"], "a warning alone")
    # Against a stand-in make: 63 lines become one; a failure shows them all.
    bin_dir = os.path.join(s.tmp, "make-bin")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "make"), "w") as f:
        f.write("#!/bin/sh\nprintf '%s' \"$FAKE_MAKE_OUT\"\n"
                "[ -z \"$FAKE_MAKE_FAIL\" ] || { echo 'kernel/x.c:1: error: oops' >&2; exit 2; }\n")
    os.chmod(os.path.join(bin_dir, "make"), 0o755)
    env = dict(s.fake.env("exit:65"), PATH=bin_dir + os.pathsep + os.environ["PATH"],
               FAKE_MAKE_OUT=steps + warn + "\n", IPIBENCH_PREPARED="")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"], env, 60)
    built = [line for line in (out + err).splitlines() if "build/" in line or "built" in line or
             "warning" in line]
    check(rc == 0 and built == [warn, "run.sh: built the guest: 60 CC, 1 LD, 2 OBJCOPY (make "
                                      "V=1 shows each command)"],
          f"exit {rc}: {built}; {err[-300:]}")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"],
                           dict(env, FAKE_MAKE_FAIL="1"), 60)
    check(rc == 10 and err.count("  CC       build/") == 60 and "error: oops" in err and
          "build failed" in err, f"exit {rc}: {err[-400:]}")


@case("run.sh --memory: QEMU's sizes, and below what the guest needs exit 2 with the minimum")
def _(_s):
    for text, mib in (("256M", 256), ("1G", 1024), ("1.5g", 1536), ("2048K", 2), ("512", 512),
                      ("size=1G,slots=2,maxmem=4G", 1024), ("3145728B", 3), ("1t", 1 << 20)):
        check(O.memory_mib(text) == mib, f"{text}: {O.memory_mib(text)}")
    for text in ("", "lots", "1M2", "-1", "1 G", "0x10"):
        check(O.memory_mib(text) is None, f"{text!r} accepted")
    msg = raises(2, O.parse_run, ["--memory", "lots"], "/")
    check(msg == "--memory takes a size as QEMU's -m does (256M, 1G, 1.5G; a plain number is "
          "MiB), not 'lots'", msg)
    check([O.smp_cpus(s) for s in ("4", "6,sockets=2,cores=3", "sockets=2,cores=3", "cpus=8",
                                   "2,maxcpus=4", "?")] == [4, 6, 6, 8, 2, 1], "smp_cpus")
    # Measured under TCG (options.py): 1841 KiB on one CPU, 2482 on 4, 4642 on 64.
    check([O.memory_minimum_mib(n) for n in (1, 2, 4, 16, 32, 64, 1024)] ==
          [2, 3, 3, 3, 4, 5, 39], "minimum")
    msg = raises(2, O.check_memory, "1", "4")
    check(msg == "--memory 1 (1 MiB) is below what the guest needs at -smp 4: 3 MiB "
          "(--memory 3M or more; the default is 256M)", msg)
    check("--memory 1000K (1000 KiB) is below" in raises(2, O.check_memory, "1000K", "1") and
          "(1.5 MiB) is below" in raises(2, O.check_memory, "1536K", "1"), "KiB")
    check(O.check_memory("3M", "4") is None and O.check_memory("2", "1") is None and
          O.check_memory("256M", "1024") is None, "enough refused")


@case("run.sh phase records: validate.py checks each and their count; matrix --verbose streams")
def _(_s):
    good = {"record": "phase", "schema": 1, "index": 2, "of": 3, "backend": "x", "bench": "y"}
    for bad, why in (({"index": 4}, "phase index 4 outside 1..3"),
                     ({"index": 0}, "phase index 0 outside 1..3"),
                     ({"of": "3"}, "'of' is str, expected int"),
                     ({"bench": None}, "'bench' is NoneType, expected str")):
        problems = []
        V.check_phase(dict(good, **bad), problems)
        check(problems == [why], f"{bad}: {problems}")
    problems = []
    V.check_phase(good, problems)
    check(not problems and record_problems(good) == [], f"{problems}")
    ph = [dict(good, index=i) for i in (1, 2, 3)]
    check(V.check_phases(ph, True) == [] and V.check_phases(ph[:2], False) == [] and
          V.check_phases([], True) == [], "good sequences")
    check(V.check_phases(ph[:2], True) == ["2 phases opened of the 3 announced"], "short")
    check(V.check_phases([ph[1], ph[0]], False) != [] and
          V.check_phases([ph[0], dict(ph[1], of=4)], False) != [], "out of order, two totals")
    argv = M.boot_argv("x2apic", 2, "c", "/d", True, [])
    check("--verbose" in argv and "--quiet" not in argv, f"{argv}")
    check("--quiet" in M.boot_argv("x2apic", 2, "c", "/d", False, []), "quiet boots")
    # The last of --quiet and --verbose wins (ab adds --quiet after what it was given).
    check(O.parse_run(["--verbose", "--quiet"], "/").quiet and
          O.parse_run(["--quiet", "--verbose"], "/").verbose, "last wins")


# --- the drivers against a stand-in QEMU


FAKE_QEMU = r"""#!/bin/sh
case "$1" in --version) echo 'QEMU emulator version 9.2.0 (stand-in)'; exit 0 ;; esac
case " $* " in *" -accel kvm "*) echo "fake: no KVM here" >&2; exit 1 ;; esac
echo "fake qemu: $*"
[ -z "$FAKE_LINES" ] || printf '%s\n' "$FAKE_LINES"
case "$FAKE_MODE" in
exit:*) echo "ipibench: status from $FAKE_MODE"; exit "${FAKE_MODE#exit:}" ;;
sigterm) echo "qemu-system-x86_64: terminating on signal 15 from pid 1 (x)" >&2; exit 0 ;;
kill) kill -KILL $$ ;;
stubborn) trap '' TERM; echo started; exec sleep 60 ;;
esac
"""


class Fake:
    def __init__(self, tmp):
        self.tmp = tmp
        self.qemu = os.path.join(tmp, "qemu-fake")
        with open(self.qemu, "w") as f:
            f.write(FAKE_QEMU)
        os.chmod(self.qemu, 0o755)

    def env(self, mode, **more):
        return dict({"QEMU": self.qemu, "FAKE_MODE": mode, "IPIBENCH_PREPARED": "1",
                     "IPIBENCH_RESULTS": os.path.join(self.tmp, "results")}, **more)

    def run(self, mode, *args, timeout=60):
        return run_cmd([RUN, "--accel", "tcg", *args], self.env(mode), timeout)


@case("run.sh against a stand-in QEMU: statuses decoded, console streamed, results saved")
def _(s):
    f = s.fake
    _, out, err = expect(f.run("exit:65", "--no-save", "--append", "plan=boot"), 0,
                         "run.sh: done, everything passed (guest status SUCCESS, exit 0)")
    check("fake qemu: " in out and "ipibench: status from exit:65" in out, f"streamed: {out}")
    check("-accel tcg -M q35 -cpu max -smp 4 -m 256M" in out, f"command line: {out}")
    _, out, _ = expect(f.run("exit:71", "--no-save", "--quiet"), 4, "FAILURE (QEMU exit 71)")
    check(out == "", f"--quiet printed {out!r}")
    expect(f.run("sigterm", "--no-save", "--quiet"), 8,
           "QEMU-KILLED (signal 15: QEMU was told to terminate) (QEMU exit 0)")
    expect(f.run("kill", "--no-save", "--quiet"), 8, "QEMU-KILLED (signal 9) (QEMU exit 137)")
    expect(f.run("exit:3", "--no-save", "--quiet"), 8, "QEMU-UNKNOWN (exit 3)")
    # A SKIP without a record measured and checked nothing: exit 35 (below).
    _, _, err = expect(f.run("exit:67", "--quiet", "--label", "saved", "--preset", "hv"), 35,
                       "run.sh: nothing that was asked for ran: no record says why (guest "
                       "status SKIP, exit 35)\nrun.sh: results: ")
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(os.path.basename(d).endswith("-saved"), d)
    doc = json.load(open(os.path.join(d, "results.json")))
    run, host = doc["run"], doc["host"]
    check((run["status"], run["exit"], run["qemu_exit"], run["preset"], host["accel"]) ==
          ("SKIP", 35, 67, "hv", "tcg"), f"{run} {host['accel']}")
    check(host["qemu_cmdline"][0] == f.qemu and "max,hv-relaxed,hv-vpindex,hv-ipi,hv-tlbflush,"
          "hv-tlbflush-ext" in host["qemu_cmdline"] and "QEMU emulator version 9.2.0" in
          host["qemu_version"], f"{host}")
    check(sorted(os.listdir(d)) == ["console.log", "results.json", "summary.txt"], f"{d}")


# A guest that asked for hv-ipi under TCG: every check and benchmark SKIPs
# (the harness's dry-run aside), as `--append backends=hv-ipi` does there.
HV_ONLY = [
    json.dumps(synth.env(cpus=2, trust=["tcg"])),
    "check: delivery correctness on 2 CPUs: x2APIC-mode backends",
    f"ok 1 - hv-ipi: every check # SKIP {HV}",
    f"ok 2 - hv-flush: every flush hypercall # SKIP {HV}",
    "1..2", "check: 0 passed, 0 failed, 2 skipped",
    rec("check", backend="all", passed=0, failed=0, skipped=2),
    rec("phase", index=1, of=2, backend="none", bench="dry-run"),
    json.dumps(synth.result(("dry-run", "loop", "none", "none", "none", 0), [26, 27, 28])),
    rec("phase", index=2, of=2, backend="hv-ipi", bench="all"),
    json.dumps(synth.result(("single", "round-trip", "none", "hv-ipi", "spin", 1),
                            status="SKIP", reason=HV)),
    rec("end", status="SKIP", results=2),
]


@case("run.sh exit 35: a SKIP that measured and checked nothing asked for never passes")
def _(s):
    f = s.fake
    # What counts: a check passed, or a result of a backend; not the harness's dry-run.
    suite = C.suite_labels("\n".join(x for x in HV_ONLY if isinstance(x, str)))
    records = [json.loads(x) for x in HV_ONLY if x.startswith("{")]
    check(C.ran_nothing(records, suite) == [HV], f"{C.ran_nothing(records, suite)}")
    one = C.suite_labels("ok 1 - x2apic: self on CPU 0, vector 0x41\n")
    check(C.ran_nothing(records, one) is None, "a passed check ran")
    check(C.ran_nothing(records + [json.loads(res("x2apic", "single", "round-trip"))], {})
          is None and C.ran_nothing([json.loads(res("none", "flush", "call"))]) is None,
          "a measured figure ran")
    # The harness's dry-run counts when it was asked for by name.
    asked = [dict(records[0], cmdline="bench=dry-run,single backends=hv-ipi")] + records[1:]
    check(C.ran_nothing(asked, suite) is None, "bench=dry-run")
    check(C.ran_nothing([{"record": "check", "passed": 3}]) is None, "the check record")
    # Under TCG, saved: the summary says why 35, the last line the reasons; the
    # results keep the guest's SKIP and the exit code.
    root = os.path.join(s.tmp, "nothing")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--label", "hv"],
                           f.env("exit:67", FAKE_LINES="\n".join(HV_ONLY), IPIBENCH_RESULTS=root),
                           60)
    flat = " ".join(line.strip() for line in out.splitlines())
    check(rc == 35 and f"run.sh: nothing that was asked for ran: {HV} (guest status SKIP, exit "
          "35)\nrun.sh: results: " in err, f"exit {rc}: {err[-400:]}")
    check("why exit 35: nothing that was asked for ran (under TCG): every check and benchmark "
          "SKIPped (reasons above)" in flat and "skipped: hv-ipi: no Hyper-V interface (see "
          "above)" in flat and "why SKIP, exit 0" not in flat and
          "proved: no delivery check could run here; 1 backend SKIPped every check" in flat,
          flat[-900:])
    (d,) = os.listdir(root)
    run = json.load(open(os.path.join(root, d, "results.json")))["run"]
    check((run["status"], run["exit"]) == ("SKIP", 35), f"{run}")
    # One passed check is something that ran: exit 0 as before.
    passed = HV_ONLY[:2] + ["ok 1 - x2apic: self on CPU 0, vector 0x41"] + HV_ONLY[2:]
    expect(run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"],
                   f.env("exit:67", FAKE_LINES="\n".join(passed)), 60), 0,
           "run.sh: done, nothing failed (guest status SKIP, exit 0)")
    # plan=boot asks for nothing measured and ends SUCCESS: exit 0.
    expect(f.run("exit:65", "--no-save", "--quiet", "--append", "plan=boot"), 0,
           "everything passed")
    # A matrix boot with 35 is a failing boot: the matrix exits 35, the summary says why.
    root = os.path.join(s.tmp, "nothing-matrix")
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "x2apic", "--boots", "2", "--accel",
                          "tcg", "--label", "n"], f.env("exit:67", IPIBENCH_RESULTS=root), 60)
    (mdir,) = os.listdir(root)
    summary = open(os.path.join(root, mdir, "summary.txt")).read().splitlines()
    check(rc == 35 and summary[1:] == ["x2apic-smp2 boot1 exit 35 NOTHING-RAN (guest SKIP: "
                                       "nothing asked for ran)", "x2apic-smp2 boot2 exit 35 "
                                       "NOTHING-RAN (guest SKIP: nothing asked for ran)"],
          f"exit {rc}: {summary}; {err[-300:]}")
    check(EX_NOTHING_RAN == 35 and EX_NOTHING_RAN not in Q.SETUP_CODES, "35")


@case("run.sh under TCG says so once: in the summary, else from the accelerator it chose")
def _(s):
    f = s.fake
    notice = "under TCG: timings are emulated, only behaviour counts"
    # A boot of its own (a matrix's boots say nothing of it): a stand-in make, up to date.
    bin_dir = os.path.join(s.tmp, "make-none")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "make"), "w") as fh:
        fh.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(bin_dir, "make"), 0o755)

    def boot(mode, *args, **more):
        env = f.env(mode, PATH=bin_dir + os.pathsep + os.environ["PATH"], IPIBENCH_PREPARED="",
                    **more)
        return run_cmd([RUN, "--accel", "tcg", *args], env, 60)
    # No record, so no summary (a boot that died before its env record): run.sh says it.
    for args in (["--no-save"], ["--no-save", "--verbose"], []):
        _, out, err = expect(boot("exit:71", "--label", "t", *args), 4)
        check((out + err).count(notice) == 1 and f"run.sh: ran {notice}\n" in err,
              f"{args}: {err[-300:]}")
    # --quiet says it before the boot, once.
    _, out, err = expect(boot("exit:71", "--no-save", "--quiet"), 4)
    check((out + err).count(notice) == 1 and f"run.sh: running {notice}" in err, err[-300:])
    # The summary said it: run.sh does not again.
    _, out, err = expect(boot("exit:67", "--no-save", FAKE_LINES="\n".join(HV_ONLY)), 35)
    check(notice not in out + err and "figures are emulated" in out, f"{out[-300:]}{err}")
    # Not TCG (the KVM lane says its own words): nothing.
    check(not any(notice in line for line in C.summary([{"record": "end", "status": "SKIP"}])),
          "summary")


@case("run.sh timeout -k: a QEMU deaf to SIGTERM is killed 5 s after --timeout; exit 7")
def _(s):
    t0 = time.monotonic()
    expect(s.fake.run("stubborn", "--no-save", "--quiet", "--timeout", "1"), 7,
           "TIMEOUT (QEMU exit 137)")
    secs = time.monotonic() - t0
    check(5.5 < secs < 20, f"ended after {secs:.1f} s, expected 1 + 5")


@case("run.sh signals: SIGTERM to a deaf QEMU, a second signal kills it at once; exit 11")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "sig")
    p = subprocess.Popen([RUN, "--accel", "tcg", "--quiet"], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **f.env("stubborn", IPIBENCH_RESULTS=root)))
    log, end = None, time.monotonic() + 20
    while time.monotonic() < end and not log:
        for r, _, files in os.walk(root):
            if "console.log" in files and "started" in open(os.path.join(r, "console.log")).read():
                log = os.path.join(r, "console.log")
        time.sleep(0.1)
    check(log is not None, "the stand-in never started")
    p.send_signal(signal.SIGHUP)
    time.sleep(1)
    check(p.poll() is None, "ended on SIGTERM though QEMU ignores it")
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Fail("a second signal did not end it")
    check(p.returncode == 11 and time.monotonic() - t0 < 3, f"exit {p.returncode}: {err}")
    check("run.sh: interrupted by SIGINT; incomplete log: " in err, err)
    last = open(log).read().rstrip().splitlines()[-1]
    check(last.startswith("run.sh: INCOMPLETE: interrupted by SIGINT after "), last)
    check(os.listdir(os.path.dirname(log)) == ["console.log"], "results saved")


@case("run.sh matrix against a stand-in QEMU: boots, summary, the first failure's code")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "matrix")
    rc, out, err = run_cmd([RUN, "matrix", "--presets", "xapic,x2apic", "--boots", "2",
                            "--accel", "tcg", "--label", "m x"],
                           f.env("exit:71", IPIBENCH_RESULTS=root), 60)
    check(rc == 4, f"exit {rc}: {err[-300:]}")
    (mdir,) = os.listdir(root)
    check(mdir.endswith("-m_x"), mdir)
    summary = open(os.path.join(root, mdir, "summary.txt")).read().splitlines()
    check(summary == ["matrix m x: presets xapic,x2apic, -smp per preset, 2 boots",
                      "xapic-smp2 boot1 exit 4 FAILURE", "xapic-smp2 boot2 exit 4 FAILURE",
                      "x2apic-smp2 boot1 exit 4 FAILURE", "x2apic-smp2 boot2 exit 4 FAILURE"],
          f"{summary}")
    # No boot measured anything: no backend pair to suggest, the configurations' still.
    check("matrix: [4] x2apic-smp2 boot 2: exit 4 (" in err and "--pair" not in err and
          f"(same backends, same -smp): ./run.sh compare {root}/{mdir}/xapic-smp2 "
          f"{root}/{mdir}/x2apic-smp2" in err, err)
    doc = json.load(open(os.path.join(root, mdir, "x2apic-smp2", "boot2", "results.json")))
    check(doc["run"]["label"] == "x2apic-smp2" and doc["run"]["exit"] == 4, f"{doc['run']}")
    # A bad option for the boots stops the matrix before anything is made.
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--timeout", "x"],
                         f.env("exit:65", IPIBENCH_RESULTS=os.path.join(s.tmp, "m2")), 60)
    check(rc == 2 and "--timeout takes whole seconds, not 'x'" in err and
          not os.path.exists(os.path.join(s.tmp, "m2")), f"exit {rc}: {err}")


@case("run.sh matrix --smp with topologies: each boot gets its -smp value whole, one folder "
      "each; a bad one stops the matrix before anything is made")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "matrix-topo")
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--boots", "1", "--accel", "tcg",
                          "--smp", "2;4,sockets=2,cores=2,threads=1", "--label", "t"],
                         f.env("exit:65", IPIBENCH_RESULTS=root), 60)
    check(rc == 0, f"exit {rc}: {err[-300:]}")
    (mdir,) = os.listdir(root)
    mdir = os.path.join(root, mdir)
    check(sorted(os.listdir(mdir)) == ["summary.txt", "xapic-smp2", "xapic-smp4-s2c2t1"],
          f"{os.listdir(mdir)}")
    log = open(os.path.join(mdir, "xapic-smp4-s2c2t1", "boot1", "console.log")).read()
    check(" -smp 4,sockets=2,cores=2,threads=1 " in log, log[:300])
    summary = open(os.path.join(mdir, "summary.txt")).read().splitlines()
    check(summary[1:] == ["xapic-smp2 boot1 exit 0 SUCCESS or SKIP",
                          "xapic-smp4-s2c2t1 boot1 exit 0 SUCCESS or SKIP"], f"{summary}")
    bad = os.path.join(s.tmp, "matrix-topo-bad")
    rc, out, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--accel", "tcg", "--smp",
                            "2;8,sockets=2,cores=2,threads=1"], f.env("exit:65",
                                                                      IPIBENCH_RESULTS=bad), 60)
    check(rc == 2 and "run.sh: matrix: --smp '8,sockets=2,cores=2,threads=1': sockets 2 x "
          "cores 2 x threads 1 = 4 CPUs, but maxcpus is 8" in err and not os.path.exists(bad),
          f"exit {rc}: {err}")


# A stand-in QEMU for --exits (run.sh under IPIBENCH_PIN_ANY_ACCEL with a
# stand-in tracefs, IPIBENCH_TRACEFS): started paused with QMP and a pid
# file; on `cont` the guest "runs": a captured lane console (result records
# with their marks) on the serial line and that boot's KVM trace where the
# tracefs keeps it, then the SUCCESS status.
def qmp_stand_in(on_cont, before=""):
    """A stand-in QEMU that answers QMP on -qmp's socket (query-cpus-fast
    names its own thread), writes -pidfile, runs the Python lines `before`
    first and `on_cont` when told to `cont`."""
    return "\n".join([
        "#!/usr/bin/env python3",
        "import json, os, shutil, socket, sys",
        "args = sys.argv[1:]",
        before,
        'path = args[args.index("-qmp") + 1].split(",")[0][len("unix:"):]',
        'if "-pidfile" in args:',
        '    with open(args[args.index("-pidfile") + 1], "w") as f:',
        '        f.write(f"{os.getpid()}\\n")',
        "srv = socket.socket(socket.AF_UNIX)",
        "srv.bind(path)",
        "srv.listen(1)",
        "conn, _ = srv.accept()",
        'f = conn.makefile("rw")',
        'f.write(json.dumps({"QMP": {"version": {}}}) + "\\n")',
        "f.flush()",
        "for line in f:",
        '    cmd = json.loads(line)["execute"]',
        '    ret = [{"cpu-index": 0, "thread-id": os.getpid()}] if cmd == "query-cpus-fast" else {}',
        '    f.write(json.dumps({"return": ret}) + "\\n")',
        "    f.flush()",
        '    if cmd == "cont":',
        *("        " + l for l in on_cont.splitlines()),
        ""])


# Plays back a fixture's console and trace (FAKE_FIX) at `cont`.
FAKE_EXITS_QEMU = qmp_stand_in(before="""\
if args[:1] == ["--version"]:
    print("QEMU emulator version 9.2.0 (stand-in)")
    sys.exit(0)
print("fake qemu: " + " ".join(args), flush=True)""", on_cont="""\
fx = os.environ["FAKE_FIX"]
sys.stdout.write(open(fx + ".log").read())
shutil.copyfile(fx + ".trace", os.path.join(os.environ["IPIBENCH_TRACEFS"], "trace"))
sys.exit(65)""")


@case("run.sh matrix --exits, --require-apicv: refused before the first boot where they cannot "
      "work; passed to every boot, whose folder then holds what run --exits keeps; gate --exits "
      "on the matrix")
def _(s):
    d = os.path.join(s.tmp, "mexits")
    os.makedirs(d)
    qemu = os.path.join(d, "qemu")
    with open(qemu, "w") as fh:
        fh.write(FAKE_EXITS_QEMU)
    os.chmod(qemu, 0o755)
    tracefs = stand_in_tracefs(os.path.join(d, "tracefs"))
    fix = os.path.join(REPO, "tests", "fixtures", "traces", "svm-apic")

    def matrix(root, *args, **env):
        base = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, root)), QEMU=qemu,
                    FAKE_FIX=fix, IPIBENCH_TRACEFS=tracefs)
        return run_cmd([RUN, "matrix", "--accel", "tcg", "--boots", "2", "--label", root, *args],
                       dict(base, **env), 120)

    # Refused as run refuses them, before anything is made or booted.
    for args, env, code, msg in (
            (["--exits"], {}, 29, "run.sh: --exits traces KVM's events: use --accel kvm on a "
             "KVM host (tracefs, root) or --accel kvm-in-tcg (the lane), not --accel tcg"),
            (["--exits"], {"IPIBENCH_PIN_ANY_ACCEL": "1", "IPIBENCH_TRACEFS": d}, 29,
             "run.sh: --exits: no tracefs with KVM's events"),
            (["--require-apicv"], {}, 2, "run.sh: --require-apicv reads the KVM trace: it needs "
             "--exits")):
        rc, out, err = matrix("refused", "--presets", "x2apic,xapic", *args, **env)
        check(rc == code and msg in err and "matrix: [1]" not in err and
              not os.path.exists(os.path.join(d, "refused")), f"{args}: exit {rc}: {err}")
    # Passed on: each boot traced, its trace and exits kept as run --exits keeps them.
    rc, out, err = matrix("m", "--presets", "x2apic", "--exits", IPIBENCH_PIN_ANY_ACCEL="1")
    check(rc == 0, f"exit {rc}: {err[-600:]}")
    check(err.count("run.sh: what the hypervisor did, exits per measured iteration:") == 2 and
          "x2apic send-cost send: sender 1.00 msr (ICR)" in err, err[-600:])
    (mdir,) = os.listdir(os.path.join(d, "m"))
    mdir = os.path.join(d, "m", mdir)
    for i in (1, 2):
        boot = os.path.join(mdir, "x2apic-smp2", f"boot{i}")
        check("kvm-trace.txt" in os.listdir(boot), f"boot{i}: {os.listdir(boot)}")
        doc = json.load(open(os.path.join(boot, "results.json")))
        marked = [r for r in doc["records"] if "exits" in r]
        check(doc["run"]["exits"] is not None and len(marked) >= 4 and
              "markers=1" in " ".join(doc["host"]["qemu_cmdline"]), f"boot{i}: {doc['run']}")
    # gate --exits on the matrix against itself: every exit row compared, none worse.
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", mdir, mdir], timeout=60)
    check(rc == 0 and "exit rows compared (0 with more exits)" in err and
          "0 exit rows" not in err, f"exit {rc}: {err[-400:]}")
    # --require-apicv: the captured trace has AVIC disabled, so every boot exits 32,
    # the matrix goes on and exits with it.
    rc, out, err = matrix("apicv", "--presets", "x2apic", "--exits", "--require-apicv",
                          IPIBENCH_PIN_ANY_ACCEL="1")
    (adir,) = os.listdir(os.path.join(d, "apicv"))
    summary = open(os.path.join(d, "apicv", adir, "summary.txt")).read().splitlines()
    check(rc == 32 and summary[1:] == ["x2apic-smp2 boot1 exit 32 APICV-INHIBITED",
                                       "x2apic-smp2 boot2 exit 32 APICV-INHIBITED"],
          f"exit {rc}: {summary}: {err[-300:]}")
    # A matrix root of two configurations is refused by gate: one folder a side.
    rc, out, err = matrix("two", "--presets", "x2apic,xapic", "--boots", "1", "--exits",
                          IPIBENCH_PIN_ANY_ACCEL="1")
    (tdir,) = os.listdir(os.path.join(d, "two"))
    tdir = os.path.join(d, "two", tdir)
    check(rc == 0 and sorted(os.listdir(tdir)) == ["summary.txt", "x2apic-smp2", "xapic-smp2"],
          f"exit {rc}: {err[-300:]}")
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", tdir, tdir], timeout=60)
    check(rc == 30 and "pools 2 configurations (x2apic-smp2, xapic-smp2): give one "
          "configuration folder a side" in err, f"exit {rc}: {err[-400:]}")
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", os.path.join(tdir, "xapic-smp2"),
                            os.path.join(tdir, "xapic-smp2")], timeout=60)
    check(rc == 0, f"one configuration folder a side: exit {rc}: {err[-400:]}")


# --- the example workflow (.github/workflows/example.yml), read without a
# YAML library: its jobs are the two-space keys under jobs:, a step's
# script is the block under `run: |`.

WORKFLOW = os.path.join(REPO, ".github", "workflows", "example.yml")


def workflow_job(text, job):
    """The lines of one job (after its key, up to the next job)."""
    lines = text.splitlines()
    start = lines.index(f"  {job}:")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"  \S", lines[i])),
               len(lines))
    return lines[start + 1:end]


def job_env(lines):
    """The job's env: mapping (one KEY: value a line, quotes dropped)."""
    env, inside = {}, False
    for line in lines:
        if line == "    env:":
            inside = True
        elif inside and re.match(r"      [A-Z_]+: ", line):
            key, value = line.strip().split(": ", 1)
            env[key] = value.strip('"')
        elif inside and not line.startswith("      #"):
            inside = False
    return env


def job_scripts(lines):
    """Each step's `run: |` script, as text."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"( +)run: \|$", lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > len(m.group(1))):
            body.append(lines[i].strip())
            i += 1
        out.append("\n".join(body))
    return out


def run_sh_commands(script, env):
    """The ./run.sh commands of a script: (subcommand, arguments), with the
    job's variables put in and a line's continuation joined."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        if "./run.sh " not in line:
            continue
        line = line.split(" || ", 1)[0].split(" >>", 1)[0]
        line = re.sub(r"\$\{?([A-Z_]+)\}?", lambda m: env.get(m.group(1), m.group(1)), line)
        words = shlex.split(line)
        words = words[words.index("./run.sh") + 1:]
        out.append((words[0], words[1:]))
    return out


@case("the example workflow: an exits job of matrix --exits with a plan subset, then gate --exits "
      "per configuration; timing cannot fail there; it alone runs on pull requests")
def _(_s):
    text = open(WORKFLOW).read()
    on = text.split("\non:\n", 1)[1].split("\njobs:\n", 1)[0]
    check("\n  pull_request:" in on, f"on: {on}")
    check("    if: github.event_name != 'pull_request'" in workflow_job(text, "gate"),
          "the timing gate would run on pull requests")
    job = workflow_job(text, "exits")
    check(not any(line.startswith("    if:") for line in job), "the exits job is conditional")
    env = job_env(job)
    scripts = job_scripts(job)
    for script in scripts:
        p = subprocess.run(["bash", "-n"], input=re.sub(r"\$\{\{[^}]*\}\}", "x", script),
                           text=True, capture_output=True)
        check(p.returncode == 0, f"bash -n: {p.stderr}: {script}")
    cmds = [c for script in scripts for c in run_sh_commands(script, env)]
    matrices = [args for sub, args in cmds if sub == "matrix"]
    gates = [args for sub, args in cmds if sub == "gate"]
    check(len(matrices) == 2 and len(gates) == 1, f"{cmds}")
    labels = []
    for args in matrices:
        o = O.parse_matrix(args)
        each = O.parse_run(M.boot_argv("x", "2", "c", "/d", False, o.passed), "/")
        check(each.exits and each.accel == "kvm", f"{args}: not --exits under KVM")
        check(int(o.boots) < MIN_BOOTS, f"{args}: {o.boots} boots a side: a timing row "
              f"could be significant (the rank test reaches p < 0.05 from {MIN_BOOTS})")
        check(re.search(r"(^| )bench=", each.append), f"{args}: no plan subset")
        labels.append(o.label)
    check(labels == ["base", "cand"], f"labels {labels}")
    check([a for a in matrices[0] if a != "base"] == [a for a in matrices[1] if a != "cand"],
          f"base and candidate booted alike: {matrices}")
    a = readers.parser().parse_args(["gate"] + gates[0])
    check(a.exits and a.baseline and a.tap and a.junit, f"{gates[0]}")


FAKE_QMP_QEMU = qmp_stand_in(on_cont="sys.exit(65)")

FAKE_PERF = """#!/bin/sh
case "$3" in
record) out=$5; trap 'echo data >"$out"; exit 0' TERM; while :; do sleep 0.1; done ;;
report) [ -s "$5" ] || exit 1
	echo '             VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time'
	echo '     MSR_WRITE      10364    44.64%     1.28%      0.45us     48.25us      1.23us ( +-   0.78% )' ;;
esac
"""


@case("run.sh --pin and --perf-kvm: paused start against a stand-in QEMU (QMP) and perf")
def _(s):
    d = os.path.join(s.tmp, "paused")
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "save"))
    for name, text in (("qemu", FAKE_QMP_QEMU), ("bin/perf", FAKE_PERF)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, name), 0o755)
    rt = tempfile.mkdtemp(dir=d)
    cmd = Q.command_line(os.path.join(d, "qemu"), "kvm", "q35", "host", "1", "256M", "",
                         runtime_dir=rt, pidfile=True)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = os.path.join(d, "bin") + os.pathsep + old_path
    try:
        job = subprocess.Popen(cmd)
        cpu = sorted(os.sched_getaffinity(0))[-1]
        paused = K.PausedStart(rt, str(cpu), True, os.path.join(d, "save", "pin.json"))
        code = paused.start(job)
        rc = job.wait(timeout=20)
        paused.stop(os.path.join(d, "save"))
    finally:
        os.environ["PATH"] = old_path
    check(code == 0 and rc == 65, f"start {code}, the stand-in exited {rc}")
    pins = json.load(open(os.path.join(d, "save", "pin.json")))
    check(pins == [{"vcpu": 0, "thread_id": job.pid, "host_cpu": cpu}], f"{pins}")
    report = open(os.path.join(d, "save", "perf-kvm.txt")).read()
    check([x["reason"] for x in K.perf_parse(report)] == ["MSR_WRITE"], report)
    check(sorted(os.listdir(os.path.join(d, "save"))) == ["perf-kvm.txt", "pin.json"],
          f"{os.listdir(os.path.join(d, 'save'))}")


# --- ab's order and the vCPU pinning of ab and matrix (issue 29 item 3)


def ab_console(tmp):
    """A synthetic boot's console (one check, the synth rows), for stand-in
    QEMUs that play it back so that compare has rows to read."""
    import random
    path = os.path.join(tmp, "ab-console.log")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(synth.console(synth.boot_records(random.Random(1), synth.ROWS, 0.01, 0.05,
                                                     20, 2, "CPUID 0x15")))
    return path


# A QEMU for ab under TCG: says what the stand-in module parameters read as it
# boots (AB_PARAMS: files), then plays back FAKE_CONSOLE and exits SUCCESS.
AB_QEMU = r"""#!/bin/sh
case "$1" in --version) echo 'QEMU emulator version 9.2.0 (stand-in)'; exit 0 ;; esac
for f in $AB_PARAMS; do echo "stand-in param $(basename "$f")=$(cat "$f")"; done
cat "$FAKE_CONSOLE"
exit 65
"""


def ab_tree(root):
    """IPIBENCH_AB_ROOT: kvm.halt_poll_ns written at run time (0644), and
    kvm_amd.avic read at load time (0444): a stand-in modprobe that logs
    its argv and grants what it is asked."""
    for mod, param, val, mode in (("kvm", "halt_poll_ns", "200000", 0o644),
                                  ("kvm_amd", "avic", "1", 0o444)):
        d = os.path.join(root, "sys/module", mod)
        os.makedirs(os.path.join(d, "parameters"))
        with open(os.path.join(d, "initstate"), "w") as f:
            f.write("live\n")
        with open(os.path.join(d, "parameters", param), "w") as f:
            f.write(val + "\n")
        os.chmod(os.path.join(d, "parameters", param), mode)
    os.makedirs(os.path.join(root, "proc"))
    mp, log = os.path.join(root, "modprobe"), os.path.join(root, "modprobe.log")
    with open(mp, "w") as f:
        f.write("#!/bin/sh\n"
                f"printf '%s ' \"$@\" >> {log}; echo >> {log}\n"
                "[ \"$1\" = -r ] && exit 0\n"
                f"f={root}/sys/module/$1/parameters/${{2%%=*}}\n"
                "rm -f \"$f\"; echo \"${2#*=}\" > \"$f\"; chmod 444 \"$f\"\n")
    os.chmod(mp, 0o755)
    return {"IPIBENCH_AB_ROOT": root, "IPIBENCH_AB_EUID": "0", "IPIBENCH_AB_MODPROBE": mp}


@case("run.sh ab: the sides interleaved A B B A, the parameter switched before each side's "
      "boots (written, or its module reloaded) and put back; the order said, in summary.txt "
      "and in every boot's run record; compare reads each side's folder")
def _(s):
    d = os.path.join(s.tmp, "ab-order")
    os.makedirs(d)
    qemu = os.path.join(d, "qemu")
    with open(qemu, "w") as f:
        f.write(AB_QEMU)
    os.chmod(qemu, 0o755)
    tree = os.path.join(d, "root")
    params = {"kvm.halt_poll_ns": os.path.join(tree, "sys/module/kvm/parameters/halt_poll_ns"),
              "kvm_amd.avic": os.path.join(tree, "sys/module/kvm_amd/parameters/avic")}
    env = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, "results")), QEMU=qemu,
               FAKE_CONSOLE=ab_console(s.tmp), AB_PARAMS=" ".join(params.values()),
               **ab_tree(tree))
    for spec, boots, seq, back in (("kvm.halt_poll_ns=0,1000", 3, "A B B A A B", "200000"),
                                   ("kvm_amd.avic=0,1", 2, "A B B A", "1")):
        name, values = spec.split("=")[0], spec.split("=")[1].split(",")
        label = name.replace(".", "-")
        rc, out, err = run_cmd([RUN, "ab", "--module-param", spec, "--boots", str(boots),
                                "--label", label, "--accel", "tcg", "--smp", "2"], env, 120)
        check(rc == 0, f"{spec}: exit {rc}: {err[-800:]}")
        check(f"ab: order {seq} (A: {name}={values[0]}, B: {name}={values[1]})" in out,
              f"{spec}: the order not said: {out[:400]}")
        (root,) = [os.path.join(d, "results", x) for x in os.listdir(os.path.join(d, "results"))
                   if x.endswith(f"-{label}")]
        sides = {"A": os.path.join(root, f"{name}_{values[0]}"),
                 "B": os.path.join(root, f"{name}_{values[1]}")}
        check(sorted(os.listdir(root)) == sorted([os.path.basename(p) for p in sides.values()]
                                                 + ["summary.txt"]), f"{os.listdir(root)}")
        summary = open(os.path.join(root, "summary.txt")).read().splitlines()
        check(summary[1] == f"order {seq}" and len(summary) == 2 + 2 * boots, f"{summary}")
        # Each boot, in the order it ran: its side's folder, its place in the
        # record, and the parameter as the module read it while it booted.
        n = {"A": 0, "B": 0}
        for pos, side in enumerate(seq.split(), 1):
            n[side] += 1
            boot = os.path.join(sides[side], f"boot{n[side]}")
            check(summary[1 + pos].startswith(f"[{pos}] {side} {os.path.relpath(boot, root)} "
                                              "exit 0"), f"{summary[1 + pos]}")
            run = json.load(open(os.path.join(boot, "results.json")))["run"]
            want = {"param": name, "side": side, "asked": values["AB".index(side)],
                    "got": values["AB".index(side)], "position": pos, "of": 2 * boots,
                    "side_boot": n[side], "order": seq}
            check(run.get("ab") == want, f"{boot}: run.ab {run.get('ab')}, want {want}")
            log = open(os.path.join(boot, "console.log")).read()
            at_boot = f"stand-in param {name.split('.')[1]}={values['AB'.index(side)]}\n"
            check(at_boot in log, f"{boot}: the module did not hold its side's value: "
                  f"{log[:200]}")
        check(open(params[name]).read().strip() == back, f"{name} not put back to {back}")
        # compare B against A, each side's folder as before the order changed.
        check(f"A: {sides['A']} ({boots} boots)" in out and
              f"B: {sides['B']} ({boots} boots)" in out, f"compare: {out[-800:]}")
    # The load-time parameter: one reload a switch of side (A, B, A), then
    # the original put back.
    calls = [line.strip() for line in open(os.path.join(tree, "modprobe.log"))]
    check(calls == ["-r kvm_amd", "kvm_amd avic=0", "-r kvm_amd", "kvm_amd avic=1",
                    "-r kvm_amd", "kvm_amd avic=0", "-r kvm_amd", "kvm_amd avic=1"],
          f"modprobe calls {calls}")


# run.sh with a stand-in KVM: /dev/kvm usable, hardware (not PVM), any vCPU
# model; the rest is run.sh as it is (host/ipibench/cli.py).
KVM_DRIVER = """import sys
sys.path.insert(0, sys.argv.pop(1))
from ipibench.boot import accel as A
A.HostKvm.usable = lambda self: True
A.HostKvm.unusable = lambda self: None
from ipibench.kvmhost import facts
facts.kvm_software = lambda environ: None
A.HostKvm.probe = lambda self, model, machine: None
from ipibench import cli
sys.exit(cli.main(sys.argv[1:]))
"""

# A QEMU that plays FAKE_CONSOLE back, at `cont` when started paused with QMP
# (the pinning start), else at once.
PIN_QEMU = qmp_stand_in(before="""\
if args[:1] == ["--version"]:
    print("QEMU emulator version 9.2.0 (stand-in)")
    sys.exit(0)
if "-S" not in args:  # not paused (a QMP socket for host reads, or none): runs at once
    sys.stdout.write(open(os.environ["FAKE_CONSOLE"]).read())
    sys.exit(65)""", on_cont="""\
sys.stdout.write(open(os.environ["FAKE_CONSOLE"]).read())
sys.exit(65)""")


@case("run.sh ab and matrix pin the vCPUs by default under KVM, every boot's run.pin says so "
      "(pinned, its map; or not pinned and why: too few host CPUs, --no-pin, TCG, a plain run)")
def _(s):
    d = os.path.join(s.tmp, "pin-default")
    os.makedirs(d)
    driver, qemu = os.path.join(d, "driver.py"), os.path.join(d, "qemu")
    for path, text in ((driver, KVM_DRIVER), (qemu, PIN_QEMU)):
        with open(path, "w") as f:
            f.write(text)
    os.chmod(qemu, 0o755)
    cpus = sorted(os.sched_getaffinity(0))
    # A software KVM (PVM): default pinning leaves it alone and says why.
    pin, why = K.pin_plan(None, True, "kvm", 1, cpus, "this host's /dev/kvm is PVM")
    check(pin is None and why.startswith("this host's /dev/kvm is PVM"), f"PVM: {pin!r} {why}")
    env = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, "results")), QEMU=qemu,
               FAKE_CONSOLE=ab_console(s.tmp), **ab_tree(os.path.join(d, "root")))

    made = []

    def boots(*args, **more):
        """The results.json of every boot a command under the stand-in KVM
        saved (in its folder's order), and its stderr."""
        made.append(f"l{len(made)}")
        rc, out, err = run_cmd([sys.executable, driver, HOST, *args,
                                "--label", made[-1]], dict(env, **more), 120)
        check(rc == 0, f"{args}: exit {rc}: {err[-600:]}")
        res = os.path.join(d, "results")
        (root,) = [os.path.join(res, x) for x in os.listdir(res) if x.endswith(f"-{made[-1]}")]
        docs = [json.load(open(os.path.join(top, "results.json")))
                for top, _, files in sorted(os.walk(root)) if "results.json" in files]
        check(docs, f"{args}: no boot saved: {err[-300:]}")
        return docs, err

    # matrix under KVM: pinned, before the guest ran, the map in every boot.
    docs, _ = boots("matrix", "--accel", "kvm", "--presets", "x2apic", "--smp", "1",
                    "--boots", "2")
    for doc in docs:
        pin = doc["run"].get("pin") or {}
        check(len(docs) == 2 and pin.get("state") == "pinned" and
              [(p["vcpu"], p["host_cpu"]) for p in pin["map"]] == [(0, cpus[0])] and
              "by default under KVM" in pin["why"] and "-S" in doc["host"]["qemu_cmdline"],
              f"matrix: {pin}")
    # ab under KVM: both sides' boots pinned.
    docs, _ = boots("ab", "--module-param", "kvm.halt_poll_ns=0,1000", "--boots", "1",
                    "--accel", "kvm", "--smp", "1")
    check(len(docs) == 2 and all(doc["run"]["pin"]["state"] == "pinned" for doc in docs),
          f"ab: {[doc['run']['pin'] for doc in docs]}")
    # More vCPUs than host CPUs: not pinned, said, and the boots still run.
    many = str(len(cpus) + 1)
    docs, err = boots("matrix", "--accel", "kvm", "--presets", "x2apic", "--smp", many,
                      "--boots", "1")
    why = f"{many} vCPUs, {len(cpus)} host CPUs to pin them to"
    check(docs[0]["run"]["pin"]["state"] == "not pinned" and
          docs[0]["run"]["pin"]["why"].startswith(why) and
          f"run.sh: vCPUs not pinned: {why}" in err, f"{docs[0]['run']['pin']}: {err[-300:]}")
    # --no-pin: not pinned, QEMU not even started paused.
    for cmd in (["matrix", "--presets", "x2apic"], ["ab", "--module-param",
                                                    "kvm.halt_poll_ns=0,1000"]):
        docs, _ = boots(*cmd, "--accel", "kvm", "--smp", "1", "--boots", "1", "--no-pin")
        check(all(doc["run"]["pin"] == {"state": "not pinned", "map": [], "why": "--no-pin"}
                  and "-S" not in doc["host"]["qemu_cmdline"] for doc in docs),
              f"{cmd[0]} --no-pin: {[doc['run']['pin'] for doc in docs]}")
        rc, _, err = run_cmd([RUN, *cmd, "--no-pin", "--pin"], env, 30)
        check(rc == 2 and "--pin and --no-pin: give one" in err, f"exit {rc}: {err}")
    # A plain run under KVM is not pinned unless asked.
    rc, _, err = run_cmd([sys.executable, driver, HOST, "--accel", "kvm",
                          "--smp", "1", "--quiet"], env, 60)
    saved = err.rsplit("results: ", 1)[-1].split()[0]
    pin = json.load(open(os.path.join(saved, "results.json")))["run"]["pin"]
    check(rc == 0 and pin["state"] == "not pinned" and pin["why"].startswith("not asked"),
          f"exit {rc}: {pin}: {err[-300:]}")
    # Under TCG nothing changes: not pinned, and why.
    docs, err = boots("matrix", "--accel", "tcg", "--presets", "x2apic", "--boots", "1",
                      QEMU=s.fake.qemu, FAKE_MODE="exit:65")
    pin = docs[0]["run"]["pin"]
    check(pin["state"] == "not pinned" and pin["why"].startswith("accel tcg:") and
          "-S" not in docs[0]["host"]["qemu_cmdline"] and "not pinned" not in err,
          f"{pin}: {err[-300:]}")
    # A lane boot's: what the outer VM said of its inner vCPUs.
    check(K.lane_pin("@@@ lane-info vcpu-pin vCPU:L1-CPU 0:0 1:1; housekeeping on L1 CPU 0: "
                     "3 other threads\n") ==
          {"state": "pinned", "map": [{"vcpu": 0, "host_cpu": 0}, {"vcpu": 1, "host_cpu": 1}],
           "why": "by the lane: inner vCPU i on L1 CPU i, the outer VM's"}, "lane pinned")
    check(K.lane_pin("@@@ lane-info vcpu-pin none: 4 vCPUs on 2 L1 CPUs, left to L1's "
                     "scheduler\n")["state"] == "not pinned" and
          K.lane_pin("")["state"] == "unknown", "lane not pinned, unknown")


# A stand-in host/lane/lane.sh (IPIBENCH_LANE): the files a real one
# leaves in --out when the outer VM's bound ran out inside the guest's frame
# (FAKE_LANE=outer, exit 124) or when the guest's own bound killed it and the
# outer VM still sent its console and trace (FAKE_LANE=inner, status 137).
FAKE_LANE = r"""#!/bin/sh
while [ $# -gt 0 ]; do
	case "$1" in --exits) shift; continue ;; --out) out=$2 ;; esac
	shift 2
done
fx=$FAKE_FIX
echo "kvm-lane: outer VM: booting (1 presets, bound 65s)"
case "$FAKE_LANE" in
outer)
	{ head -n 3 "$fx/svm-apic.log"; echo "the guest still running"; } >"$out/x2apic.log"
	{ echo "@@@ lane-begin x2apic"; cat "$out/x2apic.log"; } >"$out/outer.log"
	echo "kvm-lane: error: outer VM timed out after 65s, running preset x2apic (see $out/outer.log)" >&2
	exit 124 ;;
inner)
	cp "$fx/svm-apic.log" "$out/x2apic.log"
	cp "$fx/svm-apic.trace" "$out/x2apic.trace"
	echo 137 >"$out/x2apic.status"
	{ echo "@@@ lane-begin x2apic"; cat "$out/x2apic.log"; echo "@@@ lane-end x2apic status=137 time=5.00s"; } >"$out/outer.log"
	exit 0 ;;
lockup | host-rip)
	# A second run of the frame, after the outer kernel's soft lockup or the
	# outer TCG's reset.
	cp "$fx/svm-apic.log" "$out/x2apic.log"
	echo 65 >"$out/x2apic.status"
	why="soft-lockup: BUG: soft lockup - CPU#1 stuck for 22s! [qemu-system-x86:163]"
	[ "$FAKE_LANE" = lockup ] || why="host-rip=0xffffffffc0797b40 kvm_amd=0xffffffffc0780000+200704"
	{ echo "@@@ lane-begin x2apic"; echo "@@@ lane-rerun x2apic $why"; echo "@@@ lane-begin x2apic"
	  cat "$out/x2apic.log"; echo "@@@ lane-end x2apic status=65 time=5.00s"; } >"$out/outer.log"
	exit 0 ;;
esac
"""


@case("run.sh --accel kvm-in-tcg timeouts: console, records, trace and the outer VM's log kept; one bound")
def _(s):
    stub = os.path.join(s.tmp, "lane-fake")
    with open(stub, "w") as f:
        f.write(FAKE_LANE)
    os.chmod(stub, 0o755)
    root = os.path.join(s.tmp, "lane-results")

    def lane(mode, *args):
        env = dict(s.fake.env("", IPIBENCH_RESULTS=root), IPIBENCH_LANE=stub, FAKE_LANE=mode,
                   FAKE_FIX=os.path.join(REPO, "tests", "fixtures", "traces"))
        return run_cmd([RUN, "--accel", "kvm-in-tcg", "--preset", "x2apic", "--quiet",
                        "--timeout", "5", *args], env, 60)

    # The outer VM's bound, inside the frame: that bound, once, and where the guest was.
    _, _, err = expect(lane("outer"), 7, "run.sh: the KVM lane's outer VM ran past its bound, "
                       f"65 s (--timeout and {B.LANE_SETUP_S} s for its boot and the trace): "
                       "the guest was still running", "TIMEOUT (QEMU exit 124) after 65 s",
                       "to run less in the lane: --append plan=check")
    check("after 5 s" not in err and "/tmp/ipibench-lane." not in err, err)
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(sorted(os.listdir(d)) == ["console.log", "lane.txt", "outer.log", "results.json",
                                    "summary.txt"], f"{os.listdir(d)}")
    check(open(os.path.join(d, "console.log")).read().endswith("the guest still running\n"),
          "console.log is not the guest's")
    doc = json.load(open(os.path.join(d, "results.json")))
    check(doc["run"]["status"] == "TIMEOUT" and
          len([r for r in doc["records"] if r.get("record") == "result"]) == 3, f"{doc['run']}")
    # The guest's own bound: the outer VM sent the trace of what it finished.
    _, _, err = expect(lane("inner", "--exits"), 7, "TIMEOUT (QEMU exit 124) after 5 s",
                       "| APIC accelerated: no (")
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(sorted(os.listdir(d)) == ["console.log", "kvm-trace.txt", "lane.txt", "outer.log",
                                    "results.json", "summary.txt"], f"{os.listdir(d)}")
    doc = json.load(open(os.path.join(d, "results.json")))
    marked = [r for r in doc["records"] if "exits" in r]
    check(len(marked) == 6 and all(r["exits"]["apic_accel"] == "no" for r in marked),
          f"{[r.get('exits') for r in doc['records']]}")
    # A frame the lane ran twice: run.sh says why, and that this is the second.
    for mode, why in (("lockup", "the outer VM's kernel failed in the first boot (soft-lockup); "
                                 "a fresh outer VM ran it again"),
                      ("host-rip", "the first boot reset with the outer TCG's known SVM fault")):
        _, _, err = expect(lane(mode), 0, f"run.sh: {why} (host/lane/README.md); this is "
                           "the second")
        check(err.count("this is the second") == 1, err)
    # Nothing to save into: the lane's folder stays, and is named.
    _, _, err = expect(lane("outer", "--no-save"), 7, "run.sh: the lane's logs are kept in ")
    kept = err.split("run.sh: the lane's logs are kept in ", 1)[1].split()[0]
    check(os.path.isfile(os.path.join(kept, "outer.log")), f"{kept}: {err}")
    subprocess.run(["rm", "-rf", kept])


@case("run.sh without python3: compare says so (exit 9)")
def _(_s):
    rc, _, err = run_cmd(["/bin/bash", RUN, "compare", "a", "b"], {"PATH": "/nonexistent"}, 30)
    check(rc == 9 and "run.sh: python3 is missing (tools/deps.sh build installs it)" in err,
          f"exit {rc}: {err}")


class Ctx:
    pass


def run_all(cases=CASES, select=True):
    """Run the cases with one context; the count of failures. select: as
    harness.run_cases."""
    ctx = Ctx()
    ctx.tmp = tempfile.mkdtemp(prefix="ipibench-runner-")
    ctx.fake = Fake(ctx.tmp)
    try:
        bad = run_cases(cases, "tools", ctx, also=(subprocess.TimeoutExpired,), select=select)
    finally:
        subprocess.run(["rm", "-rf", ctx.tmp])
    return bad


if __name__ == "__main__":
    sys.exit(1 if run_all() else 0)
