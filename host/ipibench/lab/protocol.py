# SPDX-License-Identifier: GPL-2.0-only
"""What the guest, a lab's jobs, report and import agree on (docs/lab.md):
the lines the guest prints with lava=1 (lib/lava.h) and the monitors'
patterns that read them, LAVA's test case ids, and the marker lines around
a results.json embedded in a job's log.

Case ids are what LAVA keeps: lower-case [a-z0-9] runs joined by '_' (its
monitor and lava-test-case store ids as given, but its pages and queries
expect slugs; the monitor makes one of whatever it captures)."""
import re

# The guest's lines (lib/lava.h) and the monitors that read them.
BEGIN = "ipibench-lava: begin"
CASES_END = "ipibench-lava: cases end"
FIGURES_BEGIN = "ipibench-lava: figures begin"
FIGURES_END = "ipibench-lava: figures end"
STATUS_CASE = "ipibench_status"
CASE_PATTERN = r"ipibench-case: (?P<test_case_id>[a-z0-9_]+) (?P<result>pass|fail|skip)"
FIGURE_PATTERN = (r"ipibench-figure: (?P<test_case_id>[a-z0-9_]+) (?P<measurement>[0-9]+) "
                  r"(?P<units>cycles|ns)")
CASE_LINE = re.compile("^" + CASE_PATTERN + "$", re.M)
FIGURE_LINE = re.compile("^" + FIGURE_PATTERN + "$", re.M)
# The monitors' names: LAVA's test suites.
SUITE, FIGURE_SUITE = "ipibench", "ipibench-figures"

# results.json in a DUT job's log, for `import` (report --embed).
EMBED_BEGIN, EMBED_END = "ipibench-results-begin", "ipibench-results-end"


def slug(text):
    """LAVA's test case id of a name: as lib/lava.c makes it (ASCII letters
    lowered, every other run of non-[a-z0-9] one '_', none at either end)."""
    low = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in str(text))
    return re.sub(r"[^a-z0-9]+", "_", low).strip("_")

