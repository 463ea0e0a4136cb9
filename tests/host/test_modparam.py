#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/modparam.py, ab's --module-param, against a stand-in /sys, /proc
and modprobe (IPIBENCH_HOST_ROOT): what it refuses (a foreign module, a path,
an unknown name, a value not of the type, non-root, a built-in module),
changing nothing; a writable parameter written, a read-only one set by
reloading its module (its holders out first and back after), read back
and put back.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys

from harness import Fail, check, registry

from ipibench import machine
from fixtures import main


CASES, case = registry()


def modparam_tree(root, params, holders=None, builtin=()):
    """IPIBENCH_HOST_ROOT for kvmhost/modparam.py: params {(module, param): (value,
    mode)}, holders {module: [modules holding it]}, modules in builtin without
    initstate. The stand-in modprobe logs its argv ('|'-separated, one call a
    line) and, loading MODULE P=V, leaves V in P's file (read-only, as a
    parameter read at load time is)."""
    for (mod, param), (val, mode) in params.items():
        d = os.path.join(root, "sys/module", mod, "parameters")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, param), "w") as f:
            f.write(val + "\n")
        os.chmod(os.path.join(d, param), mode)
    for mod in {m for m, _ in params}:
        if mod not in builtin:
            with open(os.path.join(root, "sys/module", mod, "initstate"), "w") as f:
                f.write("live\n")
    for mod, users in (holders or {}).items():
        os.makedirs(os.path.join(root, "sys/module", mod, "holders"))
        for u in users:
            os.symlink(f"../../{u}", os.path.join(root, "sys/module", mod, "holders", u))
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)
    with open(os.path.join(root, "proc/cpuinfo"), "w") as f:
        f.write("flags : fpu sse svm avic\n")
    mp = os.path.join(root, "modprobe")
    log = os.path.join(root, "modprobe.log")
    with open(mp, "w") as f:
        f.write("#!/bin/sh\n"
                f"printf '%s|' \"$@\" >> {log}; echo >> {log}\n"
                "[ \"$1\" = -r ] && exit 0\n"
                "[ -n \"$2\" ] || exit 0\n"
                f"f={root}/sys/module/$1/parameters/${{2%%=*}}\n"
                "rm -f \"$f\"; echo \"${2#*=}\" > \"$f\"; chmod 444 \"$f\"\n")
    os.chmod(mp, 0o755)
    return {"IPIBENCH_HOST_ROOT": root, "IPIBENCH_AB_EUID": "0", "IPIBENCH_AB_MODPROBE": mp}


def modprobe_calls(root):
    try:
        return [line.rstrip("\n") for line in open(os.path.join(root, "modprobe.log"))]
    except FileNotFoundError:
        return []


STAND_IN_PARAMS = {("kvm_amd", "avic"): ("N", 0o444), ("kvm_amd", "vnmi"): ("Y", 0o444),
                   ("kvm_amd", "pause_filter_count"): ("3000", 0o444),
                   ("kvm", "halt_poll_ns"): ("200000", 0o644),
                   ("kvm", "pi_inject_timer"): ("0", 0o644),
                   ("kvm", "enable_virt_at_load"): ("Y", 0o444),
                   ("kvm_intel", "vmentry_l1d_flush"): ("cond", 0o644),
                   ("kvm_intel", "preemption_timer"): ("Y", 0o444)}


@case("ab --module-param: refuses a foreign module, a path, an unknown name (listing what "
      "exists), a value not of the type, non-root, a built-in module; nothing changed")
