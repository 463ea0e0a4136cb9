#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/validate.py: the phase records' checks, each and their sequence;
matrix --verbose streams its boots' consoles.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry
from fixtures import main

from ipibench import options as O
from ipibench.boot import matrix as M
from ipibench.results import validate as V
from ipibench.results.records import record_problems


CASES, case = registry()


@case("run.sh phase records: validate.py checks each and their count; matrix --verbose streams")
def _(_s):
    good = {"record": "phase", "schema": 1, "index": 2, "of": 3, "backend": "x", "bench": "y"}
    for bad, why in (({"index": 4}, "phase index 4 outside 1..3"),
                     ({"index": 0}, "phase index 0 outside 1..3"),
                     ({"of": "3"}, "'of' is str, expected int"),
                     ({"bench": None}, "'bench' is NoneType, expected str")):
        problems = []
        V.check_phase(dict(good, **bad), problems)
        check(problems == [why], f"{bad}: {problems}")
    problems = []
    V.check_phase(good, problems)
    check(not problems and record_problems(good) == [], f"{problems}")
    ph = [dict(good, index=i) for i in (1, 2, 3)]
    check(V.check_phases(ph, True) == [] and V.check_phases(ph[:2], False) == [] and
          V.check_phases([], True) == [], "good sequences")
    check(V.check_phases(ph[:2], True) == ["2 phases opened of the 3 announced"], "short")
    check(V.check_phases([ph[1], ph[0]], False) != [] and
          V.check_phases([ph[0], dict(ph[1], of=4)], False) != [], "out of order, two totals")
    argv = M.boot_argv("x2apic", 2, "c", "/d", True, [])
    check("--verbose" in argv and "--quiet" not in argv, f"{argv}")
    check("--quiet" in M.boot_argv("x2apic", 2, "c", "/d", False, []), "quiet boots")
    # The last of --quiet and --verbose wins (ab adds --quiet after what it was given).
    check(O.parse_run(["--verbose", "--quiet"], "/").quiet and
          O.parse_run(["--quiet", "--verbose"], "/").verbose, "last wins")


if __name__ == "__main__":
    sys.exit(main(CASES))
