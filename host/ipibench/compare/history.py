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
  a run's boots) need no statistics: a step beyond kvmhost/exit_labels.py's
  tolerance is a change in the run where it appears.

Each change names the figure, the run it starts at, its size (the median of
the runs after against the median of the runs before, each side up to the
neighbouring change; a timing change with a bootstrap interval over the
runs) and what differs in the host's facts between the run before and the
run after: what may differ (kernel, KVM parameters, power state, pinning).
What makes figures incomparable (the hypervisor, CPU count, accelerator,
-cpu, the guest's command line; for timings, instrumentation too;
SavedBoot.configuration()) splits the series: changes
are sought within each stretch of comparable runs, and only the newest is
judged, as gate refuses (exit 30) what differs there. Each kind of a
figure's changes (timing, sender exits, target exits) is judged over the
newest --window runs: the level now against the lowest level the window
saw (judge()), so that two steps under the threshold add up, a step that
noise split in two counts whole, and a step back after an improvement or
a half recovery after a rise is measured from the bottom. Slower beyond
--threshold is a regression, and so is an exit reason that rose as gate's
count test fails it (exits_judged(): half an exit a target an iteration,
or more than model.EXITS_MARGIN beyond chance): exit 20, with TAP and
JUnit as gate writes them. The verdict depends on the values alone, never on timing or load:
each permutation test is seeded by its segment's values."""
import copy
import datetime
import math
import os
import sys

from ipibench.compare.formats import fmt_num, plain_p
from ipibench.compare.gate import parse_threshold, Verdict, write_junit, write_tap
from ipibench.compare.model import (emulation_ids, exit_rises, exits_median, failed_rises, label_changes,
                                    ntargets_of, rise_text, row_name, row_order, Side)
from ipibench.exit_codes import (EX_INCOMPARABLE, EX_MISSING, EX_REGRESSION, EX_SAVE, EX_USAGE,
                                 ToolError)
from ipibench.kvmhost import exit_labels
from ipibench.results.changepoints import change_points, MIN_SIZE, PERMUTATIONS
from ipibench.results.files import load_set
from ipibench.results.night import LEVEL_NIGHTS, MIN_LEVEL_NIGHTS, NIGHT_ALPHA, night_tests
from ipibench.results.store import host_type, series_runs, SERIES_MARK, store
from ipibench.results.stats import bootstrap_change_ci, holm, median, student_t_p
from ipibench.write import write_outputs


class Run:
    """One results folder of the series: its boots, as one side of compare."""

    def __init__(self, path, unit):
        self.path = path.rstrip("/") or path
        self.boots = load_set(path)
        configs = sorted({b.config() for b in self.boots})
        if len(configs) > 1:
            raise ToolError(EX_USAGE, f"{self.path} holds {len(configs)} configurations "
                            f"({', '.join(configs[:4])}): a run of a history is one, give its "
                            "folder")
        starts = [str(b.run["started"]) for b in self.boots if b.run.get("started")]
        self.started = min(starts) if starts else None
        self.host_type = host_type(self.boots[0])
        self.side = Side(self.path, self.boots, unit)
        # What a reader must see beside a change: what may differ (the host's
        # kernel, parameters, power) and what makes figures incomparable
        # (CPU count, accelerator, -cpu, guest command line, instrumentation).
        first = self.boots[0]
        timing = first.timing_facts()
        self.facts = {**first.reported_facts(), **first.facts(), **timing}
        # What gate refuses to compare across (exit 30): exits need the
        # configuration alike, timings the instrumentation too. A series is
        # judged only within a stretch of runs alike in these.
        self.era = {"exits": first.configuration()}
        self.era["timing"] = {**self.era["exits"], **timing}
        mixed = [b.path for b in self.boots[1:] if b.configuration() != self.era["exits"]
                 or b.timing_facts() != timing]
        if mixed:
            raise ToolError(EX_USAGE, f"{self.path} holds boots of different configurations or instrumentation ({first.path} and {mixed[0]}): a run of a history is one")
        self.trace_gap = trace_gaps(self.boots)


def trace_gaps(boots):
    """Why a run's exits cannot be trusted whole, as gate --exits says it: a
    boot whose trace lost events or was cut short (an exit storm overflows
    the ring buffer, so the rows a regression touched are the likeliest to
    lack exits); None when every trace is whole."""
    for boot in boots:
        ex = boot.run.get("exits") if isinstance(boot.run, dict) else None
        if isinstance(ex, dict) and (ex.get("lost") or ex.get("cut")):
            return (f"{ex['lost']} events lost" if ex.get("lost") else "cut short") + \
                f" ({boot.path})"
    return None


