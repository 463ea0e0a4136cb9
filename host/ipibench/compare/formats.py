# SPDX-License-Identifier: GPL-2.0-only
"""A comparison as text, Markdown and JSON."""
import collections
import json

from ipibench.compare.model import label_changes, ROW_FIELDS
from ipibench.results.saved import AFTER_X2APIC_MARK


def fmt_num(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) and v != int(v) else str(int(v))


def plain_p(p):
    """A p-value without scientific notation: '< 0.001' below it."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def fmt_change(row):
    return "-" if row.change is None else f"{row.change:+.1f}%"


def fmt_p(row):
    if row.p is None:
        return "-"
    return "<0.001" if row.p < 0.001 else f"{row.p:.3f}"


def fmt_ci(row):
    return "-" if row.ci is None else f"[{row.ci[0]:+.1f}%, {row.ci[1]:+.1f}%]"


TABLE_HEAD = ("benchmark", "metric", "variant", "backend", "state", "n", "A p50", "B p50",
              "change", "p", "95% CI", "boots", "test", "verdict")
EXITS_HEAD = ("A exits", "B exits")
APICV_HEAD = ("APICv/AVIC",)


def fmt_exits(e):
    """Judged exits per iteration, sender/targets, and for halted targets the
    share of their wakes that came after a block: 's1.00 t1.00 b0.91'."""
    if e is None:
        return "-"
    blocked = f" b{e[2]:.2f}" if len(e) > 2 and e[2] is not None else ""
    return f"s{e[0]:.2f} t{e[1]:.2f}{blocked}"


def fmt_boots(row):
    """The boots cell, A/B: how many boots gave the row a figure; '-' for a
    side that has no such row at all (only in the other), so that '2/-'
    and '2/0' (B ran it without a figure: SKIP, ERROR, FAILURE) differ."""
    a = "-" if row.verdict == "only in B" else str(len(row.a_vals))
    b = "-" if row.verdict == "only in A" else str(len(row.b_vals))
    return f"{a}/{b}"


BOOTS_LEGEND = ("boots: A/B, how many boots gave the row a figure; 0: the side has the row "
                "but no figure (SKIP, ERROR or FAILURE: see the verdict), -: the side has "
                "no such row")
APICV_LEGEND = ("APICv/AVIC: A/B, what each side's KVM module enabled (kvm_intel.enable_apicv, "
                "kvm_amd.avic): apicv, avic or off, 'inhibited' when run.sh --exits traced an "
                "inhibit for the VM, - not known (TCG, or not read)")


def legend(cmp):
    return [BOOTS_LEGEND] + ([APICV_LEGEND] if has_apicv(cmp) else [])


def has_exits(cmp):
    return any(r.a_exits or r.b_exits for r in cmp.rows)


def is_empty(row, cmp):
    """Neither side gave the row a figure or an exit count, and every record
    of it on either side SKIPped, as every Hyper-V row of a TCG run does.
    Such rows are counted under the table, not listed (compare --all lists
    them); a row with an ERROR or a FAILURE is always listed."""
    statuses = cmp.sa.statuses.get(row.key, set()) | cmp.sb.statuses.get(row.key, set())
    return not row.a_vals and not row.b_vals and not row.a_exits and not row.b_exits \
        and statuses <= {"SKIP"}


def listed_rows(cmp, every=False):
    return list(cmp.rows) if every else [r for r in cmp.rows if not is_empty(r, cmp)]


def unlisted_line(cmp, every=False):
    """The one line that stands for the rows the table leaves out, with the
    statuses that left them without a figure: '107 rows without a figure on
    either side are not listed (A: SKIP; B: SKIP)'."""
    empty = [] if every else [r for r in cmp.rows if is_empty(r, cmp)]
    if not empty:
        return None
    statuses = []
    for tag, side in (("A", cmp.sa), ("B", cmp.sb)):
        seen = sorted({s for r in empty for s in side.statuses.get(r.key, ())})
        statuses.append(f"{tag}: {','.join(seen) if seen else 'no such rows'}")
    return (f"{len(empty)} rows without a figure on either side are not listed "
            f"({'; '.join(statuses)})")


