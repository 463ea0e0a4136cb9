# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh model`: the host-class model as a table a maintainer can paste
into a mailing-list thread (Markdown, or --json): a saved --exits run's
class and each modelled record, predicted against measured; or, with
--class, what a class predicts and the KVM code it cites
(kvmhost/host_class.py, kvmhost/host_model.py, docs/exits-and-apicv.md)."""
import json
import os
import sys

from ipibench.command_line import Parser
from ipibench.exit_codes import EX_MODEL_DIVERGES, EX_USAGE, ToolError
from ipibench.kvmhost import host_class, host_model
from ipibench.results.files import find_results, load_results_file

DESCRIPTION = ("A saved --exits run against its host class's predictions "
               "(host/ipibench/kvmhost/host-model.conf), or a class's predictions alone")
EPILOG = ("exit: 0 every modelled record as predicted (or --class), 36 a record diverges, "
          "2 usage, 22-24 a results file missing, malformed or of another version")


def add_model(sub):
    """`./run.sh model`, added to run.sh's subcommands: its parser."""
    p = sub.add_parser("model", prog="./run.sh model", description=DESCRIPTION, epilog=EPILOG,
                       help="a saved --exits run against its host class's predictions")
    add_arguments(p)
    return p


def add_arguments(p):
    p.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    p.add_argument("--class", dest="cls", metavar="NAME", choices=sorted(host_class.CLASSES),
                   help="print what this class predicts (no results needed)")
    p.add_argument("runs", nargs="*", metavar="RUN",
                   help="a boot folder (its results.json) or the file itself, saved with --exits")


def class_table(model, cls):
    """(Markdown lines, JSON) of what a class predicts."""
    rows, real = host_model.rows_of(model, cls)
    cite = model["cites"].get(real, "")
    md = [f"### host class {cls}" + (f" (as {real})" if real != cls else ""), "",
          host_class.CLASSES[cls], "",
          "| backend | bench | metric | variant | sender | of them doorbell misses | targets "
          "| targets' EOI exit | wake | why |", "|---|---|---|---|---|---|---|---|---|---|"]
    for key, w in sorted(rows.items()):
        md.append(f"| {' | '.join(key)} | {w['sender']:.0f} | {w['misses']:.0f} | "
                  f"{w['targets']:.0f} | {'yes' if w['eoi'] else 'no'} | {w['wake']} | "
                  f"{w['why']} |")
    md += ["", f"Why: {cite}" if cite else "Why: (no citation)"]
    js = {"class": cls, "as": real, "title": host_class.CLASSES[cls], "cite": cite,
          "rows": [dict(zip(host_model.KEY, k), **w) for k, w in sorted(rows.items())]}
    return md, js


def run_table(model, path):
    """(Markdown lines, JSON, diverged) of one saved run."""
    boot = load_results_file(path)
    judged = host_model.judge_saved(boot, model)
    if judged is None:
        raise ToolError(EX_USAGE, f"{path}: saved without --exits: no exits to judge")
    cls, why, kernel, res = judged
    accel = boot.host.get("accel")
    cpu_pm = host_model.run_facts(accel, None, boot.host.get("qemu_cmdline"))[1]
    rows, real = host_model.rows_of(model, cls)
    md = [f"### {os.path.dirname(path) or path}", "",
          f"host class {cls} ({why}), accel {accel}"
          + (f", kernel {kernel}" if kernel else ""), "",
          "| record | judged as | sender (doorbell misses) | targets | targets' EOI | verdict |",
          "|---|---|---|---|---|---|"]
    for r in boot.records:
        e = r.get("exits")
        if not isinstance(e, dict) or "sender" not in e:
            continue
        got = host_model.judge_record(model, cls, r, kernel, cpu_pm)
        if got is None:
            continue
        judged_as, problems, want, _ = got
        row = " ".join(host_model.row_key(r))
        verdict = "diverges: " + "; ".join(problems) if problems else "as predicted"
        sender, miss, targets, eoi = host_model.measured(r, want)
        md.append(f"| {row} | {judged_as} | {sender:.2f} ({miss:.2f}; predicted "
                  f"{want['sender']:.0f} ({want['misses']:.0f})) | {targets:.2f} (predicted "
                  f"{want['targets']:.0f}) | {eoi:.2f} (predicted "
                  f"{'1' if want['eoi'] else '0'}) | {verdict} |")
    md += [""] + host_model.lines(res)
    if real in model["cites"]:
        md += ["", f"Why ({real}): {model['cites'][real]}"]
    return md, dict(res, run=path, why=why), bool(res["diverging"])


def main(argv):
    """`./run.sh model ARGS` -> its exit status (EPILOG)."""
    p = Parser(prog="./run.sh model", description=DESCRIPTION, epilog=EPILOG)
    add_arguments(p)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if not a.cls and not a.runs:
        p.print_help(sys.stderr)
        return EX_USAGE
    model = host_model.load()
    out_md, out_js, diverged = [], [], False
    try:
        if a.cls:
            md, js = class_table(model, a.cls)
            out_md += md
            out_js.append(js)
        for run in a.runs:
            for path in find_results(run):
                md, js, bad = run_table(model, path)
                out_md += ([""] if out_md else []) + md
                out_js.append(js)
                diverged |= bad
    except ToolError as e:
        print(f"model: {e.message}", file=sys.stderr)
        return e.code
    if a.json:
        json.dump(out_js, sys.stdout, indent=1)
        print()
    else:
        print("\n".join(out_md))
    return EX_MODEL_DIVERGES if diverged else 0