def eras(runs, kind):
    """The first index of each stretch of runs whose figures of this kind
    ('timing' or 'exits') are comparable, with what changed at it: [(index,
    ['name: a -> b', ...])], the first (0, [])."""
    out = [(0, [])]
    for i in range(1, len(runs)):
        diff = facts_diff(runs[i - 1].era[kind], runs[i].era[kind])
        if diff:
            out.append((i, diff))
    return out


def era_of(runs, kind, i):
    """(start, end) of the stretch of comparable runs that holds run i,
    worked out once per series (mark_eras)."""
    return runs[i].stretch[kind]


def mark_eras(runs):
    """Sets each run's stretch, {kind: (start, end)}, and split, {kind: what
    changed from the run before it, when a stretch starts there}, for timing
    and exits: worked out once per series."""
    for r in runs:
        r.stretch, r.split = {}, {}
    for kind in ("timing", "exits"):
        found = eras(runs, kind)
        for i, diff in found[1:]:
            runs[i].split[kind] = diff
        starts = [e for e, _ in found] + [len(runs)]
        for a, b in zip(starts, starts[1:]):
            for r in runs[a:b]:
                r.stretch[kind] = (a, b)
    return runs


def stretch_starts(runs, kind):
    """The indices of the runs where a stretch of this kind starts (not the first)."""
    return [i for i, r in enumerate(runs) if kind in r.split]


class Change:
    """A figure's change at run `at` (an index into the series' runs)."""

    def __init__(self, key, kind, at, before, after, p=None, ci=None, prev=None, night=False):
        """prev: the last run before `at` that has the figure (its facts are
        the ones to set beside the change); night: found by the night's own
        boots against the level before it (night_steps), not by the search."""
        self.key, self.kind, self.at, self.p, self.ci = key, kind, at, p, ci
        self.before, self.after, self.night = before, after, night
        self.prev = at - 1 if prev is None else prev
        self.which = []  # exits: the exit reasons that moved (model.label_changes)

    def grew(self, threshold):
        """Slower beyond threshold (%), or more exits beyond the tolerance."""
        if self.kind != "timing":
            return self.after - self.before > exit_labels.EXITS_TOLERANCE
        return self.before > 0 and 100 * (self.after / self.before - 1) > threshold

    def size(self):
        if self.kind != "timing":
            which = f" ({'; '.join(self.which[:3])})" if self.which else ""
            return f"{self.before:.2f} -> {self.after:.2f} per iteration{which}"
        pct = 100 * (self.after / self.before - 1) if self.before else 0.0
        ci = f" [{self.ci[0]:+.1f}%, {self.ci[1]:+.1f}%]" if self.ci else ""
        how = (f", the night's boots against the level's, p {plain_p(self.p)}, Holm at "
               f"{NIGHT_ALPHA:g} over the night's rows") if self.night else \
            f", p {plain_p(self.p)}"
        return f"{fmt_num(self.before)} -> {fmt_num(self.after)} ({pct:+.1f}%{ci}{how})"


def load_runs(paths, unit):
    """The runs in time order (run.started), or in the order given when no
    run has a start (a lab import made before imports kept one); some
    with and some without is refused, as no order would be right."""
    runs = [Run(p, unit) for p in paths]
    missing = [r.path for r in runs if r.started is None]
    if missing and len(missing) < len(runs):
        raise ToolError(EX_USAGE, f"{len(missing)} of {len(runs)} runs have no run.started "
                        f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}): "
                        "their place in time is unknown; give runs that all have one, or none")
    if missing:
        return runs
    return [runs[i] for i in sorted(range(len(runs)), key=lambda i: (runs[i].started, i))]


