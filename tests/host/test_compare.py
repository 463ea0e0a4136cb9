#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""compare's statistics where they are easy to get wrong: tied
values, few boots, the exact test against a brute-force enumeration, and
verdicts that never call a change significant with an interval spanning 0."""
import itertools
import os
import re
import sys

from harness import check, IPIBENCH, run_cases

from ipibench.compare.model import Comparison, row_key, X2apicBoot
from ipibench.exit_codes import EX_CORRECTNESS, EX_USAGE
from ipibench.results.stats import mann_whitney, min_boots


HERE = os.path.dirname(os.path.abspath(__file__))

CASES = []


def case(fn):
    CASES.append((fn.__name__.replace("_", " "), fn))
    return fn


def brute_p(a, b):
    """Two-sided exact p by enumerating every split of the pooled values: the
    share of splits whose U is at least as far from its mean as the observed.
    (Ties: a tie counts 1/2 for each side, the midrank convention.)"""
    pooled, n = list(a) + list(b), len(a)

    def u(xs, ys):
        return sum((x > y) + 0.5 * (x == y) for x in xs for y in ys)
    mean = len(a) * len(b) / 2
    obs = abs(u(a, b) - mean)
    far = total = 0
    for idx in itertools.combinations(range(len(pooled)), n):
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(len(pooled)) if i not in idx]
        total += 1
        far += abs(u(xs, ys) - mean) >= obs - 1e-9
    return far / total


@case
def exact_p_matches_an_enumeration_on_tied_data(_=None):
    data = [([26, 26, 26, 27, 26], [26, 27, 27, 27, 27]),   # TCG-like quantised counts
            ([100, 100, 101], [101, 101, 102]),
            ([5, 5, 5, 5], [5, 5, 5, 6]),
            ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
            ([3, 3, 1, 2], [2, 3, 3, 3, 1])]
    for a, b in data:
        p, _, how = mann_whitney(a, b)
        want = brute_p(a, b)
        check(how == "exact" and abs(p - want) < 1e-9, f"{a} vs {b}: p {p}, enumeration {want}")
    try:
        from scipy.stats import mannwhitneyu  # only where the machine has it
    except ImportError:
        return
    for a, b in data:
        ref = mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue
        check(abs(mann_whitney(a, b)[0] - ref) < 1e-6 or len(set(a + b)) < len(a + b),
              f"{a} vs {b}: scipy {ref}")


@case
def the_fewest_boots_that_can_reach_alpha_is_computed(_=None):
    check(min_boots(0.05) == 4, f"min_boots(0.05) = {min_boots(0.05)}")  # 2/70 < .05 <= 2/20
    check(min_boots(0.01) == 5, f"min_boots(0.01) = {min_boots(0.01)}")  # 2/252 < .01
    _, p_min, _ = mann_whitney([1, 2, 3], [4, 5, 6])
    check(abs(p_min - 0.1) < 1e-12, f"3 v 3: p_min {p_min}")


class Boot:
    def __init__(self, value, key):
        self.results = [{"bench": key[0], "metric": key[1], "variant": key[2], "backend": key[3],
                         "target_state": key[4], "ntargets": key[5], "status": "SUCCESS",
                         "cycles": {"p50": value}, "histogram": [[value, value, 10]]}]

    def facts(self):
        return {}

    def reported_facts(self):
        return {}

    def config(self):
        return "one"


KEY = ("self", "send-to-handler", "sti-nop", "x2apic", "self", 1)


def verdict(a, b):
    cmp = Comparison("A", [Boot(v, KEY) for v in a], "B", [Boot(v, KEY) for v in b])
    return cmp.rows[0]


@case
def tied_counts_never_give_significance_with_an_interval_spanning_zero(_=None):
    # Five boots a side of quantised counts: medians differ by one count.
    r = verdict([26, 26, 26, 27, 26], [26, 27, 27, 27, 27])
    if r.significant:
        check(r.ci and (r.ci[0] > 0 or r.ci[1] < 0), f"significant with CI {r.ci}")
    # Everything tied but one value: no boot split can reach alpha.
    r = verdict([5, 5, 5, 5, 5], [5, 5, 5, 5, 6])
    check(r.verdict == "too few distinct values" and not r.significant,
          f"{r.verdict}, p_min {r.p_min}")
    # A clean 20% change over 5 boots: significant, and its interval excludes 0.
    r = verdict([100, 101, 99, 100, 102], [120, 121, 119, 122, 120])
    check(r.significant and r.verdict == "slower" and r.ci[0] > 0, f"{r.verdict} {r.ci}")


@case
def no_change_is_never_printed_beside_a_small_p(_=None):
    # Same median, shifted spread: the rank test sees it; the verdict must not say 'no change'.
    r = verdict([10, 10, 10, 9, 9, 9, 10], [10, 11, 11, 10, 11, 11, 10])
    if r.p < 0.05:
        check(r.verdict != "no change", f"'no change' beside p {r.p}")
    r = verdict([10, 10, 10, 10, 10], [10, 10, 10, 10, 10])
    check(r.verdict in ("no change", "too few distinct values"), r.verdict)


@case
def too_few_boots_is_said_not_guessed(_=None):
    r = verdict([100, 101, 99], [150, 151, 149])
    check(r.verdict == "too few boots" and not r.significant and "0.100" in r.note,
          f"{r.verdict}: {r.note}")


@case
def a_correctness_failure_reaches_tap_and_junit_with_the_guests_not_ok_line(_=None):
    import shutil
    import tempfile
    import xml.etree.ElementTree as ET
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    line = ("not ok 6 - xapic: CPU 0 -> CPU 3, vector 0x45: CPU 3 lost it (counted 0 of 1)")
    try:
        base, cand = os.path.join(tmp, "base"), os.path.join(tmp, "cand")
        synth.make_set(base, boots=1, seed=1, samples=20)

        def check_failed(i, recs):
            recs[1]["failed"] = 1
        synth.make_set(cand, boots=1, seed=1, samples=20, mutate=check_failed)
        with open(os.path.join(cand, "boot1", "console.log"), "a") as f:
            f.write(line + "\n")
        tap, junit = os.path.join(tmp, "g.tap"), os.path.join(tmp, "g.xml")
        expect(run_cmd(IPIBENCH + ["gate", "--baseline", base, cand,
                        "--tap", tap, "--junit", junit]), EX_CORRECTNESS, "CPU 3 lost it")
        check(line in open(tap).read(), "TAP lacks the guest's not ok line")
        fails = [c.find("failure") for c in ET.parse(junit).getroot().iter("testcase")
                 if c.find("failure") is not None]
        check(fails and any(line in (f.text or "") + (f.get("message") or "") for f in fails),
              "JUnit lacks the guest's not ok line")
    finally:
        shutil.rmtree(tmp)


@case
def backend_against_backend_within_one_set_and_across_two(_=None):
    import json
    import shutil
    import tempfile
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    try:
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        synth.make_set(a, boots=5, seed=1, samples=40)
        synth.make_set(b, boots=5, seed=2, samples=40)
        tool = IPIBENCH + ["compare"]
        rc, out, _ = expect(run_cmd(tool + ["--pair", "xapic=x2apic", a, "--format", "json"]), 0)
        rows = {r["row"]: r for r in json.loads(out)["rows"]}
        # synth's x2apic rows are cheaper than its xapic rows: every shared row says so,
        # with an interval that excludes 0.
        shared = [r for r in rows.values() if r["a"] is not None]
        check(shared and all(r["verdict"] == "faster" and r["ci_pct"][1] < 0 for r in shared),
              f"{[(r['row'], r['verdict']) for r in shared]}")
        check(all(r["backend"] == "xapic=x2apic" for r in rows.values()), "rows not paired")
        expect(run_cmd(tool + ["--pair", "xapic=x2apic", a, b]), 0, "[xapic]", "[x2apic]",
               "faster")
        expect(run_cmd(tool + ["--pair", "xapic", a]), 2, "--pair takes BACKEND_A=BACKEND_B")
        expect(run_cmd(tool + [a]), 2, "or one with --pair")
    finally:
        shutil.rmtree(tmp)


@case
def comparability_catches_what_changes_a_figure(_=None):
    """A different guest command line (halt_gap=0), -cpu or preset is not
    comparable; a matrix root pools configurations and is refused; a key that
    changes no figure (bench=) is left out; the host's KVM
    parameters are reported, not refused (an A/B over one is the point); a run
    under another hypervisor (Xen with viridian) is refused."""
    import json
    import shutil
    import tempfile
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()

    def edit(folder, fn):
        for boot in sorted(os.listdir(folder)):
            path = os.path.join(folder, boot, "results.json")
            doc = json.load(open(path))
            fn(doc)
            os.unlink(path)
            json.dump(doc, open(path, "w"))

    def cmdline(text):
        def fn(doc):
            for r in doc["records"]:
                if r.get("record") == "env":
                    r["cmdline"] = "build/ipibench.elf32 " + text
        return fn
    try:
        sets = {}
        for name in ("base", "gap", "bench", "cpu", "kvm", "xen"):
            sets[name] = os.path.join(tmp, "m", name)
            synth.make_set(sets[name], boots=4, seed=1, samples=20)
        edit(sets["base"], cmdline("plan=bench"))
        edit(sets["gap"], cmdline("plan=bench halt_gap=0"))
        edit(sets["bench"], cmdline("plan=bench bench=single"))
        edit(sets["cpu"], cmdline("plan=bench"))

        def other_cpu(doc):
            doc["host"]["qemu_cmdline"] += ["-cpu", "host,x2apic=off"]
        edit(sets["cpu"], other_cpu)

        def host_cpu(doc):
            doc["host"]["qemu_cmdline"] += ["-cpu", "host"]
        for name in ("base", "gap", "bench", "kvm"):
            edit(sets[name], host_cpu)
        edit(sets["kvm"], cmdline("plan=bench"))

        def avic(doc):
            doc["host"]["kvm_params"] = {"kvm_amd.avic": "1"}
        edit(sets["kvm"], avic)

        # The same backend under Xen with viridian (the guest found Xen's
        # leaves above viridian's): another hypervisor is another host.
        def xen(doc):
            for r in doc["records"]:
                if r.get("record") == "env":
                    r["hypervisor"].update(vendor="Microsoft Hv", hyperv=True,
                                           kvm_base="0x0", xen_base="0x40000100",
                                           xen_version="0x40011")
        edit(sets["xen"], cmdline("plan=bench"))
        edit(sets["xen"], host_cpu)
        edit(sets["xen"], xen)
        tool = IPIBENCH
        expect(run_cmd(tool + ["gate", "--baseline", sets["base"], sets["gap"]]), 30,
               "guest command line differs")
        expect(run_cmd(tool + ["gate", "--baseline", sets["base"], sets["bench"]]), 0)
        expect(run_cmd(tool + ["gate", "--baseline", sets["base"], sets["cpu"]]), 30,
               "-cpu differs")
        rc, out, _ = expect(run_cmd(tool + ["compare", sets["base"], sets["kvm"]]), 0,
                            "differs (not refused): kvm_amd.avic")
        check("NOT COMPARABLE" not in out, "a KVM parameter made the sides incomparable")
        expect(run_cmd(tool + ["gate", "--baseline", sets["base"], sets["xen"]]), 30,
               "hypervisor differs")
        rc, out, _ = expect(run_cmd(tool + ["compare", sets["base"], sets["xen"]]), 0,
                            "Xen 4.17 with viridian")
        expect(run_cmd(tool + ["gate", "--baseline", sets["base"], os.path.join(tmp, "m")]),
               30, "pools 6 configurations")
    finally:
        shutil.rmtree(tmp)


@case
def gate_exits_judges_xen_runs_as_kvm_runs(_=None):
    """Xen runs traced with xentrace (run.sh --exits --accel xen-in-tcg) carry
    exits as KVM runs do: gate --exits passes a Xen run against itself, fails
    one with an exit more a send (20), and refuses a KVM baseline (30)."""
    import shutil
    import tempfile
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()

    xen = {"vendor": "XenVMMXenVMM", "hyperv": False, "kvm_base": "0x0",
           "xen_base": "0x40000000", "xen_version": "0x40011"}
    kvm = {"vendor": "KVMKVMKVM", "hyperv": False, "kvm_base": "0x40000000",
           "xen_base": "0x0", "xen_version": "0x0"}
    try:
        j = lambda n: os.path.join(tmp, n)  # noqa: E731
        for name, seed, hv, extra, text in (
                ("xen", 1, xen, 0.0, "plan=bench iters=50"),
                ("xen-planted", 2, xen, 1.0, "plan=bench iters=50 debug=extra-exit"),
                ("kvm", 3, kvm, 0.0, "plan=bench iters=50")):
            synth.make_set(j(name), boots=4, seed=seed, samples=20, accel="xen-in-tcg")
            edit_results(j(name), with_exits(text, {"hypercall (event_channel_op)": 1.0,
                                                    "msr (ID read)": extra}, hv))
        gate = IPIBENCH + ["gate", "--exits", "--threshold", "50%"]
        expect(run_cmd(gate + ["--baseline", j("xen"), j("xen")]), 0, "gate: pass")
        expect(run_cmd(gate + ["--baseline", j("xen"), j("xen-planted")]), 20,
               "more exits per iteration than the baseline")
        expect(run_cmd(gate + ["--baseline", j("kvm"), j("xen")]), 30, "Xen 4.17")
    finally:
        shutil.rmtree(tmp)


@case
def a_planted_fault_is_ignored_for_comparability_and_gate_names_what_it_compared(_=None):
    """The README plants an exit with debug=extra-exit; gate
    --exits on that candidate must fail the exits (20), not refuse the sides
    (30), say that it ignored debug=, and its last line count the exit rows
    and timing rows, and say when no timing row could have failed."""
    import shutil
    import tempfile
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()

    def edit(folder, text, sender):
        edit_results(folder, with_exits(text, {"msr (ICR)": 1.0, "msr (ID read)": sender}))
    try:
        j = lambda n: os.path.join(tmp, n)  # noqa: E731
        for name, boots, seed in (("base", 4, 1), ("planted", 4, 2), ("few", 2, 3),
                                  ("few2", 2, 4)):
            synth.make_set(j(name), boots=boots, seed=seed, samples=20)
        edit(j("base"), "plan=bench iters=50", 0.0)
        edit(j("planted"), "plan=bench iters=50 debug=extra-exit", 1.0)
        edit(j("few"), "plan=bench iters=50", 0.0)
        edit(j("few2"), "plan=bench iters=50", 0.0)
        gate = IPIBENCH + ["gate", "--exits", "--threshold", "50%"]
        _, out, err = expect(run_cmd(gate + ["--baseline", j("base"), j("planted")]), 20,
                             "ignored for comparability: debug=extra-exit in B (fault injection)",
                             "more exits per iteration than the baseline")
        n = len(synth.ROWS)
        last = err.strip().splitlines()[-1]
        check(last.startswith("gate: regression: ") and f"{n} exit rows compared ({n} with "
              "more exits)" in last and "timing rows compared (0 slower)" in last, last)
        check("guest command line differs" not in out + err, err[-600:])
        # Another figure-changing word still refuses the sides.
        edit(j("planted"), "plan=bench iters=60 debug=extra-exit", 0.0)
        expect(run_cmd(gate + ["--baseline", j("base"), j("planted")]), 30,
               "guest command line differs")
        # Two boots a side cannot reach alpha: a pass, but not without a word.
        _, _, err = expect(run_cmd(gate + ["--baseline", j("few"), j("few2")]), 0, "gate: pass")
        last = err.strip().splitlines()[-1]
        check(f"{n} timing rows compared" in last and f"{n} exit rows compared" in last and
              "every timing row was 'too few boots'" in last and "could not fail" in last, last)
        _, _, err = expect(run_cmd(gate + ["--baseline", j("base"), j("base")]), 0, "gate: pass")
        check("could not fail" not in err and "ignored for comparability" not in err, err)
    finally:
        shutil.rmtree(tmp)


def _exits_sets(tmp, specs):
    """Synthetic sets for the exits gate: name -> (guest command line, run
    fields, withhold, oneway_exits, sender). withhold: single's one-way
    figure is a SKIP with iterations 0, as the guest prints a withheld one;
    oneway_exits: whether that row has exit data; sender: the ID-read exits
    per iteration beside the ICR write (debug=extra-exit's 1.0), None for
    no exit data on any row."""
    import json
    import synth
    out = {}
    for name, (cmdline, run, withhold, oneway_exits, sender) in specs.items():
        folder = os.path.join(tmp, name)
        synth.make_set(folder, boots=4, seed=len(out) + 1, samples=20)
        for boot in sorted(os.listdir(folder)):
            path = os.path.join(folder, boot, "results.json")
            doc = json.load(open(path))
            doc["run"].update(run)
            for r in doc["records"]:
                if r.get("record") == "env":
                    r["cmdline"] = "build/ipibench.elf32 " + cmdline
                if r.get("record") != "result":
                    continue
                oneway = r.get("metric") == "one-way"
                if oneway and withhold:
                    for k in ("cycles", "ns", "histogram", "samples", "unit", "dryrun_cycles"):
                        r.pop(k, None)
                    r.update(status="SKIP", iterations=0, reason="one-way not reported: TSC "
                             "skew bound 900 cycles (CPU 0 to CPU 1) is not under a tenth of "
                             "the p50 1000")
                if (oneway and not oneway_exits) or sender is None:
                    continue
                r["exits"] = {"sender": {"msr (ICR)": 1.0, "msr (ID read)": sender},
                              "targets": {"msr (EOI)": 1.0}}
            os.unlink(path)
            json.dump(doc, open(path, "w"))
        out[name] = folder
    return out


@case
def a_planted_exit_gates_20_whether_or_not_a_figure_was_withheld_for_timing(_=None):
    """The lane's base withheld single's one-way figures for
    TSC skew, the slower candidate measured them, so the one-way row had exit
    data on the candidate's side only and gate --exits said 30 (not
    comparable) for a planted extra exit. Now a withheld figure keeps its
    sampling's exits (test_kvm_trace), so the one-way row itself is judged
    and fails. A row both sides ran but one side traced (results saved
    before withheld figures kept theirs, or a trace that lost the row) is
    not comparable: 20 when another row regressed, else 30, never a pass. A
    row that one side does not have at all is listed and judged by nothing;
    a trace that lost events is not comparable; no row traced on both sides
    is 30."""
    import json
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    traced = {"exits": {"markers": 2, "lost": 0, "cut": False}}
    line = "plan=bench iters=50 markers=1"
    try:
        s = _exits_sets(tmp, {
            "base": (line, traced, True, True, 0.0),
            "base-old": (line, traced, True, False, 0.0),
            "cand": (line + " debug=extra-exit", traced, False, True, 1.0),
            "same": (line, traced, False, True, 0.0),
            "lossy": (line, {"exits": {"markers": 2, "lost": 7, "cut": False}}, False, True,
                      0.0)})
        gate = IPIBENCH + ["gate", "--exits", "--threshold", "50%"]
        oneway = "single/one-way/none/x2apic/spin/n1"
        _, _, err = expect(run_cmd(gate + ["--baseline", s["base"], s["cand"]]), 20,
                           f"gate: FAIL: {oneway}: more exits per iteration than the baseline")
        check(err.strip().splitlines()[-1].startswith("gate: regression: "), err[-300:])
        _, _, err = expect(run_cmd(gate + ["--baseline", s["base-old"], s["cand"]]), 20,
                           f"gate: FAIL: {oneway}: not comparable: ran on both sides, exit data "
                           "in the candidate only", "more exits per iteration than the baseline")
        # The withheld row with its exits, against the same exits measured: a pass,
        # and the one-way row judged, not listed.
        _, _, err = expect(run_cmd(gate + ["--baseline", s["base"], s["same"]]), 0, "gate: pass")
        import synth
        check("listed" not in err and f"{len(synth.ROWS)} exit rows compared" in err, err[-400:])
        # Traced on one side only, nothing else worse: never a pass.
        expect(run_cmd(gate + ["--baseline", s["base-old"], s["same"]]), 30,
               "gate: exits not comparable: not comparable: ran on both sides")
        expect(run_cmd(gate + ["--baseline", s["base"], s["lossy"]]), 30,
               "the candidate's trace 7 events lost")
        # A benchmark the candidate does not run at all: listed, judged by nothing.
        for boot in sorted(os.listdir(s["same"])):
            path = os.path.join(s["same"], boot, "results.json")
            doc = json.load(open(path))
            doc["records"] = [r for r in doc["records"] if r.get("bench") != "self"]
            os.unlink(path)
            json.dump(doc, open(path, "w"))
        _, _, err = expect(run_cmd(gate + ["--baseline", s["base"], s["same"]]), 0,
                           "gate: listed: self/send-to-handler/sti-nop/x2apic/self/n1: not "
                           "judged: exit data in the baseline only, the row in the baseline only",
                           "1 traced on one side only (listed, not judged)")
        # Nothing traced on both sides: 30.
        plain = _exits_sets(tmp, {"plain": (line, traced, False, False, None)})["plain"]
        expect(run_cmd(gate + ["--baseline", plain, s["same"]]), 30,
               "no row has exit data on both sides")
    finally:
        shutil.rmtree(tmp)


@case
def what_adds_work_to_the_timed_regions_keeps_timings_apart_not_exits(_=None):
    """markers=1 (an OUT to QEMU after each iteration), the
    host's KVM trace (run.sh --exits), perf kvm stat (--perf-kvm) and
    host_stats=1 (shown neutral only under TCG) each add
    work to every timed region. Timings across a difference in them are not
    comparable (gate 30, compare says why); exit rows still compare, so a
    planted exit is still 20."""
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    traced = {"exits": {"markers": 2}}
    perf = {"exits": {"markers": 2}, "perf_kvm": {"report": "perf-kvm.txt"}}
    try:
        s = _exits_sets(tmp, {
            "plain": ("plan=bench", {}, False, False, None),
            "marked": ("plan=bench markers=1", {}, False, False, None),
            "traced": ("plan=bench markers=1", traced, False, True, 0.0),
            "perf": ("plan=bench markers=1", perf, False, True, 0.0),
            "perf-extra": ("plan=bench markers=1 debug=extra-exit", perf, False, True, 1.0)})
        tool = IPIBENCH
        gate = tool + ["gate", "--threshold", "50%"]
        expect(run_cmd(gate + ["--baseline", s["plain"], s["marked"]]), 30,
               "timed-region instrumentation differs: ", "/plain none, ", "/marked markers=1")
        _, out, err = expect(run_cmd(tool + ["compare", s["plain"], s["marked"]]), 0,
                             "TIMINGS NOT COMPARABLE")
        check("not comparable" in out and "NOT COMPARABLE: " not in out.replace(
            "TIMINGS NOT COMPARABLE", ""), out[:1500])
        expect(run_cmd(gate + ["--exits", "--baseline", s["traced"], s["perf"]]), 30,
               "/traced markers=1 kvm-trace, ", "/perf markers=1 kvm-trace perf-kvm")
        expect(run_cmd(gate + ["--exits", "--baseline", s["traced"], s["perf-extra"]]), 20,
               "more exits per iteration than the baseline")
        expect(run_cmd(gate + ["--exits", "--baseline", s["traced"], s["traced"]]), 0,
               "gate: pass")
        # host_stats=1 (issue 42 item 5): neutral under TCG -icount only, so
        # instrumentation for timings; exits still compare across it.
        s.update(_exits_sets(tmp, {
            "stats": ("plan=bench markers=1 host_stats=1", traced, False, True, 0.0),
            "stats-extra": ("plan=bench markers=1 host_stats=1 debug=extra-exit", traced,
                            False, True, 1.0)}))
        expect(run_cmd(gate + ["--baseline", s["traced"], s["stats"]]), 30,
               "/traced markers=1 kvm-trace, ", "/stats markers=1 kvm-trace host_stats=1")
        expect(run_cmd(gate + ["--exits", "--baseline", s["traced"], s["stats-extra"]]), 20,
               "more exits per iteration than the baseline")
    finally:
        shutil.rmtree(tmp)


@case
def the_kvm_unit_tests_view_is_compared_like_any_row(_=None):
    class KutBoot(Boot):
        def __init__(self, value):
            super().__init__(value, KEY)
            self.results = []
            self.kut = [{"record": "kut", "name": "self_ipi_sti_nop", "backend": "x2apic",
                         "mean_cycles": value}]
    cmp = Comparison("A", [KutBoot(v) for v in (100, 101, 99, 100, 102)],
                       "B", [KutBoot(v) for v in (130, 131, 129, 132, 130)])
    rows = {r.name: r for r in cmp.rows}
    r = rows.get("kvm-unit-tests/self_ipi_sti_nop/mean/x2apic/none/n1")
    check(r is not None and r.verdict == "slower" and r.a == 100 and r.b == 130,
          f"{[(x.name, x.verdict) for x in cmp.rows]}")


@case
def the_kvm_unit_tests_view_in_ns_goes_through_each_boots_tsc_frequency(_=None):
    class KutBoot(Boot):
        def __init__(self, cycles, khz):
            super().__init__(cycles, KEY)
            self.results = []
            self.env = {"tsc": {"khz": khz}} if khz else {}
            self.kut = [{"record": "kut", "name": "ipi_halt", "backend": "x2apic",
                         "mean_cycles": cycles}]
    # 3000 cycles at 3 GHz and 2000 at 2 GHz are both 1000 ns; a boot with
    # no TSC frequency has no ns figure and is left out, as a result would be.
    cmp = Comparison("A", [KutBoot(3000, 3_000_000)] * 4, "B",
                       [KutBoot(2000, 2_000_000)] * 4 + [KutBoot(9000, None)], unit="ns")
    r = {x.name: x for x in cmp.rows}.get("kvm-unit-tests/ipi_halt/mean/x2apic/none/n1")
    check(r is not None and r.a == 1000 and r.b == 1000, f"{[(x.name, x.a, x.b) for x in cmp.rows]}")


@case
def a_skipped_benchmark_reads_no_data_the_same_way_whichever_side_skipped(_=None):
    class SkipBoot(Boot):
        def __init__(self, ran):
            super().__init__(100, KEY)
            if not ran:
                self.results = [{"bench": KEY[0], "metric": "-", "variant": "none",
                                 "backend": KEY[3], "target_state": "none", "ntargets": 0,
                                 "status": "SKIP", "reason": "no x2APIC"}]
    cmp = Comparison("A", [SkipBoot(False)] * 4, "B", [SkipBoot(True)] * 4)
    verdicts = [(r.name, r.verdict, r.note) for r in cmp.rows]
    check(verdicts == [("self/send-to-handler/sti-nop/x2apic/self/n1", "no data", "A: SKIP")],
          f"{verdicts}")
    cmp = Comparison("A", [SkipBoot(True)] * 4, "B", [SkipBoot(False)] * 4)
    check([(r.verdict, r.note) for r in cmp.rows] == [("no data", "B: SKIP")],
          f"{[(r.name, r.verdict, r.note) for r in cmp.rows]}")


def with_exits(text, sender, hypervisor=None):
    """A results.json edit: the guest's command line (text after the image),
    every SUCCESS record's exits (sender's as given, the targets' one EOI),
    and, where given, the hypervisor the env record names."""
    def fn(doc):
        for r in doc["records"]:
            if r.get("record") == "env":
                r["cmdline"] = "build/ipibench.elf32 " + text
                if hypervisor:
                    r["hypervisor"] = hypervisor
            if r.get("record") == "result" and r.get("status") == "SUCCESS":
                r["exits"] = {"sender": dict(sender), "targets": {"msr (EOI)": 1.0}}
    return fn


def edit_results(folder, fn):
    """fn(doc) on every results.json below folder, written back."""
    import json
    for dirpath, _, files in os.walk(folder):
        if "results.json" in files:
            path = os.path.join(dirpath, "results.json")
            doc = json.load(open(path))
            fn(doc)
            os.unlink(path)
            json.dump(doc, open(path, "w"))


def on_host(avic, flags):
    """The host facts of this host's KVM with kvm_amd.avic=avic and these CPU
    flags (None: saved before cpu_flags existed)."""
    def fn(doc):
        doc["host"]["accel"] = "kvm"
        doc["host"]["kvm_params"] = {"kvm_amd.avic": avic, "kvm.halt_poll_ns": "200000"}
        if flags is None:
            doc["host"].pop("cpu_flags", None)
        else:
            doc["host"]["cpu_flags"] = flags
    return fn


def after_x2apic(which):
    """synth mutate: every result record gets after_x2apic = which(record)."""
    def fn(i, recs):
        for r in recs:
            if r.get("record") == "result":
                r["after_x2apic"] = which(r)
    return fn


ZEN2 = ["avic", "svm", "x2apic"]           # AVIC, no x2AVIC
ZEN4 = ["avic", "svm", "x2apic", "x2avic"]
BROADCAST_XAPIC = "broadcast/all-ack/set/xapic/spin/n"


@case
def xapic_rows_after_x2apic_on_avic_without_x2avic_are_marked_and_refused_by_the_gate(_=None):
    """AVIC without x2AVIC (Zen 1-3): KVM since Linux 6.3 deletes the APIC-access
    memslot once a vCPU has been in x2APIC mode, and every xAPIC access after
    that is emulated. The guest's after_x2apic says which records came after;
    compare marks those rows of xAPIC-mode backends, explains it once, and
    gate exits 30 on them. With x2AVIC, or AVIC off, nothing is marked."""
    import json
    import shutil
    import tempfile
    import synth
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    tool = IPIBENCH
    late = after_x2apic(lambda r: r["backend"] == "x2apic" or r["bench"] == "broadcast")
    try:
        j = lambda n: os.path.join(tmp, n)  # noqa: E731
        synth.make_set(j("base"), boots=4, seed=1, samples=20, kut=synth.KUT,
                       mutate=after_x2apic(lambda r: r["backend"] == "x2apic"))
        synth.make_set(j("late"), boots=4, seed=1, samples=20, kut=synth.KUT, mutate=late)
        synth.make_set(j("old"), boots=4, seed=1, samples=20)  # no after_x2apic at all
        for name in ("base", "late"):
            shutil.copytree(j(name), j(name + "-zen4"))
            shutil.copytree(j(name), j(name + "-noavic"))
            shutil.copytree(j(name), j(name + "-noflags"))
            shutil.copytree(j(name), j(name + "-6.1"))
            edit_results(j(name + "-6.1"), on_host("Y", ZEN2))
            edit_results(j(name + "-6.1"), lambda doc: doc["host"].update(kernel="6.1.0-18-amd64"))
            edit_results(j(name), on_host("Y", ZEN2))
            edit_results(j(name + "-zen4"), on_host("Y", ZEN4))
            edit_results(j(name + "-noavic"), on_host("N", ZEN2))
            edit_results(j(name + "-noflags"), on_host("1", None))
        shutil.copytree(j("old"), j("old2"))
        edit_results(j("old"), on_host("Y", ZEN2))
        edit_results(j("old2"), on_host("Y", ZEN2))

        rc, out, _ = expect(run_cmd(tool + ["compare", j("base"), j("late")]), 0)
        marked = [l for l in out.splitlines() if "after x2APIC: emulated on AVIC without "
                  "x2AVIC: B)" in l]
        names = {l.split()[0] + "/" + "/".join(l.split()[1:6]) for l in marked}
        want = {f"broadcast/all-ack/set/xapic/spin/{n}" for n in (1, 2, 3)} | \
            {f"kvm-unit-tests/{k}/mean/xapic/none/1" for k, b in synth.KUT if b == "xapic"}
        check(names == want, f"marked rows {sorted(names)}, expected {sorted(want)}")
        check(out.count("after-x2apic:") == 1 and "B: after-x2apic: 6 rows" in out and
              "Linux 6.3" in out, f"the warning, once: {out[:1500]}")
        rows = json.loads(run_cmd(tool + ["compare", j("base"), j("late"), "--format",
                                          "json"])[1])["rows"]
        check(all((r["after_x2apic"] == ["B"]) == (r["backend"] == "xapic" and
                                                   r["bench"] in ("broadcast", "kvm-unit-tests"))
                  for r in rows), "JSON rows' after_x2apic")
        _, _, err = expect(run_cmd(tool + ["gate", "--baseline", j("base"), j("late"),
                                           "--tap", j("g.tap")]), 30, "not comparable",
                           "6 rows measured xAPIC emulation")
        tap = open(j("g.tap")).read()
        check("not ok" in tap and "environment: " + BROADCAST_XAPIC + "2: not comparable: "
              "after x2APIC" in tap and "in the candidate" in tap, tap[-800:])
        # Backend against backend: the xapic side is A.
        rc, out, _ = expect(run_cmd(tool + ["compare", "--pair", "xapic=x2apic", j("late")]), 0)
        check(any(l.startswith("broadcast") and "x2AVIC: A)" in l for l in out.splitlines()),
              "--pair: the xapic side's rows not marked")
        # x2AVIC there, or AVIC off: nothing is marked, the gate passes.
        # A kernel before 6.3 (hybrid AVIC kept the memslot) is not marked either.
        for host in ("zen4", "noavic", "6.1"):
            rc, out, _ = expect(run_cmd(tool + ["gate", "--baseline", j("base-" + host),
                                                j("late-" + host)]), 0)
            check("after x2APIC" not in out and "after-x2apic" not in out, f"{host}: {out[:800]}")
        # Not knowable: records without the key, boots without CPU flags; said
        # once for each reason, nothing marked, nothing refused.
        rc, out, _ = expect(run_cmd(tool + ["gate", "--baseline", j("old"), j("old2")]), 0)
        check(out.count("after-x2apic unknown") == 1 and "A, B: after-x2apic unknown" in out
              and "without after_x2apic" in out and "emulated on" not in out, out[:1500])
        rc, out, _ = expect(run_cmd(tool + ["gate", "--baseline", j("base-noflags"),
                                            j("late-noflags")]), 0)
        check(out.count("after-x2apic unknown") == 1 and "CPU flags were not saved" in out,
              out[:1500])
    finally:
        shutil.rmtree(tmp)


@case
def xapic_mode_is_read_from_the_records_flags_not_a_list_of_names(_=None):
    """Which records wrote the ICR through the xAPIC MMIO
    page (and so are emulation after an x2APIC switch on AVIC without
    x2AVIC) is read from each record's flags ("icr-wait=", lib/ipi_flags.c),
    not from a list of names that once left out xapic-nmi: hv-icr, in xAPIC
    mode but sending through the Hyper-V MSR, is not among them; nor is an
    x2APIC backend. A record without flags falls back to the names."""
    import types
    import synth

    def rec(backend, flags, after=True, record="result"):
        r = {"record": record, "backend": backend, "status": "SUCCESS", "after_x2apic": after}
        if flags is not None:
            r["flags"] = flags
        return r
    recs = [rec("xapic-nmi", synth.FLAGS["xapic-nmi"]), rec("hv-icr", synth.FLAGS["hv-icr"]),
            rec("x2apic", synth.FLAGS["x2apic"]), rec("xapic", synth.FLAGS["xapic"], False),
            rec("xapic-new", "dest=logical icr-wait=after set=loop self=shorthand"),
            rec("xapic-logical", None)]
    boot = types.SimpleNamespace(avic_without_x2avic=lambda: True, results=recs)
    x = X2apicBoot(boot)
    got = {r["backend"]: x.result(r) for r in recs}
    check(got == {"xapic-nmi": True, "hv-icr": None, "x2apic": None, "xapic": False,
                  "xapic-new": True, "xapic-logical": True}, f"{got}")
    kut = {b: x.kut({"record": "kut", "backend": b}) for b in ("xapic-nmi", "hv-icr", "x2apic")}
    check(kut == {"xapic-nmi": True, "hv-icr": None, "x2apic": None}, f"kut: {kut}")


def two_sets(tmp, **kw):
    import synth
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    synth.make_set(a, boots=4, seed=1, samples=20, **kw.get("a", {}))
    synth.make_set(b, boots=4, seed=2, samples=20, **kw.get("b", {}))
    return a, b


@case
def row_filters_keep_the_rows_asked_for_and_name_what_exists(_=None):
    """compare --bench/--metric/--variant/--backend/--targets: comma-separated
    exact names, all filters at once, in every format; an unknown name is
    exit 2 with the names there are."""
    import json
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    tool = IPIBENCH + ["compare"]
    try:
        a, b = two_sets(tmp)
        rc, out, _ = expect(run_cmd(tool + [a, b, "--format", "json", "--bench",
                                            "single,broadcast", "--backend", "x2apic"]), 0)
        names = sorted(r["row"] for r in json.loads(out)["rows"])
        want = sorted(["single/round-trip/none/x2apic/spin/n1",
                       "single/one-way/none/x2apic/spin/n1"] +
                      [f"broadcast/all-ack/set/x2apic/spin/n{n}" for n in (1, 2, 3)])
        check(names == want, f"rows {names}")
        rc, out, _ = expect(run_cmd(tool + [a, b, "--targets", "2,3", "--metric", "all-ack",
                                            "--variant", "set"]), 0)
        body = [l for l in out.splitlines() if l.startswith(("broadcast", "single", "self",
                                                             "send-cost", "kvm-unit"))]
        check(len(body) == 4 and all(l.split()[5] in ("2", "3") for l in body), out)
        rc, out, _ = expect(run_cmd(tool + ["--pair", "xapic=x2apic", a, "--backend",
                                            "xapic=x2apic", "--bench", "send-cost"]), 0)
        check(sum(l.startswith("send-cost") for l in out.splitlines()) == 1, out)
        expect(run_cmd(tool + [a, b, "--bench", "single,nosuch"]), EX_USAGE,
               "--bench nosuch", "broadcast, self, send-cost, single")
        expect(run_cmd(tool + [a, b, "--targets", "7"]), EX_USAGE, "1, 2, 3")
        expect(run_cmd(tool + [a, b, "--bench", "self", "--backend", "xapic"]), EX_USAGE,
               "no row matches")
        expect(run_cmd(tool + ["--help"]), 0, "--bench", "--metric", "--variant",
               "--backend", "--targets")
    finally:
        shutil.rmtree(tmp)


def trust(*ids):
    """synth mutate: the guest's env trust with these per-figure warnings, and
    every result's "untrusted" (docs/results.md)."""
    def fn(i, recs):
        for r in recs:
            if r.get("record") == "env":
                r["trust"] = {"rdtsc_cycles": 30, "cpuid_cycles": 1500, "warnings": [
                    {"id": w, "text": f"synthetic {w}", "per_figure": True} for w in ids]}
            elif r.get("record") == "result" and ids:
                r["untrusted"] = list(ids)
    return fn


