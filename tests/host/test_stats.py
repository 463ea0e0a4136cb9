#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/stats.py against hand-checked values: the Mann-Whitney U test's
exact p-values, its normal approximation for large samples and for
histograms, medians and the bootstrap interval of a change.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import sys

from harness import check, registry
from fixtures import main

from ipibench.compare.model import exit_rises, failed_rises
from ipibench.results.night import night_tests, prediction_p
from ipibench.results.stats import (bootstrap_change_ci, holm, incomplete_beta, mann_whitney,
                                    mann_whitney_histograms, median, student_t_p)


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
    # A night of 5 boots above a level of 10 nights' 50 (55 boots: past the
    # exact limit). Without ties both extremes can be drawn: 2 of the
    # C(55, 5) = 3,478,761 splits, p 5.75e-7, where the normal
    # approximation's 2.7e-4 would never pass Holm over 100 rows.
    night = [5392683, 5393196, 5393197, 5394762, 5404374]
    p, p_min, how = mann_whitney(night, list(range(2700, 2750)))
    check(how == "exact" and abs(p - 2 / 3478761) < 1e-15 and p == p_min,
          f"5 v 50 separated: {how} p {p}")
    # TCG's ties (a 27-cycle grid): one extreme cannot be drawn, p 1/C; and
    # one boot tied with the level's highest (U near, not at, its extreme)
    # still gets its exact tail, whichever side is named first.
    level = [2727, 2727, 2781, 2781, 2889] * 10
    p, _, how = mann_whitney(night, level)
    check(how == "exact" and abs(p - 1 / 3478761) < 1e-15, f"5 v 50 separated, tied: {how} p {p}")
    near = [2889, 9000, 9001, 9002, 9003]
    p, _, how = mann_whitney(near, level)
    check(how == "exact" and p < 0.01 / 220 and p == mann_whitney(level, near)[0],
          f"5 v 50, one boot tied across: {how} p {p}")
    # Far from the tail the approximation stands (no exact sum computed).
    p, _, how = mann_whitney([2727, 2781, 2889, 2727, 2781], level)
    check(how == "normal" and p > 0.5, f"a night like its level: {how} p {p}")
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



@case("Holm, Student's t and the incomplete beta against hand-checked values")
def _(s):
    check(holm([0.01, 0.04, 0.03, 0.005], 0.05) == [True, False, False, True],
          "holm: 0.005 <= 0.0125, 0.01 <= 0.0167, 0.03 > 0.025 stops the rest")
    check(holm([0.001] * 3, 0.05) == [True] * 3 and holm([], 0.05) == [], "holm edges")
    for t, df, want in ((12.706, 1, 0.05), (2.776, 4, 0.05), (4.604, 4, 0.01),
                        (8.610, 4, 0.001), (1.96, 1000, 0.05)):
        got = student_t_p(t, df)
        check(abs(got - want) < 0.0005, f"t {t} df {df}: p {got}, tables say {want}")
    check(student_t_p(0, 5) == 1.0 and student_t_p(3, 0) == 1.0, "t edges")
    # I_x(1, 1) = x; I_0.5(a, a) = 0.5; I_x(2, 1) = x^2.
    check(abs(incomplete_beta(1, 1, 0.3) - 0.3) < 1e-12 and
          abs(incomplete_beta(3.5, 3.5, 0.5) - 0.5) < 1e-12 and
          abs(incomplete_beta(2, 1, 0.6) - 0.36) < 1e-12, "incomplete beta")


@case("the night test: the prediction interval of the level nights, both tests must reject, "
      "Holm over the night's rows; a step beyond the nights' spread, never within it")
def _(s):
    meds = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    check(prediction_p(meds, 1002.0) > 0.5 and prediction_p(meds, 1500.0) < 1e-5,
          f"prediction_p: {prediction_p(meds, 1002.0)}, {prediction_p(meds, 1500.0)}")
    check(prediction_p([7.0] * 4, 7.0) == 1.0 and prediction_p([7.0] * 4, 8.0) == 0.0,
          "nights that never vary predict themselves")
    level = [m + d for m in meds for d in (-3, -1, 0, 1, 3)]
    rows = {"step": (level, [1500.0 + d for d in (-2, -1, 0, 1, 2)], meds),
            "same": (level, [1000.0 + d for d in (-2, -1, 0, 1, 2)], meds),
            # Boots apart from the level's, but within the nights' spread.
            "wander": (level, [1012.0 + d for d in (0, 0.1, 0.2, 0.3, 0.4)], meds)}
    got = night_tests(rows, 5.0)
    check(got["step"]["step"] == "slower" and got["same"]["step"] is None and
          got["wander"]["step"] is None, f"{ {k: v['step'] for k, v in got.items()} }")


@case("the exits count test: load's 3 in 50 never fails however many boots; a new exit in 30% "
      "of the iterations fails; half an exit or more fails outright")
def _(s):
    def boots(rate, n=5):
        return [({"msr (EOI)": rate}, {}, 50)] * n
    check(not failed_rises(exit_rises(boots(0.0), boots(0.06))), "5 boots of 3 in 50 failed")
    check(not failed_rises(exit_rises(boots(0.0, 50), boots(0.06, 50))), "50 boots of 3 in 50")
    check(failed_rises(exit_rises(boots(0.0, 1), boots(0.3, 1))), "15 in 50 where none passed")
    got = failed_rises(exit_rises(boots(1.0, 1), boots(1.5, 1)))
    check(got and got[0]["step"], f"+0.5 an iteration is a step: {got}")
    # A broadcast's targets: the load of 179 targets is 179 times one's.
    tb = [({}, {"msr (EOI)": 179.0}, 50)]
    tl = [({}, {"msr (EOI)": 179.0 * 1.06}, 50)]
    check(not failed_rises(exit_rises(tb, tl, ntargets=179)), "179 targets' load failed")


if __name__ == "__main__":
    sys.exit(main(CASES))