def timing_changes(runs, key, alpha):
    """The change points of a timing row over the runs that have it, sought
    within each stretch of comparable runs apart: a step where the CPU
    count or the -cpu changed is not a regression but another series."""
    out = []
    for start, end in sorted({r.stretch["timing"] for r in runs}):
        series = [(i, median(runs[i].side.values[key])) for i in range(start, end)
                  if runs[i].side.values.get(key)]
        if len(series) < 2 * MIN_SIZE:
            continue
        values = [v for _, v in series]
        points = change_points(values, alpha=alpha)
        edges = [0] + [i for i, _ in points] + [len(values)]
        for n, (i, p) in enumerate(points):
            before, after = values[edges[n]:i], values[i:edges[n + 2]]
            out.append(Change(key, "timing", series[i][0], median(before), median(after), p,
                              bootstrap_change_ci(before, after, seed=i), series[i - 1][0]))
    return out


def exits_changes(runs, key):
    """Every step of the sender's or the targets' exits per iteration beyond
    the tolerance from the level at the last step (so a slow drift of 0.04 a
    night adds up), in the run where it appears; within a stretch of
    comparable runs, and never from a run whose trace lost events."""
    out = []
    for side, name, who in ((0, "sender exits", "sender"), (1, "target exits", "targets")):
        level, last = None, None
        for i, r in enumerate(runs):
            ex = exits_median(r.side.exits.get(key, [])) if not r.trace_gap else None
            if ex is None:
                continue
            if level is None or era_of(runs, "exits", level[0])[1] <= i:
                level = (i, ex[side])
            elif abs(ex[side] - level[1]) > exit_labels.EXITS_TOLERANCE:
                # The facts beside it: the last run before it with exits.
                c = Change(key, name, i, level[1], ex[side], prev=last)
                c.which = label_changes(runs[level[0]].side.exit_labels.get(key, []),
                                        r.side.exit_labels.get(key, []), who)
                out.append(c)
                level = (i, ex[side])
            last = i
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
    return {host: mark_eras(group) for host, group in out.items()}


def night_steps(runs, keys, threshold):
    """Each night against its row's level (results/night.py), in time
    order, as change-point search cannot: {key: [Change]} of the nights
    whose boots stepped beyond threshold, Holm over the rows that night
    tested. A step starts the row's level anew; so does a new stretch of
    comparable runs."""
    out, level_start = {k: [] for k in keys}, {k: 0 for k in keys}
    for i, run in enumerate(runs):
        start = era_of(runs, "timing", i)[0]
        rows, lv_runs = {}, {}
        for key in keys:
            new = run.side.values.get(key)
            lv = [j for j in range(max(start, level_start[key]), i)
                  if runs[j].side.values.get(key)][-LEVEL_NIGHTS:]
            if new and len(lv) >= MIN_LEVEL_NIGHTS:
                rows[key] = ([v for j in lv for v in runs[j].side.values[key]], new,
                             [median(runs[j].side.values[key]) for j in lv])
                lv_runs[key] = lv
        for key, t in night_tests(rows, threshold).items():
            if t["step"]:
                out[key].append(Change(key, "timing", i, t["level"], t["now"], t["p"],
                                       prev=lv_runs[key][-1], night=True))
                level_start[key] = i
    return out


def merge_steps(runs, key, found, nights):
    """The change points and the night steps of one row as one list: a
    night step the search also dated (same run) once, as the search's; a
    night step's level after it, the median of its nights up to the next."""
    at = {c.at for c in found}
    merged = sorted(found + [c for c in nights if c.at not in at], key=lambda c: c.at)
    for c, nxt in zip(merged, merged[1:] + [None]):
        if c.night:
            end = nxt.at if nxt else len(runs)
            vals = [median(runs[j].side.values[key]) for j in range(c.at, end)
                    if runs[j].side.values.get(key)]
            c.after = median(vals) if vals else c.after
    return merged


def figure_changes(runs, alpha, threshold=5.0, nights=None):
    """{row key: its changes in time order} of one host type's runs.
    nights: night_steps() of a longer series these runs begin (a night's
    step depends on the nights before it alone), else worked out here."""
    keys = set()
    for r in runs:
        keys |= set(r.side.values) | set(r.side.exits)
    if nights is None:
        nights = night_steps(runs, sorted(keys, key=row_order), threshold)
    else:
        nights = {k: [copy.copy(c) for c in v if c.at < len(runs)] for k, v in nights.items()}
    out = {}
    for key in sorted(keys, key=row_order):
        timing = merge_steps(runs, key, timing_changes(runs, key, alpha), nights.get(key, []))
        changes = sorted(timing + exits_changes(runs, key), key=lambda c: c.at)
        if changes:
            out[key] = changes
    return out


