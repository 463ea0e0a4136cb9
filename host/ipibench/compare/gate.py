# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh gate`: the candidate fails on any correctness failure, or on a
row significantly slower than the baseline by more than the threshold
(and with --exits, on more exits per iteration, or on a side whose exits
diverge from its host class's model); TAP and JUnit XML for CI."""
import datetime
import sys
import xml.etree.ElementTree as ET

from ipibench.compare.compare import emit, make_comparison
from ipibench.compare.correctness import correctness_failures
from ipibench.compare.formats import (FORMATS, WAKE_CHANGED, fmt_change, fmt_exits, fmt_num,
                                      fmt_p, model_version, plain_p, wake_cause)
from ipibench.compare.model import (exit_rises, EXITS_MARGIN, failed_rises, ntargets_of,
                                    rise_text)
from ipibench.exit_codes import (EX_CORRECTNESS, EX_INCOMPARABLE, EX_MODEL_DIVERGES,
                                 EX_REGRESSION, EX_SAVE, EX_USAGE, ToolError)
from ipibench.results.saved import AFTER_X2APIC_MARK
from ipibench.write import write_outputs


def parse_threshold(text):
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise ToolError(EX_USAGE, f"--threshold takes a percentage like 5%, not {text!r}")
    if v < 0:
        raise ToolError(EX_USAGE, "--threshold must not be negative")
    return v


class Verdict:
    """One gate check: a TAP line and a JUnit test case."""

    def __init__(self, group, name, ok, message, detail=""):
        self.group, self.name, self.ok = group, name, ok
        self.message, self.detail = message, detail


def exits_verdicts(cmp):
    """gate --exits: one verdict a row. An exit reason that rose by half an
    exit a target an iteration, or by more than model.EXITS_MARGIN beyond
    chance (model.exit_rises, failed_rises), fails. A
    row that one side does not have at all (a benchmark that ran on one side
    only) is listed and judged by nothing. A row both sides ran, traced on
    one side only, is not comparable, as is a side whose trace lost events
    or was cut short: the rows a regression touched are the likeliest to be
    missing (an exit storm overflows the ring buffer). Not comparable is exit
    30, unless a comparable row has more exits (20); so is a gate where no
    row has exit data on both sides."""
    out = []
    for side, who in ((cmp.sa, "baseline"), (cmp.sb, "candidate")):
        for boot in side.boots:
            ex = boot.run.get("exits") if isinstance(getattr(boot, "run", None), dict) else None
            gaps = [f"{ex[k]} events lost" if k == "lost" else "cut short"
                    for k in ("lost", "cut") if isinstance(ex, dict) and ex.get(k)]
            if gaps:
                out.append(Verdict("exits", f"{who} trace", False,
                                   f"{EXITS_INCOMPARABLE}: the {who}'s trace {' and '.join(gaps)} "
                                   f"({boot.path}): rows may lack exits it did not record"))
    for r in cmp.rows:
        if r.a_exits is None and r.b_exits is None:
            continue
        if r.a_exits is None or r.b_exits is None:
            only = "baseline" if r.b_exits is None else "candidate"
            both = r.key in cmp.sa.statuses and r.key in cmp.sb.statuses
            out.append(Verdict("exits", r.name, not both,
                               f"{EXITS_INCOMPARABLE}: ran on both sides, exit data in the "
                               f"{only} only" if both else
                               f"{ONE_SIDE_EXITS}: exit data in the {only} only, the row in the "
                               f"{only} only"))
            continue
        tests = exit_rises(cmp.sa.exit_labels.get(r.key, []), cmp.sb.exit_labels.get(r.key, []),
                           ntargets_of(r.key))
        worse, moved = failed_rises(tests), [t for t in tests if t["moved"]]
        msg = f"exits per iteration {fmt_exits(r.a_exits)} -> {fmt_exits(r.b_exits)}"
        if worse:
            totals = ", ".join(f"{side} {a:.2f} -> {b:.2f}" for side, a, b in
                               zip(("sender", "targets"), r.a_exits, r.b_exits)
                               if any(x["side"] == side for x in worse))
            msg = (f"more exits per iteration than the baseline ({totals}): " + "; ".join(
                f"{rise_text(x)} ({'a step' if x['step'] else 'p ' + plain_p(x['p'])})"
                for x in worse))
        elif moved:
            msg += (": " + "; ".join(f"{rise_text(x)} (p {plain_p(x['p'])})" for x in moved)
                    + f": a rise the count test cannot tell from the host's load, not "
                    f"{EXITS_MARGIN} a target an iteration beyond chance (not judged)")
        out.append(Verdict("exits", r.name, not worse, msg))
    judged = [v for v in out if not v.message.startswith((ONE_SIDE_EXITS, EXITS_INCOMPARABLE))]
    if not judged:
        why = ("no row has exit data on both sides (run.sh --exits on both)" if out else
               "neither side has exits per iteration (run.sh --exits)")
        out.append(Verdict("exits", "exit data", False, f"{EXITS_INCOMPARABLE}: {why}"))
    return out


# gate --exits: a row on one side only (listed), and what cannot be judged.
ONE_SIDE_EXITS = "not judged"
EXITS_INCOMPARABLE = "not comparable"


def model_verdicts(cmp):
    """gate --exits: one verdict a side with exits, failed where its records
    diverge from its host class's predictions (host-model.conf). Counts
    against KVM's code, never timing: load cannot move it beyond the
    tolerance, nor can the host's kind (an unknown class has no rows)."""
    out = []
    for tag, who in (("a", "baseline"), ("b", "candidate")):
        m = cmp.model[tag]
        if m is None:
            continue
        classes = "|".join(m["classes"])
        if m["diverging"]:
            out += [Verdict("model", f"{who} {d['row']}", False,
                            f"{who} diverges from its host class {d['class']}: {d['what']} "
                            f"({d['boots']} of {m['boots']} boots)") for d in m["diverging"]]
        else:
            out.append(Verdict("model", f"{who} host class", True,
                               f"{classes}: {m['matched']} records as predicted, "
                               f"{m['unmodelled']} not modelled"))
    return out


def gate_verdicts(cmp, cand_boots, threshold):
    out = []
    for boot in cand_boots:
        bad = correctness_failures(boot)
        out.append(Verdict("correctness", boot.path, not bad,
                           "; ".join(bad) if bad else "correct run", "\n".join(bad)))
    if cmp.reasons:
        out.append(Verdict("environment", "comparable", False,
                           "not comparable: " + "; ".join(cmp.reasons)))
    if cmp.timing_reasons:
        out.append(Verdict("environment", "timings comparable", False,
                           "timings not comparable: " + "; ".join(cmp.timing_reasons)))
    for r in cmp.after_x2apic:
        sides = " and ".join({"A": "baseline", "B": "candidate"}[t] for t in r.after_x2apic)
        out.append(Verdict("environment", r.name, False,
                           f"not comparable: {AFTER_X2APIC_MARK} in the {sides} (measured "
                           "after a vCPU had been in x2APIC mode)"))
    for r in cmp.compared:
        worse = r.significant and r.change > threshold and not cmp.reasons \
            and not cmp.timing_reasons
        msg = (f"{fmt_change(r)} ({fmt_num(r.a)} -> {fmt_num(r.b)} {cmp.unit}, "
               f"p {fmt_p(r)}, {r.method}, {len(r.a_vals)}/{len(r.b_vals)} boots)")
        if worse:
            msg = f"slower than the baseline by {r.change:.1f}% > {threshold:g}%: " + msg
        out.append(Verdict("timing", r.name, not worse, msg))
    return out


def write_tap(verdicts):
    lines = [f"1..{len(verdicts)}"]
    for i, v in enumerate(verdicts, 1):
        lines.append(f"{'ok' if v.ok else 'not ok'} {i} - {v.group}: {v.name}: {v.message}")
        for d in (v.detail.splitlines() if not v.ok else []):
            lines.append(f"#   {d}")
    return "\n".join(lines) + "\n"


def write_junit(verdicts, name):
    fails = sum(not v.ok for v in verdicts)
    suites = ET.Element("testsuites", name=name, tests=str(len(verdicts)), failures=str(fails))
    suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(verdicts)),
                          failures=str(fails), errors="0", skipped="0",
                          timestamp=datetime.datetime.now(datetime.timezone.utc)
                          .strftime("%Y-%m-%dT%H:%M:%S"))
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"ipibench.{v.group}", name=v.name)
        if v.ok:
            ET.SubElement(case, "system-out").text = v.message
        else:
            fail = ET.SubElement(case, "failure", message=v.message, type=v.group)
            fail.text = v.detail or v.message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def cmd_gate(a):
    threshold = parse_threshold(a.threshold)
    cmp = make_comparison(a.baseline, a.candidate, a.alpha, a.unit)
    verdicts = gate_verdicts(cmp, cmp.sb.boots, threshold)
    if a.exits:
        verdicts += exits_verdicts(cmp) + model_verdicts(cmp)
    err = cmp.overlap_error()
    if err:
        verdicts.append(Verdict("timing", "overlap", False, err.message))
    files = []
    for out, text in ((a.tap, lambda: write_tap(verdicts)),
                      (a.junit, lambda: write_junit(verdicts, "ipibench gate"))):
        if out == "-":
            emit(text(), out)
        elif out:
            files.append((out, text()))
    # A file that cannot be written is said on its line, and is 28 only
    # where the verdict is 0: it never hides a regression.
    unwritten = write_outputs(files, "gate")
    table = a.tap != "-" and a.junit != "-"
    if table:
        sys.stdout.write(FORMATS[a.format].write(cmp))
    # The verdict goes to stderr, as every tool's; a Markdown table (what a
    # CI appends to its job summary) also ends with it, so the summary holds
    # the verdict and not just the table.
    summary = table and a.format == "markdown"
    try:
        code, line = judge_gate(a, cmp, verdicts, threshold, err)
    except ToolError as e:
        if summary:
            print(f"\n**gate: exit {e.code}: {e.message}**", flush=True)
        raise
    if summary:
        print(f"\n**{line}**", flush=True)
    return code or (EX_SAVE if unwritten else 0)


