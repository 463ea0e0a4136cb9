#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host unit tests of run.sh's logic (tools/ipibench_run.py and its modules),
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
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tools"))

import ipibench_accel as A  # noqa: E402
import ipibench_boot as B  # noqa: E402
import ipibench_console as C  # noqa: E402
import ipibench_jobs as J  # noqa: E402
import ipibench_kvm as K  # noqa: E402
import ipibench_options as O  # noqa: E402
import ipibench_qemu as Q  # noqa: E402
import ipibench_matrix as M  # noqa: E402
import ipibench_results as R  # noqa: E402
import validate as V  # noqa: E402
from harness import Fail, check, expect, registry, run_cases, run_cmd  # noqa: E402

CASES, case = registry()
RUN = os.path.join(REPO, "run.sh")
PRESETS = R.load_presets(os.path.join(REPO, "tools", "presets.conf"))


def raises(code, fn, *args, **kw):
    """fn(*args) raises a ToolError or UsageError with code: its message."""
    try:
        fn(*args, **kw)
    except (R.ToolError, O.UsageError) as e:
        check(e.code == code, f"{fn.__name__}{args}: exit {e.code}, expected {code}: {e.message}")
        return e.message
    raise Fail(f"{fn.__name__}{args}: no error, expected exit {code}")


class FakeKvm:
    """A stand-in for HostKvm: usable or not; probe refuses what matches."""

    def __init__(self, usable=True, refuse=None, why="kernel doesn't allow setting HyperV VP_INDEX"):
        self._usable, self.refuse, self.why, self.probed = usable, refuse, why, []

    def usable(self):
        return self._usable

    def software(self):
        return None

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
                         "offers hv-vpindex, but there is no usable /dev/kvm.") and
          "--preset NAME (the lane boots presets only: ./run.sh list)" in msg, msg)
    # --allow-fallback: TCG with a warning that says what will SKIP.
    acc, cpu, notes = A.choose("auto", "", "kvm-pv", "kvm-pv-ipi=on", "q35", True,
                               FakeKvm(usable=False))
    check((acc, cpu) == ("tcg-single", "max,kvm-pv-ipi=on") and len(notes) == 1 and
          notes[0].startswith("run.sh: warning: there is no usable /dev/kvm; running preset "
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
    msg = raises(2, A.choose, "kvm", "", "", "", "q35", False, FakeKvm(usable=False))
    check(msg == "--accel kvm: /dev/kvm is missing or not accessible", msg)
    raises(2, A.choose, "kvmm", "", "", "", "q35", False, kvm)


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
                        "--perf-kvm", "--pvh", "--verbose"])
    check((o.names, o.counts, o.boots, o.label, o.accel, o.machine, o.allow_fallback, o.verbose)
          == (["xapic", "x2apic"], ["2", "4"], "3", "l", "tcg", "pc", True, True), f"{vars(o)}")
    check(o.passed == ["--accel", "tcg", "--machine", "pc", "--append", "plan=boot", "--memory",
                       "1G", "--timeout", "60", "--allow-fallback", "--pin=1", "--perf-kvm",
                       "--pvh"], f"{o.passed}")
    check(O.parse_matrix(["--presets", "x"]).boots == "5", "5 boots by default")
    check(O.split_list("") == [] and O.split_list("a,,b") == ["a", "", "b"] and
          O.split_list(",a,") == ["", "a"], "split as bash's read -a")
    for argv, msg in ((["--presets", "x", "--boots", "0"], "matrix: --boots takes a positive "
                       "count, not '0'"),
                      (["--presets", "x", "--boots", "00"], "count, not '00'"),
                      (["--presets", "x", "--boots", "-1"], "count, not '-1'"),
                      (["--presets", "x", "--smp", "2,,4"], "matrix: --smp takes vCPU counts, "
                       "not ''"),
                      (["--presets", "x", "--smp", "two"], "counts, not 'two'"),
                      (["--presets"], "matrix: --presets needs a value"),
                      (["--boots", "2"], "matrix: --presets is required"),
                      (["--presets", "x", "--frob"], "matrix: unknown option '--frob'")):
        msg_got = raises(2, O.parse_matrix, argv)
        check(msg_got.endswith(msg), f"{argv}: {msg_got!r}")
    check(O.parse_matrix(["--help", "--frob"]).help, "--help")


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


