# SPDX-License-Identifier: GPL-2.0-only
"""Change points in a series of figures (a history of nightly runs): where a
figure's distribution moved, found with E-Divisive means (Matteson and James,
"A Nonparametric Approach for Multiple Change Point Analysis of Multivariate
Data", JASA 109(505), 2014), the method MongoDB's signal processing and
Apache Otava (formerly hunter) run over performance histories.

For a split of the series z_1..z_n after t values (X the first t, Y the
rest), the energy distance between the two sides,

  E(t) = 2 mean|X_i - Y_j|^a - mean|X_i - X_k|^a - mean|Y_j - Y_k|^a

(means over the pairs, i != k), is near 0 when both sides come from one
distribution and grows with any difference between them, in location or in
spread (0 < a < 2). Q(t) = t (n - t) / n * E(t) weighs it by the sides'
sizes; the best split is the t of the largest Q, each side holding at least
min_size values, so that one odd run is never a change on its own. Its
significance is a permutation test: the same maximum over R random orders of
the same values, which have no change point, gives p = (1 + #{permuted
maximum >= observed}) / (1 + R). A split with p <= alpha is kept and each
side is searched again, each with a test of its own at alpha; the search
stops where no side has a significant split. (The paper instead tests the
best split over all current segments at once and stops at the first that is
not significant; testing each segment apart, as here, adds about 2 alpha of
spurious points beside each real change, which the verdict's window in
compare/history.py absorbs.) Runs are assumed independent: correlated
nights (a drifting host) raise the false-alarm rate well above alpha.

Pure and deterministic: each segment's permutations come from a generator
seeded with its own values, so a history's verdict never depends on the
time, the load, the machine, or where the same values sit in the series. A
split costs O(n log n) for every t at once at exponent 1 (class Pairs; the
pair sums are kept incrementally as t moves)."""
import random
import struct
import zlib

# The permutation test's level. The hierarchical search tests every segment
# it splits, so the chance of a false change in a series of pure noise is
# above a single test's. Measured on 60 series of 40 values (noise 2%, and
# a 10% step at 20): at 0.05, 4 false changes in noise and 2 extra points
# beside the steps; at 0.01, 1 and none; no step missed at either. A
# nightly verdict must not cry wolf: 0.01.
ALPHA = 0.01
PERMUTATIONS = 999  # p resolves to 1/1000
# Besag and Clifford's sequential test ("Sequential Monte Carlo p-values",
# Biometrika 78(2), 1991): stop once this many permuted maxima reached the
# observed one, p = h / (permutations so far). A split far from significant
# then costs a few dozen permutations, not 999; a significant one all of them.
STOP_AFTER = 10
MIN_SIZE = 3        # values each side of a change needs
EXPONENT = 1.0      # a in |x - y|^a: 1, the paper's default and Otava's


class Pairs:
    """The pair sums of one segment's values at exponent 1, for any order of
    them: each value's sum of |x - y| over all the others (rowsum) and the
    total are the same in every order, and the sum over the values before
    it in an order comes from a Fenwick tree over the values' ranks. A split
    then costs O(n log n), not the O(n^2) of the distance matrix: a series of
    200 runs is judged in a fraction of the time."""

    def __init__(self, z):
        n = len(z)
        by_value = sorted(range(n), key=lambda i: (z[i], i))
        self.rank = [0] * n
        for r, i in enumerate(by_value):
            self.rank[i] = r
        prefix = [0.0]
        for i in by_value:
            prefix.append(prefix[-1] + z[i])
        self.rowsum = [z[i] * r - prefix[r] + (prefix[n] - prefix[r + 1]) - z[i] * (n - r - 1)
                       for r, i in ((self.rank[i], i) for i in range(n))]
        self.total = sum(self.rowsum) / 2

    def to_earlier(self, z, order):
        """For each position t of the order, the sum of |z[order[t]] - x|
        over the values x before it."""
        n = len(z)
        count, sums = [0] * (n + 1), [0.0] * (n + 1)
        out, seen_sum = [], 0.0
        for t, j in enumerate(order):
            v, r = z[j], self.rank[j]
            below_n, below_sum, k = 0, 0.0, r
            while k > 0:  # the values before it of lower rank
                below_n += count[k]
                below_sum += sums[k]
                k -= k & -k
            out.append(v * below_n - below_sum + (seen_sum - below_sum) - v * (t - below_n))
            k = r + 1
            while k <= n:
                count[k] += 1
                sums[k] += v
                k += k & -k
            seen_sum += v
        return out


