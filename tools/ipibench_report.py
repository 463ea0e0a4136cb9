# SPDX-License-Identifier: GPL-2.0-only
"""run.sh report: plots drawn by gnuplot (SVG and PNG) and a page that shows
them beside the tables (index.html, report.md). docs/host-tools.md, "report".

- latency distribution: for each benchmark and metric, one curve per backend
  (and per configuration), the share of samples in each histogram bucket;
- scaling: for each benchmark measured at several target counts, the median
  p50 against the target count, one curve per backend;
- A/B: with two inputs, the change of every compared row, coloured by the
  significance verdict, with its bootstrap confidence interval.

Plots are written under temporary names and renamed once gnuplot succeeded.
"""
import datetime
import html
import os
import re
import shutil
import subprocess

import ipibench_results as R

COLOURS = {"slower": "0xc0392b", "faster": "0x27ae60", "other": "0x95a5a6"}
MAX_SERIES = 12
MAX_BARS = 40


def slug(*parts):
    return re.sub(r"[^a-zA-Z0-9]+", "-", "-".join(map(str, parts))).strip("-").lower()


def gp_str(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', "'") + '"'


class Plot:
    def __init__(self, name, title, lines, caption):
        self.name, self.title, self.lines, self.caption = name, title, lines, caption


def load_sets(inputs):
    """[(name, boots)]: one per input, or one per configuration of a matrix."""
    sets = []
    for path in inputs:
        boots = R.load_set(path)
        groups = R.split_by_config(boots)
        if len(groups) > 1:
            sets += list(groups.items())
        else:
            sets.append((path.rstrip("/") or path, boots))
    return sets


def series_label(set_name, key, many_sets):
    _, _, variant, backend, state, _ = key
    parts = [backend] + ([variant] if variant not in ("none", None) else []) + [state]
    return (f"{os.path.basename(set_name)}: " if many_sets else "") + " ".join(map(str, parts))


def bucket_x(low, high):
    if low <= 0:
        return max(high, 1) / 2
    return (low * high) ** 0.5


def dist_plots(sides, data_dir, unit):
    plots = []
    many = len(sides) > 1
    groups = {}
    for side in sides:
        for key in side.histos:
            groups.setdefault(key[:2], set()).add(key[5])
    for (bench, metric), ntargets in sorted(groups.items()):
        nmax = max(ntargets)
        blocks, titles = [], []
        for side in sides:
            for key in sorted(side.histos, key=R.row_order):
                if key[:2] != (bench, metric) or key[5] != nmax:
                    continue
                buckets = {}
                for low, high, count in side.histos[key]:
                    b = buckets.setdefault(low, [high, 0])
                    b[1] += count
                total = sum(c for _, c in buckets.values())
                rows = [f"{bucket_x(low, hc[0]):.1f} {100.0 * hc[1] / total:.4f}"
                        for low, hc in sorted(buckets.items())]
                blocks.append(rows)
                titles.append(series_label(side.name, key, many))
        if not blocks:
            continue
        name = slug("dist", bench, metric)
        dat = os.path.join(data_dir, name + ".dat")
        R.replace_file(dat, "\n\n\n".join("\n".join(b) for b in blocks[:MAX_SERIES]) + "\n")
        curves = ", ".join(f"{gp_str('data/' + name + '.dat')} index {i} using 1:2 with "
                           f"linespoints pt 7 ps 0.5 title {gp_str(t)}"
                           for i, t in enumerate(titles[:MAX_SERIES]))
        lines = ["set logscale x 2", f"set xlabel {gp_str(unit + ' (log scale)')}",
                 "set ylabel '% of samples'", "set key outside right top",
                 "set title " + gp_str(f"{bench} / {metric}: latency distribution, "
                                       f"{nmax} target(s)"),
                 f"plot {curves}"]
        cap = f"{bench} / {metric}: share of samples per histogram bucket"
        if len(blocks) > MAX_SERIES:
            cap += f" (first {MAX_SERIES} of {len(blocks)} curves)"
        plots.append(Plot(name, f"{bench} / {metric} distribution", lines, cap))
    return plots


def scaling_plots(sides, data_dir, unit):
    plots = []
    many = len(sides) > 1
    groups = {}
    for side in sides:
        for key, vals in side.values.items():
            series = (side.name,) + key[2:5]
            groups.setdefault(key[:2], {}).setdefault(series, {})[key[5]] = R.median(vals)
    for (bench, metric), series in sorted(groups.items()):
        counts = {n for pts in series.values() for n in pts}
        if len(counts) < 2:
            continue
        name = slug("scaling", bench, metric)
        items = sorted(series.items(), key=lambda s: tuple(map(str, s[0])))[:MAX_SERIES]
        blocks = ["\n".join(f"{n} {v}" for n, v in sorted(pts.items())) for _, pts in items]
        R.replace_file(os.path.join(data_dir, name + ".dat"), "\n\n\n".join(blocks) + "\n")
        titles = [series_label(s[0], (None, None) + s[1:] + (None,), many) for s, _ in items]
        curves = ", ".join(f"{gp_str('data/' + name + '.dat')} index {i} using 1:2 with "
                           f"linespoints pt 7 title {gp_str(t)}" for i, t in enumerate(titles))
        lines = ["set xlabel 'targets'", f"set ylabel {gp_str('median p50, ' + unit)}",
                 "set key outside right top", "set xtics 1", "set yrange [0:*]",
                 f"set title {gp_str(f'{bench} / {metric}: latency against target count')}",
                 f"plot {curves}"]
        plots.append(Plot(name, f"{bench} / {metric} scaling", lines,
                          f"{bench} / {metric}: median p50 against the number of targets"))
    return plots


def bar_plot(cmp, data_dir):
    rows = sorted(cmp.compared, key=lambda r: -abs(r.change))[:MAX_BARS]
    if not rows:
        return []
    rows.sort(key=lambda r: r.name)
    out = []
    for i, r in enumerate(rows):
        lo, hi = r.ci if r.ci else (r.change, r.change)
        colour = COLOURS[r.verdict] if r.verdict in COLOURS else COLOURS["other"]
        out.append(f"{i} {gp_str(r.name)} {r.change:.3f} {lo:.3f} {hi:.3f} {colour}")
    R.replace_file(os.path.join(data_dir, "ab.dat"), "\n".join(out) + "\n")
    lines = ["set style fill solid 0.7 border -1", "set boxwidth 0.7",
             "set xtics rotate by -60 font ',8'", "set bmargin 14", "set grid ytics",
             f"set ylabel {gp_str('change of B against A, % (' + cmp.unit + ' p50)')}",
             "set xrange [-1:*]", "set xzeroaxis lt -1", "set key outside right top",
             "set title " + gp_str(f"A/B: {os.path.basename(cmp.sa.name)} -> "
                                   f"{os.path.basename(cmp.sb.name)}"),
             "plot 'data/ab.dat' using 1:3:6:xtic(2) with boxes lc rgb variable notitle, "
             "'' using 1:3:4:5 with yerrorbars lc rgb 'black' pt -1 title '95% CI', "
             f"NaN with boxes lc rgb '#{COLOURS['slower'][2:]}' title 'slower (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['faster'][2:]}' title 'faster (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['other'][2:]}' title 'not significant'"]
    return [Plot("ab", "A/B comparison", lines,
                 "change of each compared row, with its bootstrap 95% confidence interval")]


def run_gnuplot(out, plots):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise R.ToolError(R.EX_DEPS, "gnuplot is missing (Debian package gnuplot-nox; "
                          "tools/deps.sh report installs it)")
    script = ["set encoding utf8", "set grid"]
    for p in plots:
        script += ["reset", "set grid"] + \
            ["set terminal svg size 960,540 dynamic noenhanced font 'sans,11' background 'white'",
             f"set output {gp_str(f'.{p.name}.svg.tmp')}"] + p.lines + \
            ["set terminal pngcairo size 960,540 noenhanced font 'sans,10'",
             f"set output {gp_str(f'.{p.name}.png.tmp')}", "replot", "unset output"]
    R.replace_file(os.path.join(out, "plots.gp"), "\n".join(script) + "\n")
    proc = subprocess.run([gnuplot, "plots.gp"], cwd=out, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise R.ToolError(1, "gnuplot failed: " + proc.stdout.strip()[-500:])
    for p in plots:
        for ext in ("svg", "png"):
            os.replace(os.path.join(out, f".{p.name}.{ext}.tmp"),
                       os.path.join(out, f"{p.name}.{ext}"))


def facts_lines(sets):
    out = []
    for name, boots in sets:
        h = boots[0].host
        kvm = " ".join(f"{k}={v}" for k, v in h.get("kvm_params", {}).items()) or "-"
        out.append((name, len(boots), h.get("accel", "-"), h.get("cpu_model", "-"),
                    h.get("kernel", "-"), h.get("qemu_version", "-"), kvm))
    return out


FACT_HEAD = ("set", "boots", "accel", "host CPU", "host kernel", "QEMU", "KVM parameters")


def page_html(title, sets, cmp, plots, notes):
    e = html.escape
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<h1>{e(title)}</h1>", f"<p>generated {now}</p>", "<h2>Inputs</h2>",
            "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in FACT_HEAD) + "</tr>"]
    for row in facts_lines(sets):
        body.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
    body.append("</table>")
    body += [f"<p><b>{e(n)}</b></p>" for n in notes]
    if cmp is not None:
        body.append("<h2>Comparison</h2>")
        if cmp.reasons:
            body.append(f"<p><b>NOT COMPARABLE</b>: {e('; '.join(cmp.reasons))}</p>")
        body.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in R.TABLE_HEAD) + "</tr>")
        for r in R.table_rows(cmp):
            body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>")
        body.append("</table>")
    for p in plots:
        body += [f"<h2>{e(p.title)}</h2>", f'<p><img src="{p.name}.svg" alt="{e(p.caption)}">'
                 f'<br>{e(p.caption)} (<a href="{p.name}.png">PNG</a>)</p>']
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse;font-size:90%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{style}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def page_markdown(title, sets, cmp, plots, notes):
    lines = [f"# {title}", "", "| " + " | ".join(FACT_HEAD) + " |", "|" + "---|" * len(FACT_HEAD)]
    for row in facts_lines(sets):
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    lines += [""] + [f"**{n}**\n" for n in notes]
    if cmp is not None:
        lines += ["## Comparison", "", R.format_markdown(cmp)]
    for p in plots:
        lines += [f"## {p.title}", "", f"![{p.caption}]({p.name}.png)", ""]
    return "\n".join(lines) + "\n"


