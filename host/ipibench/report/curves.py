# SPDX-License-Identifier: GPL-2.0-only
"""Curves and their panels: a curve's fields, its role in a comparison
(Roles: the candidate dashed with open marks beside its baseline), small
multiples when a figure has more than PANEL_MAX curves (one panel per
backend, or per configuration and backend), legend labels in words, a
colour and a marker per curve that no other curve of its panel shares,
and curves that coincide, drawn dashed over the one they hide."""
import bisect

from ipibench.report.words import field_words


# Ten colours told apart on screen and paper (Tableau 10, yellow-green last)
# and ten marker shapes (gnuplot's filled and open point types).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
MARKERS = (7, 5, 9, 11, 13, 6, 4, 8, 10, 12)
DASHES = (2, 3, 4, 5)          # the curves that coincide with an earlier one
PANEL_MAX = 8                  # curves in one panel; more become small multiples
COINCIDE = 0.01                # scaling curves within 1% of the y axis coincide
COINCIDE_CDF = 2.0             # CDFs within 2 points of % everywhere coincide
FIELDS = ("set", "backend", "variant", "state")


def curve(set_name, key, points, kind="line", n=None):
    _, _, variant, backend, state, _ = key
    return {"f": {"set": set_name, "backend": str(backend), "state": str(state),
                  "variant": "" if variant in ("none", None) else str(variant)},
            "points": points, "kind": kind, "n": n}


ROLE_RANK = {"baseline": 0, "candidate": 1}
# The marks of a comparison: a baseline's filled, its candidate's the open
# one of the same shape (circle, square, triangles, diamond, pentagon).
FILLED = (7, 5, 9, 11, 13, 15)
OPEN = (6, 4, 8, 10, 12, 14)
ROLE_DASH = {"candidate": 2}   # the candidate's curve is dashed, the baseline's solid


class Roles:
    """The two sides of a comparison: the first set (baseline) and the last
    (candidate), or with --pair X=Y backend X of the first set and backend Y
    of the last. A baseline curve and its candidate (the same fields but
    those) are drawn on one panel, in one colour, the candidate dashed with
    open marks, so that a reader compares them on one scale."""

    def __init__(self, names, pair=None):
        self.base, self.cand, self.pair = names[0], names[-1], pair

    def role(self, f):
        if not self.pair:
            return {self.base: "baseline", self.cand: "candidate"}.get(f["set"])
        if f["set"] == self.base and f["backend"] == self.pair[0]:
            return "baseline"
        if f["set"] == self.cand and f["backend"] == self.pair[1]:
            return "candidate"
        return None

    def partner(self, f):
        """What a baseline curve shares with its candidate."""
        drop = ("set", "backend") if self.pair else ("set",)
        return tuple(f[k] for k in FIELDS if k not in drop)

    def side(self, role):
        if not self.pair:
            return self.base if role == "baseline" else self.cand
        x, y = self.pair
        return f"{x} of {self.base}" if role == "baseline" else f"{y} of {self.cand}"

    def line(self):
        """The figure's line that tells the sides apart."""
        return (f"baseline: {self.side('baseline')} (solid, filled marks); "
                f"candidate: {self.side('candidate')} (dashed, open marks)")


def pair_up(curves, roles):
    """Each curve's role and partner key (none without a comparison), and
    the curves reordered so that a candidate follows its baseline."""
    first = {}
    for i, c in enumerate(curves):
        c["role"] = roles.role(c["f"]) if roles else None
        c["pair"] = roles.partner(c["f"]) if c["role"] else ("alone", i)
        first.setdefault(c["pair"], i)
    curves.sort(key=lambda c: (first[c["pair"]], ROLE_RANK.get(c["role"], 2)))
    return curves


def group_by(curves, by):
    groups = {}
    for c in curves:
        groups.setdefault(tuple(c["f"][k] for k in by), []).append(c)
    return groups


def splits_pairs(groups):
    """Whether a baseline and its candidate would land on different panels."""
    home = {}
    for values, cs in groups.items():
        for c in cs:
            if home.setdefault(c.get("pair"), values) != values:
                return True
    return False