@case
def a_verdict_over_emulated_figures_names_the_emulation(_=None):
    """faster/slower over figures timed under TCG (the host's warning and the
    guest's) or with RDTSC exiting reads 'faster (tcg)' in the table itself;
    the JSON keeps the bare verdict and lists the ids; KVM figures carry none."""
    import json
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    tool = IPIBENCH + ["compare", "--pair", "xapic=x2apic"]
    try:
        for accel, ids, mark in (("tcg", ("tcg",), "faster (tcg)"),
                                 ("kvm", ("rdtsc-exits",), "faster (rdtsc-exits)"),
                                 ("kvm", (), None)):
            d = os.path.join(tmp, accel + "-".join(ids))
            import synth
            synth.make_set(d, boots=4, seed=1, samples=20, accel=accel, mutate=trust(*ids))
            rc, out, _ = expect(run_cmd(tool + [d, "--bench", "send-cost"]), 0)
            row = [l for l in out.splitlines() if l.startswith("send-cost")]
            if mark:
                check(len(row) == 1 and row[0].endswith(mark), f"{accel} {ids}: {row}")
            else:
                check(len(row) == 1 and row[0].endswith("faster"), f"kvm: {row}")
            rc, out, _ = expect(run_cmd(tool + [d, "--format", "markdown", "--bench",
                                                "send-cost"]), 0)
            check(mark is None or f"| {mark} |" in out, f"markdown {ids}: {out}")
            rows = json.loads(run_cmd(tool + [d, "--format", "json", "--bench",
                                              "send-cost"])[1])["rows"]
            check(rows[0]["verdict"] == "faster" and rows[0]["emulated"] == list(ids),
                  f"json {ids}: {rows[0]['verdict']} {rows[0]['emulated']}")
    finally:
        shutil.rmtree(tmp)


