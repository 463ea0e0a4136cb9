#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/accel.py: the accelerator and the fallback rules against a
stand-in KVM (fixtures.FakeKvm), and HostKvm on every kind of host
(/dev/kvm missing, not a device, not accessible, a software KVM, a hardware
one); the checks run.sh makes before a boot on each.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys
import tempfile

from harness import REPO, check, registry
from fixtures import PRESETS, FakeKvm, main, raises
import hosts

from ipibench import machine
from ipibench import options as O
from ipibench.boot import accel as A
from ipibench.boot import run as B
from ipibench.kvmhost import pin_perf as K


CASES, case = registry()


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


# --- every kind of host KVM: the seam's fixture hosts (tests/host/hosts.py)
# make each here; tests/host/test_run.py runs run.sh on each.


def host_kinds(tmp, tracefs=False):
    """name -> HostKvm of each kind of host: no /dev/kvm, one that is not a
    character device, one not accessible, a software KVM (PVM) and a
    hardware KVM (/dev/null stands in for its device: any user opens it),
    each with a stand-in tracefs or without."""
    def kvm(name, **kw):
        where = os.path.join(tmp, f"{name}-{kw.get('dev_kvm')}-{tracefs}")
        return A.HostKvm("qemu-system-x86_64",
                         {"IPIBENCH_HOST_ROOT": hosts.make(where, name, tracefs=tracefs, **kw)})
    return {"missing": kvm("no-kvm"), "not a device": kvm("intel-kvm", dev_kvm="file"),
            "not accessible": kvm("kvm-closed"), "software": kvm("pvm"),
            "hardware": kvm("intel-kvm")}


@case("run.sh's HostKvm on every kind of host: missing, not a device, not accessible, software, "
       "hardware")
def _(_s):
    with tempfile.TemporaryDirectory() as tmp:
        kinds = host_kinds(tmp)
        reasons = {k: kvm.unusable() for k, kvm in kinds.items()}
        for kind, want in (("missing", "/dev/kvm is missing (No such file or directory)"),
                           ("not a device", "/dev/kvm is not a character device (it is a "
                                            "regular file)"),
                           ("not accessible", "/dev/kvm is not accessible (Permission denied)"),
                           ("software", None), ("hardware", None)):
            check(reasons[kind] == want and kinds[kind].usable() == (want is None),
                  f"{kind}: {reasons[kind]!r}")
        check([k for k, kvm in kinds.items() if kvm.software()] == ["software"] and
              kinds["software"].software().startswith("this host's /dev/kvm is PVM (module "
                                                      "kvm_pvm"), "software()")
        on = {k: {"IPIBENCH_HOST_ROOT": hosts.make(os.path.join(tmp, k), "intel-kvm", dev_kvm=k)}
              for k in ("directory", "ENODEV")}
        why = A.HostKvm("q", on["directory"]).unusable()
        check(why == "/dev/kvm is not a character device (it is a directory)", why)
        why = A.HostKvm("q", on["ENODEV"]).unusable()
        check(why.startswith("/dev/kvm is not accessible (No such device: no KVM module"), why)
        check(A.HostKvm("q", {}).path == machine.KVM_DEVICE, "the default device")


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
        # A plain boot warns, and runs qemu64: PVM refuses the MSRs -cpu
        # host sets (QEMU aborts). The model is probed before the boot: one
        # refused is exit 31, naming the --cpu that works.
        soft = FakeKvm(software=pvm.software())
        acc, cpu, notes = A.choose("kvm", "", "x2apic", x2, "q35", False, soft, [])
        check((acc, cpu) == ("kvm", "qemu64," + x2) and len(notes) == 2 and
              notes[0].startswith("run.sh: warning: this host's /dev/kvm is PVM") and
              notes[1].startswith("run.sh: -cpu qemu64: a software KVM refuses the MSRs") and
              soft.probed == [("qemu64," + x2, "q35")], f"{notes} {soft.probed}")
        check(A.choose("kvm", "max", "x2apic", x2, "q35", False, soft, [])[:2] ==
              ("kvm", "max," + x2), "--cpu max on PVM: as named")
        refusing = FakeKvm(software=pvm.software(), refuse=lambda m: m.startswith("host"),
                           why="kvm_buf_set_msrs: Assertion failed")
        msg = raises(31, A.choose, "kvm", "host", "x2apic", x2, "q35", False, refusing, [])
        check(msg == f"--accel kvm: this host's software KVM cannot run -cpu host,{x2} "
              "(kvm_buf_set_msrs: Assertion failed); --cpu qemu64 is the model it runs", msg)
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
        traced = host_kinds(tmp, tracefs=True)
        o = O.parse_run(["--accel", "kvm", "--exits"], REPO)
        for kind, on, code in (("missing", kinds, 31), ("not a device", kinds, 31),
                               ("software", traced, 31), ("hardware", kinds, 29)):
            raises(code, B.check_host, B.Env(REPO, REPO, on[kind].environ), o, "x2apic", x2)
        env = B.Env(REPO, REPO, traced["hardware"].environ)
        check(B.check_host(env, o, "x2apic", x2) == "kvm", "hardware with tracefs")


if __name__ == "__main__":
    sys.exit(main(CASES))