def _(s):
    from ipibench.kvmhost import modparam as M
    root = os.path.join(s.tmp, "modparam-refuse")
    env = modparam_tree(root, STAND_IN_PARAMS, builtin=("kvm_intel",))
    before = {k: open(os.path.join(root, "sys/module", k[0], "parameters", k[1])).read()
              for k in STAND_IN_PARAMS}
    os.makedirs(os.path.join(root, "sys/module/video/parameters"))
    for mod, param, values, needle in (
            ("video", "brightness", ["0", "1"], "of kvm, kvm_amd, kvm_intel only"),
            ("kvm-amd", "avic", ["0", "1"], "kvm_amd, not kvm-amd"),
            ("kvm_amd", "../../video/parameters/x", ["0", "1"], "never a path"),
            ("kvm_amd", "avic/../vnmi", ["0", "1"], "never a path"),
            ("kvm_amd", "nope", ["0", "1"],
             "unknown parameter kvm_amd.nope: kvm_amd has avic, pause_filter_count, vnmi"),
            ("kvm_amd", "avic", ["0", "2"], "kvm_amd.avic takes a bool (0, 1, Y, N, y or n) "
             "(it reads N), not '2'"),
            ("kvm_amd", "pause_filter_count", ["3000", "Y"], "takes an integer (it reads 3000), "
             "not 'Y'"),
            ("kvm", "halt_poll_ns", ["0", "1e3"], "not '1e3'"),
            ("kvm", "halt_poll_ns", ["0", "1;reboot"], "not '1;reboot'"),
            ("kvm_intel", "vmentry_l1d_flush", ["never", "cond"],
             "reads 'cond', neither a bool nor an integer"),
            ("kvm_intel", "preemption_timer", ["N", "Y"], "built into this kernel")):
        p = M.Param(M.Host(env), mod, param)
        try:
            p.check(values)
            raise Fail(f"{mod}.{param}={values} was not refused")
        except M.Refused as e:
            check(e.code == 33 and needle in e.message and "nothing was changed" in e.message,
                  f"{mod}.{param}={values}: {e.message}")
    p = M.Param(M.Host(dict(env, IPIBENCH_AB_EUID="1000")), "kvm", "halt_poll_ns")
    try:
        p.check(["0", "1000"])
        raise Fail("non-root was not refused")
    except M.Refused as e:
        check("needs root" in e.message, e.message)
    # A VM on /dev/kvm: a reload is refused, a run-time write is not.
    os.makedirs(os.path.join(root, "proc/4242/fd"))
    os.symlink(machine.KVM_DEVICE, os.path.join(root, "proc/4242/fd/3"))
    try:
        M.Param(M.Host(env), "kvm_amd", "vnmi").check(["N", "Y"])
        raise Fail("a reload under a running VM was not refused")
    except M.Refused as e:
        check("/dev/kvm is held by 4242" in e.message, e.message)
    M.Param(M.Host(env), "kvm", "halt_poll_ns").check(["0", "1000"])
    check(modprobe_calls(root) == [], f"modprobe ran: {modprobe_calls(root)}")
    after = {k: open(os.path.join(root, "sys/module", k[0], "parameters", k[1])).read()
             for k in STAND_IN_PARAMS}
    check(before == after, "a refusal changed a parameter")


@case("ab --module-param: a writable parameter is written, a read-only one reloads its module "
      "(holders out first and back after, argv never a shell); read back; put back")
def _(s):
    from ipibench.kvmhost import modparam as M
    root = os.path.join(s.tmp, "modparam-set")
    env = modparam_tree(root, STAND_IN_PARAMS, holders={"kvm": ["kvm_amd"]})
    pfile = lambda mod, param: os.path.join(root, "sys/module", mod, "parameters", param)  # noqa
    # kvm.halt_poll_ns is 0644: written, no modprobe.
    p = M.Param(M.Host(env), "kvm", "halt_poll_ns")
    p.check(["0", "1000"])
    check(p.set("1000") == "1000" and p.how == "write", "halt_poll_ns not written")
    p.restore()
    check(open(pfile("kvm", "halt_poll_ns")).read().strip() == "200000", "not put back")
    # A 0/1 integer takes Y and N, as 1 and 0.
    p = M.Param(M.Host(env), "kvm", "pi_inject_timer")
    p.check(["N", "Y"])
    check(p.set("Y") == "1", f"pi_inject_timer=Y read back {p.read()}")
    p.restore()
    check(modprobe_calls(root) == [], f"a write ran modprobe: {modprobe_calls(root)}")
    # kvm_amd.vnmi is 0444 (no list of these tools names it): reloaded with it.
    p = M.Param(M.Host(env), "kvm_amd", "vnmi")
    p.check(["N", "Y"])
    got = p.set("N")
    check(got == "N" and p.how == "reload" and M.granted("N", got), f"vnmi read back {got}")
    p.restore()
    calls = modprobe_calls(root)
    check(calls == ["-r|kvm_amd|", "kvm_amd|vnmi=N|", "-r|kvm_amd|", "kvm_amd|vnmi=Y|"],
          f"modprobe calls {calls}")
    # kvm's own load-time parameter: kvm_amd (its holder) out first, back after.
    os.unlink(os.path.join(root, "modprobe.log"))
    p = M.Param(M.Host(env), "kvm", "enable_virt_at_load")
    p.check(["N", "Y"])
    check(p.set("N") == "N", "enable_virt_at_load not set")
    calls = modprobe_calls(root)
    check(calls == ["-r|kvm_amd|", "-r|kvm|", "kvm|enable_virt_at_load=N|", "kvm_amd|"],
          f"modprobe calls {calls}")
    check(M.granted("10", "010") and M.granted("1", "Y") and not M.granted("1", "N") and
          not M.granted("1", "0"), "granted()")


if __name__ == "__main__":
    sys.exit(main(CASES))
