#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/host_class.py: each class from the facts a run saves (the CPU
flags, the module parameters as the module reports them, the accelerator,
a PVM host's reason), never from this machine; the class a saved --exits
run records and prints in summary.txt. kvmhost/host_model.py: the model
file's lines, and records judged against a class (as predicted, diverging,
not modelled, an inhibited VM, doorbell misses predicted or the load's).
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import re
import sys

from harness import check, expect, IPIBENCH, registry, REPO, run_cmd

from ipibench.boot import save
from ipibench.kvmhost import apicv as AV
from ipibench.kvmhost import exit_labels as EL
from ipibench.kvmhost import host_class as H
from ipibench.kvmhost import host_model as HM
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
        ("x2avic-ipiv-off", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=N, x2avic"):
            (AMD + ["avic", "x2avic"], {"kvm_amd.avic": "Y", "kvm_amd.enable_ipiv": "0"}),
        ("x2avic", "kvm_amd.avic=Y, kvm_amd.enable_ipiv=Y, x2avic"):
            (AMD + ["avic", "x2avic"], {"kvm_amd.avic": "Y", "kvm_amd.enable_ipiv": "Y"}),
        ("unknown", "svm, kvm_amd.avic not read"): (AMD + ["avic"], {}),
    }
    for expected, (flags, params) in want.items():
        got = H.classify("kvm", flags, params)
        check(got == expected, f"{flags} {params}: {got}, expected {expected}")


@case("host class: AVIC on an erratum-#1235 family (Zen 1/2 before 6.17, Hygon 18h) is its own "
      "class, its single-halt not modelled; cpuinfo's vendor and family are read")