def judge(runs, figure, kind, window, threshold):
    """One kind of a figure's changes (timing, sender exits, target exits)
    judged over the newest `window` runs: the level now against the lowest
    level the window saw, that before its first change or one between its
    changes that held at least two runs. So two steps under the threshold
    add up, a step that noise split in two counts whole, a step back up
    after a step down is measured from the bottom (100, 90, 104: +15.6%),
    and a rise that half recovered still counts (1.0, 2.0, 1.9); one odd
    night of exits, gone the next, is no level to be judged from. None when
    no change of the kind is in the window: an older one is the level the
    runs since have confirmed."""
    start = era_of(runs, "timing" if kind == "timing" else "exits", len(runs) - 1)[0]
    recent = [c for c in figure if c.kind == kind and c.at >= max(start, len(runs) - window)]
    if not recent:
        return None
    # (level, first run it held, the runs it spans): before the window's
    # first change (back to the change before it, or the stretch's start),
    # then each one between changes that held two runs or more.
    mine = [c.at for c in figure if c.kind == kind]
    back = max([at for at in mine if at < recent[0].at] + [start])
    levels = [(recent[0].before, recent[0].prev, back, recent[0].at)]
    levels += [(c.after, c.at, c.at, nxt.at) for c, nxt in zip(recent, recent[1:])
               if nxt.at - c.at >= 2]
    low, since_at, low_from, low_to = min(levels, key=lambda lv: lv[0])
    now = recent[-1].after
    since = Change(recent[-1].key, kind, since_at, low, now)
    bad, p = since.grew(threshold), None
    if kind == "timing":
        pct = 100 * (now / low - 1) if low else 0.0
        words = f"{fmt_num(low)} -> {fmt_num(now)} ({pct:+.1f}%)"
        # A change point's level against the low one, a night the unit: its
        # p joins the series' family (report(): Holm over every timing row).
        # A night step was so tested already.
        if bad and not recent[-1].night:
            p = levels_p(runs, since.key, low_from, low_to, recent[-1].at, len(runs))
    else:
        bad, words = exits_judged(runs, since, since_at, kind)
    return {"bad": bad, "p": p, "kind": kind, "words": words, "since": runs[since_at].path}


def levels_p(runs, key, a0, a1, b0, b1):
    """One-sided p that the nights of runs[b0:b1] are slower than those of
    runs[a0:a1], a night its boots' median: Welch's t over the logarithms,
    a side of one night taking the other's spread."""
    def logs(i, j):
        return [math.log(median(runs[k].side.values[key])) for k in range(i, j)
                if runs[k].side.values.get(key) and median(runs[k].side.values[key]) > 0]
    a, b = logs(a0, a1), logs(b0, b1)
    if not a or not b or len(a) + len(b) < 3:
        return 1.0

    def var(x):
        m = sum(x) / len(x)
        return sum((v - m) ** 2 for v in x) / (len(x) - 1) if len(x) > 1 else None
    va, vb = var(a), var(b)
    va, vb = (vb if va is None else va), (va if vb is None else vb)
    se2 = va / len(a) + vb / len(b)
    gap = sum(b) / len(b) - sum(a) / len(a)
    if se2 <= 0:
        return 0.0 if gap > 0 else 1.0
    df = se2 ** 2 / sum(v * v / (n * n * (n - 1)) for v, n in ((va, len(a)), (vb, len(b)))
                        if n > 1) if max(len(a), len(b)) > 1 else 1
    p = student_t_p(gap / math.sqrt(se2), df) / 2
    return p if gap > 0 else 1 - p


def judge_all(runs, changes, threshold, window):
    """[(row key, judge())] of every figure and kind with a change in the
    window, the change points' timing regressions settled as a family over
    the series' timing rows (settle())."""
    out = []
    for key, figure in changes.items():
        for kind in ("timing", "sender exits", "target exits"):
            j = judge(runs, figure, kind, window, threshold)
            if j:
                out.append((key, j))
    rows = len({k for r in runs for k in r.side.values})
    settle([j for _, j in out], rows, NIGHT_ALPHA)
    return out


def verdict_text(j):
    """judge()'s verdict in words."""
    return f"{'regression' if j['bad'] else 'no regression'}: {j['kind']} {j['words']} from " \
        f"the level of {j['since']}"


