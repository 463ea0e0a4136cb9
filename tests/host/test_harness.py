#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The test files' own command line (harness.selected): one case by part
of its name (--case TEXT), every name (--list), a name that matches none
refused with exit 2.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry, run_cmd
from fixtures import main


CASES, case = registry()


@case("a test file runs one case by name (--case TEXT), lists them (--list), refuses an unknown one")
def _(s):
    import harness
    cases = [("alpha one", None), ("beta two", None), ("gamma", None)]
    check([n for n, _ in harness.selected(cases, [])] == ["alpha one", "beta two", "gamma"],
          "every case without --case")
    check([n for n, _ in harness.selected(cases, ["--case", "two", "--case", "gam"])] ==
          ["beta two", "gamma"], "--case picks by part of the name")
    # As a person runs it: not on tests/run's fixture hosts, nothing logged.
    alone = {"IPIBENCH_HOSTS_DIR": "", "IPIBENCH_HOST_LOG_DIR": "", "IPIBENCH_TEST_HOST": ""}
    rc, out, err = run_cmd([sys.executable, "tests/host/test_hoststats.py", "--case", "zzz"],
                           alone)
    check(rc == 2 and "no case named like 'zzz'" in err and "ok -" not in out, f"{rc} {err}")
    rc, out, _ = run_cmd([sys.executable, "tests/host/test_hoststats.py", "--case",
                          "same statistics"], alone)
    check(rc == 0 and out.strip() == "ok - hoststats: the lane asks for the same statistics",
          out)


if __name__ == "__main__":
    sys.exit(main(CASES))
