# SPDX-License-Identifier: GPL-2.0-only
"""Results files: writing them so that one only ever appears whole and never
replaces another, and reading them back (a results.json, a run directory, a
folder of runs) into saved boots, refusing what is malformed with the exit
code docs/exit-codes.md gives it.

JSON is read and written with Python's json module; nothing here parses JSON
by hand."""
import json
import os
import re

from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_SCHEMA, ToolError
from ipibench.record_lines import json_limit
from ipibench.results.records import parse_console, record_problems, RECORD_SCHEMA
from ipibench.results.saved import SavedBoot


RESULTS_FORMAT = "ipibench-results"
RESULTS_VERSION = 1


def dump_results(doc):
    """results.json text: readable, one record a line so that diffs stay short."""
    head = {k: v for k, v in doc.items() if k != "records"}
    text = json.dumps(head, indent=1, sort_keys=False)
    recs = ",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in doc["records"])
    return text[:-2] + ',\n "records": [\n' + recs + "\n ]\n}\n"


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ToolError(EX_MISSING, f"{path}: no such results file")
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(EX_MISSING, f"{path}: cannot read: {getattr(e, 'strerror', e)}")
    if not text.strip():
        raise ToolError(EX_MALFORMED, f"{path}: empty results file (truncated?)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(EX_MALFORMED, f"{path}: malformed or truncated results file: {e.msg} at line {e.lineno} column {e.colno}")
    except (ValueError, RecursionError) as e:
        raise ToolError(EX_MALFORMED, f"{path}: malformed results file: {json_limit(e)}")


def _check_records(path, records):
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise ToolError(EX_MALFORMED, f"{path}: record {i + 1} is not a JSON object")
        if rec.get("schema") != RECORD_SCHEMA:
            raise ToolError(EX_SCHEMA, f"{path}: record {i + 1} ({rec.get('record')!r}) has schema {rec.get('schema')!r}; these tools read schema {RECORD_SCHEMA} only (docs/results.md)")
        bad = record_problems(rec)
        if bad:
            raise ToolError(EX_MALFORMED, f"{path}: record {i + 1} ({rec.get('record')}): "
                            + "; ".join(bad))


# The host and run facts the tools read, with the types docs/record-fields.md
# gives them ("results.json"); absent or null is fine, another type is a
# malformed file.
FACT_TYPES = (("host", "accel", str), ("host", "cpu_model", str), ("host", "kernel", str),
              ("host", "qemu_version", str), ("host", "kvm_params", dict),
              ("host", "cpu_flags", list), ("host", "pit_policy", str),
              ("run", "config", str), ("run", "label", str), ("run", "status", str),
              ("run", "preset", str))


def _check_facts(path, doc):
    for part, key, kind in FACT_TYPES:
        v = doc[part].get(key)
        if v is not None and not isinstance(v, kind):
            raise ToolError(EX_MALFORMED, f"{path}: '{part}.{key}' is {type(v).__name__}, expected {kind.__name__}")


def load_results_file(path):
    doc = load_json(path)
    if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
        raise ToolError(EX_MALFORMED, f"{path}: not an ipibench results file (no \"format\": \"{RESULTS_FORMAT}\")")
    if doc.get("version") != RESULTS_VERSION:
        raise ToolError(EX_SCHEMA, f"{path}: results format version {doc.get('version')!r}; these tools read version {RESULTS_VERSION}")
    for key, kind in (("host", dict), ("run", dict), ("records", list), ("problems", list)):
        if not isinstance(doc.get(key), kind):
            raise ToolError(EX_MALFORMED, f"{path}: '{key}' missing or not a {kind.__name__}")
    _check_facts(path, doc)
    _check_records(path, doc["records"])
    return SavedBoot(path, doc["host"], doc["run"], doc["records"], doc["problems"])


def load_console_log(path):
    """A bare console log (no host facts): what the guest printed, judged alone."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise ToolError(EX_MISSING, f"{path}: cannot read: {e.strerror}")
    records, problems = parse_console(text)
    _check_records(path, records)
    status = None
    m = re.findall(r"^ipibench: status (\S+)", text.replace("\r", ""), re.M)
    if m:
        status = m[-1]
    return SavedBoot(path, {}, {"status": status, "label": os.path.basename(path)}, records,
                problems)


def find_results(path):
    """Results files a path names: itself, or every results.json below it."""
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise ToolError(EX_MISSING, f"{path}: no such file or directory")
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        if "results.json" in files:
            found.append(os.path.join(root, "results.json"))
    if found:
        return found
    log = os.path.join(path, "console.log")
    if os.path.isfile(log):
        raise ToolError(EX_MISSING, f"{path}: the run saved no results.json (interrupted or failed before its end; console.log says why)")
    raise ToolError(EX_MISSING, f"{path}: no results.json in it or below it")


def load_set(path):
    """Every boot a path names, as a list of SavedBoot."""
    boots = []
    for f in find_results(path):
        if f.endswith(".log"):
            boots.append(load_console_log(f))
        else:
            boots.append(load_results_file(f))
    return boots


def split_by_config(boots):
    """{configuration: [boots]} in first-seen order (a matrix holds several)."""
    out = {}
    for b in boots:
        out.setdefault(b.config(), []).append(b)
    return out
