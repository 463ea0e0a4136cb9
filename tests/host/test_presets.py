#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""presets.py and presets.conf: every configuration parses, an unknown or
malformed one exits 26; the -cpu flags only KVM offers, and the presets
`./run.sh list` says need KVM.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys

from harness import call, check, expect, registry
from fixtures import main, tool, write

from ipibench.exit_codes import EX_PRESET
from ipibench.presets import kvm_only_flags, load_presets, print_presets
from ipibench.presets import PRESETS as PRESETS_CONF


CASES, case = registry()


@case("presets.conf: every configuration parses; unknown or malformed -> exit 26")
def _(s):
    p = load_presets(PRESETS_CONF)
    for name in ("xapic", "x2apic", "hv", "hv-xmm", "hv-vapic", "kvm-pv"):
        check(name in p, f"preset {name} missing")
    check("x2apic=off" in p["xapic"]["cpu"] and "hv-xmm-input" in p["hv-xmm"]["cpu"], "flags")
    expect(call(print_presets, PRESETS_CONF, "nope"), EX_PRESET,
           "unknown configuration 'nope'", "xapic")
    for text, msg in (("a | b | 2 | \n", "4 fields"), ("A | x | 2 | | d\n", "bad configuration"),
                      ("a | x | two | | d\n", "not a vCPU count"),
                      ("a | x | 2 | | d\na | y | 2 | | d\n", "defined twice")):
        conf = write(os.path.join(s.tmp, "p", "presets.conf"), text)
        expect(call(print_presets, conf), EX_PRESET, msg)
    expect(call(print_presets, os.path.join(s.tmp, "nope.conf")), EX_PRESET, "cannot read")


@case("xen-presets.conf: every Xen preset parses; unknown or malformed -> exit 26")
def _(s):
    from ipibench.boot import xen_lane as X
    p = X.load_xen_presets()
    check(p["xen-pvh"]["type"] == "pvh" and p["xen-viridian"]["type"] == "hvm", f"{p}")
    check('"hcall_ipi"' in p["xen-viridian"]["settings"], "viridian's IPI group")
    expect(call(X.xen_preset, "xen-nope"), EX_PRESET, "unknown Xen preset 'xen-nope'", "xen-pvh")
    # Both skip what the outer emulator cannot run (docs/xen.md).
    check(p["xen-viridian"]["keys"] == ["hv_os_id=windows", "skip=tpr-hold,self-tpr"] and
          p["xen-pvh"]["keys"] == ["skip=tpr-hold,self-tpr"], f"{p}")
    # ./run.sh list shows them after the KVM presets, with their xl lines and guest keys.
    expect(call(X.print_xen_presets), 0, "xen-pvh ", "xl: viridian=[", "guest: hv_os_id=windows")
    for text, msg in (("xen-a | pvh | 2 | | \n", "5 fields"),
                      ("a | pvh | 2 | | | d\n", "bad or repeated"),
                      ("xen-a | kvm | 2 | | | d\n", "not pvh or hvm"),
                      ("xen-a | hvm | 0 | | | d\n", "not a vCPU count"),
                      ("xen-a | hvm | 2 | | nokey | d\n", "not key=value"),
                      ("xen-a | pvh | 2 | | | d\nxen-a | hvm | 2 | | | d\n", "bad or repeated")):
        conf = write(os.path.join(s.tmp, "x", "xen-presets.conf"), text)
        expect(call(X.load_xen_presets, conf), EX_PRESET, msg)


@case("the -cpu flags only KVM offers (hv-*, kvm-pv-* not turned off); the presets that need it; "
      "those at 2 vCPUs say that a halted target's tick stays armed")
def _(s):
    for cpu, want in (("host,hv-relaxed,hv-vpindex", "hv-relaxed,hv-vpindex"),
                      ("max,kvm-pv-ipi=on", "kvm-pv-ipi=on"),
                      ("host,+kvm-pv-unhalt", "kvm-pv-unhalt"),
                      ("host,x2apic=on,kvm-pv-ipi=off", ""), ("max,-hv-ipi,hv-vapic=no", ""),
                      ("max,-x2apic", ""), ("host", "")):
        out = ",".join(kvm_only_flags(cpu))
        check(out == want, f"kvm-only {cpu}: {out!r}, expected {want!r}")
    _, out, _ = expect(tool("list"), 0)
    needs, armed, name = set(), set(), None
    for line in out.splitlines():
        name = line.split()[0] if line[:1].strip() else name
        if "needs KVM" in line:
            needs.add(name)
        if "single-halt: target-timer=armed" in line:
            armed.add(name)
    check(needs == {"hv", "hv-xmm", "hv-xmm-4", "hv-vapic", "kvm-pv"},
          f"listed as needing KVM: {sorted(needs)}")
    # Issue 42 item 5: at 2 vCPUs a halted target keeps its tick armed.
    from ipibench.presets import host_vcpus
    scaled = {"avic-report-xapic", "avic-report-x2apic"} if host_vcpus("host") < 3 else set()
    check(armed == {"x2apic", "xapic", "hv", "hv-xmm", "hv-vapic", "kvm-pv"} | scaled,
          f"listed with the target's tick armed: {sorted(armed)}")



@case("smp host: one vCPU a host core but CPU 0's, at least 2, at most 255 with x2APIC hidden")
def _(_s):
    from ipibench import machine
    from ipibench.presets import host_vcpus
    real = machine.allowed_cpus
    try:
        # The count is host_cores' (its own test: test_pin_perf's), capped.
        cores = len(machine.host_cores(list(range(600))))
        check(cores > 255, f"{cores} cores of 600 CPUs")
        for cpus, cpu, want in ((range(600), "x2apic=off,kvm-pv-ipi=off", 255),
                                (range(600), "x2apic=on", cores), ([0], "x2apic=on", 2)):
            machine.allowed_cpus = lambda c=cpus: list(c)
            got = host_vcpus("host", cpu)
            check(got == want, f"{len(cpus)} CPUs, {cpu}: {got}, expected {want}")
        check(host_vcpus(4, "x2apic=off") == 4, "a number is its own count")
    finally:
        machine.allowed_cpus = real

if __name__ == "__main__":
    sys.exit(main(CASES))
