# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh history --report DIR`: each figure of a series drawn over time,
its change points marked, on a page (index.html, report.md) that lists the
changes and links every figure. docs/nightly.md, "history".

A figure is a row: its timing (x: the runs, oldest first; y: the run's
value, the median of its boots' p50s, min..max over boots as error bars; the
level of each segment between change points as a step line) and, where the
runs counted them, its exits per iteration (the sender's and the targets').
A dashed vertical line marks each change before the first run of its new
level: red when it is slower or has more exits, green otherwise; a solid
grey one, a split of the series (figures not comparable across it). The
newest --window runs, which the verdict judges, are shaded.

Only the rows that changed are drawn, unless --report-all: a matrix holds
some 200 rows, and each figure costs gnuplot two renderings. The series
drawn are the ones history just judged (cmd_history's judged groups: with
--store, each series of two runs or more it added to), so the changes drawn
are the changes printed, and no run is read or tested twice. The drawing is
report's: report/gnuplot.py (run_gnuplot, Plot, its titles) and
report/page.py (the captions, the page)."""
import datetime
import html
import os
import sys

from ipibench.compare.history import (cmd_history, facts_diff, judge_all, stretch_starts,
                                      verdict_text)
from ipibench.compare.model import exits_median, row_name, row_order
from ipibench.exit_codes import EX_SAVE, EX_USAGE, ToolError
from ipibench.report.ab import COLOURS
from ipibench.report.gnuplot import (axis_scale, data_rows, gnuplot_path, gp_lines, gp_str,
                                     gp_tics, log_ticks, Plot, run_gnuplot, slug, split_title)
from ipibench.report.inputs import display_names
from ipibench.report.page import figure_html, figure_markdown, html_page, html_table, md_table
from ipibench.report.words import metric_head, state_words, targets_words, variant_words
from ipibench.results.stats import median
from ipibench.write import replace_file

TITLE = "ipibench history"
WIDTH, PANEL_H = 960, 330      # pixels: the canvas's width, one panel's height
TICKS_MAX = 16                 # run names along the x axis; more are thinned
TICK_CHARS = 24                # a run's name on the axis, at most
VALUE, LEVEL = "#1f77b4", "#7f7f7f"
SENDER, TARGETS = "#ff7f0e", "#9467bd"
WINDOW_FILL, SPLIT = "#eeeeee", "#555555"
EXITS_KINDS = ("sender exits", "target exits")


def colour(change):
    """Red for slower or more exits, green for faster or fewer."""
    up = COLOURS["slower"] if change.after > change.before else COLOURS["faster"]
    return "#" + up[2:]


def row_words(key):
    """A row in words: 'single round-trip (...), x2apic, spinning target, 1 target'."""
    bench, metric, variant, backend, state, n = key
    words = [metric_head(bench, metric), str(backend), variant_words(variant),
             state_words(state, n), targets_words(bench, n, None)]
    return ", ".join(w for w in words if w)


def run_values(runs, key):
    """[(x, median, min, max)] of the runs that have the row's timing."""
    out = []
    for i, r in enumerate(runs):
        vals = r.side.values.get(key)
        if vals:
            out.append((i + 1, median(vals), min(vals), max(vals)))
    return out


def levels(points, changes, splits):
    """[(x, level)]: each run at the median of its segment between the
    timing changes and the splits of the series, drawn as steps."""
    edges = [c.at + 1 for c in changes if c.kind == "timing"] + [i + 1 for i in splits]
    segment = [sum(x >= e for e in edges) for x, *_ in points]
    medians = {s: median([p[1] for p, t in zip(points, segment) if t == s])
               for s in set(segment)}
    return [(p[0], medians[s]) for p, s in zip(points, segment)]


def run_exits(runs, key):
    """[(x, sender, targets)] of the runs that counted the row's exits
    (history leaves out those of a trace that lost events)."""
    out = []
    for i, r in enumerate(runs):
        ex = exits_median(r.side.exits.get(key, [])) if not r.trace_gap else None
        if ex is not None:
            out.append((i + 1, ex[0], ex[1]))
    return out


def marks(changes, kinds, splits):
    """The vertical lines of a panel: its changes, between the run before
    and the first run of the new level; a split of the series (figures not
    comparable across it), solid grey."""
    return [f"set arrow from {c.at + 0.5},graph 0 to {c.at + 0.5},graph 1 nohead front "
            f"lw 2 dt 2 lc rgb '{colour(c)}'" for c in changes if c.kind in kinds] + \
        [f"set arrow from {i + 0.5},graph 0 to {i + 0.5},graph 1 nohead front lw 3 "
         f"lc rgb '{SPLIT}'" for i in splits]


