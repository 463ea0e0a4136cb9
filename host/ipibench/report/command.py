# SPDX-License-Identifier: GPL-2.0-only
"""run.sh report's entry: the inputs, the comparison (of two inputs, or
--pair X=Y), every figure, gnuplot, and the page."""
import os

from ipibench.compare.model import Comparison, Side
from ipibench.exit_codes import EX_NO_OVERLAP, EX_SAVE, EX_USAGE, ToolError
from ipibench.report.ab import bar_plot
from ipibench.report.curves import Roles
from ipibench.report.distribution import dist_plots
from ipibench.report.gnuplot import run_gnuplot
from ipibench.report.inputs import default_out, display_names, load_sets
from ipibench.report.kut import kut_view
from ipibench.report.matrix import matrix_plots
from ipibench.report.page import page_html, page_markdown
from ipibench.report.scaling import scaling_plots
from ipibench.report.what_ran import Context
from ipibench.write import replace_file


def pair_comparison(sets, pair, alpha, unit):
    """report --pair X=Y: compare --pair's comparison, backend X of the first
    set against backend Y of the last (the same set when there is one)."""
    if len(sets) > 2:
        raise ToolError(EX_USAGE, f"--pair compares within one set or across two, not {len(sets)} ({', '.join(n for n, _ in sets[:4])}{', ...' if len(sets) > 4 else ''}): give one configuration folder")
    (a_name, a_boots), (b_name, b_boots) = sets[0], sets[-1]
    cmp = Comparison(f"{a_name} [{pair[0]}]", a_boots, f"{b_name} [{pair[1]}]", b_boots,
                     alpha, unit, pair)
    err = cmp.overlap_error()
    if err:
        raise err
    return cmp


def report(a):
    """run.sh report: the figures of the inputs a.inputs (a comparison of
    two, or a.pair's), drawn under a.out, and the page that shows them."""
    sets = load_sets(a.inputs)
    sides = [Side(name, boots, a.unit) for name, boots in sets]
    if not any(s.keys() for s in sides):
        raise ToolError(EX_NO_OVERLAP, "nothing to plot: no result records in "
                        + ", ".join(a.inputs))
    pair = getattr(a, "pair", None)
    cmp, notes = comparison(sets, pair, a.alpha, a.unit)
    out = a.out or default_out(a.inputs, pair)
    data = os.path.join(out, "data")
    try:
        os.makedirs(data, exist_ok=True)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot write the report under {out}: {e.strerror or e}")
    plots, kut_tables = draw(sets, sides, cmp, pair, data, a.unit, notes)
    run_gnuplot(out, plots)
    replace_file(os.path.join(out, "index.html"),
                 page_html(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    replace_file(os.path.join(out, "report.md"),
                 page_markdown(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    print(f"report: {len(plots)} plots (SVG and PNG) and {os.path.join(out, 'index.html')}")
    return 0


def comparison(sets, pair, alpha, unit):
    """(the comparison or None, the page's notes): --pair's, else that of two
    sets; two sets with nothing in common are no comparison, and a note."""
    if pair:
        return pair_comparison(sets, pair, alpha, unit), []
    if len(sets) == 2:
        cmp = Comparison(sets[0][0], sets[0][1], sets[1][0], sets[1][1], alpha, unit)
        err = cmp.overlap_error()
        if err:
            return None, [err.message]
        return cmp, []
    return None, []


def draw(sets, sides, cmp, pair, data, unit, notes):
    """(every figure, the kvm-unit-tests view's tables): distributions,
    scaling, matrix=1, the kvm-unit-tests view and the A/B chart, their data
    under data; what the page must say of them is appended to notes."""
    names = display_names([s.name for s in sides])
    context = Context(names, sets)
    # Before and after on one panel and one scale: the comparison's sides.
    roles = Roles(names, pair) if cmp is not None else None
    plots = dist_plots(sets, names, data, unit, context, roles) + \
        scaling_plots(sides, names, data, unit, context, roles) + \
        matrix_plots(sets, names, data, unit, context, roles)
    if not any(p.name.startswith("scaling") for p in plots):
        notes.append("no scaling curve: no benchmark was measured at more than one target count")
    kut_plots, kut_tables, kut_notes = kut_view(sets, names, data, unit, context)
    plots += kut_plots
    notes += kut_notes
    if cmp is not None:
        plots += bar_plot(cmp, data, (names[0], names[-1]), context)
    return plots, kut_tables