VERDICT_ORDER = ("slower", "faster", "inconclusive", "same median, distributions differ",
                 "no significant change", "no change", "too few boots",
                 "too few distinct values", "not comparable", "no data", "only in A",
                 "only in B")


def compare_verdict(cmp, every=False):
    """compare's closing line: how many listed rows got each verdict, and the
    rows left out. A CI keys on it ('slower' beyond gate's threshold is
    what gate fails on)."""
    rows = listed_rows(cmp, every)
    counts = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    order = sorted(counts, key=lambda v: (VERDICT_ORDER.index(v)
                                          if v in VERDICT_ORDER else len(VERDICT_ORDER), v))
    text = f"compare: {len(rows)} rows: " + (
        ", ".join(f"{counts[v]} {v}" for v in order) if rows else "none")
    empty = 0 if every else sum(is_empty(r, cmp) for r in cmp.rows)
    if empty:
        text += f"; {empty} without a figure on either side, not listed (--all lists them)"
    if cmp.reasons:
        text += "; NOT COMPARABLE"
    elif cmp.timing_reasons:
        text += "; TIMINGS NOT COMPARABLE"
    return text


def table_rows(cmp, every=False):
    out = []
    for r in listed_rows(cmp, every):
        bench, metric, variant, backend, state, ntargets = r.key
        verdict = r.verdict
        if r.significant and r.emulated:
            verdict += f" ({', '.join(r.emulated)})"
        verdict += f" ({r.note})" if r.note else ""
        if r.after_x2apic:
            verdict += f" ({AFTER_X2APIC_MARK}: {', '.join(r.after_x2apic)})"
        if r.wake_changed:
            verdict += f" (wake {r.a_wake.cls} -> {r.b_wake.cls})"
        row = (bench, metric, variant, backend, state, str(ntargets), fmt_num(r.a),
               fmt_num(r.b), fmt_change(r), fmt_p(r), fmt_ci(r),
               fmt_boots(r), r.method, verdict)
        if has_apicv(cmp):
            row = row[:13] + (f"{cmp.apicv['a'] or '-'}/{cmp.apicv['b'] or '-'}",) + row[13:]
        if has_exits(cmp):
            row = row[:13] + (fmt_exits(r.a_exits), fmt_exits(r.b_exits)) + row[13:]
        out.append(row)
    return out


def has_apicv(cmp):
    """The APICv/AVIC column is shown when either side's state is known."""
    return bool(cmp.apicv["a"] or cmp.apicv["b"])


def table_head(cmp):
    head = TABLE_HEAD[:13] + (APICV_HEAD if has_apicv(cmp) else ()) + TABLE_HEAD[13:]
    if has_exits(cmp):
        return head[:13] + EXITS_HEAD + head[13:]
    return head


WAKE_CHANGED = ("the halted target's wake path differs, which alone moves its round trip, "
                "not the send path")


def wake_cause(cmp):
    """What can have changed a wake path between the two sides: the KVM
    parameters or host kernel they differ in (reported_differences), else
    nothing of the host's that was read."""
    host = [d.split(":", 1)[0] for d in cmp.reported
            if d.startswith(("kvm.", "kvm_amd.", "kvm_intel.", "host kernel:"))]
    if host:
        return "the sides' hosts differ in " + ", ".join(host)
    return ("the sides' KVM parameters and kernel are alike: the guest's own timing or the "
            "host's load (KVM's halt-poll window follows the halts it sees)")


def exit_change_lines(cmp, every=False):
    """For each listed row whose exits moved beyond the tolerance, the exit
    reasons that moved (model.label_changes), largest first."""
    lines = []
    for r in listed_rows(cmp, every):
        which = label_changes(cmp.sa.exit_labels.get(r.key, []),
                              cmp.sb.exit_labels.get(r.key, []))
        if which and r.a_exits and r.b_exits:
            lines.append(f"{r.name}: {'; '.join(which)}")
    if lines:
        lines.insert(0, "exit reasons that moved, A -> B (per iteration, median over boots; "
                        "gate --exits judges each: docs/nightly.md):")
    return lines