@case
def a_condition_both_the_guest_and_the_host_warn_of_is_said_once(_=None):
    """Under TCG the guest's trust (tcg) and the host's warnings (tcg) both
    warn; boots word rdtsc-exits with their own costs: one line each."""
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    try:
        def both(i, recs):
            trust("tcg", "rdtsc-exits")(i, recs)
            recs[0]["trust"]["warnings"][1]["text"] = f"RDTSC costs {300 + i} cycles"
        a, b = two_sets(tmp, a={"accel": "tcg", "mutate": both},
                        b={"accel": "tcg", "mutate": both})
        rc, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        warns = [l for l in out.splitlines() if l.startswith("warning:")]
        check(len(warns) == 2 and sum(": tcg: " in w for w in warns) == 1 and
              sum(": rdtsc-exits: " in w for w in warns) == 1 and
              all(w.startswith("warning: A, B: ") for w in warns), "\n".join(warns))
    finally:
        shutil.rmtree(tmp)


@case
def a_boots_cell_tells_a_missing_row_from_one_without_a_figure(_=None):
    """2/- (B has no such row) against 2/0 (B ran it: SKIP), and a legend
    under the table, in text and markdown."""
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    one_way = ("single", "one-way", "none", "x2apic", "spin", 1)
    send = ("send-cost", "send", "none", "x2apic", "spin", 1)

    def cut(i, recs):
        recs[:] = [r for r in recs if r.get("record") != "result" or
                   (r["bench"], r["metric"], r["backend"]) != one_way[:2] + one_way[3:4]]
        for j, r in enumerate(recs):
            if r.get("record") == "result" and row_key(r) == send:
                recs[j] = synth_result(send, status="SKIP")
    try:
        import synth
        synth_result = synth.result
        a, b = two_sets(tmp, b={"mutate": cut})
        for fmt in ("text", "markdown"):
            rc, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b,
                                         "--backend", "x2apic", "--format", fmt]), 0)
            cells = {}
            for l in out.splitlines():
                f = [c.strip() for c in l.strip("|").split("|")] if fmt == "markdown" \
                    else l.split()
                if len(f) > 11 and f[0] in ("single", "send-cost"):
                    cells[(f[0], f[1])] = next(c for c in f if re.fullmatch(r"[\d-]+/[\d-]+", c))
            check(cells.get(("single", "one-way")) == "4/-" and
                  cells.get(("send-cost", "send")) == "4/0" and
                  cells.get(("single", "round-trip")) == "4/4", f"{fmt}: {cells}")
            lines = [l for l in out.rstrip().splitlines() if l]
            legend = [l for l in lines if l.startswith("boots: A/B")]
            check(legend and "-: the side has no such row" in legend[0], f"{fmt}: legend {lines}")
            check(lines[-1].strip("*") == "compare: 7 rows: 4 no significant change, 1 too few "
                  "distinct values, 1 no data, 1 only in A", f"{fmt}: verdict {lines[-1]!r}")
    finally:
        shutil.rmtree(tmp)