def judge_gate(a, cmp, verdicts, threshold, err):
    """gate's verdict, its reasons on stderr: (exit code, last line), or a
    ToolError for a comparison that cannot be judged."""
    for w in cmp.ignored:
        print(f"gate: ignored for comparability: {w}", file=sys.stderr)
    bad_base = [p for b in cmp.sa.boots for p in correctness_failures(b)]
    if bad_base:
        print(f"gate: note: the baseline itself is not correct: {bad_base[0]}", file=sys.stderr)
    # Never a verdict (it would move with the host's kind): said beside it.
    for r in cmp.rows:
        if r.wake_changed:
            print(f"gate: note: {r.name}: wake {r.a_wake.text} -> {r.b_wake.text}: "
                  f"{WAKE_CHANGED}; {wake_cause(cmp)}", file=sys.stderr)
    wrong = [v for v in verdicts if v.group == "correctness" and not v.ok]
    slow = [v for v in verdicts if v.group == "timing" and not v.ok and v.name != "overlap"]
    for v in wrong:
        print(f"gate: FAIL: correctness: {v.name}: {v.message}", file=sys.stderr)
    if wrong:
        return EX_CORRECTNESS, f"gate: FAIL: {len(wrong)} candidate boots not correct"
    if err:
        raise err
    if cmp.reasons:
        raise ToolError(EX_INCOMPARABLE, "not comparable: " + "; ".join(cmp.reasons))
    if cmp.after_x2apic:
        for v in verdicts:
            if v.group == "environment" and not v.ok:
                print(f"gate: FAIL: {v.name}: {v.message}", file=sys.stderr)
        raise ToolError(EX_INCOMPARABLE, f"not comparable: {len(cmp.after_x2apic)} rows measured xAPIC emulation, not AVIC (AVIC without x2AVIC, after x2APIC mode; compare's after-x2apic warning says why)")
    exits_bad = [v for v in verdicts if v.group == "exits" and not v.ok]
    for v in slow + exits_bad:
        print(f"gate: FAIL: {v.name}: {v.message}", file=sys.stderr)
    for v in verdicts:
        if v.group == "exits" and v.message.startswith(ONE_SIDE_EXITS):
            print(f"gate: listed: {v.name}: {v.message}", file=sys.stderr)
        elif v.group == "exits" and v.ok and v.message.endswith("(not judged)"):
            print(f"gate: note: {v.name}: {v.message}", file=sys.stderr)
    more = [v for v in exits_bad if not v.message.startswith(EXITS_INCOMPARABLE)]
    tally = gate_tally(cmp, verdicts, a.exits, slow, exits_bad)
    # The model's verdicts are said whatever comes first: a candidate that
    # diverges is 36 after every regression (20); a baseline that diverges
    # is not what its class says, so nothing is compared against it (30).
    diverge = [v for v in verdicts if v.group == "model" and not v.ok]
    for v in diverge:
        print(f"gate: FAIL: model: {v.message}", file=sys.stderr)
    base_off = [v for v in diverge if v.name.startswith("baseline")]
    if more or (slow and not cmp.timing_reasons and not exits_bad):
        return EX_REGRESSION, say(f"gate: regression: {tally}")
    if base_off:
        raise ToolError(EX_INCOMPARABLE, f"not comparable: the baseline diverges from its host "
                        f"class's model ({base_off[0].message}): its host is not the class it "
                        "was taken for")
    if diverge:
        return EX_MODEL_DIVERGES, say(f"gate: FAIL: {len(diverge)} rows diverge from their "
                                      f"host class's model ({model_version(cmp)}): {tally}")
    if cmp.timing_reasons:
        raise ToolError(EX_INCOMPARABLE, "timings not comparable: "
                        + "; ".join(cmp.timing_reasons))
    if exits_bad:
        raise ToolError(EX_INCOMPARABLE, "exits not comparable: " + exits_bad[0].message)
    return 0, say(f"gate: pass: {tally}; none significantly slower than the baseline by more than {threshold:g}%{', and no more exits per iteration' if a.exits else ''}")


def say(line):
    print(line, file=sys.stderr)
    return line


def gate_tally(cmp, verdicts, exits, slow, exits_bad):
    """gate's last line: what it compared, and whether timing could fail at all."""
    exit_rows = [v for v in verdicts if v.group == "exits"
                 and not v.message.startswith((ONE_SIDE_EXITS, EXITS_INCOMPARABLE))]
    listed = sum(v.group == "exits" and v.message.startswith(ONE_SIDE_EXITS) for v in verdicts)
    more = [v for v in exits_bad if not v.message.startswith(EXITS_INCOMPARABLE)]
    text = f"{len(cmp.compared)} timing rows compared ({len(slow)} slower)"
    if exits:
        text += f", {len(exit_rows)} exit rows compared ({len(more)} with more exits)"
        if listed:
            text += f", {listed} traced on one side only (listed, not judged)"
    blind = {r.verdict for r in cmp.compared}
    if cmp.compared and blind <= {"too few boots", "too few distinct values"}:
        text += (f"; every timing row was {' or '.join(repr(v) for v in sorted(blind))}: "
                 "the timing gate could not fail (more boots a side)")
    return text
