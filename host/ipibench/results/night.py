# SPDX-License-Identifier: GPL-2.0-only
"""The newest night of a series against its level, with its own samples.

A night holds several boots (the nightly recipe runs five), each a p50 per
row: its own distribution. Judging it against the level the series holds
now (the boots of the nights since the row's last step, up to
LEVEL_NIGHTS of them) catches a clear step the night it appears, where a
change-point search over the nights' medians needs three nights after
it (results/changepoints.py, MIN_SIZE). Every row a night tests is one
test of a family: Holm's procedure holds the chance of any false alarm in
the night at NIGHT_ALPHA, whatever the number of rows, and a row is a step
only beyond the effect floor (history's --threshold) as well. The boots
alone would not do: boots of one night share its host state, so a clean
night wanders from the level by more than its boots' spread says; the
night's median must also fall outside the level nights' prediction
interval. Pure: the values in, the verdicts out; no timing, load or host
fact reaches it."""
import math

from ipibench.results.stats import holm, mann_whitney, median, student_t_p

NIGHT_ALPHA = 0.01
# The level: the newest nights of the row's current step, at most this many.
LEVEL_NIGHTS = 10
# A level needs this many nights (their spread between nights, not only
# within one, is what a new night is set against).
MIN_LEVEL_NIGHTS = 3


def prediction_p(medians, now):
    """How far the night's median lies outside what the level's nights
    predict: the two-sided p of Student's t prediction interval over the
    logarithms of the level nights' medians (k nights, k - 1 degrees of
    freedom). Boots of one night share that night's host state, so the
    pooled boots alone understate how far a clean night wanders from the
    level; this is the nights' own spread. Nights that never vary (a
    count) predict themselves: any move is p 0, none is 1."""
    if min(medians) <= 0 or now <= 0:
        return 1.0
    logs, k = [math.log(m) for m in medians], len(medians)
    mean = sum(logs) / k
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (k - 1))
    gap = abs(math.log(now) - mean)
    if sd == 0:
        return 0.0 if gap > 0 else 1.0
    return student_t_p(gap / (sd * math.sqrt(1 + 1 / k)), k - 1)


def night_tests(rows, threshold, alpha=NIGHT_ALPHA):
    """rows: {key: (the level's boot values, the night's boot values, the
    level nights' medians)}.
    Returns {key: {"level", "now", "change_pct", "p", "p_min", "step"}}:
    step is "slower" or "faster" where the row's test is rejected by Holm
    over all the rows given and its median moved beyond threshold (%), else
    None. A row's p is the larger of two tests that must both reject: the
    night's boots against the level's (Mann-Whitney U) and its median
    against the level nights' prediction interval (prediction_p). A level
    of 0 (a figure that cannot move) is never a step."""
    keys = [k for k, (lv, new, _) in rows.items() if lv and new]
    tests = {}
    for k in keys:
        lv, new, meds = rows[k]
        p_boots, p_min, _ = mann_whitney(new, lv)
        level, now = median(lv), median(new)
        pct = 100 * (now / level - 1) if level else 0.0
        # Both must hold (an intersection-union test: the larger p is the row's).
        p_nights = prediction_p(meds, now)
        tests[k] = {"level": level, "now": now, "change_pct": pct, "p": max(p_boots, p_nights),
                    "p_boots": p_boots, "p_nights": p_nights, "p_min": p_min, "step": None}
    rejected = holm([tests[k]["p"] for k in keys], alpha)
    for k, bad in zip(keys, rejected):
        t = tests[k]
        if bad and t["level"] and abs(t["change_pct"]) > threshold:
            t["step"] = "slower" if t["change_pct"] > 0 else "faster"
    return tests
