# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh history RUN...`: when did each figure move, and with what?

A run is a results folder: one boot, a matrix configuration, a lab import
(every results.json under it). The runs are put in time order (the earliest
run.started of their boots; ties keep the order given) and grouped by host
type (host.cpu_model): figures of two CPU generations are not one series.
For every figure of a group:

- a timing row (a run's value: the median of its boots' p50s) gets its
  change points from E-Divisive means (results/changepoints.py);
- exits per iteration (the sender's and the targets', each the median over
  a run's boots) need no statistics: a step beyond kvmhost/trace.py's
  tolerance is a change in the run where it appears.

Each change names the figure, the run it starts at, its size (the median of
the runs after against the median of the runs before, each side up to the
next change, with a bootstrap interval over the runs) and what differs in
the host's facts between the run before and the run after (kernel, KVM
parameters, power state, pinning: SavedBoot.reported_facts). A figure whose
last change made it slower than --threshold (exits: more, beyond the
tolerance) is a regression: exit 20, with TAP and JUnit as gate writes
them. The verdict depends on the values alone, never on timing or load:
the permutation tests are seeded by position."""
import sys

from ipibench.compare.gate import parse_threshold, Verdict, write_junit, write_tap
from ipibench.compare.model import exits_median, row_name, row_order, Side
from ipibench.exit_codes import EX_REGRESSION, EX_USAGE, ToolError
from ipibench.kvmhost import trace as kvm_trace
from ipibench.results.changepoints import change_points, MIN_SIZE
from ipibench.results.files import load_set
from ipibench.results.stats import bootstrap_change_ci, median
from ipibench.write import replace_file


class Run:
    """One results folder of the series: its boots, as one side of compare."""

    def __init__(self, path, unit):
        self.path = path.rstrip("/") or path
        self.boots = load_set(path)
        self.started = min(str(b.run.get("started") or "") for b in self.boots)
        self.host_type = str(self.boots[0].host.get("cpu_model") or "an unknown host")
        self.side = Side(self.path, self.boots, unit)
        self.facts = self.boots[0].reported_facts()


class Change:
    """A figure's change at run `at` (an index into the series' runs)."""

    def __init__(self, key, kind, at, before, after, p=None, ci=None):
        self.key, self.kind, self.at, self.p, self.ci = key, kind, at, p, ci
        self.before, self.after = before, after

    def grew(self, threshold):
        """Slower beyond threshold (%), or more exits beyond the tolerance."""
        if self.kind != "timing":
            return self.after - self.before > kvm_trace.EXITS_TOLERANCE
        return self.before > 0 and 100 * (self.after / self.before - 1) > threshold

    def size(self):
        if self.kind != "timing":
            return f"{self.before:.2f} -> {self.after:.2f} per iteration"
        pct = 100 * (self.after / self.before - 1) if self.before else 0.0
        ci = f" [{self.ci[0]:+.1f}%, {self.ci[1]:+.1f}%]" if self.ci else ""
        return f"{self.before:g} -> {self.after:g} ({pct:+.1f}%{ci}, p {self.p:g})"


def load_runs(paths, unit):
    """The runs in time order."""
    runs = [Run(p, unit) for p in paths]
    return [runs[i] for i in sorted(range(len(runs)), key=lambda i: (runs[i].started, i))]


def timing_changes(runs, key, alpha):
    """The change points of a timing row over the runs that have it."""
    series = [(i, median(r.side.values[key])) for i, r in enumerate(runs) if r.side.values.get(key)]
    if len(series) < 2 * MIN_SIZE:
        return []
    values = [v for _, v in series]
    points = change_points(values, alpha=alpha)
    edges = [0] + [i for i, _ in points] + [len(values)]
    out = []
    for n, (i, p) in enumerate(points):
        before, after = values[edges[n]:i], values[i:edges[n + 2]]
        out.append(Change(key, "timing", series[i][0], median(before), median(after), p,
                          bootstrap_change_ci(before, after, seed=i)))
    return out


def exits_changes(runs, key):
    """Every step of the sender's or the targets' exits per iteration beyond
    the tolerance, in the run where it appears."""
    out = []
    for side, name in ((0, "sender exits"), (1, "target exits")):
        series = []
        for i, r in enumerate(runs):
            ex = exits_median(r.side.exits.get(key, []))
            if ex is not None:
                series.append((i, ex[side]))
        out += [Change(key, name, i1, a, b) for (_, a), (i1, b) in zip(series, series[1:])
                if abs(b - a) > kvm_trace.EXITS_TOLERANCE]
    return out


def facts_diff(before, after):
    """What differs in the host's facts between two runs, as 'name: a -> b'."""
    return [f"{k}: {before.get(k)} -> {after.get(k)}" for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)]


def host_types(runs):
    """{host type: its runs, in time order}."""
    out = {}
    for r in runs:
        out.setdefault(r.host_type, []).append(r)
    return out


def figure_changes(runs, alpha):
    """{row key: its changes in time order} of one host type's runs."""
    keys = set()
    for r in runs:
        keys |= set(r.side.values) | set(r.side.exits)
    out = {}
    for key in sorted(keys, key=row_order):
        changes = sorted(timing_changes(runs, key, alpha) + exits_changes(runs, key),
                         key=lambda c: c.at)
        if changes:
            out[key] = changes
    return out


def report(runs, changes, threshold):
    """The text: a line a change (the host facts that moved below it), the
    verdict last; and the verdicts, one per figure that changed."""
    lines = [f"history: {len(runs)} runs on {runs[0].host_type}, {runs[0].started or '?'} to "
             f"{runs[-1].started or '?'}"]
    verdicts = []
    for key, figure in changes.items():
        for c in figure:
            run = runs[c.at]
            lines.append(f"  {row_name(key)}: {c.kind} {c.size()} from {run.path}")
            lines += [f"      {d}" for d in facts_diff(runs[c.at - 1].facts, run.facts)]
        last = figure[-1]
        bad = last.grew(threshold)
        verdicts.append(Verdict("history", row_name(key), not bad,
                                f"{'regression' if bad else 'last change'}: {last.kind} "
                                f"{last.size()} from {runs[last.at].path}"))
    return lines, verdicts


def cmd_history(a):
    """`./run.sh history`, its arguments as its parser read them."""
    threshold = parse_threshold(a.threshold)
    if len(a.runs) < 2:
        raise ToolError(EX_USAGE, "history takes the runs of a series, at least two")
    all_verdicts = []
    for runs in host_types(load_runs(a.runs, a.unit)).values():
        lines, verdicts = report(runs, figure_changes(runs, a.alpha), threshold)
        print("\n".join(lines))
        all_verdicts += verdicts
    bad = [v for v in all_verdicts if not v.ok]
    if a.tap == "-":
        sys.stdout.write(write_tap(all_verdicts))
    elif a.tap:
        replace_file(a.tap, write_tap(all_verdicts))
    if a.junit:
        replace_file(a.junit, write_junit(all_verdicts, "ipibench history"))
    print(f"history: {len(all_verdicts)} figures changed; "
          + (f"{len(bad)} regressed beyond {threshold:g}% at their last change: "
             + ", ".join(v.name for v in bad[:5]) + (" ..." if len(bad) > 5 else "")
             if bad else "none regressed at its last change"))
    return EX_REGRESSION if bad else 0