def wake_lines(cmp, every=False):
    """A halted target's wakes, as each side's host evidence says (KVM's
    trace, else its statistics), for every listed row that has some; a
    row whose classes differ says so, and what can have changed them."""
    lines = []
    for r in listed_rows(cmp, every):
        if not (r.a_wake or r.b_wake):
            continue
        line = (f"{r.name}: A {r.a_wake.text if r.a_wake else '-'}; "
                f"B {r.b_wake.text if r.b_wake else '-'}")
        if r.wake_changed:
            line += f": CHANGED, {WAKE_CHANGED}; {wake_cause(cmp)}"
        lines.append(line)
    if lines:
        lines.insert(0, "wake of the halted target (the host's evidence: KVM's trace, else its "
                        "statistics; poll, block, mixed, unknown):")
    return lines


def model_lines(cmp):
    """Each side's host class and its records judged against the class's
    predictions (host-model.conf), as model_of() found them: a side of an
    AVIC on/off comparison that does not behave as its class predicts is
    not measuring what its label says."""
    out = []
    for tag, m in (("A", cmp.model["a"]), ("B", cmp.model["b"])):
        if m is None:
            continue
        head = (f"host model: {tag} {'|'.join(m['classes'])}: {m['matched']} records as "
                f"predicted, {len(m['diverging'])} rows diverge, {m['unmodelled']} not modelled"
                f" ({m['boots']} boots)")
        out.append(head + ("" if m["diverging"] or not m["matched"] else ": matches the model"))
        out += [f"host model: {tag} diverges: {d['row']} ({d['class']}): {d['what']} "
                f"({d['boots']} of {m['boots']} boots)" for d in m["diverging"]]
    if out:
        out.append(f"host model: host/ipibench/kvmhost/host-model.conf {model_version(cmp)}")
    return out


def model_version(cmp):
    """The model file's version that judged the sides (host_model.model_hash)."""
    return next((m["model"] for m in (cmp.model["a"], cmp.model["b"]) if m and m.get("model")),
                "the model")


def warning_lines(cmp):
    """Each side's untrusted-figure warnings, one line per condition: 'A, B:
    id: text'. The guest and the host may both warn of one condition (each
    sees TCG: the guest by its CPUID vendor, the host by its -accel), and
    boots word one differently (rdtsc-exits quotes each boot's own cost):
    the id is the condition, said once with the first text seen."""
    seen = {}
    for tag, side in (("A", cmp.sa), ("B", cmp.sb)):
        for boot in side.boots:
            for wid, text in (boot.warnings() or {}).items():
                sides = seen.setdefault(wid.split(":", 1)[-1], (text, []))[1]
                if tag not in sides:
                    sides.append(tag)
    erratum = [f"{', '.join(cmp.erratum)}: avic-1235: AVIC on a family with erratum #1235 "
               "(AMD 17h before 6.17, Hygon 18h): a blocking target may miss its wake until its "
               "next interrupt (8de4a1c8164e), so the xapic single-halt rows time the erratum, "
               "not AVIC"] if cmp.erratum else []
    return [f"{', '.join(sides)}: {wid}: {text}"
            for wid, (text, sides) in seen.items()] + cmp.after_x2apic_lines() + erratum


def format_text(cmp, every=False, closing=None):
    """every: list the rows without a figure on either side too; closing: a
    last line (compare's verdict)."""
    head = table_head(cmp)
    rows = [head] + table_rows(cmp, every)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
    lines = [f"A: {cmp.sa.name} ({len(cmp.sa.boots)} boots)",
             f"B: {cmp.sb.name} ({len(cmp.sb.boots)} boots)",
             f"medians of per-boot p50 ({cmp.unit}); change = B against A; "
             f"Mann-Whitney U, alpha {cmp.alpha}"]
    lines += [f"warning: {w}" for w in warning_lines(cmp)]
    if cmp.reasons:
        lines.append("NOT COMPARABLE: " + "; ".join(cmp.reasons))
    if cmp.timing_reasons:
        lines.append("TIMINGS NOT COMPARABLE: " + "; ".join(cmp.timing_reasons))
    lines += [f"ignored for comparability: {w}" for w in cmp.ignored]
    for d in cmp.reported:
        lines.append("differs (not refused): " + d)
    lines += model_lines(cmp)
    if has_exits(cmp):
        lines.append("exits: per measured iteration, the send path's own (APIC, MSR, hypercall, "
                     "HLT; run.sh --exits), median over boots, s = sender, t = targets, "
                     "b = share of a halted target's wakes that came after a block")
    lines.append("")
    for r in rows:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    unlisted = unlisted_line(cmp, every)
    lines += [unlisted] if unlisted else []
    for extra in (exit_change_lines(cmp, every), wake_lines(cmp, every)):
        lines += [""] + extra[:1] + [f"  {w}" for w in extra[1:]] if extra else []
    lines += [""] + legend(cmp)
    lines += ["", closing] if closing else []
    return "\n".join(lines) + "\n"