def settle(judged, rows, alpha):
    """Change points' timing regressions, Holm over every timing row of the
    series (rows: how many), their nights' test at alpha: what a change
    point alone found over hundreds of rows is no regression until the
    nights before and after it differ beyond chance as a family."""
    cands = [j for j in judged if j["p"] is not None]
    ps = [j["p"] for j in cands] + [1.0] * max(0, rows - len(cands))
    for j, ok in zip(cands, holm(ps, alpha)):
        if not ok:
            j["bad"] = False
            j["words"] += (f": not beyond the nights' spread over {rows} rows (p "
                           f"{plain_p(j['p'])}, Holm at {alpha:g})")


def exits_judged(runs, since, since_at, kind):
    """(regressed, words) of an exits kind: the newest run against the
    level's run, each exit reason judged as gate judges it
    (model.exit_rises, failed_rises)."""
    key, side = since.key, "sender" if kind.startswith("sender") else "targets"
    before = runs[since_at].side.exit_labels.get(key, [])
    after = runs[-1].side.exit_labels.get(key, [])
    tests = [x for x in exit_rises(before, after, ntargets_of(key)) if x["side"] == side]
    bad = bool(failed_rises(tests))
    rises = [x for x in tests if x["moved"]]
    which = [f"{rise_text(x)}, {'a step' if x['step'] else 'p ' + plain_p(x['p'])}"
             for x in rises] or label_changes(before, after, side)
    words = f"{since.before:.2f} -> {since.after:.2f} per iteration" + \
        (f" ({'; '.join(which[:3])})" if which else "")
    if rises and not bad:
        words += ": a rise the count test cannot tell from the host's load (not judged)"
    return bad, words


def not_comparable(runs, name=""):
    """What keeps the newest run from being judged, as gate would refuse it
    (exit 30): its configuration or instrumentation differs from the run
    before it (the series starts again there), or its trace lost events."""
    out, last = [], len(runs) - 1
    for kind, what in (("exits", "configuration"), ("timing", "instrumentation")):
        if kind in runs[last].split:
            out.append(Verdict("environment", f"{what}{name}", False,
                               f"not comparable: {runs[last].path} starts a new series: "
                               + "; ".join(runs[last].split[kind])))
            break
    if runs[last].trace_gap and any(r.side.exits for r in runs):
        out.append(Verdict("environment", f"exits{name}", False,
                           f"not comparable: the exits of {runs[last].path} are not judged: its "
                           f"trace {runs[last].trace_gap}"))
    return out


def report(runs, changes, threshold, window, name=""):
    """The text: a line a change (the host facts that moved below it); and
    the verdicts, one per figure and kind with a change in the window."""
    span = f"{runs[0].started} to {runs[-1].started}" if runs[0].started else "in the order given"
    lines = [f"history: {len(runs)} runs on {runs[0].host_type}, {span}"]
    if len(runs) < 2 * MIN_SIZE:
        lines.append(f"history: {len(runs)} runs cannot show a timing change ({MIN_SIZE} a side "
                     "at least): only exit steps are looked for")
    for kind, what in (("exits", "figures"), ("timing", "timings")):
        for i in stretch_starts(runs, kind):
            if kind == "timing" and "exits" in runs[i].split:
                continue  # said once, as figures
            lines.append(f"history: {what} not comparable across {runs[i].path} (the series "
                         "is judged within each side of it, the verdict after it): "
                         + "; ".join(runs[i].split[kind]))
    for run in runs:
        if run.trace_gap:
            lines.append(f"history: exits of {run.path} left out: its trace {run.trace_gap}")
    for key, figure in changes.items():
        for c in figure:
            run = runs[c.at]
            lines.append(f"  {row_name(key)}: {c.kind} {c.size()} from {run.path}")
            lines += [f"      {d}" for d in facts_diff(runs[c.prev].facts, run.facts)]
    verdicts = [Verdict("history", row_name(key) + ("" if j["kind"] == "timing"
                                                    else f" {j['kind']}") + name,
                        not j["bad"], verdict_text(j))
                for key, j in judge_all(runs, changes, threshold, window)]
    refused = not_comparable(runs, name)
    lines += [f"history: {v.message}" for v in refused]
    return lines, verdicts + refused