@case
def rows_without_a_figure_on_either_side_are_counted_not_listed(_=None):
    """A row both sides skipped (a Hyper-V backend under TCG) is one count
    under the table and in the verdict line, in text and markdown; --all
    lists it, JSON keeps it; gate's markdown table ends with its verdict."""
    import json
    import shutil
    import tempfile
    import synth
    from harness import call, expect
    from ipibench import readers
    tmp = tempfile.mkdtemp()
    send = ("send-cost", "send", "none", "x2apic", "spin", 1)

    def skip(i, recs):
        for j, r in enumerate(recs):
            if r.get("record") == "result" and row_key(r) == send:
                recs[j] = synth.result(send, status="SKIP")
    def listed(out):
        return any(l.replace("|", " ").split()[:4] == ["send-cost", "send", "none", "x2apic"]
                   for l in out.splitlines())
    try:
        a, b = two_sets(tmp, a={"mutate": skip}, b={"mutate": skip})
        for fmt in ("text", "markdown"):
            rc, out, _ = expect(call(readers.main, ["compare", a, b, "--format", fmt]), 0)
            check(not listed(out), f"{fmt}: the skipped row is listed")
            check("1 rows without a figure on either side are not listed (A: SKIP; B: SKIP)"
                  in out, f"{fmt}: no count line: {out[-600:]}")
            last = out.rstrip().splitlines()[-1].strip("*")
            check(last.startswith("compare: ") and last.endswith(
                "; 1 without a figure on either side, not listed (--all lists them)")
                and " rows: " in last and "no significant change" in last, f"{fmt}: {last!r}")
            rc, out, _ = expect(call(readers.main, ["compare", a, b, "--format", fmt, "--all"]), 0)
            check(listed(out) and "not listed" not in out, f"{fmt} --all: {out[-600:]}")
        rc, out, _ = expect(call(readers.main, ["compare", a, b, "--format", "json"]), 0)
        doc = json.loads(out)
        check(any(r["row"] == "send-cost/send/none/x2apic/spin/n1" for r in doc["rows"]) and
              doc["verdict"].startswith("compare: ") and "not listed" not in doc["verdict"],
              f"json drops the row or says it did: {doc['verdict']}")

        def fail(i, recs):
            for j, r in enumerate(recs):
                if r.get("record") == "result" and row_key(r) == send:
                    recs[j] = synth.result(send, status="FAILURE")
        c = os.path.join(tmp, "c")
        synth.make_set(c, boots=4, seed=3, samples=20, mutate=fail)
        rc, out, _ = expect(call(readers.main, ["compare", a, c]), 0)
        check(listed(out) and "not listed" not in out, f"a FAILURE is hidden: {out[-600:]}")
        rc, out, err = expect(call(readers.main, ["gate", "--baseline", a, b, "--format",
                                                  "markdown"]), 0)
        gate_line = err.strip().splitlines()[-1]
        check(gate_line.startswith("gate: pass: ") and
              out.rstrip().splitlines()[-1] == f"**{gate_line}**", f"gate: {out[-300:]!r}")
        rc, out, err = expect(call(readers.main, ["gate", "--baseline", a, b]), 0)
        check("gate: pass" not in out, "gate's text table repeats the verdict on stdout")
    finally:
        shutil.rmtree(tmp)


