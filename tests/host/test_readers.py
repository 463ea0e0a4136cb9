#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""readers.py, the command line of the readers of saved results (compare,
gate, report): a usage error exits 2.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import expect, registry
from fixtures import main, tool


CASES, case = registry()


@case("usage errors exit 2")
def _(s):
    expect(tool("gate", s.base), 2, "--baseline")
    expect(tool("gate", "--baseline", s.base, s.same, "--threshold", "lots"), 2, "percentage")
    expect(tool("compare", s.base), 2)


if __name__ == "__main__":
    sys.exit(main(CASES))