def clause(src, blocks, rows, using, style, title):
    blocks.append(data_rows(rows))
    return f"{src} index {len(blocks) - 1} using {using} with {style} title {gp_str(title)}"


def timing_panel(src, blocks, runs, key, changes, unit, window):
    """The commands of the timing panel, or [] when no run has the row's timing."""
    points = run_values(runs, key)
    if not points:
        return []
    div, axis_unit = axis_scale(max(p[3] for p in points), unit)
    scaled = [tuple(v / div for v in p[1:]) for p in points]
    rows = [(p[0],) + s for p, s in zip(points, scaled)]
    plot = [clause(src, blocks, rows, "1:2:3:4",
                   f"yerrorlines lc rgb '{VALUE}' pt 7 ps 0.8",
                   "a run: its boots' median p50, min..max")]
    splits = stretch_starts(runs, "timing")
    if any(c.kind == "timing" for c in changes) or splits:
        plot.append(clause(src, blocks, [(x, v / div) for x, v in levels(points, changes, splits)],
                           "1:2", f"histeps lc rgb '{LEVEL}' lw 1.5",
                           "level between changes (median)"))
    return ["unset arrow"] + marks(changes, ("timing",), splits) + \
        [f"set ylabel {gp_str('median p50, ' + axis_unit)}"] + y_axis(points, div) + \
        ["set title 'timing'",
         "plot " + ", ".join(plot + legend_marks(changes, ("timing",), splits,
                                                 min(window, len(runs))))]


def y_axis(points, div):
    """The timing panel's y axis: linear from 0, or logarithmic where a step
    dwarfs the baseline (the runs' values span ten times or more), so that
    the nights before it are not a flat line at the bottom."""
    lo = min((p[2] for p in points if p[2] > 0), default=0)
    hi = max(p[3] for p in points)
    if lo <= 0 or hi / lo < 10:
        return ["unset logscale y", "set ytics autofreq", "set yrange [0:*]"]
    return ["set logscale y", gp_tics("y", log_ticks(lo / div, hi / div, 1)),
            f"set yrange [{lo / div / 1.2:.6g}:{hi / div * 1.2:.6g}]"]


def exits_panel(src, blocks, runs, key, changes, window):
    """The commands of the exits panel, or [] when no run counted them."""
    points = run_exits(runs, key)
    if not points:
        return []
    plot = [clause(src, blocks, [(x, s) for x, s, _ in points], "1:2",
                   f"linespoints lc rgb '{SENDER}' pt 5 ps 0.8", "the sender's exits"),
            clause(src, blocks, [(x, t) for x, _, t in points], "1:2",
                   f"linespoints lc rgb '{TARGETS}' pt 9 ps 0.8", "the targets' exits")]
    splits = stretch_starts(runs, "exits")
    return ["unset arrow"] + marks(changes, EXITS_KINDS, splits) + \
        ["set ylabel 'exits per iteration'", "unset logscale y", "set ytics autofreq",
         "set yrange [0:*]",
         "set title 'exits per iteration (median over boots)'",
         "plot " + ", ".join(plot + legend_marks(changes, EXITS_KINDS, splits,
                                                 min(window, len(runs))))]


def legend_marks(changes, kinds, splits, window):
    """Legend entries for the shaded window and the vertical lines the panel has."""
    seen = list(dict.fromkeys(colour(c) for c in changes if c.kind in kinds))
    words = {"#" + COLOURS["slower"][2:]: "change: slower, or more exits",
             "#" + COLOURS["faster"][2:]: "change: faster, or fewer exits"}
    return [f"NaN with boxes fs solid fc rgb '{WINDOW_FILL}' title "
            f"{gp_str(f'the newest {window} runs, judged')}"] + \
        [f"NaN with lines lc rgb '{c}' lw 2 dt 2 title {gp_str(words[c])}" for c in seen] + \
        ([f"NaN with lines lc rgb '{SPLIT}' lw 3 title 'not comparable across: the series "
          "splits'"] if splits else [])