@case
def each_sides_apicv_or_avic_state_is_a_column_when_known(_=None):
    """kvm_amd.avic Y on A's host, N on B's: 'avic/off' on every row, with
    its legend; an inhibit that --exits traced says so; under TCG (not
    known) no column at all."""
    import json
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    tool = IPIBENCH + ["compare"]
    try:
        a, b = two_sets(tmp)
        edit_results(a, on_host("Y", ZEN4))
        edit_results(b, on_host("N", ZEN4))
        rc, out, _ = expect(run_cmd(tool + [a, b, "--bench", "single"]), 0, "APICv/AVIC: A/B")
        lines = out.splitlines()
        head = next(l for l in lines if l.startswith("benchmark"))
        rows = [l for l in lines if l.startswith("single")]
        check("APICv/AVIC" in head.split() and len(rows) == 3 and
              all(" avic/off " in l for l in rows), out)

        def inhibited(doc):
            doc["run"]["exits"] = {"kvm_params": {"kvm_intel.enable_apicv": "Y"},
                                   "apicv": "APICv: enabled in kvm_intel; inhibited for this "
                                   "VM from 0.10 s: synthetic"}
        edit_results(b, inhibited)
        doc = json.loads(run_cmd(tool + [a, b, "--format", "json"])[1])
        check(doc["apicv"] == {"a": "avic", "b": "apicv inhibited"}, f"{doc['apicv']}")
        t1, t2 = os.path.join(tmp, "t1"), os.path.join(tmp, "t2")
        import synth
        synth.make_set(t1, boots=4, seed=1, samples=20, accel="tcg")
        synth.make_set(t2, boots=4, seed=2, samples=20, accel="tcg")
        rc, out, _ = expect(run_cmd(tool + [t1, t2]), 0)
        check("APICv/AVIC" not in out, out[-600:])
    finally:
        shutil.rmtree(tmp)


