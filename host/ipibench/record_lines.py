# SPDX-License-Identifier: GPL-2.0-only
"""The one reader of the guest's record lines (docs/results.md), which every
consumer uses: saving a run and checking a log (results/records.py), the
live console (boot/console.py), the trace's reader (kvmhost/trace.py), the
lane's and the boot tests' judges and the harness benchmarks.

A record line starts with '{"record":' and holds one JSON object; anything
else is the human part of the console. JSON is decoded by Python's json
module, nothing by hand."""
import json

PREFIX = '{"record":'


def decode(line):
    """One console line -> (record, problem): (None, None) for a line that is
    not a record; (None, why) for a record line that holds no JSON object."""
    if not line.startswith(PREFIX):
        return None, None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        return None, f"not JSON: {e.msg} at column {e.colno}"
    except (ValueError, RecursionError) as e:
        return None, f"not JSON this reader accepts: {json_limit(e)}"
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    return rec, None


def record_lines(lines, kind=None):
    """(line number, record, problem) of each record line of lines (a list, or
    a console's text), as decode gives them. With kind, only that kind's
    lines are decoded (the guest prints "record" first, without blanks), so a
    long console costs a prefix test a line."""
    if isinstance(lines, str):
        lines = lines.replace("\r", "").splitlines()
    prefix = PREFIX if kind is None else f'{PREFIX}"{kind}"'
    for n, line in enumerate(lines, 1):
        if line.startswith(prefix):
            rec, problem = decode(line)
            yield n, rec, problem


def json_limit(e):
    """Why json.loads refused text that is JSON by its grammar: an integer of more
    digits than int() converts (sys.get_int_max_str_digits) raises a plain
    ValueError, nesting deeper than the recursion limit a RecursionError."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e).split(":")[0].lower()
