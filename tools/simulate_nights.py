#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How many nights history needs to catch a step, and how often a clean
night fails: measured by simulation through history's own judgement
(compare/history.py: the night against its level, change points, the
window's verdict), on synthetic series with a known noise model. The
numbers docs/nightly.md states come from here, seeded, so they are the
same on every machine.

The noise model: each row of a night is off by a night-wide factor
(normal, NIGHT_NOISE; NOISY_NIGHT for every NOISY-th row, the rows that
swing from night to night as a halted target's wake does) and each of its
BOOTS boots by one of its own (BOOT_NOISE); a step multiplies one row (a
quiet one) from a given night on.

usage: tools/simulate_nights.py [--series N] [--rows N]"""
import argparse
import os
import random
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "host"))
from ipibench.compare import history  # noqa: E402

BOOTS, BOOT_NOISE, NIGHT_NOISE = 5, 0.02, 0.01
NOISY, NOISY_NIGHT = 10, 0.15
ROWS, NIGHTS, BASELINE = 220, 20, 5
THRESHOLD, ALPHA, WINDOW = 5.0, 0.01, 10  # history's defaults
STEPS = (1.1, 1.2, 1.5, 2.0)


class _Side:
    def __init__(self, values):
        self.values, self.exits = values, {}


class Night:
    """What history reads of a run: per row, its boots' values."""

    def __init__(self, i, values):
        self.path, self.side = f"night{i:02d}", _Side(values)
        self.facts, self.split, self.trace_gap = {}, {}, None


def key(r):
    """Row r's key, as compare/model.py's ROW_FIELDS are."""
    return (f"bench{r:03d}", "metric", "variant", "backend", "running", 1)


def series(rows, nights, seed, step_at=None, factor=1.0, noisy=True):
    """nights of rows rows; row 0 times factor from step_at on; noisy: every
    NOISY-th row swings NOISY_NIGHT a night (else all swing NIGHT_NOISE)."""
    rng = random.Random(seed)
    out = []
    for i in range(nights):
        values = {}
        for r in range(rows):
            night = max(0.2, 1 + rng.gauss(0, NOISY_NIGHT if noisy and r % NOISY == NOISY - 1
                                           else NIGHT_NOISE))
            f = factor if step_at is not None and i >= step_at and r == 0 else 1.0
            values[key(r)] = [1000 * f * night * (1 + rng.gauss(0, BOOT_NOISE))
                                        for _ in range(BOOTS)]
        out.append(Night(i, values))
    return out


def prepare(runs):
    """history's mark_eras for a series of one configuration throughout,
    and its night steps, worked out once for every prefix."""
    for r in runs:
        r.stretch = {"timing": (0, len(runs)), "exits": (0, len(runs))}
    return history.night_steps(runs, sorted(runs[0].side.values), THRESHOLD)


def regressed(runs, nights):
    """The rows history fails on the newest of these runs (a prefix of
    the series prepare() read)."""
    for r in runs:
        r.stretch = {"timing": (0, len(runs)), "exits": (0, len(runs))}
    changes = history.figure_changes(runs, ALPHA, THRESHOLD, nights)
    return [k for k, j in history.judge_all(runs, changes, THRESHOLD, WINDOW)
            if j["kind"] == "timing" and j["bad"]]


def nights_to_catch(factor, seed, rows, most=8, baseline=BASELINE):
    """The nights after a step that follows `baseline` clean nights (1: the
    night it appears) until history fails on its row; None when not within
    most."""
    runs = series(rows, baseline + most, seed, step_at=baseline, factor=factor)
    nights = prepare(runs)
    for n in range(1, most + 1):
        if key(0) in regressed(runs[:baseline + n], nights):
            return n
    return None


def false_alarms(seed, rows, nights=NIGHTS, noisy=True):
    """(clean nights judged, those that failed), each night as the newest."""
    runs = series(rows, nights, seed, noisy=noisy)
    steps = prepare(runs)
    judged = range(history.MIN_LEVEL_NIGHTS, nights)
    return len(judged), sum(bool(regressed(runs[:n + 1], steps)) for n in judged)


def main(argv):
    p = argparse.ArgumentParser(prog="tools/simulate_nights.py")
    p.add_argument("--series", type=int, default=10)
    p.add_argument("--rows", type=int, default=ROWS)
    a = p.parse_args(argv)
    print(f"{BOOTS} boots a night, boot noise {BOOT_NOISE:.0%}, night noise {NIGHT_NOISE:.0%} "
          f"({NOISY_NIGHT:.0%} for 1 row in {NOISY}), "
          f"{a.rows} rows a night, {BASELINE} clean nights first; threshold {THRESHOLD:g}%, "
          f"window {WINDOW}; {a.series} seeded series each")
    print("| step | nights to fail (1: the night it appears), per series |")
    print("|---|---|")
    for f in STEPS:
        got = [nights_to_catch(f, s, a.rows) for s in range(a.series)]
        print(f"| {f:g}x | {', '.join('-' if n is None else str(n) for n in got)} |")
    judged = failed = 0
    for s in range(a.series):
        n, bad = false_alarms(1000 + s, a.rows)
        judged, failed = judged + n, failed + bad
    print(f"clean nights that failed: {failed} of {judged}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
