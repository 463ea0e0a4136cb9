#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""run.sh itself, the bash wrapper that hands over to host/ipibench/cli.py:
without python3 it says so (exit 9).
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry, run_cmd
from fixtures import RUN, main


CASES, case = registry()


@case("run.sh without python3: compare says so (exit 9)")
def _(_s):
    rc, _, err = run_cmd(["/bin/bash", RUN, "compare", "a", "b"], {"PATH": "/nonexistent"}, 30)
    check(rc == 9 and "run.sh: python3 is missing (tools/deps.sh build installs it)" in err,
          f"exit {rc}: {err}")


if __name__ == "__main__":
    sys.exit(main(CASES))
