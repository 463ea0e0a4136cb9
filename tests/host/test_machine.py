#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""host/ipibench/machine.py, the seam every read of the host goes through:
on the real machine (the one test that reads it, and only what is true on
every Linux host), on each fixture host (tests/host/hosts.py), and its log
of reads (tests/host/on_hosts.py).
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys
import tempfile

from harness import check, registry
from fixtures import main
import hosts

from ipibench import machine
from ipibench.boot import accel as A
from ipibench.kvmhost import facts


CASES, case = registry()
REAL = {}  # an environment without IPIBENCH_HOST_ROOT: the real machine


@case("machine: on the real host, what is true on every Linux machine: uname's release, "
      "CPUs online and usable, /proc/cpuinfo, paths not moved")
def _(_s):
    u = os.uname()
    k = machine.kernel(REAL)
    check(k["kernel"] == u.release and k["hostname"] == u.nodename and
          k["machine"] == u.machine, f"kernel {k} against uname {u}")
    n, usable, allowed = machine.cpus(REAL), machine.usable_cpus(REAL), machine.allowed_cpus()
    check(isinstance(n, int) and 1 <= usable <= n and len(allowed) == usable,
          f"{n} online, {usable} usable, allowed {allowed}")
    check("processor" in (machine.read("/proc/cpuinfo", REAL) or ""), "no /proc/cpuinfo")
    check(machine.path("/sys/module", REAL) == "/sys/module" and machine.root(REAL) == "/" and
          machine.exists(machine.process(os.getpid()), REAL), "the real root")
    check(machine.process(os.getpid(), "stat") == machine.path(f"/proc/{os.getpid()}/stat",
                                                               REAL), "a process's folder")
    core = machine.cpu_core(allowed[0], REAL)
    check(core is None or allowed[0] in core[2], f"CPU {allowed[0]}'s core: {core}")


# What each fixture host must look like through the seam: CPU model, KVM's
# state as HostKvm judges it (None: usable hardware), kvm_amd.avic.
EXPECT = {
    "intel-kvm": ("Intel(R) Xeon(R) Platinum 8480+", None, None),
    "amd-avic": ("AMD EPYC 9654 96-Core Processor", None, "Y"),
    "hygon": ("Hygon C86 7285 32-core Processor", None, "Y"),
    "pvm": ("AMD EPYC", "software", None),
    "no-kvm": ("Intel(R) Xeon(R) Processor", "/dev/kvm is missing (No such file or directory)",
               None),
    "kvm-closed": ("Intel(R) Xeon(R) Platinum 8480+",
                   "/dev/kvm is not accessible (Permission denied)", None),
}


@case("machine: each fixture host read through the seam: its CPU, kernel, KVM and its "
      "parameters, its CPUs' cores, whatever the real host is")
def _(_s):
    check(sorted(EXPECT) == sorted(hosts.HOSTS), f"hosts {sorted(hosts.HOSTS)}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (model, kvm, avic) in EXPECT.items():
            env = {machine.ROOT_VAR: hosts.make(tmp, name)}
            h = facts.host_facts("QEMU 9.2.0", env)
            check(h["cpu_model"] == model and h["kernel"] == "6.12.57-fixture" and
                  h["hostname"].startswith("fixture-") and isinstance(h["cpus"], int),
                  f"{name}: {h['cpu_model']} {h['kernel']} {h['hostname']} {h['cpus']}")
            check(h["kvm_params"].get("kvm_amd.avic") == avic, f"{name}: {h['kvm_params']}")
            k = A.HostKvm("qemu-system-x86_64", env)
            got = k.unusable() or ("software" if k.software() else None)
            check(got == kvm, f"{name}: KVM {got!r}, expected {kvm!r}")
        env = {machine.ROOT_VAR: hosts.make(tmp, "intel-kvm")}
        check(machine.cpu_core(5, env) == (0, 1, [1, 5]) and machine.cpu_core(9, env) is None,
              f"topology: {machine.cpu_core(5, env)}, {machine.cpu_core(9, env)}")
        check(machine.kernel({machine.ROOT_VAR: os.path.join(tmp, "none")}) ==
              dict.fromkeys(("hostname", "kernel", "kernel_version", "machine")) and
              machine.cpus({machine.ROOT_VAR: os.path.join(tmp, "none")}) is None,
              "a fixture without a file says None, never the real host's")


@case("machine: IPIBENCH_HOST_LOG gets the root and path of every read, none without it")
def _(_s):
    with tempfile.TemporaryDirectory() as tmp:
        log, env = os.path.join(tmp, "log"), {machine.ROOT_VAR: hosts.make(tmp, "pvm")}
        old = os.environ.get("IPIBENCH_HOST_LOG")
        os.environ["IPIBENCH_HOST_LOG"] = log
        try:
            machine.read("/proc/cpuinfo", env)
            machine.isdir("/sys/module/kvm_pvm", env)
        finally:
            os.environ.pop("IPIBENCH_HOST_LOG")
            if old is not None:
                os.environ["IPIBENCH_HOST_LOG"] = old
        machine.read("/proc/cmdline", env)
        want = [f"{env[machine.ROOT_VAR]}\t/proc/cpuinfo\t{os.getpid()}",
                f"{env[machine.ROOT_VAR]}\t/sys/module/kvm_pvm\t{os.getpid()}"]
        check(open(log).read().splitlines() == want, open(log).read())


if __name__ == "__main__":
    sys.exit(main(CASES))
