# SPDX-License-Identifier: GPL-2.0-only
"""The page that shows the plots beside the tables: index.html (each
figure's SVG, its caption and a link to its PNG) and report.md (each
figure's PNG); the inputs' facts, the comparison's table and the
kvm-unit-tests view's. history_plot.py's page is built of the same parts."""
import datetime
import html

from ipibench.compare.formats import format_markdown, legend, table_head, table_rows
from ipibench.report.kut import KUT_CAPTION


def facts_lines(sets):
    out = []
    for name, boots in sets:
        h = boots[0].host
        params = h.get("kvm_params") if isinstance(h.get("kvm_params"), dict) else {}
        kvm = " ".join(f"{k}={v}" for k, v in params.items()) or "-"
        out.append((name, len(boots), h.get("accel", "-"), h.get("cpu_model", "-"),
                    h.get("kernel", "-"), h.get("qemu_version", "-"), kvm))
    return out


FACT_HEAD = ("set", "boots", "accel", "host CPU", "host kernel", "QEMU", "KVM parameters")


def html_table(head, rows):
    e = html.escape
    return ["<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in head) + "</tr>"] + \
        ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in rows] + \
        ["</table>"]


def md_table(head, rows):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]


def sides_line(cmp):
    """Which set (and, with --pair, which backend) is A and which is B."""
    return (f"A (baseline): {cmp.sa.name} ({len(cmp.sa.boots)} boots); "
            f"B (candidate): {cmp.sb.name} ({len(cmp.sb.boots)} boots)")


FIGURE_CSS = ("figure{margin:1em 0}img{max-width:100%}"
              "figcaption{font-size:90%;color:#333;margin-top:4px}")


def figure_html(p):
    """A plot on the page: its SVG, and under it the caption: the lines its
    title had no room for, and a link to the PNG."""
    e = html.escape
    said = "".join(f"{e(n)}<br>" for n in p.notes)
    return [f'<figure id="{p.name}"><img src="{p.name}.svg" alt="{e(p.caption)}">',
            f'<figcaption>{said}(<a href="{p.name}.png">PNG</a>)</figcaption></figure>']


def figure_markdown(p):
    """A plot in report.md: its PNG, and the caption's lines as a list under it."""
    return [f"![{p.caption}]({p.name}.png)", ""] + \
        [f"- {n}" for n in p.notes] + ([""] if p.notes else [])


def page_html(title, sets, cmp, plots, notes, kut_tables=(), unit="cycles"):
    e = html.escape
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<h1>{e(title)}</h1>", f"<p>generated {now}</p>", "<h2>Inputs</h2>"]
    body += html_table(FACT_HEAD, facts_lines(sets))
    body += [f"<p><b>{e(n)}</b></p>" for n in notes]
    if cmp is not None:
        body += ["<h2>Comparison</h2>", f"<p>{e(sides_line(cmp))}</p>"]
        if cmp.reasons:
            body.append(f"<p><b>NOT COMPARABLE</b>: {e('; '.join(cmp.reasons))}</p>")
        if cmp.timing_reasons:
            body.append("<p><b>TIMINGS NOT COMPARABLE</b>: "
                        f"{e('; '.join(cmp.timing_reasons))}</p>")
        body += [f"<p><b>warning</b>: {e(w)}</p>" for w in cmp.after_x2apic_lines()]
        body += html_table(table_head(cmp), table_rows(cmp))
        body += [f"<p>{e(line)}</p>" for line in legend(cmp)]
    if kut_tables:
        body += ["<h2>kvm-unit-tests view</h2>", f"<p>{e(KUT_CAPTION.format(unit=unit))}</p>"]
        for ktitle, head, rows in kut_tables:
            body += ([f"<h3>{e(ktitle)}</h3>"] if ktitle else []) + html_table(head, rows)
    for p in plots:
        body += [f"<h2>{e(p.title)}</h2>"] + figure_html(p)
    return html_page(title, body)


def html_page(title, body):
    """The page around body (its lines of HTML): report's and history's."""
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse;font-size:90%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}" + FIGURE_CSS)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{style}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def page_markdown(title, sets, cmp, plots, notes, kut_tables=(), unit="cycles"):
    lines = [f"# {title}", ""] + md_table(FACT_HEAD, facts_lines(sets))
    lines += [""] + [f"**{n}**\n" for n in notes]
    if cmp is not None:
        lines += ["## Comparison", "", format_markdown(cmp)]
    if kut_tables:
        lines += ["## kvm-unit-tests view", "", KUT_CAPTION.format(unit=unit) + ".", ""]
        for ktitle, head, rows in kut_tables:
            lines += ([f"### {ktitle}", ""] if ktitle else []) + md_table(head, rows) + [""]
    for p in plots:
        lines += [f"## {p.title}", ""] + figure_markdown(p)
    return "\n".join(lines) + "\n"
