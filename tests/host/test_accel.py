#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/accel.py: the accelerator and the fallback rules against a
stand-in KVM (fixtures.FakeKvm), and HostKvm on every kind of host
(/dev/kvm missing, not a device, not accessible, a software KVM, a hardware
one); the checks run.sh makes before a boot on each.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import errno
import os
import sys
import tempfile

from harness import REPO, check, registry, stand_in_tracefs
from fixtures import PRESETS, FakeKvm, main, raises

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


# --- every kind of host KVM: a stand-in device
# (IPIBENCH_DEV_KVM) and module directory (IPIBENCH_SYSFS) make each here;
# tests/host/test_run.py runs run.sh on each.


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


if __name__ == "__main__":
    sys.exit(main(CASES))