def cmd_history(a, judged=None):
    """`./run.sh history`, its arguments as its parser read them; judged: as
    judge_runs's, every group judged."""
    threshold = parse_threshold(a.threshold)
    if any(not r.strip() for r in a.runs) or (a.store is not None and not a.store.strip()):
        raise ToolError(EX_USAGE, "an empty argument where a results folder was expected (RUN, "
                        "or --store ROOT): an unset variable in the calling script?")
    if len(a.runs) < 2 and not a.store:
        raise ToolError(EX_USAGE, "history takes the runs of a series, at least two (or "
                        "--store ROOT and the runs to add to it)")
    if not 1 / (1 + PERMUTATIONS) < a.alpha < 1:
        raise ToolError(EX_USAGE, f"--alpha takes a level above 1/{1 + PERMUTATIONS} (what "
                        f"{PERMUTATIONS} permutations can reach) and below 1, not {a.alpha:g}")
    if a.window < 1:
        raise ToolError(EX_USAGE, f"--window takes a count of runs, not {a.window}")
    errors = []
    if a.store:
        text, verdicts, tallies = [], [], []
        every = stored_series(a.store, a.runs, text, errors) if a.runs else \
            all_series(a.store)
        for series in every:
            runs = series_runs(series)
            name = os.path.relpath(series, a.store)
            if len(runs) < 2:
                text.append(f"history: {name}: 1 run, the first of its series: nothing to "
                            "judge yet")
                tallies.append((name, "the first run of its series"))
                continue
            try:
                lines, got = judge_runs(runs, a, threshold, f" in {name}", name, judged)
            except ToolError as e:
                # One series that cannot be read must not hide the others'
                # verdicts, nor the summary: it is a failed check of its own.
                text.append(f"history: {name}: cannot judge: {e.message}")
                errors.append((e.code, Verdict("error", name, False, e.message)))
                tallies.append((name, f"cannot judge: {e.message}"))
                continue
            text += [f"history: {name}:"] + lines
            verdicts += got
            tallies.append((name, tally(got, a.window, threshold)))
    else:
        text, verdicts = judge_runs(a.runs, a, threshold, judged=judged)
        tallies = []
    verdicts += [v for _, v in errors]
    text.append("history: " + tally(verdicts, a.window, threshold))
    # As gate: '-' puts TAP or JUnit alone on standard output.
    if "-" not in (a.tap, a.junit):
        print("\n".join(text))
    files = []
    for out, write in ((a.tap, write_tap), (a.junit,
                                             lambda v: write_junit(v, "ipibench history"))):
        if out == "-":
            sys.stdout.write(write(verdicts))
        elif out:
            files.append((out, write(verdicts)))
    # A file that cannot be written is said on its line and is 28 only
    # where the verdict is 0: it never hides a regression.
    unwritten = write_outputs(files, "history")
    if a.summary:
        try:
            append_summary(a.summary, text[-1], tallies, verdicts)
        except ToolError as e:
            print(f"history: {e.message}", file=sys.stderr)
            unwritten.append(a.summary)
    # As gate: a regression is 20 whatever else; then what could not be
    # read; then what could not be compared (30); then what was not written.
    if any(v.group == "history" and not v.ok for v in verdicts):
        return EX_REGRESSION
    if errors:
        return errors[0][0]
    if any(not v.ok for v in verdicts):
        return EX_INCOMPARABLE
    return EX_SAVE if unwritten else 0


def all_series(root):
    """Every series folder of a store (HOST/CONFIGURATION with its .series
    mark), in name order: `history --store ROOT` without runs judges them all."""
    if not os.path.isdir(root):
        raise ToolError(EX_MISSING, f"{root}: no store here (history --store ROOT RUN... makes one)")
    out = []
    for host in sorted(os.listdir(root)):
        for config in sorted(os.listdir(os.path.join(root, host))
                             if os.path.isdir(os.path.join(root, host)) else []):
            if os.path.isfile(os.path.join(root, host, config, SERIES_MARK)):
                out.append(os.path.join(root, host, config))
    if not out:
        raise ToolError(EX_MISSING, f"{root}: no series in this store")
    return out


def stored_series(root, paths, text, errors):
    """--store: files each results folder under root (results/store.py) and
    says where; the series folders it added to, in the order first met. A
    folder that cannot be stored is an error of its own (errors: (code,
    Verdict)); the others are still stored and judged."""
    out = []
    for path in paths:
        try:
            stored = store(root, path)
        except ToolError as e:
            text.append(f"history: {path}: not stored: {e.message}")
            errors.append((e.code, Verdict("error", path, False, f"not stored: {e.message}")))
            continue
        for series, where in stored:
            text.append(f"history: stored {path} as {where}" if where else
                        f"history: {path} is in {series} already: not stored again")
            if series not in out:
                out.append(series)
    return out