def x_axis(runs, window):
    """The x axis: the runs' names (thinned to TICKS_MAX), the judged window shaded."""
    names = [n[-TICK_CHARS:] for n in display_names([r.path for r in runs])]
    step = -(-len(runs) // TICKS_MAX)
    ticks = ", ".join(f"{gp_str(n)} {i + 1}" for i, n in enumerate(names) if i % step == 0)
    start = max(0, len(runs) - window) + 0.5
    return [f"set xrange [0.5:{len(runs) + 0.5}]", f"set xtics rotate by 30 right ({ticks})",
            "set xlabel 'run, oldest first'", "set key below horizontal height 1", "set grid",
            f"set object 1 rect from {start},graph 0 to {len(runs) + 0.5},graph 1 behind "
            f"fc rgb '{WINDOW_FILL}' fs solid noborder"]


def change_lines(runs, changes):
    """A line a change, and the host facts that differ either side of it."""
    out = []
    for c in changes:
        differs = facts_diff(runs[c.prev].facts, runs[c.at].facts)
        out.append(f"{c.kind} {c.size()} from {runs[c.at].path}" +
                   (f"; on the host: {'; '.join(differs)}" if differs else ""))
    return out


def row_plot(name, data_dir, runs, key, changes, a):
    """The figure of one row over the series, or None when it has nothing to draw."""
    src, blocks = gp_str(f"data/{name}.dat"), []
    panels = [p for p in (timing_panel(src, blocks, runs, key, changes, a.unit, a.window),
                          exits_panel(src, blocks, runs, key, changes, a.window)) if p]
    if not panels:
        return None
    replace_file(os.path.join(data_dir, name + ".dat"), "\n\n\n".join(blocks) + "\n")
    span = f"{runs[0].started} to {runs[-1].started}" if runs[0].started else "in the order given"
    title, notes = split_title(
        [row_words(key), f"{len(runs)} runs on {runs[0].host_type}, {span}"] +
        change_lines(runs, changes) +
        [f"shaded: the newest {min(a.window, len(runs))} runs, which the verdict judges "
         "(--window)"], WIDTH - 20)
    height = PANEL_H * len(panels) + 60 + 18 * len(title)
    lines = x_axis(runs, a.window) + \
        [f"set multiplot layout {len(panels)},1 title {gp_lines(title)}"] + \
        [cmd for p in panels for cmd in p] + ["unset multiplot"]
    caption = (f"{row_name(key)} over {len(runs)} runs on {runs[0].host_type}: "
               f"{len(changes)} change(s)")
    return Plot(name, row_name(key), lines, caption, (WIDTH, height), notes)


def series_of(a, judged):
    """[(name, runs, {row key: changes}, [row keys to draw], verdicts())] of
    the groups history judged (cmd_history's judged: with --store, the
    series of two runs or more it added to), each judged once for the page."""
    out = []
    for host, runs, changes, threshold in judged:
        keys = set(changes)
        if a.report_all:
            for r in runs:
                keys |= set(r.side.values) | set(r.side.exits)
        out.append((host, runs, changes, sorted(keys, key=row_order),
                    verdicts(runs, changes, threshold, a)))
    return out


def plots_of(series, data_dir, a):
    """{host type: [Plot]}: a figure per row to draw."""
    out = {}
    for n, (host, runs, changes, keys, _) in enumerate(series):
        prefix = ("history", n + 1) if len(series) > 1 else ("history",)
        plots = [row_plot(slug(*prefix, row_name(k)), data_dir, runs, k, changes.get(k, []), a)
                 for k in keys]
        out[host] = [p for p in plots if p is not None]
    return out


def verdicts(runs, changes, threshold, a):
    """{(row key, kind): (regressed, words)} as history judged them, at the
    threshold it judged the series at (history.series_threshold)."""
    return {(key, j["kind"]): (j["bad"], verdict_text(j))
            for key, j in judge_all(runs, changes, threshold, a.window)}


def severity(c, judged):
    """A change's place in the table: what the verdict failed on first, then
    the largest move (timing in percent, exits in exits an iteration,
    weighed as a hundred percent each)."""
    bad = judged.get((c.key, c.kind), (False,))[0] and c.grew(0)
    size = abs(100 * (c.after / c.before - 1)) if c.kind == "timing" and c.before else \
        100 * abs(c.after - c.before)
    return (not bad, -size)


def change_rows(runs, changes, judged):
    """The page's table of changes, the most severe first: the verdict on
    its row, row, kind, size, run, the run's host kernel, what differs."""
    cs = sorted((c for cs in changes.values() for c in cs), key=lambda c: severity(c, judged))
    return [("REGRESSION" if not severity(c, judged)[0] else "-", row_name(c.key), c.kind,
             c.size(), runs[c.at].path, str(runs[c.at].facts.get("host kernel") or "-"),
             "; ".join(facts_diff(runs[c.prev].facts, runs[c.at].facts)) or "-") for c in cs]


def verdict_line(series):
    """The page's opening line: what the verdict failed on, or that nothing did."""
    bad = []
    for _, _, _, _, judged in series:
        for (key, kind), (regressed, words) in judged.items():
            if regressed:
                bad.append(f"{row_name(key)} ({kind}): {words}")
    if not bad:
        return "Verdict: no regression in the newest window of any series.", []
    return f"Verdict: REGRESSION in {len(bad)} figures.", bad


CHANGE_HEAD = ("verdict", "row", "kind", "size", "from run", "its host kernel",
               "what differs on the host")


def runs_table(runs):
    return [(i + 1, r.path, r.started or "-") for i, r in enumerate(runs)]


def intro(series, a):
    """The page's first line: how many series and runs, the window."""
    if not series:
        return "no series of two runs or more to draw"
    runs = sum(len(s[1]) for s in series)
    drawn = "every row is drawn (--report-all)" if a.report_all else \
        "only the rows that changed are drawn (--report-all draws every row)"
    return (f"{len(series)} series, {runs} runs; changes judged over the newest {a.window} "
            f"runs of each; {drawn}")


def page_html(series, plots, a):
    e = html.escape
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head, bad = verdict_line(series)
    body = [f"<h1>{e(TITLE)}</h1>", f"<p><strong>{e(head)}</strong></p>"]
    body += ["<ul>"] + [f"<li>{e(b)}</li>" for b in bad] + ["</ul>"] if bad else []
    body += [f"<p>generated {now}; {e(intro(series, a))}</p>"]
    for host, runs, changes, _, judged in series:
        mine = plots[host]
        body += [f"<h2>{e(host)}</h2>", "<h3>Changes, the most severe first</h3>"]
        rows = change_rows(runs, changes, judged)
        body += html_table(CHANGE_HEAD, rows) if rows else \
            [f"<p>no figure changed over these {len(runs)} runs</p>"]
        body += ["<h3>Figures</h3>", "<ul>"] + \
            [f'<li><a href="#{p.name}">{e(p.title)}</a> (<a href="{p.name}.svg">SVG</a>, '
             f'<a href="{p.name}.png">PNG</a>)</li>' for p in mine] + ["</ul>"]
        body += ["<h3>Runs, oldest first</h3>"] + html_table(("#", "run", "started"),
                                                            runs_table(runs))
        for p in mine:
            body += [f"<h3>{e(p.title)}</h3>"] + figure_html(p)
    return html_page(TITLE, body)


def page_markdown(series, plots, a):
    head, bad = verdict_line(series)
    lines = [f"# {TITLE}", "", f"**{head}**", ""] + [f"- {b}" for b in bad] + \
        ([""] if bad else []) + [intro(series, a), ""]
    for host, runs, changes, _, judged in series:
        mine = plots[host]
        rows = change_rows(runs, changes, judged)
        lines += [f"## {host}", "", "### Changes, the most severe first", ""]
        lines += md_table(CHANGE_HEAD, rows) if rows else \
            [f"no figure changed over these {len(runs)} runs"]
        lines += ["", "### Figures", ""] + \
            [f"- [{p.title}]({p.name}.png) ([SVG]({p.name}.svg))" for p in mine]
        lines += ["", "### Runs, oldest first", ""] + \
            md_table(("#", "run", "started"), runs_table(runs)) + [""]
        for p in mine:
            lines += [f"### {p.title}", ""] + figure_markdown(p)
    return "\n".join(lines) + "\n"


def write_report(a, judged):
    """The page and a figure per row that changed (every row: --report-all)."""
    series = series_of(a, judged)
    data_dir = os.path.join(a.report, "data")
    os.makedirs(data_dir, exist_ok=True)
    plots = plots_of(series, data_dir, a)
    every = [p for ps in plots.values() for p in ps]
    run_gnuplot(a.report, every)
    replace_file(os.path.join(a.report, "index.html"), page_html(series, plots, a))
    replace_file(os.path.join(a.report, "report.md"), page_markdown(series, plots, a))
    return len(every)


def cmd_history_report(a):
    """`./run.sh history`, and with --report DIR its page and figures. A
    missing gnuplot is exit 9 before the series is read, as report's; the
    exit status is history's own (20: a regression), the page written
    either way."""
    if a.report_all and not a.report:
        raise ToolError(EX_USAGE, "--report-all draws the figures of --report DIR: give it a folder")
    if a.report:
        gnuplot_path()
    judged = []
    rc = cmd_history(a, judged)
    if a.report:
        try:
            n = write_report(a, judged)
        except (OSError, ToolError) as e:
            # The page is a side output: the verdict's code survives it.
            why = e.message if isinstance(e, ToolError) else (e.strerror or str(e))
            print(f"history: cannot write the report under {a.report}: {why}", file=sys.stderr)
            return rc or EX_SAVE
        # TAP or JUnit alone on standard output ('-') keeps it alone there.
        where = sys.stderr if "-" in (a.tap, a.junit) else sys.stdout
        print(f"history: {n} figures (SVG and PNG) and {os.path.join(a.report, 'index.html')}",
              file=where)
    return rc