def format_markdown(cmp, every=False, closing=None):
    lines = [f"**A**: `{cmp.sa.name}` ({len(cmp.sa.boots)} boots), "
             f"**B**: `{cmp.sb.name}` ({len(cmp.sb.boots)} boots); medians of per-boot p50 "
             f"({cmp.unit}), Mann-Whitney U at alpha {cmp.alpha}.", ""]
    lines += [f"- warning: {w}" for w in warning_lines(cmp)]
    if cmp.reasons:
        lines += ["**NOT COMPARABLE**: " + "; ".join(cmp.reasons), ""]
    if cmp.timing_reasons:
        lines += ["**TIMINGS NOT COMPARABLE**: " + "; ".join(cmp.timing_reasons), ""]
    lines += [f"- ignored for comparability: `{w}`" for w in cmp.ignored]
    lines += [f"- {m}" for m in model_lines(cmp)]
    lines += [""] if lines[-1] else []
    head = table_head(cmp)
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in table_rows(cmp, every):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |")
    unlisted = unlisted_line(cmp, every)
    lines += ["", unlisted] if unlisted else []
    for extra in (exit_change_lines(cmp, every), wake_lines(cmp, every)):
        lines += ["", extra[0], ""] + [f"- {w}" for w in extra[1:]] if extra else []
    lines += [""] + legend(cmp)
    lines += ["", f"**{closing}**"] if closing else []
    return "\n".join(lines) + "\n"


def wake_json(w):
    return {"class": w.cls, "text": w.text, "events": w.events} if w else None


def format_json(cmp, every=True, closing=None):
    """Every row, whatever every says: a program filters for itself; closing
    is kept as "verdict"."""
    rows = [{"row": r.name, **dict(zip(ROW_FIELDS, r.key)), "a": r.a, "b": r.b,
             "a_boots": r.a_vals, "b_boots": r.b_vals, "change_pct": r.change, "p": r.p,
             "ci_pct": list(r.ci) if r.ci else None, "test": r.method,
             "p_min": r.p_min, "samples_p": r.samples_p,
             "verdict": r.verdict, "note": r.note, "after_x2apic": r.after_x2apic,
             "emulated": r.emulated,
             "a_exits": list(r.a_exits) if r.a_exits else None,
             "b_exits": list(r.b_exits) if r.b_exits else None,
             "a_wake": wake_json(r.a_wake), "b_wake": wake_json(r.b_wake),
             "exit_changes": label_changes(cmp.sa.exit_labels.get(r.key, []),
                                           cmp.sb.exit_labels.get(r.key, [])),
             "wake_changed": r.wake_changed} for r in cmp.rows]
    return json.dumps({"a": cmp.sa.name, "b": cmp.sb.name, "unit": cmp.unit,
                       "alpha": cmp.alpha, "not_comparable": cmp.reasons,
                       "timings_not_comparable": cmp.timing_reasons,
                       "differs": cmp.reported, "ignored": cmp.ignored,
                       "after_x2apic": cmp.after_x2apic_lines(),
                       "apicv": cmp.apicv, "model": cmp.model,
                       "verdict": closing,
                       "rows": rows},
                      indent=1) + "\n"


# The output formats of compare and gate, declared once: what --format
# offers (host/ipibench/readers.py), what writes it, whether gate writes it
# (gate's table goes beside its verdict and TAP or JUnit; a program that
# wants every row reads compare's JSON), and whether it lists every row
# (a program's format: the verdict line then counts them all).
Format = collections.namedtuple("Format", "write gate every")
FORMATS = {"text": Format(format_text, True, False),
           "markdown": Format(format_markdown, True, False),
           "json": Format(format_json, False, True)}
GATE_FORMATS = tuple(name for name, f in FORMATS.items() if f.gate)
