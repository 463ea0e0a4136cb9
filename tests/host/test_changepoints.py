#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/changepoints.py (E-Divisive means) against hand-checked values and
synthetic series with known change points: a step, two steps up, a step in
exits per iteration (no noise at all), noise only, a single outlier that
must not count, a ramp. (A step up and back, an "epidemic" change, is
found only about half the time at 15 runs a segment and 0.01: the first
split compares one segment against a mixture. Not asserted; a known limit.)
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import random
import sys

from harness import check, registry
from fixtures import main

from ipibench.results.changepoints import best_split, change_points

CASES, case = registry()


def brute_split(z, min_size=3):
    """The best split by the definition: every t, every pair, a = 1."""
    n, best = len(z), (0.0, None)
    for t in range(min_size, n - min_size + 1):
        x, y = z[:t], z[t:]
        between = sum(abs(a - b) for a in x for b in y) / (len(x) * len(y))
        wx = sum(abs(a - b) for i, a in enumerate(x) for k, b in enumerate(x) if i != k)
        wy = sum(abs(a - b) for i, a in enumerate(y) for k, b in enumerate(y) if i != k)
        e = 2 * between - wx / (len(x) * (len(x) - 1)) - wy / (len(y) * (len(y) - 1))
        q = len(x) * len(y) / n * e
        if q > best[0]:
            best = (q, t)
    return best


@case("change points: the energy statistic of hand-checked vectors, and the incremental sums "
      "(in any order, with ties) against the definition")
def _(_s):
    # 000111: X and Y at distance 1, nothing within: E = 2, Q = 3*3/6*2 = 3.
    check(best_split([0, 0, 0, 1, 1, 1]) == (3.0, 3), f"{best_split([0, 0, 0, 1, 1, 1])}")
    # 00001111: t=4 gives E = 2, Q = 4; t=3 gives 2*12/15 - 0 - 4/10 = 1.2, Q = 2.25.
    q, t = best_split([0, 0, 0, 0, 1, 1, 1, 1])
    check(t == 4 and abs(q - 4.0) < 1e-12, f"{q} {t}")
    check(best_split([1, 2, 3, 4, 5]) == (0.0, None), "too short to split, 3 a side")
    rng = random.Random(7)
    for _ in range(25):
        n = rng.randrange(6, 30)
        z = [rng.gauss(0, 1) + (rng.choice([0, 4]) if i > n // 2 else 0) for i in range(n)]
        (q1, t1), (q2, t2) = best_split(z), brute_split(z)
        check(t1 == t2 and abs(q1 - q2) < 1e-9, f"{z}: incremental {q1} at {t1}, {q2} at {t2}")
        # A permutation's order, with tied values (whole numbers): the rank
        # tree's sums against the definition over the values so ordered.
        z = [float(rng.randrange(5)) for _ in range(n)]
        order = list(range(n))
        rng.shuffle(order)
        (q1, t1), (q2, t2) = best_split(z, order=order), brute_split([z[i] for i in order])
        check(t1 == t2 and abs(q1 - q2) < 1e-9, f"{z} in {order}: {q1} at {t1}, {q2} at {t2}")


def series(rng, pieces):
    """Concatenated noisy pieces: (count, centre, spread)."""
    return [c + rng.gauss(0, s) for n, c, s in pieces for _ in range(n)]


@case("change points: a step and two steps found where planted, a step in exits per iteration "
      "at once; noise and a single outlier give none; a ramp only inside the ramp")
def _(_s):
    for seed in range(2):
        rng = random.Random(seed)
        got = change_points(series(rng, [(20, 1000, 20), (20, 1100, 20)]))
        check([i for i, _ in got] == [20], f"seed {seed}: a 10% step at 20: {got}")
        got = change_points(series(rng, [(15, 1000, 20), (15, 1100, 20), (15, 1200, 20)]))
        check([i for i, _ in got] == [15, 30], f"seed {seed}: up at 15, up again at 30: {got}")
        got = change_points(series(rng, [(40, 1000, 20)]))
        check(got == [], f"seed {seed}: noise only: {got}")
        z = series(rng, [(40, 1000, 20)])
        z[rng.randrange(40)] = 5000
        check(change_points(z) == [], f"seed {seed}: one outlier: {change_points(z)}")
        z = series(rng, [(10, 1000, 5)]) + [1000 + 10 * i + rng.gauss(0, 5) for i in range(20)] \
            + series(rng, [(10, 1200, 5)])
        got = change_points(z)
        check(got and all(8 <= i <= 32 for i, _ in got), f"seed {seed}: a ramp over 10-29: {got}")
    exits = [1.0] * 12 + [2.0] * 8
    got = change_points(exits)
    check(len(got) == 1 and got[0][0] == 12 and got[0][1] <= 0.01, f"exits 1.00 -> 2.00: {got}")


if __name__ == "__main__":
    sys.exit(main(CASES))