# --- pinning and the host's power state: reported, never refused


def power(**over):
    """host.power as kvmhost/facts.py read_power saves it, with over's values."""
    facts = {"cpuidle_driver": "intel_idle", "cpuidle_governor": "menu",
             "cpuidle_states": [{"name": "POLL", "enabled": True}, {"name": "C1", "enabled": True},
                                {"name": "C6", "enabled": True}],
             "cpufreq_driver": "intel_pstate", "cpufreq_governor": "performance",
             "boost": None, "intel_no_turbo": "0", "amd_pstate": None, "smt_control": "on",
             "smt_active": "1", "isolated": "", "nohz_full": "(null)"}
    facts.update(over)
    return facts


def compare_text(a, b):
    """compare's text and JSON of A against B: (stdout, the JSON's "differs")."""
    import json
    from harness import expect, run_cmd
    tool = IPIBENCH + ["compare"]
    _, out, _ = expect(run_cmd(tool + [a, b]), 0)
    check("NOT COMPARABLE" not in out, f"refused: {out[:600]}")
    return out, json.loads(run_cmd(tool + [a, b, "--format", "json"])[1])["differs"]


@case
def a_difference_in_pinning_is_listed_not_refused(_=None):
    """Pinned against not pinned (and old results' list or null) is a
    reported difference: compare says which side was pinned where."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    try:
        a, b = two_sets(tmp)
        pinned = {"state": "pinned", "why": "by default under KVM: ab and matrix pin unless "
                  "--no-pin", "map": [{"vcpu": 0, "thread_id": 4242, "host_cpu": 2},
                                      {"vcpu": 1, "thread_id": 4243, "host_cpu": 3}]}
        edit_results(a, lambda doc: doc["run"].update(pin={"state": "not pinned", "map": [],
                                                           "why": "--no-pin"}))
        edit_results(b, lambda doc: doc["run"].update(pin=pinned))
        out, differs = compare_text(a, b)
        want = f"vCPU pinning: {a} not pinned; {b} pinned: vCPU0->CPU2 vCPU1->CPU3"
        check(f"differs (not refused): {want}" in out and want in differs, out[:1200])
        # Results saved before: the --pin map (a list) is pinned, null is not;
        # thread ids (new every boot) are no difference.
        edit_results(a, lambda doc: doc["run"].update(pin=[dict(p, thread_id=1)
                                                           for p in pinned["map"]]))
        out, differs = compare_text(a, b)
        check(not [d for d in differs if d.startswith("vCPU pinning")], f"{differs}")
        edit_results(a, lambda doc: doc["run"].update(pin=None))
        out, differs = compare_text(a, b)
        check(f"vCPU pinning: {a} not pinned; {b} pinned: vCPU0->CPU2 vCPU1->CPU3" in differs,
              f"{differs}")
    finally:
        shutil.rmtree(tmp)


@case
def a_difference_in_the_hosts_power_state_is_listed_not_refused(_=None):
    """cpuidle, cpufreq, turbo, SMT, isolated CPUs and the kernel command
    line: each that differs between the sides is one reported difference."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    try:
        a, b = two_sets(tmp)

        def host(p, cmdline):
            def fn(doc):
                doc["host"]["power"], doc["host"]["kernel_cmdline"] = p, cmdline
            return fn
        edit_results(a, host(power(), "BOOT_IMAGE=/vmlinuz quiet"))
        edit_results(b, host(power(cpufreq_governor="powersave", intel_no_turbo="1",
                                   smt_control="off", smt_active="0", isolated="2-3",
                                   cpuidle_states=[{"name": "POLL", "enabled": True},
                                                   {"name": "C1", "enabled": True},
                                                   {"name": "C6", "enabled": False}]),
                                   "BOOT_IMAGE=/vmlinuz quiet isolcpus=2-3"))
        out, differs = compare_text(a, b)
        for want in (f"host cpufreq governor: {a} performance; {b} powersave",
                     f"host intel_pstate no_turbo: {a} 0; {b} 1",
                     f"host SMT control: {a} on; {b} off", f"host SMT active: {a} 1; {b} 0",
                     f"host isolated CPUs: {a} none; {b} 2-3",
                     f"host idle states: {a} POLL C1 C6; {b} POLL C1 C6(disabled)",
                     f"host kernel command line: {a} BOOT_IMAGE=/vmlinuz quiet; {b} "
                     "BOOT_IMAGE=/vmlinuz quiet isolcpus=2-3"):
            check(f"differs (not refused): {want}" in out and want in differs,
                  f"{want!r} not listed: {differs}")
        same = [d for d in differs if d.startswith(("host cpuidle", "host cpufreq driver",
                                                    "host nohz_full", "host boost"))]
        check(not same, f"listed though alike: {same}")
        # A file one side could not read (None) against a value: listed too.
        edit_results(a, host(power(cpufreq_governor=None), "BOOT_IMAGE=/vmlinuz quiet"))
        _, differs = compare_text(a, b)
        check(f"host cpufreq governor: {a} -; {b} powersave" in differs, f"{differs}")
    finally:
        shutil.rmtree(tmp)


