#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Figures that say when they cannot be trusted, host side: the accelerator
choice on a software (PVM) KVM, the host's own warnings in results.json,
and compare/gate, which print either side's warnings and refuse two sides
whose warnings differ. (The guest's checks: tests/unit/test_trust.c, and
the boot tests read its env record.)"""
import os
import shutil
import sys
import tempfile

from harness import check, expect, IPIBENCH, registry, run_cases, run_cmd, selected
import hosts
import synth

from ipibench.boot import accel as A
from ipibench.exit_codes import ToolError
from ipibench.kvmhost.facts import host_warnings
from ipibench.results.files import dump_results, load_json


HERE = os.path.dirname(os.path.abspath(__file__))

CASES, case = registry()
PVM = "this host's /dev/kvm is PVM (module kvm_pvm: ...)"


class Kvm:
    """A stand-in for HostKvm: usable, runs every model, software or not."""

    def __init__(self, software=None):
        self.why = software

    def usable(self):
        return True

    def software(self):
        return self.why

    def probe(self, model, machine):
        return None


@case("auto prefers TCG to a software KVM, and says why in one line")
def _(_):
    acc, cpu, notes = A.choose("auto", "", "x2apic", "x2apic=on", "q35", False, Kvm(PVM))
    check(acc == "tcg-single" and cpu.startswith("max,"), f"{acc} {cpu}")
    check(len(notes) == 1 and PVM in notes[0] and "--accel kvm uses it anyway" in notes[0]
          and "warning" not in notes[0],
          f"notes {notes}")
    # A hardware KVM is still chosen.
    check(A.choose("auto", "", "x2apic", "x2apic=on", "q35", False, Kvm())[0] == "kvm", "hw")


@case("--accel kvm on a software KVM runs, with the warning")
def _(_):
    acc, cpu, notes = A.choose("kvm", "", "x2apic", "x2apic=on", "q35", False, Kvm(PVM))
    check(acc == "kvm" and cpu == "qemu64,x2apic=on", f"{acc} {cpu}")
    check(len(notes) == 2 and notes[0].startswith("run.sh: warning: ") and PVM in notes[0] and
          "-cpu qemu64" in notes[1], f"notes {notes}")


@case("a preset that needs KVM still exits 31 on a software KVM")
def _(_):
    try:
        A.choose("auto", "", "hv", "hv-vpindex,hv-ipi", "q35", False, Kvm(PVM))
    except ToolError as e:
        check(e.code == 31 and "PVM" in e.message, f"{e.code} {e.message}")
        return
    check(False, "no refusal")


@case("host warnings: TCG, the lane, a PVM KVM, more vCPUs than host CPUs")
def _(tmp):
    env = {"record": "env", "cpus": {"count": 4096}}
    old = os.environ.get("IPIBENCH_HOST_ROOT")
    where = tempfile.mkdtemp()
    try:
        # PVM on 2 CPUs, then hardware KVM on 8 (tests/host/hosts.py).
        os.environ["IPIBENCH_HOST_ROOT"] = hosts.make(where, "pvm")
        ids = [w["id"] for w in host_warnings({"accel": "kvm"}, [env])]
        check(ids == ["kvm-software", "overcommit"], f"kvm on PVM, 4096 vCPUs: {ids}")
        os.environ["IPIBENCH_HOST_ROOT"] = hosts.make(where, "intel-kvm")
        check(host_warnings({"accel": "kvm"}, [{"cpus": {"count": 1}}]) == [],
              "hardware KVM, 1 vCPU: no warning")
        for accel, want in (("tcg", "tcg"), ("tcg-single", "tcg"), ("kvm-in-tcg", "kvm-in-tcg")):
            ids = [w["id"] for w in host_warnings({"accel": accel}, [env])]
            check(ids == [want], f"{accel}: {ids}")
    finally:
        shutil.rmtree(where)
        if old is None:
            os.environ.pop("IPIBENCH_HOST_ROOT", None)
        else:
            os.environ["IPIBENCH_HOST_ROOT"] = old


def rdtsc_exits(_i, recs):
    recs[0]["trust"] = {"rdtsc_cycles": 11648, "cpuid_cycles": 16978, "warnings": [
        {"id": "rdtsc-exits", "text": "RDTSC costs 11648 cycles", "per_figure": True}]}


def clean(_i, recs):
    recs[0]["trust"] = {"rdtsc_cycles": 30, "cpuid_cycles": 1200, "warnings": []}


@case("compare: warnings that differ make the sides not comparable, and print")
def _(tmp):
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    synth.make_set(a, boots=2, seed=1, samples=20, mutate=clean)
    synth.make_set(b, boots=2, seed=2, samples=20, mutate=rdtsc_exits)
    tool = IPIBENCH
    _, out, _ = expect(run_cmd(tool + ["compare", a, b]), 0,
                       "warning: B: rdtsc-exits: RDTSC costs 11648 cycles",
                       "NOT COMPARABLE: warning set differs")
    check("warning: A:" not in out.replace("warning: A, B:", ""), "A has no guest warning")
    expect(run_cmd(tool + ["gate", "--baseline", a, b]), 30, "warning set differs")
    # The same warning on both sides: comparable, and said once for both.
    c = os.path.join(tmp, "c")
    synth.make_set(c, boots=2, seed=3, samples=20, mutate=rdtsc_exits)
    _, out, _ = expect(run_cmd(tool + ["compare", b, c]), 0,
                       "warning: A, B: rdtsc-exits: RDTSC costs 11648 cycles")
    check("NOT COMPARABLE" not in out, out[:400])


@case("compare: a side whose boots disagree on warnings mixes warning sets")
def _(tmp):
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    synth.make_set(a, boots=2, seed=1, samples=20,
                   mutate=lambda i, recs: (rdtsc_exits if i == 1 else clean)(i, recs))
    synth.make_set(b, boots=2, seed=2, samples=20, mutate=clean)
    expect(run_cmd(IPIBENCH + ["compare", a, b]), 0,
           "mixes warning sets")


@case("compare: results saved before the trust checks are not refused for it")
def _(tmp):
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    synth.make_set(a, boots=2, seed=1, samples=20)
    synth.make_set(b, boots=2, seed=2, samples=20)
    for folder in (a, b):
        for boot in os.listdir(folder):
            path = os.path.join(folder, boot, "results.json")
            doc = load_json(path)
            doc["host"].pop("warnings", None)
            os.chmod(path, 0o644)
            with open(path, "w") as f:
                f.write(dump_results(doc))
    _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
    check("warning set" not in out and "warning:" not in out, out[:400])


@case("a TCG boot: the guest's env record, each figure's record and table row say tcg")
def _(tmp):
    out = os.path.join(tmp, "run")
    expect(run_cmd(["./run.sh", "--smp", "2", "--accel", "tcg-single", "--results-dir", out,
                    "--append", "plan=bench bench=dry-run,send-cost backends=x2apic"]), 0)
    with open(os.path.join(out, "console.log")) as f:
        log = f.read()
    for needle in ("\nwarning: tcg: QEMU TCG emulates every instruction", "  [untrusted: tcg"):
        check(needle in log, f"console.log lacks {needle!r}")
    doc = load_json(os.path.join(out, "results.json"))
    env = next(r for r in doc["records"] if r["record"] == "env")
    ids = [w["id"] for w in env["trust"]["warnings"]]
    check("tcg" in ids and "rdtsc-exits" not in ids, f"guest warnings {ids}")
    check(isinstance(env["trust"]["rdtsc_cycles"], int), "rdtsc_cycles")
    timed = [r for r in doc["records"] if r["record"] == "result" and r.get("samples")]
    check(timed and all("tcg" in r.get("untrusted", []) for r in timed),
          "every timed record carries untrusted: tcg")
    check([w["id"] for w in doc["host"]["warnings"]] == ["tcg"], f"host {doc['host']['warnings']}")


def main():
    bad = 0
    for name, fn in selected(CASES):
        tmp = tempfile.mkdtemp(prefix="ipibench-trust-")
        try:
            bad += run_cases([(name, fn)], "tools", tmp, select=False)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