def cut(cs, count):
    """cs in count pieces of about even size, never between a baseline and
    its candidate."""
    units = []
    for c in cs:
        if units and units[-1][-1].get("pair") == c.get("pair"):
            units[-1].append(c)
        else:
            units.append([c])
    size = -(-len(cs) // count)
    if any(len(u) > 1 for u in units):    # whole pairs: an even size
        size = min(PANEL_MAX, size + size % 2)
    pieces = [[]]
    for unit in units:
        if pieces[-1] and len(pieces[-1]) + len(unit) > size:
            pieces.append([])
        pieces[-1] += unit
    return pieces


def panels_of(curves):
    """(fields, [(panel title, [curve])]): one panel when the curves fit in
    one, else small multiples by the fields that give the fewest panels of at
    most PANEL_MAX curves (by backend, by variant, ...); if none does, by
    configuration and backend, each panel cut in even pieces. A comparison's
    baseline and candidate curves always share a panel."""
    best = None
    options = ((), ("backend",), ("variant",), ("set",), ("set", "backend"),
               ("set", "variant"), ("backend", "variant"))
    for by in options:
        groups = group_by(curves, by)
        if splits_pairs(groups):
            continue
        if max(len(g) for g in groups.values()) <= PANEL_MAX and \
                (best is None or len(groups) < len(best[1])):
            best = (by, groups)
    if best is None:
        whole = [by for by in options if not splits_pairs(group_by(curves, by))]
        by = ("set", "backend") if ("set", "backend") in whole else whole[-1]
        best = (by, group_by(curves, by))
    by, groups = best
    panels = []
    for values, cs in groups.items():
        title = ", ".join(w for w in (field_words(k, v) or ("plain" if k == "variant" else "")
                                      for k, v in zip(by, values)) if w)
        pieces = cut(cs, -(-len(cs) // PANEL_MAX))
        for j, piece in enumerate(pieces):
            more = f" ({j + 1} of {len(pieces)})" if len(pieces) > 1 else ""
            panels.append((title + more, piece))
    return by, panels


def label_curves(curves, by):
    """Each curve's legend title in words: the fields that vary in the figure
    and are not the panel's (in a comparison, its role instead of its set);
    returns the words for the fields common to every curve."""
    same = [k for k in FIELDS if len({c["f"][k] for c in curves}) == 1]
    shown = [k for k in FIELDS if k not in same and k not in by]

    def words(c, keys):
        return ", ".join(w for w in (field_words(k, c["f"][k], c.get("n"), True) for k in keys)
                         if w)
    for c in curves:
        if c.get("role"):
            # In a comparison the role says which set.
            rest = [k for k in FIELDS if k != "set"]
            series = words(c, [k for k in shown if k != "set"]) or words(c, rest)
            c["label"] = ", ".join(w for w in (series, c["role"]) if w)
        else:
            c["label"] = words(c, shown) or words(c, FIELDS)
    return [w for w in (field_words(k, curves[0]["f"][k], curves[0].get("n")) for k in same)
            if w]


def style_curves(panels):
    """A colour and a marker per curve, never shared within a panel; the same
    legend title keeps its style across panels when the palette allows. In
    a comparison a baseline and its candidate share a colour and a shape:
    the candidate's marks are open and its line dashed."""
    compare = any(c.get("role") for _, cs in panels for c in cs)
    key = "pair" if compare else "label"
    labels = list(dict.fromkeys(c[key] for _, cs in panels for c in cs))
    shared = len(labels) <= (len(FILLED) if compare else len(PALETTE))
    for _, cs in panels:
        mine = list(dict.fromkeys(c[key] for c in cs))
        for i, c in enumerate(cs):
            n = labels.index(c[key]) if shared else mine.index(c[key]) if compare else i
            c["colour"] = PALETTE[n % len(PALETTE)]
            if compare:
                c["pt"] = (OPEN if c.get("role") == "candidate" else FILLED)[n % len(FILLED)]
                if c.get("role") in ROLE_DASH:
                    c["dash"] = ROLE_DASH[c["role"]]
            else:
                c["pt"] = MARKERS[n]


def interp(points, x):
    """The polyline points [(x, y)] at x (its ends held flat beyond them)."""
    xs = [p[0] for p in points]
    i = bisect.bisect_right(xs, x)
    if i == 0:
        return points[0][1]
    if i == len(points):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[i - 1][:2], points[i][:2]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def coincide(a, b, top):
    """Whether two curves of a panel would hide one another: at every x
    within COINCIDE of the y axis's top (scaling), within COINCIDE_CDF points
    of % (CDFs), or on one value (points)."""
    pa, pb = a["points"], b["points"]
    if a["kind"] != b["kind"] or not pa or not pb:
        return False
    if a["kind"] == "point":
        return abs(pa[0][0] - pb[0][0]) <= COINCIDE * max(pa[0][0], pb[0][0])
    if a["kind"] == "cdf":
        grid = sorted({p[0] for p in pa} | {p[0] for p in pb})
        return all(abs(interp(pa, x) - interp(pb, x)) <= COINCIDE_CDF for x in grid)
    if [p[0] for p in pa] != [p[0] for p in pb]:
        return False
    return all(abs(p[1] - q[1]) <= COINCIDE * top for p, q in zip(pa, pb))


def mark_coinciding(panels):
    """Dashes for every curve that coincides with an earlier one of its
    panel; the title line that names them, or None."""
    notes = []
    for ptitle, cs in panels:
        drawn = [c for c in cs if c["kind"] in ("line", "err", "cdf", "point")]
        top = max((abs(v) for c in drawn if c["kind"] in ("line", "err")
                   for p in c["points"] for v in p[1:]), default=1.0)
        groups = []
        for c in drawn:
            # A candidate on its baseline is no change, not a hidden curve:
            # only curves of one side are looked at; a candidate is dashed already.
            home = next((g for g in groups if g[0].get("role") == c.get("role") and
                         coincide(g[0], c, top)), None)
            if home is None:
                groups.append([c])
            else:
                dashes = DASHES[1:] if c.get("role") else DASHES
                c["dash"] = dashes[min(len(home) - 1, len(dashes) - 1)]
                home.append(c)
        said = [" = ".join(c["label"] for c in g) for g in groups if len(g) > 1]
        if said:
            notes.append((f"{ptitle}: " if ptitle and len(panels) > 1 else "") + ", ".join(said))
    if not notes:
        return None
    return "coincide, drawn dashed over the first: " + "; ".join(notes)
