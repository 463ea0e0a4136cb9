# SPDX-License-Identifier: GPL-2.0-only
"""The guest's records checked against docs/results.md: each record
against schema 1 with the checkers of results/validate.py, a console's
records with their problems (parse_console), and a whole log for
`./run.sh validate` (check_log). The lines are read by record_lines.py."""
import argparse

from ipibench.command_line import Parser, read_options
from ipibench.record_lines import record_lines
from ipibench.results import validate

RECORD_SCHEMA = SCHEMA = validate.SCHEMA

VALIDATE_DESCRIPTION = """\
Check the records of an ipibench console log against docs/results.md.
Exit status: 0 every record is valid, 1 a record is invalid (each problem
printed as LOG:LINE: what), 2 usage or unreadable file."""


def parse_console(text):
    """Record lines of a console log -> (records, problems), each problem
    naming its line."""
    records, problems = [], []
    for n, rec, problem in record_lines(text):
        if problem:
            problems.append(f"console line {n}: {problem}")
            continue
        bad = record_problems(rec)
        problems += [f"console line {n}: {p}" for p in bad]
        # Kept: valid records, and records of another schema (readers then
        # refuse the file by name, exit 24). Dropped: broken schema-1 records,
        # which stay in the problems (and the console log).
        if not bad or rec.get("schema") != RECORD_SCHEMA:
            records.append(rec)
    return records, problems


def record_problems(rec):
    """What is wrong with one record under schema 1 ([] when nothing)."""
    if rec.get("schema") != RECORD_SCHEMA:
        return [f"schema {rec.get('schema')!r}, these tools know {RECORD_SCHEMA}"]
    # A list or object as the kind is unhashable: no checker, not a TypeError
    kind = rec.get("record")
    checker = validate.CHECKERS.get(kind) if isinstance(kind, str) else None
    if checker is None:
        return [f"unknown record kind {rec.get('record')!r}"]
    problems = []
    checker(rec, problems)
    return problems


def check_log(path, require):
    """`./run.sh validate`: print each problem of a console log's records as
    LOG:LINE: what; the number of problems, or None if it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().replace("\r", "").splitlines()
    except OSError as e:
        print(f"{path}: cannot read: {e.strerror}")
        return None
    bad, kinds, results, phases, measured = 0, {}, 0, [], []
    for n, rec, problem in record_lines(lines):
        problems = [problem] if problem else []
        if rec is not None:
            kind = rec.get("record")
            problems += record_problems(rec)
            if isinstance(kind, str) and kind in validate.CHECKERS and \
                    rec.get("schema") == SCHEMA:
                kinds[kind] = kinds.get(kind, 0) + 1
                results += kind == "result"
                if kind == "phase" and not problems:
                    phases.append(rec)
                if kind in ("result", "norov") and not problems:
                    measured.append((n, rec))
        for p in problems:
            print(f"{path}:{n}: {p}")
        bad += bool(problems)
    for kind in require:
        if not kinds.get(kind):
            print(f"{path}: no valid '{kind}' record")
            bad += 1
    end = [rec for _, rec, _ in record_lines(lines, "end") if rec] if not bad else []
    if end and end[-1].get("results") != results:
        print(f"{path}: end record counts {end[-1].get('results')} results, log has {results}")
        bad += 1
    for p in (validate.check_phases(phases, bool(end)) + validate.check_x2apic_order(measured)) if not bad else []:
        print(f"{path}: {p}")
        bad += 1
    return bad




def add_validate(sub):
    """`./run.sh validate`, added to run.sh's subcommands: its parser."""
    p = sub.add_parser("validate", prog="./run.sh validate", description=VALIDATE_DESCRIPTION,
                       help="check a console log's records against docs/results.md")
    add_arguments(p)
    return p


def add_arguments(p):
    p.add_argument("--require", metavar="KIND[,KIND]", default="",
                   help="also fail unless each of these record kinds is there, valid")
    p.add_argument("logs", nargs="*", metavar="LOG", help="a console log (console.log)")
    p.lenient = frozenset({"--require"})


def main(argv):
    """`./run.sh validate ARGS` -> its exit status: 0 every record is valid,
    1 a record is invalid, 2 usage or an unreadable log. Read as it always
    was: every argument but --require and its value is a log, whatever its
    name; no log prints the help and is exit 2."""
    p = Parser(prog="./run.sh validate", prefix="validate: ", description=VALIDATE_DESCRIPTION)
    add_arguments(p)
    a = argparse.Namespace(require="")
    asked_help, _, logs = read_options(p, argv, a, stop_at_dashes=False, unknown_ok=True)
    if asked_help or not logs:
        print(p.format_help(), end="")
        return 0 if asked_help else 2
    require = [k for k in a.require.split(",") if k]
    worst = 0
    for path in logs:
        r = check_log(path, require)
        worst = max(worst, 2 if r is None else (1 if r else 0))
    return worst