def _(ctx):
    from ipibench.kvmhost import facts
    text = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 49\n"
            "processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 23\n")
    check(facts.cpuinfo_family(text) == ("AuthenticAMD", 23), f"{facts.cpuinfo_family(text)}")
    check(facts.cpuinfo_family(None) == (None, None), "no cpuinfo")
    avic = {"kvm_amd.avic": "Y"}
    got = H.classify("kvm", AMD + ["avic"], avic, family=("AuthenticAMD", 0x17))
    check(got[0] == "avic-1235" and "erratum #1235" in got[1], f"Zen 2 before 6.17: {got}")
    got = H.classify("kvm", AMD + ["avic"], dict(avic, **{"kvm_amd.enable_ipiv": "Y"}),
                     family=("HygonGenuine", 0x18))
    check(got[0] == "avic-1235", f"Hygon 18h before 9a12fa5213cf: {got}")
    got = H.classify("kvm", AMD + ["avic"], dict(avic, **{"kvm_amd.enable_ipiv": "N"}),
                     family=("AuthenticAMD", 0x17))
    check(got[0] == "avic-ipiv-off", f"Zen 2 on 6.17: {got}")
    check(H.classify("kvm", AMD + ["avic"], avic, family=("AuthenticAMD", 0x19))[0] == "avic",
          "Zen 3")
    m = HM.load()
    halt = rec("xapic", "single-halt", "round-trip", "block", {}, {"hlt": 1.0},
               target_state="halt")
    send = rec("xapic", "send-cost", "send", "none", {}, {})
    x2halt = rec("x2apic", "single-halt", "round-trip", "block", {"msr (ICR)": 1.0},
                 {"hlt": 1.0, "msr (EOI)": 1.0}, target_state="halt")
    res = HM.judge([halt, send, x2halt], "avic-1235", m, kernel="6.8.0")
    check(res["unmodelled"] == 1 and res["matched"] == 2, f"only the xAPIC halt: {res}")
    # compare names the erratum on a side that ran on such a host.
    import json
    zen2 = saved_run(ctx, "zen2", "avic-1235", {}, {})
    path = os.path.join(zen2, "results.json")
    doc = json.load(open(path))
    doc["host"].update(accel="kvm", cpu_flags=AMD + ["avic"], cpu_vendor="AuthenticAMD",
                       cpu_family=23, kvm_params={"kvm_amd.avic": "Y"}, kernel="6.8.0")
    os.unlink(path)
    json.dump(doc, open(path, "w"))
    other = saved_run(ctx, "zen3", "avic", {}, {})
    expect(run_cmd(IPIBENCH + ["compare", other, zen2]), 0,
           "B: avic-1235: AVIC on a family with erratum #1235", "time the erratum, not AVIC")
    got = H.classify("kvm", INTEL, {"kvm_intel.enable_apicv": "N",
                                    "kvm_intel.flexpriority": "N"})
    check(got[0] == "unknown" and "flexpriority=N" in got[1], f"no flexpriority: {got}")


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
    x2 = (AMD + ["avic", "x2avic"], {"kvm_amd.avic": "Y"})
    check(H.classify("kvm", *x2, kernel="5.15.0")[0] == "avic", "x2AVIC before 6.0: AVIC's")
    check(H.classify("kvm", *x2, kernel="6.8.0")[0] == "x2avic", "x2AVIC on 6.8")
    check(set(H.CLASSES) >= {"lane", "pvm", "svm-no-avic", "avic", "avic-ipiv-off", "x2avic",
                             "x2avic-ipiv-off",
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


def good_trap():
    """x2apic's send-cost as KVM without APIC virtualization makes it."""
    return rec("x2apic", "send-cost", "send", "none", {"msr (ICR)": 1.0}, {"msr (EOI)": 1.0})


def rec(backend, bench, metric, variant, sender, targets, **extra):
    """A record with exits, as trace.attach() leaves one."""
    r = {"record": "result", "backend": backend, "bench": bench, "metric": metric,
         "variant": variant, "exits": {"iterations": 50, "sender": sender, "targets": targets}}
    r["exits"].update(extra.pop("exits", {}))
    r.update(extra)
    return r


@case("host model: every class but unknown and pvm has rows and a cite naming commits")
def _(ctx):
    m = HM.load()
    for cls in set(H.CLASSES) - {"unknown", "pvm"}:
        rows, real = HM.rows_of(m, cls)
        check(len(rows) >= 6, f"{cls}: {len(rows)} rows")
        cite = m["cites"].get(real, "")
        check("()" in cite, f"{real}: its cite names no KVM function")
        check(real == "svm-no-avic" or re.search(r"\b[0-9a-f]{12}\b", cite),
              f"{real}: its cite names no commit")
        for key, want in rows.items():
            check(re.search(r"\w\(\)|\b[0-9a-f]{12}\b|SDM|APM", want["why"]),
                  f"{real} {key}: its why names no KVM function, commit or manual")


@case("host model: a malformed line is refused naming its line")
def _(ctx):
    for text, want in (("row | a | b | c | d | e | 1 | 0 | x | yes | - | f()\n", "not a number"),
                       ("row | a | b | c | d | e | 1 | 0 | 1 | maybe | - | f()\n",
                        "eoi is yes or no"),
                       ("row | a | b | c | d | e | 1 | 0 | 1 | yes | - | \n", "says why"),
                       ("same | a | nowhere\n", "nowhere has no rows"),
                       ("row | a | b\n", "not a same, cite or row line"),
                       ("row | a | b | c | d | e | 1 | 0 | 1 | yes | - | f()\n" * 2,
                        "given twice")):
        path = os.path.join(ctx.tmp, "model.conf")
        with open(path, "w") as f:
            f.write(text)
        try:
            HM.load(path)
            check(False, f"{text!r} loaded")
        except HM.ModelError as e:
            check(want in str(e) and "model.conf:" in str(e), f"{text!r}: {e}")


@case("host model: records as predicted, diverging, not modelled, on an inhibited VM")
def _(ctx):
    m = HM.load()
    good = rec("x2apic", "send-cost", "send", "none", {"msr (ICR)": 1.0},
               {"msr (EOI)": 1.0, "interrupt": 1.8})
    extra = rec("x2apic", "send-cost", "send", "none", {"msr (ICR)": 1.0, "msr (ID read)": 1.0},
                {"msr (EOI)": 1.0})
    other = rec("x2apic-nmi", "send-cost", "send", "none", {"msr (ICR)": 1.0}, {"iret": 1.0})
    res = HM.judge([good, extra, other], "lane", m)
    check(res["matched"] == 1 and res["unmodelled"] == 1 and len(res["diverging"]) == 1,
          f"{res}")
    check(res["diverging"][0]["what"] == "sender 2.00, expected 1.00", f"{res}")
    check(HM.lines(res)[0].endswith("1 records as predicted, 1 diverge, 1 not modelled"),
          f"{HM.lines(res)}")
    # x2AVIC predicts no exit; the same trapped record diverges there, unless
    # the VM was inhibited, which judges it as the unaccelerated class.
    res = HM.judge([good], "x2avic", m)
    check(res["diverging"] and "sender 1.00, expected 0.00" in res["diverging"][0]["what"],
          f"{res}")
    inhibited = rec("x2apic", "send-cost", "send", "none", {"msr (ICR)": 1.0},
                    {"msr (EOI)": 1.0}, exits={"apicv": "inhibited (PIT_REINJ)"})
    res = HM.judge([inhibited], "x2avic", m)
    check(res["matched"] == 1 and not res["diverging"], f"inhibited: {res}")
    # A wake the trace calls a poll where the class predicts a block.
    halt = rec("x2apic", "single-halt", "round-trip", "block", {"msr (ICR)": 1.0},
               {"hlt": 1.0, "msr (EOI)": 1.0}, exits={"wake": "poll"}, target_state="halt")
    # The wake follows the load and halt polling: a note, never a divergence.
    res = HM.judge([halt], "svm-no-avic", m)
    check(res["matched"] == 1 and not res["diverging"] and
          res["notes"][0]["what"].startswith("wake poll, predicted block"), f"{res}")
    halt["exits"]["wake_disagrees"] = "the trace says poll, KVM's statistics say block"
    check(HM.judge([halt], "svm-no-avic", m)["matched"] == 1, "a disputed wake judged")
    # AVIC's doorbell miss needs a blocked target: 20% of the wakes polled
    # (a late HLT under load), those iterations made no miss: as predicted.
    avic = rec("xapic", "single-halt", "round-trip", "block",
               {"avic_incomplete_ipi (target not running)": 0.8},
               {"hlt": 1.0}, exits={"target_wakeups": {"poll": 0.2, "wait": 0.8}},
               target_state="halt")
    res = HM.judge([avic], "avic", m)
    check(res["matched"] == 1 and "20% of the wakes polled" in res["notes"][0]["what"],
          f"a polled share of the wakes: {res}")
    # With IPI virtualization off every send misses, polled target or not.
    off = rec("xapic", "single-halt", "round-trip", "block",
              {"avic_incomplete_ipi (target not running)": 1.0},
              {"hlt": 1.0}, exits={"target_wakeups": {"poll": 0.6, "wait": 0.4}},
              target_state="halt")
    res = HM.judge([off], "avic-ipiv-off", m, kernel="6.17.0")
    check(res["matched"] == 1 and not res["diverging"], f"IPIv off, 60% polled: {res}")


@case("host model: AVIC doorbell misses judged where the class predicts them, else the load's")
def _(ctx):
    m = HM.load()
    miss = "avic_incomplete_ipi (target not running)"
    # IPI virtualization off: every xAPIC send to another vCPU misses.
    send = rec("xapic", "send-cost", "send", "none", {miss: 1.0}, {})
    check(HM.judge([send], "avic-ipiv-off", m)["matched"] == 1, "ipiv off: a miss a send")
    none = rec("xapic", "send-cost", "send", "none", {}, {})
    res = HM.judge([none], "avic-ipiv-off", m)
    check(res["diverging"] and "sender 0.00, expected 1.00" in res["diverging"][0]["what"],
          f"ipiv off without the miss: {res}")
    # The sender's APIC verdict with IPI virtualization off: every send exits.
    send["exits"]["targets"] = {}
    sides = AV.apic_accel_sides(send, {"kvm_amd.enable_ipiv": "N"})
    check(sides["sender"][0] == "no" and "enable_ipiv=N" in sides["sender"][1], f"{sides}")
    check(AV.apic_accel_sides(send, {"kvm_amd.enable_ipiv": "Y"})["sender"][0] == "yes",
          "a miss with IPI virtualization on is the wake's question")
    # IPI virtualization on, a spinning target: a miss is the load's, counted apart.
    loaded = rec("xapic", "send-cost", "send", "none", {miss: 0.3}, {})
    res = HM.judge([loaded], "avic", m)
    check(res["matched"] == 1 and res["load_misses"] == 1, f"load: {res}")
    check("not judged" in HM.lines(res)[0], f"{HM.lines(res)}")
    # After the first x2APIC switch on AVIC without x2AVIC: not modelled.
    late = rec("xapic", "send-cost", "send", "none", {"npf (ICR)": 1.0}, {}, after_x2apic=True)
    for cls in ("avic", "avic-ipiv-off"):
        check(HM.judge([late], cls, m)["unmodelled"] == 1, f"after x2APIC on {cls}")


@case("host model: what it cannot judge is not modelled: AVIC before 6.0, cpu-pm=on, an inhibit "
      "changing inside the window; VMX's APIC-write exit is judged and named")
def _(ctx):
    m = HM.load()
    xsend = rec("xapic", "send-cost", "send", "none", {}, {})
    check(HM.judge([xsend], "avic", m, kernel="5.15.0-91-generic")["unmodelled"] == 1,
          "AVIC on 5.15: the xAPIC rows")
    check(HM.judge([xsend], "avic", m, kernel="6.8.0")["matched"] == 1, "AVIC on 6.8")
    x2 = rec("x2apic", "send-cost", "send", "none", {}, {})
    check(HM.judge([x2], "apicv-ipiv", m, kernel="5.4.0")["unmodelled"] == 1,
          "an accelerated class before 5.9: no inhibit traced")
    check(HM.judge([x2], "apicv-ipiv", m, kernel="5.15.0")["matched"] == 1,
          "5.9 to 5.18 trace kvm_apicv_update_request")
    check(HM.judge([good_trap()], "svm-no-avic", m, kernel="5.4.0")["matched"] == 1,
          "an unaccelerated class is judged on any kernel")
    halt = rec("x2apic", "single-halt", "round-trip", "block", {"msr (ICR)": 1.0},
               {"msr (EOI)": 1.0}, target_state="halt")
    check(HM.judge([halt], "svm-no-avic", m, cpu_pm=True)["unmodelled"] == 1, "cpu-pm=on")
    check(HM.judge([halt], "svm-no-avic", m)["diverging"], "a halt without its HLT exit")
    mixed = rec("x2apic", "send-cost", "send", "none", {"msr (ICR)": 0.5}, {"msr (EOI)": 0.5},
                exits={"apicv": "inhibited: IRQWIN", "apicv_changed_inside": True})
    check(HM.judge([mixed], "x2avic", m)["unmodelled"] == 1, "an inhibit changing inside")
    check(EL.exit_detail("APIC_WRITE", 0x300, None) == "ICR", "APIC_WRITE's register")
    check(EL.exit_detail("EOI_INDUCED", 0x31, None) == "EOI", "EOI_INDUCED")
    # AVIC's unaccelerated access: the write bit is EXITINFO1's bit 32.
    check(EL.exit_detail("avic_unaccelerated_access", 0x1000000b0, 0xfd) == "EOI" and
          EL.exit_detail("avic_unaccelerated_access", 0x300, 0xfd) == "ICR read",
          "avic_unaccelerated_access's write bit")
    vmx = rec("xapic", "send-cost", "send", "none", {"APIC_WRITE (ICR)": 1.0}, {})
    check(HM.judge([vmx], "apicv", m)["matched"] == 1, "apicv: the ICR write's APIC-write exit")


def saved_run(ctx, name, cls, sender, targets):
    """A saved boot (synth) whose run says --exits on a host of class cls and
    whose first result is x2apic's send-cost send with these exits."""
    import json
    import synth
    folder = os.path.join(ctx.tmp, name)
    synth.make_set(folder, boots=1, samples=20)
    path = os.path.join(folder, "boot1", "results.json")
    doc = json.load(open(path))
    doc["run"]["exits"] = {"markers": 2, "outside": None, "apicv_inhibits": [],
                           "host_class": {"name": cls, "why": "synthetic"}}
    r = next(r for r in doc["records"] if r.get("record") == "result")
    r.update(backend="x2apic", bench="send-cost", metric="send", variant="none",
             exits={"iterations": 20, "sender": sender, "targets": targets})
    os.unlink(path)
    json.dump(doc, open(path, "w"))
    return os.path.join(folder, "boot1")


@case("./run.sh model: a class's predictions, a saved run against its class (36 when a record "
      "diverges), and its refusals")
def _(ctx):
    model = IPIBENCH + ["model"]
    expect(run_cmd(model + ["--class", "apicv-ipiv"]), 0,
           "| x2apic | send-cost | send | none | 0 | 0 | 0 | no | - | the x2APIC ICR MSR is not "
           "intercepted with IPIv (d588bb9be1da)", "d588bb9be1da")
    rc, out, _ = expect(run_cmd(model + ["--class", "lane", "--json"]), 0)
    import json
    js = json.loads(out)
    check(js[0]["as"] == "svm-no-avic" and len(js[0]["rows"]) == 16
          and all(r["why"] for r in js[0]["rows"]), f"{js}")
    good = saved_run(ctx, "good", "x2avic", {}, {})
    expect(run_cmd(model + [good]), 0, "host class x2avic (synthetic)",
           "| x2apic send-cost send none | x2avic | 0.00 (0.00; predicted 0 (0)) | 0.00 "
           "(predicted 0) | 0.00 (predicted 0) | as predicted |", "matches the model")
    bad = saved_run(ctx, "bad", "x2avic", {"msr (ICR)": 1.0}, {"msr (EOI)": 1.0})
    expect(run_cmd(model + [bad]), 36, "diverges: sender 1.00, expected 0.00")
    rc, out, _ = expect(run_cmd(model + ["--json", bad]), 36)
    check(json.loads(out)[0]["diverging"][0]["row"] == "x2apic send-cost send none", out)
    expect(run_cmd(model), 2, "usage")
    expect(run_cmd(model + [os.path.join(ctx.tmp, "nowhere")]), 22, "model: ")
    expect(run_cmd(model + ["--class", "no-such"]), 2, "invalid choice")



@case("docs: the per-class EOI table of exits-and-apicv.md says what the model predicts for "
      "x2apic-pv-eoi's target with APIC virtualization on")
def _(ctx):
    m = HM.load()
    doc = os.path.join(REPO, "docs", "exits-and-apicv.md")
    seen = 0
    for line in open(doc, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        named = re.search(r"\(`([a-z0-9-]+)`\)$", cells[0]) if len(cells) >= 4 else None
        if not named:
            continue
        rows, real = HM.rows_of(m, named[1])
        want = rows.get(("x2apic-pv-eoi", "send-cost", "send", "none"))
        check(want is not None, f"{named[1]}: the model has no x2apic-pv-eoi row")
        said = re.findall(r"\b([01])\b", cells[2])
        check(want is None or (said and int(said[-1]) == int(want["eoi"])),
              f"{named[1]}: the docs say {cells[2]!r}, the model {int(want['eoi'])}"
              if want else "")
        seen += 1
    check(seen >= 3, f"{seen} classes named in the EOI table")


@case("compare and gate --exits: each side's host class and model verdict; gate exits 36 on a "
      "side that diverges from its class, 20 first for more exits")
def _(ctx):
    good = saved_run(ctx, "gate-good", "x2avic", {}, {})
    good2 = saved_run(ctx, "gate-good2", "x2avic", {}, {})
    trap = saved_run(ctx, "gate-trap", "svm-no-avic", {"msr (ICR)": 1.0}, {"msr (EOI)": 1.0})
    bad = saved_run(ctx, "gate-bad", "x2avic", {"msr (ICR)": 1.0}, {"msr (EOI)": 1.0})
    expect(run_cmd(IPIBENCH + ["compare", trap, good]), 0,
           "host model: A svm-no-avic: 1 records as predicted, 0 rows diverge, 0 not modelled "
           "(1 boots): matches the model", "host model: B x2avic: 1 records as predicted")
    rc, out, _ = expect(run_cmd(IPIBENCH + ["compare", "--format", "json", trap, bad]), 0)
    import json
    m = json.loads(out)["model"]
    check(m["a"]["classes"] == ["svm-no-avic"] and not m["a"]["diverging"], f"{m}")
    check(m["b"]["diverging"] == [{"row": "x2apic send-cost send none", "class": "x2avic",
                                   "what": "sender 1.00, expected 0.00; targets 1.00, expected "
                                   "0.00; targets' EOI 1.00, expected 0.00", "boots": 1}], f"{m}")
    gate = IPIBENCH + ["gate", "--exits"]
    # Fewer exits on B, each side as its class predicts: the AVIC-on side
    # of an on/off pair.
    expect(run_cmd(gate + ["--baseline", trap, good]), 0, "gate: pass")
    expect(run_cmd(gate + ["--baseline", good, good2]), 0, "gate: pass")
    # Alike exits, but not what x2AVIC's KVM does: the host is not the class it claims.
    expect(run_cmd(gate + ["--baseline", trap, bad]), 36,
           "gate: FAIL: model: candidate diverges from its host class x2avic: sender 1.00, "
           "expected 0.00", "rows diverge from their host class's model")
    # More exits than the baseline is the regression, said first.
    expect(run_cmd(gate + ["--baseline", good, bad]), 20, "gate: regression")
    # A baseline that is not its class: nothing is compared against it (30).
    expect(run_cmd(gate + ["--baseline", bad, trap]), 30, "the baseline diverges from its host "
           "class's model")
    # Load: 3 PV-EOI fallbacks in 50 iterations on the targets (+0.06) pass,
    # named; a planted exit a send (+1.00) fails, named.
    loaded = saved_run(ctx, "gate-loaded", "svm-no-avic", {"msr (ICR)": 1.0},
                       {"msr (EOI)": 1.06})
    expect(run_cmd(gate + ["--baseline", trap, loaded]), 0, "gate: pass",
           "targets msr (EOI) 1.00 -> 1.06 (p 0.5", "the count test cannot tell from the "
           "host's load, not 0.1 a target an iteration beyond chance (not judged)")
    planted = saved_run(ctx, "gate-planted", "svm-no-avic",
                        {"msr (ICR)": 1.0, "msr (ID read)": 1.0}, {"msr (EOI)": 1.0})
    expect(run_cmd(gate + ["--baseline", trap, planted]), 20, "gate: regression",
           "sender msr (ID read) 0.00 -> 1.00 (a step)")
    expect(run_cmd(IPIBENCH + ["compare", trap, planted]), 0, "exit reasons that moved",
           "sender msr (ID read) 0.00 -> 1.00")
    # Without --exits the model is printed, never a verdict.
    expect(run_cmd(IPIBENCH + ["gate", "--baseline", trap, bad]), 0, "host model: B x2avic: 0 records as "
           "predicted, 1 rows diverge")


if __name__ == "__main__":
    sys.exit(main(CASES))