# --- what run.sh prints of a console (ipibench_console)


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


# A console as the guest prints it: bring-up, the suite (a failure, SKIPs),
# five units (a failure, partial SKIPs, two refused backends), the view.
CONSOLE = [
    "ipibench test", "smp: CPU 0 APIC ID 0 online (BSP)", "smp: CPU 1 APIC ID 1 online",
    "smp: 2 of 2 CPUs online", "check: delivery correctness on 2 CPUs",
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    "ok 1 - xapic: switch all 2 CPUs to xapic mode, no test vector left",
    "not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it", "#   and more",
    "ok 3 - xapic: sends from an AP # SKIP one CPU",
    "ok 4 - hv-icr: every check # SKIP no Hyper-V interface",
    "ok 5 - hv-ipi: every check # SKIP no Hyper-V interface",
    "1..5", "check: 1 passed, 1 failed, 3 skipped",
    rec("check", backend="all", passed=1, failed=1, skipped=3),
    "bench         metric          variant          backend        cpus         p50 cyc",
    rec("phase", index=1, of=5, backend="none", bench="dry-run"),
    "dry-run       loop            none             none           0>none            26",
    res("none", "dry-run", "loop", p50=26),
    rec("phase", index=2, of=5, backend="xapic", bench="single"),
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    res("xapic", "single", "round-trip", p50=4000),
    res("xapic", "single", "one-way", "SKIP", "skew 650 is not under 291"),
    "bench: FAILURE: single on xapic: CPU 1 lost it",
    res("xapic", "single", "round-trip", "FAILURE", "CPU 1 lost it"),
    res("xapic", "single", "all", "ERROR", "the harness broke"),
    rec("phase", index=3, of=5, backend="xapic", bench="single-halt"),
    res("xapic", "single-halt", "round-trip", p50=5000),
    res("xapic", "single-halt", "one-way", "SKIP", "skew 650 is not under 352"),
    rec("phase", index=4, of=5, backend="hv-icr", bench="all"),
    res("hv-icr", "single", "-", "SKIP", "no Hyper-V interface"),
    res("hv-icr", "single-halt", "-", "SKIP", "no Hyper-V interface"),
    rec("phase", index=5, of=5, backend="hv-ipi", bench="all"),
    res("hv-ipi", "single", "-", "SKIP", "no Hyper-V interface"),
    "view: kvm-unit-tests x86/vmexit.c names, cycles per iteration (mean)",
    "test        xapic", "ipi_halt     5000", "note: ipi_halt here is CPU 0 -> CPU 1",
    rec("end", status="FAILURE", results=9), "ipibench: status FAILURE",
]
# What a person reads of it, a line each 10 ms.
SHOWN = """ipibench test
smp: 2 of 2 CPUs online
not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it
#   and more
check xapic: 1 passed, 1 FAILED, 1 skipped (one CPU) ... 0.06 s
check hv-icr, hv-ipi ... SKIP: no Hyper-V interface
[1/5] dry-run ... 0.03 s
bench: FAILURE: single on xapic: CPU 1 lost it
[2/5] xapic single ... 0.07 s, 1 FAILURE, 1 ERROR, 1 of 4 SKIP
    SKIP: skew 650 is not under 291
    ERROR: single all: the harness broke
[3/5] xapic single-halt ... 0.03 s, 1 of 2 SKIP
[4-5/5] hv-icr, hv-ipi ... SKIP: no Hyper-V interface
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
    # A failure the console already showed is not repeated; SKIPs of one cause
    # are explained once, whatever their figures.
    check(got.count("CPU 1 lost it") == 1 and "skew 650 is not under 352" not in got, got)
    # Without times (the lane's log, read afterwards) the same lines, untimed.
    out = []
    C.replay("\n".join(CONSOLE), out.append).finish()
    untimed = SHOWN
    for t in (" 0.06 s", " 0.03 s,", " 0.03 s", " 0.07 s,"):
        untimed = untimed.replace(t, "")
    check("".join(out) == untimed, "".join(out))
    # Whole SKIPs of one cause share a line only when they come together.
    _, out = follow(CONSOLE, step=0.2)
    check("[4/5] hv-icr ... SKIP: no Hyper-V interface\n[5/5] hv-ipi ... SKIP: no Hyper-V "
          "interface\n" in "".join(out), "".join(out))


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
    res("hv-icr", "single", "-", "SKIP", "no Hyper-V interface"),
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
                 "skipped: hv-icr, hv-vapic: no Hyper-V interface",
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
    check(many[-1] == "... 4 more in console.log", many[-1])


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
    # Measured under TCG (ipibench_options): 1841 KiB on one CPU, 2482 on 4, 4642 on 64.
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
    check(not problems and R.record_problems(good) == [], f"{problems}")
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
                         "run.sh: SUCCESS (QEMU exit 65)")
    check("fake qemu: " in out and "ipibench: status from exit:65" in out, f"streamed: {out}")
    check("-accel tcg -M q35 -cpu max -smp 4 -m 256M" in out, f"command line: {out}")
    _, out, _ = expect(f.run("exit:71", "--no-save", "--quiet"), 4, "FAILURE (QEMU exit 71)")
    check(out == "", f"--quiet printed {out!r}")
    expect(f.run("sigterm", "--no-save", "--quiet"), 8,
           "QEMU-KILLED (signal 15: QEMU was told to terminate) (QEMU exit 0)")
    expect(f.run("kill", "--no-save", "--quiet"), 8, "QEMU-KILLED (signal 9) (QEMU exit 137)")
    expect(f.run("exit:3", "--no-save", "--quiet"), 8, "QEMU-UNKNOWN (exit 3)")
    _, _, err = expect(f.run("exit:67", "--quiet", "--label", "saved", "--preset", "hv"), 0,
                       "run.sh: SKIP (QEMU exit 67); results: ")
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(os.path.basename(d).endswith("-saved"), d)
    doc = json.load(open(os.path.join(d, "results.json")))
    run, host = doc["run"], doc["host"]
    check((run["status"], run["exit"], run["qemu_exit"], run["preset"], host["accel"]) ==
          ("SKIP", 0, 67, "hv", "tcg"), f"{run} {host['accel']}")
    check(host["qemu_cmdline"][0] == f.qemu and "max,hv-relaxed,hv-vpindex,hv-ipi,hv-tlbflush,"
          "hv-tlbflush-ext" in host["qemu_cmdline"] and "QEMU emulator version 9.2.0" in
          host["qemu_version"], f"{host}")
    check(sorted(os.listdir(d)) == ["console.log", "results.json", "summary.txt"], f"{d}")


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


FAKE_QMP_QEMU = r"""#!/usr/bin/env python3
import json, os, socket, sys
args = sys.argv[1:]
path = args[args.index("-qmp") + 1].split(",")[0][len("unix:"):]
if "-pidfile" in args:
    with open(args[args.index("-pidfile") + 1], "w") as f:
        f.write(f"{os.getpid()}\n")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(1)
