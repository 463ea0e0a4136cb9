# SPDX-License-Identifier: GPL-2.0-only
"""The statistics compare, gate and report print from: medians, the
Mann-Whitney U test (exact for small samples, normal approximation with tie
correction beyond), the fewest boots a side that can reach significance,
and a bootstrap confidence interval of the change."""
import functools
import math
import random


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        raise ValueError("median of nothing")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _midranks(values):
    """Midranks of values (ties share the mean of their ranks), 1-based."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


EXACT_LIMIT = 40  # boots in both sides together up to which p is exact
# Beyond it, a p the normal approximation puts below EXACT_TAIL is made
# exact when one side has at most EXACT_SIDE boots (mann_whitney).
EXACT_TAIL, EXACT_SIDE = 0.01, 10


def min_boots(alpha):
    """The fewest boots a side (equal sides, no ties) with which the two-sided
    exact test can give p < alpha at all: 2 / C(2n, n) < alpha."""
    n = 1
    while 2 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


MIN_BOOTS = min_boots(0.05)  # 4: 2/70 = 0.029 (3 a side: 2/20 = 0.1)


# The distribution depends only on the ranks as a multiset and on n: a
# history's rows of the same boots (no ties: 2, 4, ..., 2N) share one, so
# it is made once (a simulated month of nights spent 70% of its time here).
@functools.lru_cache(maxsize=512)
def _rank_sum_distribution(doubled_ranks, n):
    """Counts of every sum of n of the doubled ranks (all C(N, n) choices),
    the ranks a sorted tuple; the dict is shared: read it, never change it."""
    dist = [dict() for _ in range(n + 1)]
    dist[0][0] = 1
    for r in doubled_ranks:
        for k in range(min(n, len(doubled_ranks)) - 1, -1, -1):
            for s, c in dist[k].items():
                dist[k + 1][s + r] = dist[k + 1].get(s + r, 0) + c
    return dist[n]


def mann_whitney(a, b):
    """Two-sided Mann-Whitney U test of a against b.

    Returns (p, p_min, how): p the two-sided p-value, p_min the smallest p
    these sample sizes could give at all (a check that the test has any power),
    how 'exact' (permutation distribution of the midrank sum, ties included)
    or 'normal' (tie-corrected normal approximation with continuity
    correction, for large samples)."""
    n, m = len(a), len(b)
    if n == 0 or m == 0:
        return 1.0, 1.0, "none"
    ranks = _midranks(list(a) + list(b))
    if n + m <= EXACT_LIMIT:
        return (*_exact_p(ranks, n, m), "exact")
    u = sum(ranks[:n]) - n * (n + 1) / 2
    ties = {}
    for v in list(a) + list(b):
        ties[v] = ties.get(v, 0) + 1
    p = _normal_p(u, n, m, sum(t ** 3 - t for t in ties.values()))
    if p < EXACT_TAIL and min(n, m) <= EXACT_SIDE:
        # Far in the tail the approximation is conservative by orders of
        # magnitude: at 5 boots against 50 (a night against ten) it cannot
        # go below some 3e-4, which Holm over a night's hundred rows never
        # rejects, so a 1000x step passed the night test. There, with a
        # small side, the exact distribution is cheap (1 ms at 5 v 50).
        return (*_exact_p(ranks, n, m), "exact")
    return p, 0.0, "normal"


def _exact_p(ranks, n, m):
    """(p, p_min) of the first n of ranks (midranks of both sides) from the
    permutation distribution of their sum, ties included."""
    doubled = [int(round(2 * r)) for r in ranks]
    dist = _rank_sum_distribution(tuple(sorted(doubled)), n)
    total = sum(dist.values())
    mean2 = n * (n + m + 1)  # twice the expected rank sum of a
    obs = abs(sum(doubled[:n]) - mean2)
    p = sum(c for s, c in dist.items() if abs(s - mean2) >= obs) / total
    far = max(abs(s - mean2) for s in dist)
    p_min = sum(c for s, c in dist.items() if abs(s - mean2) >= far) / total
    return min(1.0, p), min(1.0, p_min)


def _normal_p(u, n, m, tie_term):
    big_n = n + m
    var = n * m / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1)))
    if var <= 0:
        return 1.0
    z = max(0.0, abs(u - n * m / 2) - 0.5) / math.sqrt(var)
    return math.erfc(z / math.sqrt(2))


def mann_whitney_histograms(ha, hb):
    """Mann-Whitney U over two histograms ([low, high, count] buckets).

    A bucket is a group of tied samples; with thousands of samples the
    tie-corrected normal approximation is accurate. It sees the spread within
    boots only, never the spread between boots."""
    ca, cb = {}, {}
    for low, _, c in ha:
        ca[low] = ca.get(low, 0) + c
    for low, _, c in hb:
        cb[low] = cb.get(low, 0) + c
    n, m = sum(ca.values()), sum(cb.values())
    if n == 0 or m == 0:
        return 1.0
    u, below_b, tie_term = 0.0, 0, 0
    for v in sorted(set(ca) | set(cb)):
        x, y = ca.get(v, 0), cb.get(v, 0)
        u += x * (below_b + y / 2)
        below_b += y
        t = x + y
        tie_term += t ** 3 - t
    return _normal_p(u, n, m, tie_term)


def bootstrap_change_ci(a, b, seed, rounds=1000, level=0.95):
    """Percentile bootstrap CI of 100 * (median(b) / median(a) - 1), over boots.

    None below 3 boots a side: resampling two values says nothing."""
    if len(a) < 3 or len(b) < 3:
        return None
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        ma = median([rng.choice(a) for _ in a])
        mb = median([rng.choice(b) for _ in b])
        if ma > 0:
            out.append(100.0 * (mb / ma - 1))
    if not out:
        return None
    out.sort()
    lo = out[int((1 - level) / 2 * (len(out) - 1))]
    hi = out[int((1 + level) / 2 * (len(out) - 1))]
    return lo, hi


def holm(pvalues, alpha):
    """Holm's step-down procedure: which of the p-values are rejected with
    the family-wise error held at alpha (the chance that any true null is
    rejected). Sorted ascending, the k-th smallest (from 0) is rejected
    while p <= alpha / (m - k); the first that is not stops the rest.
    Returns a list of booleans in the input's order."""
    m = len(pvalues)
    out = [False] * m
    for k, i in enumerate(sorted(range(m), key=lambda j: pvalues[j])):
        if pvalues[i] > alpha / (m - k):
            break
        out[i] = True
    return out


def _beta_fraction(a, b, x):
    """The continued fraction of the incomplete beta function (modified
    Lentz's method), which converges fast for x < (a + 1) / (a + b + 2)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


def incomplete_beta(a, b, x):
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1 - x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def student_t_p(t, df):
    """Two-sided p of Student's t with df degrees of freedom."""
    return incomplete_beta(df / 2, 0.5, df / (df + t * t)) if df > 0 else 1.0