@case
def a_difference_in_the_pits_lost_tick_policy_is_listed(_=None):
    """QEMU's default "delay" keeps AVIC inhibited where "discard" does not
    (boot/qemu.py, PIT_DISCARD): a side saved with each is listed as a
    reported difference, never silently compared."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    try:
        a, b = two_sets(tmp)
        for side, policy in ((a, "discard"), (b, "delay")):
            edit_results(side, lambda doc, p=policy: doc["host"].update(pit_policy=p))
        out, differs = compare_text(a, b)
        want = f"PIT lost-tick policy: {a} discard; {b} delay"
        check(f"differs (not refused): {want}" in out and want in differs, f"{differs}")
        edit_results(b, lambda doc: doc["host"].update(pit_policy="discard"))
        _, differs = compare_text(a, b)
        check(not [d for d in differs if d.startswith("PIT")], f"alike, listed: {differs}")
    finally:
        shutil.rmtree(tmp)


HALT_ROW = ("single-halt", "round-trip", "none", "x2apic", "halt", 1)


def halted_sets(tmp, a_rec, b_rec, slower=1.0):
    """Two synthetic sets with a single-halt row whose records a_rec(i, rec)
    and b_rec(i, rec) give their wake evidence (boot i); B's centre slower."""
    import synth
    rows = {**synth.ROWS, HALT_ROW: 5000}

    def mutate(fn):
        def go(i, recs):
            for r in recs:
                if r.get("record") == "result" and r.get("bench") == "single-halt":
                    fn(i, r)
        return go
    a = synth.make_set(os.path.join(tmp, "a"), boots=5, rows=rows, seed=11, samples=50,
                       mutate=mutate(a_rec))
    b = synth.make_set(os.path.join(tmp, "b"), boots=5, rows=rows, seed=12, samples=50,
                       scale={HALT_ROW: slower}, mutate=mutate(b_rec))
    return a, b


