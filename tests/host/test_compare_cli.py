#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""./run.sh compare (compare/compare.py, compare/formats.py) end to end on
the synthetic result sets (fixtures.Sets, tests/host/synth.py), and gate on
the same verdicts: like sets no change; 20% slower or faster flagged; a
change buried in boot-to-boot noise, or with one boot a side, never
significant; a different CPU count or TSC source not comparable (gate 30);
no benchmark in common (exit 25); the Markdown table.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET

from harness import check, expect, registry
import synth
from fixtures import SLOW, main, tool

from ipibench.exit_codes import EX_INCOMPARABLE, EX_NO_OVERLAP, EX_REGRESSION


CASES, case = registry()


@case("identical sets: every row 'no change', compare and gate exit 0")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.same), 0)
    rows = [l for l in out.splitlines() if l.startswith(("single", "broadcast", "send", "self"))]
    check(len(rows) == len(synth.ROWS), f"{len(rows)} rows, expected {len(synth.ROWS)}")
    check(all(l.rstrip().endswith("no change") and "+0.0%" in l for l in rows),
          "a row changed:\n" + "\n".join(rows))
    tap, junit = os.path.join(s.tmp, "same.tap"), os.path.join(s.tmp, "same.xml")
    expect(tool("gate", "--baseline", s.base, s.same, "--tap", tap, "--junit", junit), 0,
           "gate: pass")
    t = open(tap).read()
    check(t.startswith("1..") and "not ok" not in t, "TAP has a failure")
    root = ET.parse(junit).getroot()
    check(root.get("failures") == "0" and int(root.get("tests")) >= len(synth.ROWS), "JUnit")


@case("20% slower in one benchmark, low noise: flagged; gate exits 20; TAP and JUnit name it")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.slow, "--format", "json"), 0)
    rows = {r["row"]: r for r in json.loads(out)["rows"]}
    r = rows[SLOW]
    check(r["verdict"] == "slower" and 18 < r["change_pct"] < 22 and r["p"] < 0.05,
          f"slowed row: {r}")
    check(r["test"] == "boots" and abs(r["p"] - 2 / 252) < 1e-9, f"5 v 5 boots: {r['p']}")
    others = [n for n, x in rows.items() if n != SLOW and x["verdict"] == "slower"
              and x["change_pct"] > 5]
    check(not others, f"other rows flagged: {others}")
    tap, junit = os.path.join(s.tmp, "slow.tap"), os.path.join(s.tmp, "slow.xml")
    expect(tool("gate", "--baseline", s.base, s.slow, "--threshold", "10%", "--tap", tap,
                "--junit", junit), EX_REGRESSION, f"gate: FAIL: {SLOW}")
    bad = [l for l in open(tap) if l.startswith("not ok")]
    check(len(bad) == 1 and SLOW in bad[0] and "slower than the baseline" in bad[0], f"TAP {bad}")
    fails = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    check(len(fails) == 1 and fails[0].get("name") == SLOW, "JUnit failure does not name it")
    expect(tool("gate", "--baseline", s.base, s.slow, "--threshold", "25%"), 0)


@case("20% faster: flagged 'faster', the gate passes")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.fast), 0)
    line = [l for l in out.splitlines() if l.startswith("single") and "x2apic" in l
            and "round-trip" in l][0]
    check(line.rstrip().endswith("faster") and "-2" in line, line)
    expect(tool("gate", "--baseline", s.base, s.fast), 0)


@case("20% change buried in boot-to-boot noise: not significant, gate passes")
def _(s):
    rc, out, _ = expect(tool("compare", s.noisy_a, s.noisy_b, "--format", "json"), 0)
    r = {x["row"]: x for x in json.loads(out)["rows"]}[SLOW]
    check(r["p"] > 0.05 and r["verdict"] != "slower", f"noisy row judged {r['verdict']}, "
          f"p {r['p']}, change {r['change_pct']}")
    lo, hi = r["ci_pct"]
    check(lo < 0 < hi or lo < 5, f"CI {r['ci_pct']} should reach below +5%")
    expect(tool("gate", "--baseline", s.noisy_a, s.noisy_b), 0)


@case("one boot a side: 'too few boots', never significant on the pooled samples alone")
def _(s):
    a, b = os.path.join(s.base, "boot1"), os.path.join(s.slow, "boot1")
    rc, out, _ = expect(tool("compare", a, b, "--format", "json"), 0)
    r = {x["row"]: x for x in json.loads(out)["rows"]}[SLOW]
    # The pooled samples say p < 1e-6, but they see no boot-to-boot spread.
    check(r["test"] == "boots" and r["verdict"] == "too few boots" and r["p_min"] == 1.0
          and r["samples_p"] < 1e-6 and r["ci_pct"] is None, f"{r}")
    expect(tool("gate", "--baseline", a, b, "--threshold", "5%"), 0)


@case("different CPU count or TSC source: 'not comparable'; compare 0, gate 30")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.cpus8), 0, "NOT COMPARABLE",
                        "CPU count differs")
    rows = [l for l in out.splitlines() if l and not l.startswith("boots: ")]  # less the legend
    check("not comparable" in rows[-1], "rows not marked")
    expect(tool("gate", "--baseline", s.base, s.cpus8), EX_INCOMPARABLE, "CPU count differs")
    expect(tool("gate", "--baseline", s.base, s.tsc), EX_INCOMPARABLE, "TSC source differs")
    mixed = os.path.join(s.tmp, "mixed")
    os.makedirs(mixed)
    shutil.copytree(os.path.join(s.base, "boot1"), os.path.join(mixed, "a"))
    shutil.copytree(os.path.join(s.cpus8, "boot1"), os.path.join(mixed, "b"))
    expect(tool("compare", s.base, mixed), 0, "mixes CPU counts")


@case("baseline without overlapping benchmarks: exit 25 naming both sides")
def _(s):
    expect(tool("compare", s.base, s.disjoint), EX_NO_OVERLAP, "share no benchmark row",
           "ipi_benchmark")
    expect(tool("gate", "--baseline", s.disjoint, s.base), EX_NO_OVERLAP, "share no")


@case("Markdown output: a table with one line per row")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.slow, "--format", "markdown"), 0)
    rows = [l for l in out.splitlines() if l.startswith("| ") and "benchmark" not in l]
    seps = [l for l in out.splitlines() if l.startswith("|---")]
    check(len(rows) == len(synth.ROWS) and len(seps) == 1, "markdown table shape")
    check(any("slower" in l and "| single | round-trip |" in l for l in rows), "slow row")


if __name__ == "__main__":
    sys.exit(main(CASES))
