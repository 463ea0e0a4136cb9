#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/host_class.py: each class from the facts a run saves (the CPU
flags, the module parameters as the module reports them, the accelerator,
a PVM host's reason), never from this machine; the class a saved --exits
run records and prints in summary.txt.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry

from ipibench.boot import save
from ipibench.kvmhost import host_class as H
from fixtures import main


CASES, case = registry()

AMD = ["svm", "x2apic"]
INTEL = ["vmx", "vapic", "vapic_reg", "vid", "posted_intr", "x2apic"]


@case("host class: AMD hosts by kvm_amd.avic, kvm_amd.enable_ipiv and the x2avic flag")
def _(ctx):
    want = {
        ("svm-no-avic", "kvm_amd.avic=N"): (AMD, {"kvm_amd.avic": "N"}),
        ("avic", "kvm_amd.avic=Y, no kvm_amd.enable_ipiv (before 6.17: always on), "
                 "no x2avic"): (AMD + ["avic"], {"kvm_amd.avic": "Y"}),
        ("avic", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=Y, no x2avic"):
            (AMD + ["avic"], {"kvm_amd.avic": "1", "kvm_amd.enable_ipiv": "Y"}),
        ("avic-ipiv-off", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=N"):
            (AMD + ["avic"], {"kvm_amd.avic": "Y", "kvm_amd.enable_ipiv": "N"}),
        ("avic-ipiv-off", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=N, x2avic"):
            (AMD + ["avic", "x2avic"], {"kvm_amd.avic": "Y", "kvm_amd.enable_ipiv": "0"}),
        ("x2avic", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=Y, x2avic"):
            (AMD + ["avic", "x2avic"], {"kvm_amd.avic": "Y", "kvm_amd.enable_ipiv": "Y"}),
        ("unknown", "svm, kvm_amd.avic not read"): (AMD + ["avic"], {}),
    }
    for expected, (flags, params) in want.items():
        got = H.classify("kvm", flags, params)
        check(got == expected, f"{flags} {params}: {got}, expected {expected}")


@case("host class: Intel hosts by kvm_intel.enable_apicv and kvm_intel.enable_ipiv")
def _(ctx):
    want = {
        ("vmx-no-apicv", "kvm_intel.enable_apicv=N"): {"kvm_intel.enable_apicv": "N"},
        ("apicv", "kvm_intel.enable_apicv=Y, kvm_intel.enable_ipiv=N"):
            {"kvm_intel.enable_apicv": "Y", "kvm_intel.enable_ipiv": "N"},
        ("apicv", "kvm_intel.enable_apicv=Y, no kvm_intel.enable_ipiv: a kernel without "
                  "IPIv"): {"kvm_intel.enable_apicv": "Y"},
        ("apicv-ipiv", "kvm_intel.enable_apicv=Y, kvm_intel.enable_ipiv=Y"):
            {"kvm_intel.enable_apicv": "Y", "kvm_intel.enable_ipiv": "Y"},
        ("unknown", "vmx, kvm_intel.enable_apicv not read"): {},
    }
    for expected, params in want.items():
        got = H.classify("kvm", INTEL, params)
        check(got == expected, f"{params}: {got}, expected {expected}")


@case("host class: the lane, a PVM host, TCG, Xen and unread flags are named for what ran")
def _(ctx):
    check(H.classify("kvm-in-tcg", None, {"kvm_amd.avic": "N"})[0] == "lane", "the lane")
    pvm = H.classify("kvm", [], {}, software="this host's /dev/kvm is PVM (module kvm_pvm)")
    check(pvm == ("pvm", "this host's /dev/kvm is PVM (module kvm_pvm)"), f"pvm: {pvm}")
    for accel in ("tcg", "tcg-single", "xen-in-tcg", ""):
        check(H.classify(accel, AMD, {})[0] == "unknown", f"{accel!r}")
    check(H.classify("kvm", None, {"kvm_amd.avic": "Y"})[0] == "unknown", "flags not read")
    check(H.classify("kvm", ["x2apic"], {})[0] == "unknown", "neither svm nor vmx")
    check(set(H.CLASSES) >= {"lane", "pvm", "svm-no-avic", "avic", "avic-ipiv-off", "x2avic",
                             "vmx-no-apicv", "apicv", "apicv-ipiv", "unknown"}, "the classes")


@case("host class: summary.txt's exits part names the class a saved --exits run recorded")
def _(ctx):
    doc = {"run": {"exits": {"outside": None, "markers": 0, "apicv_inhibits": [],
                             "apicv": "AVIC: disabled in kvm_amd (kvm_amd.avic=N)",
                             "host_class": {"name": "svm-no-avic", "why": "kvm_amd.avic=N"}}},
           "records": []}
    lines = save.exits_lines(doc)
    check(f"  host class: svm-no-avic (kvm_amd.avic=N): {H.CLASSES['svm-no-avic']}" in lines,
          f"{lines}")
    doc["run"]["exits"]["host_class"] = {"name": "no-such-class", "why": "x"}
    check(not any("host class" in x for x in save.exits_lines(doc)), "an unknown name shown")


if __name__ == "__main__":
    sys.exit(main(CASES))