# An emulator's figures follow the host's clock and load: under TCG a whole
# boot can run 2x slower at random on a shared host. Twelve clean TCG
# nights (2 presets, 5 boots, 110 rows) run beside other work here moved
# every row of 6 nights by +35-57% together, and the night test, right
# that the boots moved, failed them. A series whose judged stretch was
# emulated throughout (TCG, or a lane's KVM or Xen nested in TCG: its
# accelerator, or the guest's own tcg warning) counts a timing step only
# beyond EMULATED_FLOOR: a planted slowdown of an IPI path (debug=slow-eoi:
# 1000x) still fails the night it shows. A KVM that traps RDTSC (PVM) is
# no emulator: a 2x path regression there must still fail. Exit counts are
# not timings: their rule is the same everywhere.
EMULATED_FLOOR = 200.0
EMULATED = {"tcg", "tcg-single", "kvm-in-tcg", "xen-in-tcg"}


def emulated(runs):
    """The emulators (accelerators, or the guest's tcg warning) every boot
    of the newest timing stretch of runs ran under, sorted; [] when one
    boot's figures are real or say nothing of it."""
    common = None
    for r in runs[era_of(runs, "timing", len(runs) - 1)[0]:]:
        for b in r.boots:
            ids = ({b.host.get("accel")} | emulation_ids(b.warnings())) & EMULATED
            common = ids if common is None else common & ids
            if not ids:
                return []
    return sorted(common or ()) or ["emulated"]


def series_threshold(runs, threshold):
    """(the threshold runs' timings are judged at, a line saying why it is
    not `threshold`, or None)."""
    ids = emulated(runs)
    if not ids or threshold >= EMULATED_FLOOR:
        return threshold, None
    return EMULATED_FLOOR, (f"history: emulated timings ({', '.join(ids)}): a timing step "
                            f"counts beyond +{EMULATED_FLOOR:g}%, not {threshold:g}%, as an "
                            "emulated boot can run 2x slower with the host's load; exits "
                            "are judged as ever")


def judge_runs(paths, a, threshold, where="", series=None, judged=None):
    """The lines and verdicts of one series of runs (grouped by host type);
    judged, when a list, gets (name: series or host type, runs, {row key:
    changes}, the threshold they were judged at) of each group, for history
    --report to draw."""
    groups = host_types(load_runs(paths, a.unit))
    text, all_verdicts = [], []
    for host, runs in groups.items():
        limit, why = series_threshold(runs, threshold)
        changes = figure_changes(runs, a.alpha, limit)
        if judged is not None:
            judged.append((series or host, runs, changes, limit))
        lines, verdicts = report(runs, changes, limit, a.window,
                                 f" on {host}" * (len(groups) > 1) + where)
        text += lines[:1] + ([why] if why else []) + lines[1:]
        all_verdicts += verdicts
    return text, all_verdicts


def tally(verdicts, window, threshold):
    """history's last line: the figures that changed, those that regressed,
    and what could not be judged."""
    def names(vs):
        return ", ".join(v.name for v in vs[:5]) + (" ..." if len(vs) > 5 else "")
    changed = [v for v in verdicts if v.group == "history"]
    bad = [v for v in changed if not v.ok]
    text = (f"{len(changed)} figures changed in the last {window} runs; "
            + (f"{len(bad)} regressed beyond {threshold:g}%: {names(bad)}" if bad
               else "none regressed"))
    other = [v for v in verdicts if v.group != "history" and not v.ok]
    return text + (f"; not judged: {names(other)}" if other else "")


def append_summary(path, last, tallies, verdicts):
    """The verdict as Markdown, appended to path ($GITHUB_STEP_SUMMARY is
    one file every step of a job appends to): the last line in bold, a line
    a series, and each regression."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"### ipibench history, {when}", "", f"**{last}**", ""]
    lines += [f"- `{name}`: {what}" for name, what in tallies]
    lines += [f"- {'regression' if v.group == 'history' else 'not judged'}: `{v.name}`: "
              f"{v.message}" for v in verdicts if not v.ok]
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip() + "\n\n")
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot append to {path}: {e.strerror}")