def default_out(first):
    if os.path.isdir(first):
        return os.path.join(first, "report")
    return os.path.join(os.path.dirname(os.path.abspath(first)), "report")


def report(a):
    sets = load_sets(a.inputs)
    sides = [R.Side(name, boots, a.unit) for name, boots in sets]
    if not any(s.keys() for s in sides):
        raise R.ToolError(R.EX_NO_OVERLAP, "nothing to plot: no result records in "
                          + ", ".join(a.inputs))
    cmp, notes = None, []
    if len(sets) == 2:
        cmp = R.Comparison(sets[0][0], sets[0][1], sets[1][0], sets[1][1], a.alpha, a.unit)
        err = cmp.overlap_error()
        if err:
            notes.append(err.message)
            cmp = None
    out = a.out or default_out(a.inputs[0])
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    plots = dist_plots(sides, data, a.unit) + scaling_plots(sides, data, a.unit)
    if not any(p.name.startswith("scaling") for p in plots):
        notes.append("no scaling curve: no benchmark was measured at more than one target count")
    if cmp is not None:
        plots += bar_plot(cmp, data)
    run_gnuplot(out, plots)
    R.replace_file(os.path.join(out, "index.html"), page_html(a.title, sets, cmp, plots, notes))
    R.replace_file(os.path.join(out, "report.md"), page_markdown(a.title, sets, cmp, plots, notes))
    print(f"report: {len(plots)} plots (SVG and PNG) and {os.path.join(out, 'index.html')}")
    return 0