def traced_wake(label, poll, wait, block=None, **more):
    """A record's exits as run.sh --exits leaves them: the raw wakes
    (target_wakeups: poll, wait), the label and its counts (block: an AVIC
    miss counted as one, whatever wait says)."""
    block = wait if block is None else block
    def fn(i, r):
        r["exits"] = {"sender": {"msr (ICR)": 1.0}, "targets": {"msr (EOI)": 1.0, "hlt": 1.0},
                      "target_wakeups": {"poll": poll, "wait": wait}, "wake": label,
                      "wake_why": "test", "wake_counts": {"poll": poll + wait - block,
                                                          "block": block}}
        r["exits"].update(more)
    return fn


@case
def each_side_of_a_halted_row_shows_its_wake_and_a_change_of_wake_is_said(_=None):
    """Issue 42 item 3: compare read neither exits.wake nor host_stats.wake,
    so a side that polled was set against one that blocked without a word,
    and its blocked share came from kvm_vcpu_wakeup's raw waited (an AVIC
    miss read as a poll). Each side's class and source is shown; a row
    whose classes differ says so in compare and gate (a note, never a
    verdict), with what can have changed it (a KVM parameter the sides
    differ in, else the guest's timing or load); the blocked share is the
    label's count, recounted for records saved before it; the trace's
    "unknown" leaves the statistics' claim standing; re-halt timeouts,
    late wakes and ticked iterations are shown where not zero; KVM's
    statistics stand where there is no trace; a disputed wake is said so."""
    import json
    import shutil
    import tempfile
    from harness import expect, run_cmd
    tmp = tempfile.mkdtemp()
    row = "single-halt/round-trip/none/x2apic/halt/n1"
    try:
        # B: every send missed on AVIC (a block), though the wakeups said
        # waited=0; its first boot's re-halt wait ran out once.
        def b_rec(i, r):
            traced_wake("block", 1.0, 0.0, block=1.0)(i, r)
            r["rehalt_timeouts"] = 1 if i == 1 else 0
        a, b = halted_sets(tmp, traced_wake("poll", 1.0, 0.0), b_rec, slower=1.5)
        _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        want = (f"{row}: A poll (trace); B block (trace); re-halt timeouts 1: CHANGED, the "
                "halted target's wake path differs, which alone moves its round trip, not the "
                "send path; the sides' KVM parameters and kernel are alike: the guest's own "
                "timing or the host's load")
        check(want in out, f"no wake line {want!r}:\n{out}")
        line = next(l for l in out.splitlines() if l.startswith("single-halt "))
        check("b0.00" in line and "b1.00" in line and "(wake poll -> block)" in line, line)
        rows = json.loads(run_cmd(IPIBENCH + ["compare", a, b, "--format", "json"])[1])["rows"]
        r = next(x for x in rows if x["row"] == row)
        check(r["wake_changed"] and r["a_wake"]["class"] == "poll" and
              r["b_wake"]["events"] == {"re-halt timeouts": 1}, f"{r}")
        check(all(not x["wake_changed"] and x["a_wake"] is None for x in rows if x["row"] != row),
              "a wake on a row without a halted target")
        _, _, err = run_cmd(IPIBENCH + ["gate", "--baseline", a, b, "--threshold", "5%"])
        check(f"gate: note: {row}: wake poll (trace) -> block (trace); re-halt timeouts 1: the "
              "halted target's wake path differs" in err, err[-600:])
        # A KVM parameter the sides differ in is named as what can have changed it.
        edit_results(b, lambda doc: doc["host"].setdefault("kvm_params", {}).update(
            {"kvm.halt_poll_ns": "0"}))
        _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        check("the sides' hosts differ in kvm.halt_poll_ns" in out, out[-900:])
        # Alike: no change said; a mixed side with its counts; from KVM's
        # statistics where there is no trace; a disputed wake is neither.
        shutil.rmtree(tmp)
        tmp = tempfile.mkdtemp()

        def stats(label, **counts):
            def fn(i, r):
                r["host_stats"] = {"wake": label, "wake_why": "test", **counts}
            return fn
        # A record saved before wake_counts: its share recounted from the
        # record (the miss a block), not taken from waited.
        def old(i, r):
            traced_wake("block", 1.0, 0.0, block=1.0)(i, r)
            del r["exits"]["wake_counts"]
            r["exits"]["sender"] = {"avic_incomplete_ipi (target not running)": 1.0}
        a, b = halted_sets(tmp, old, traced_wake("block", 0.0, 1.0))
        line = next(l for l in expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)[1].splitlines()
                    if l.startswith("single-halt "))
        check(line.count("b1.00") == 2, f"an old record's miss read as a poll: {line}")
        shutil.rmtree(tmp)
        tmp = tempfile.mkdtemp()
        # The trace's "unknown" claims nothing: the statistics' claim stands.
        a, b = halted_sets(tmp, traced_wake("unknown", 0.0, 0.0),
                           lambda i, r: r.update(exits={"sender": {}, "targets": {},
                                                        "wake": "unknown"},
                                                 host_stats={"wake": "poll"}))
        _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        check(f"{row}: A unknown (trace); B poll (statistics)" in out, out[-900:])
        shutil.rmtree(tmp)
        tmp = tempfile.mkdtemp()
        a, b = halted_sets(tmp, traced_wake("mixed", 0.6, 0.4),
                           stats("mixed", halts=50, polled=30, blocked=20, other=0))
        _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        check(f"{row}: A mixed: poll 0.60, block 0.40 an iteration (trace); B mixed: 150 "
              "polled, 100 blocked, 0 other (statistics)" in out and "CHANGED" not in out,
              out[-900:])
        edit_results(b, lambda doc: [r.update(exits={"sender": {}, "targets": {}, "wake": "poll",
                                                     "wake_disagrees": "test"})
                                     for r in doc["records"] if r.get("bench") == "single-halt"])
        _, out, _ = expect(run_cmd(IPIBENCH + ["compare", a, b]), 0)
        check("B disputed (trace poll, statistics mixed: neither taken)" in out and
              "CHANGED" not in out, out[-900:])
    finally:
        shutil.rmtree(tmp)


def main():
    return 1 if run_cases(CASES, "compare") else 0

if __name__ == "__main__":
    sys.exit(main())
