#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""./run.sh gate (compare/gate.py) on the synthetic result sets
(fixtures.Sets): a rerun with low noise passes; a correctness failure (a
FAILURE record, a failed check, a crashed guest) always fails it (exit 21),
named in its TAP and JUnit XML; a failing baseline is noted, not held
against the candidate.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import sys
import xml.etree.ElementTree as ET

from harness import check, expect, registry
from fixtures import main, tool

from ipibench.exit_codes import EX_CORRECTNESS


CASES, case = registry()


@case("a rerun with low noise: no row significantly slower by 5%, gate passes")
def _(s):
    expect(tool("gate", "--baseline", s.base, s.rerun, "--threshold", "5%"), 0, "gate: pass")


@case("correctness failures always fail the gate (exit 21), named in TAP and JUnit")
def _(s):
    tap, junit = os.path.join(s.tmp, "f.tap"), os.path.join(s.tmp, "f.xml")
    expect(tool("gate", "--baseline", s.base, s.failure, "--tap", tap, "--junit", junit,
                "--threshold", "1000%"), EX_CORRECTNESS, "IPI from CPU 0 to CPU 1 lost")
    bad = [l for l in open(tap) if l.startswith("not ok")]
    check(len(bad) == 1 and "boot2" in bad[0] and "FAILURE: single on xapic" in bad[0], f"{bad}")
    fails = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    check(len(fails) == 1 and fails[0].get("classname") == "ipibench.correctness", "JUnit")
    expect(tool("gate", "--baseline", s.base, s.checkfail), EX_CORRECTNESS,
           "correctness suite: 2 failed")
    expect(tool("gate", "--baseline", s.base, s.crash), EX_CORRECTNESS, "guest status CRASH")
    # A failing baseline is noted, not held against the candidate.
    expect(tool("gate", "--baseline", s.failure, s.base), 0, "baseline itself is not correct")


if __name__ == "__main__":
    sys.exit(main(CASES))
