#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/stats.py against hand-checked values: the Mann-Whitney U test's
exact p-values, its normal approximation for large samples and for
histograms, medians and the bootstrap interval of a change.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry
from fixtures import main

from ipibench.results.stats import (bootstrap_change_ci, mann_whitney, mann_whitney_histograms,
                                    median)


CASES, case = registry()


@case("Mann-Whitney U: exact p-values of hand-checked vectors")
def _(s):
    p, p_min, how = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    check(how == "exact" and abs(p - 2 / 252) < 1e-12, f"5 v 5 separated: p {p}, expected 2/252")
    check(abs(p_min - 2 / 252) < 1e-12, f"p_min {p_min}")
    p, p_min, _ = mann_whitney([1, 2, 3], [4, 5, 6])
    check(abs(p - 0.1) < 1e-12 and abs(p_min - 0.1) < 1e-12, f"3 v 3 separated: p {p}")
    # U = 1 for a = {1, 3}, b = {2, 4, 5}: P(U <= 1) = 2/10, two-sided 0.4.
    p, _, _ = mann_whitney([1, 3], [2, 4, 5])
    check(abs(p - 0.4) < 1e-12, f"2 v 3 with U=1: p {p}, expected 0.4")
    p, p_min, _ = mann_whitney([7, 7, 7], [7, 7, 7])
    check(p == 1.0 and p_min == 1.0, f"all tied: p {p}, p_min {p_min}")
    p, _, _ = mann_whitney([1, 2, 2, 3], [2, 3, 3, 4])
    check(0.1 < p < 0.5, f"ties, exact permutation: p {p}")


@case("Mann-Whitney U: normal approximation for large samples and for histograms")
def _(s):
    a = list(range(0, 60))
    p, p_min, how = mann_whitney(a, a)
    check(how == "normal" and p > 0.99, f"identical 60 v 60: {how} p {p}")
    p, _, _ = mann_whitney(a, [x + 30 for x in a])
    check(p < 1e-6, f"shifted by half the range: p {p}")
    h = [[96, 111, 10], [112, 127, 30], [128, 143, 10]]
    check(mann_whitney_histograms(h, h) == 1.0, "identical histograms")
    h2 = [[128, 143, 10], [144, 159, 30], [160, 175, 10]]
    check(mann_whitney_histograms(h, h2) < 1e-9, "separated histograms not significant")


@case("medians and the bootstrap interval")
def _(s):
    check(median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5, "median")
    ci = bootstrap_change_ci([100, 101, 99, 100, 100], [120, 121, 119, 120, 120], 1)
    check(ci and 17 < ci[0] <= 20 <= ci[1] < 23, f"CI {ci} should hold +20%")
    check(bootstrap_change_ci([100, 101], [120, 121], 1) is None, "two boots a side: no CI")
    check(ci == bootstrap_change_ci([100, 101, 99, 100, 100], [120, 121, 119, 120, 120], 1),
          "bootstrap not reproducible")


if __name__ == "__main__":
    sys.exit(main(CASES))
