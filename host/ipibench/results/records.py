# SPDX-License-Identifier: GPL-2.0-only
"""The guest's records: the one reader of a console log's record lines
(docs/results.md) and the check of one record against schema 1
(results/validate.py holds the per-kind checkers)."""
import json

from ipibench.results import validate


RECORD_SCHEMA = validate.SCHEMA


# --- reading the guest's console


def parse_console(text):
    """Record lines of a console log -> (records, problems).

    A record line starts with '{"record":' (docs/results.md); anything else is
    the human part of the console. Problems name the line."""
    records, problems = [], []
    for n, line in enumerate(text.replace("\r", "").splitlines(), 1):
        if not line.startswith('{"record":'):
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"console line {n}: not JSON: {e.msg} at column {e.colno}")
            continue
        except (ValueError, RecursionError) as e:
            problems.append(f"console line {n}: not JSON this reader accepts: {json_limit(e)}")
            continue
        if not isinstance(rec, dict):
            problems.append(f"console line {n}: not a JSON object")
            continue
        bad = record_problems(rec)
        problems += [f"console line {n}: {p}" for p in bad]
        # Kept: valid records, and records of another schema (readers then
        # refuse the file by name, exit 24). Dropped: broken schema-1 records,
        # which stay in the problems (and the console log).
        if not bad or rec.get("schema") != RECORD_SCHEMA:
            records.append(rec)
    return records, problems


def json_limit(e):
    """Why json.loads refused text that is JSON by its grammar: an integer of more
    digits than int() converts (sys.get_int_max_str_digits) raises a plain
    ValueError, nesting deeper than the recursion limit a RecursionError."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e).split(":")[0].lower()


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