conn, _ = srv.accept()
f = conn.makefile("rw")
f.write(json.dumps({"QMP": {"version": {}}}) + "\n")
f.flush()
for line in f:
    cmd = json.loads(line)["execute"]
    ret = [{"cpu-index": 0, "thread-id": os.getpid()}] if cmd == "query-cpus-fast" else {}
    f.write(json.dumps({"return": ret}) + "\n")
    f.flush()
    if cmd == "cont":
        sys.exit(65)
"""

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


# A stand-in tests/kvm-lane/lane.sh (IPIBENCH_LANE): the files a real one
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
    for mode, why in (("lockup", "the outer VM's kernel soft-locked in the first boot; a fresh "
                                 "outer VM ran it again"),
                      ("host-rip", "the first boot reset with the outer TCG's known SVM fault")):
        _, _, err = expect(lane(mode), 0, f"run.sh: {why} (tests/kvm-lane/README.md); this is "
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


def run_all(cases=CASES):
    """Run the cases with one context; the count of failures."""
    ctx = Ctx()
    ctx.tmp = tempfile.mkdtemp(prefix="ipibench-runner-")
    ctx.fake = Fake(ctx.tmp)
    try:
        bad = run_cases(cases, "tools", ctx, also=(subprocess.TimeoutExpired,))
    finally:
        subprocess.run(["rm", "-rf", ctx.tmp])
    return bad


if __name__ == "__main__":
    sys.exit(1 if run_all() else 0)
