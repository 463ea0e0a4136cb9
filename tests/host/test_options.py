#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""options.py, run.sh's option parsers: run's and matrix's options, their
values and every error (exit 2 with its message), the help text against the
parser, matrix --smp's QEMU topologies and lists, --memory's sizes and the
minimum the guest needs.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import Fail, check, registry
from fixtures import PRESETS, main, raises

from ipibench import options as O
from ipibench.boot import matrix as M


CASES, case = registry()


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
    for argv, msg, usage in ((["--bogus"], "unknown option '--bogus'", False),
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
                             (["--accel", "hvf"], "--accel takes kvm, tcg, tcg-single, kvm-in-tcg, "
                              "xen-in-tcg, xen or auto, not 'hvf'", False),
                             (["--accel", "xen-in-tcg", "--iso"], "--iso: under --accel "
                              "xen-in-tcg xl boots the image itself (PVH, or through the device "
                              "model's -kernel for an HVM guest)", False),
                             (["--accel", "xen", "--host-stats"], "--host-stats reads "
                              "KVM's statistics; Xen has none", False),
                             (["--accel", "xen", "--pin"], "--pin: under --accel xen Xen places "
                              "and runs the vCPUs (xl.cfg's cpus= would pin them); run.sh reads "
                              "nothing of them", False),
                             (["--accel", "xen-in-tcg", "--module-param", "kvm.x=1"],
                              "--module-param sets the lane's KVM (--accel kvm-in-tcg); a host's "
                              "KVM module is set by ./run.sh ab", False)):
        try:
            O.parse_run(argv, "/")
            raise Fail(f"{argv} accepted")
        except O.UsageError as e:
            check(e.code == 2 and e.message == msg, f"{argv}: {e.code} {e.message!r}")
            check((e.usage == O.USAGE_RUN) == usage, f"{argv}: usage {e.usage is not None}")
            check(not argv[0] == "--bogus" or e.hint.startswith("./run.sh --help lists"),
                  f"{argv}: where the help is: {e.hint!r}")
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


@case("run.sh reads its own options left to right: a value is the next argument whatever it "
      "looks like (-- too), only --pin takes OPTION=VALUE, --pin never takes the next argument; "
      "run checks --smp as matrix does, and names the option a near miss meant")
def _(_s):
    o = O.parse_matrix(["--presets", "x2apic", "--pin", "--timeout", "5", "--boots", "1"])
    check(o.passed == ["--pin", "--timeout", "5"] and o.boots == "1", f"{vars(o)}")
    o = O.parse_matrix(["--presets", "x", "--pin", "--exits", "--pin=1", "--label", "--"])
    check(o.passed == ["--pin", "--exits", "--pin=1"] and o.label == "--", f"{vars(o)}")
    check(O.parse_matrix(["--presets", "x", "--append"]).passed == ["--append", ""], "--append")
    o = O.parse_run(["--label", "--", "--append", "-x", "--pin=0-3", "--", "-device", "d"], "/")
    check((o.label, o.append, o.pin, o.qemu_args) == ("--", "-x", "0-3", ["-device", "d"]),
          f"{vars(o)}")
    # --smp is checked as matrix checks it; a near miss of an option is named.
    check("--smp 'two': cpus takes a positive count, not 'two'" in
          raises(2, O.parse_run, ["--smp", "two"], "/"), "run --smp two")
    check("(did you mean --smp?)" in raises(2, O.parse_run, ["--smpp", "4"], "/"), "--smpp")
    check(O.parse_run(["--pin"], "/").pin == "", "--pin alone: the CPUs run.sh may use")
    for argv, msg in ((["--pin", "0-3"], "unknown option '0-3'"),
                      (["--smp=4"], "unknown option '--smp=4'"), (["--iso=1"], "unknown option")):
        check(msg in raises(2, O.parse_run, argv, "/"), f"{argv}")
    o = O.parse_ab(["--module-param", "k.p=0,1", "--append", "--label=x", "--", "--boots", "2"])
    check(o.passed == ["--append", "--label=x", "--"] and o.boots == "2" and o.label == "ab",
          f"{vars(o)}")
    check("ab: --boots takes a count, not '--'" in
          raises(2, O.parse_ab, ["--module-param", "k.p=0,1", "--boots", "--"]), "ab --boots --")
    check(O.parse_list(["--names", "ignored"]) is True and O.parse_list([]) is False and
          O.parse_list(["-h"]) is None, "list reads its first argument only")


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


if __name__ == "__main__":
    sys.exit(main(CASES))