def best_split(z, min_size=MIN_SIZE, a=EXPONENT, order=None, pairs=None):
    """(Q, t) of the best split of z (taken in `order`, a permutation of its
    indices, when given): the first t values against the rest. (0.0, None)
    when z is too short to split. pairs: z's Pairs, made once for all the
    orders a permutation test takes (exponent 1 only)."""
    n = len(z)
    if n < 2 * min_size:
        return 0.0, None
    idx = list(order) if order is not None else list(range(n))
    if a == 1.0:
        pairs = pairs or Pairs(z)
        total, rowsum = pairs.total, [pairs.rowsum[i] for i in idx]
        earlier = pairs.to_earlier(z, idx)
    else:
        v = [z[i] for i in idx]
        d = [[abs(x - y) ** a for y in v] for x in v]
        total = sum(d[i][k] for i in range(n) for k in range(i + 1, n))
        rowsum = [sum(row) for row in d]
        earlier = [sum(d[i][t] for i in range(t)) for t in range(n)]
    between = within_x = 0.0
    best_q, best_t = 0.0, None
    for t in range(n):
        if min_size <= t <= n - min_size:
            nx, ny = t, n - t
            within_y = total - within_x - between
            e = (2 * between / (nx * ny) - 2 * within_x / (nx * (nx - 1))
                 - 2 * within_y / (ny * (ny - 1)))
            q = nx * ny / n * e
            if q > best_q:
                best_q, best_t = q, t
        # value t moves from Y to X: its pairs with X were between, its
        # pairs with the rest of Y become between.
        within_x += earlier[t]
        between += rowsum[t] - 2 * earlier[t]
    return best_q, best_t


def split_p(z, q, min_size=MIN_SIZE, a=EXPONENT, permutations=PERMUTATIONS, seed=0):
    """The permutation test's p of a best split whose statistic is q."""
    rng = random.Random(seed)
    order = list(range(len(z)))
    pairs = Pairs(z) if a == 1.0 else None
    at_least = 0
    for k in range(1, permutations + 1):
        rng.shuffle(order)
        # An order equal to the observed split (within-side reorders, the
        # reversal) may sum to one ulp less: it counts as reaching it.
        if best_split(z, min_size, a, order, pairs)[0] >= q * (1 - 1e-9):
            at_least += 1
            if at_least == STOP_AFTER:
                return at_least / k
    return (1 + at_least) / (1 + permutations)


def segment_seed(values, seed):
    """A segment's permutations' seed: its values' own (their bytes' CRC),
    so that the same values get the same p wherever they sit in a series."""
    return zlib.crc32(struct.pack(f"<{len(values)}d", *values), seed & 0xffffffff)


def change_points(z, alpha=ALPHA, min_size=MIN_SIZE, a=EXPONENT, permutations=PERMUTATIONS,
                  seed=0):
    """The change points of z, in order: [(index, p)], index the first value
    after the change. Each segment's permutation test is seeded by its own
    values (segment_seed), so the result depends on the values alone: the
    same series, or the same stretch of one, always gives the same answer."""
    found, todo = [], [(0, len(z))]
    while todo:
        lo, hi = todo.pop()
        seg = z[lo:hi]
        q, t = best_split(seg, min_size, a)
        if t is None or q <= 0:
            continue
        p = split_p(seg, q, min_size, a, permutations, segment_seed(seg, seed))
        if p > alpha:
            continue
        found.append((lo + t, p))
        todo += [(lo, lo + t), (lo + t, hi)]
    return sorted(found)
