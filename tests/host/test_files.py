#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""results/files.py, reading saved results for compare and gate: a missing
input exits 22 with the path, a malformed or truncated results.json 23 with
line and column, an unknown results format or record schema 24.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import sys

from harness import expect, registry
from fixtures import main, tool, write

from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_SCHEMA


CASES, case = registry()


@case("missing inputs: exit 22 with the path")
def _(s):
    expect(tool("compare", os.path.join(s.tmp, "nope"), s.base), EX_MISSING, "nope")
    empty = os.path.join(s.tmp, "emptydir")
    os.makedirs(empty)
    expect(tool("compare", empty, s.base), EX_MISSING, "no results.json")
    write(os.path.join(s.tmp, "interrupted", "console.log"), "run.sh: INCOMPLETE\n")
    expect(tool("gate", "--baseline", s.base, os.path.join(s.tmp, "interrupted")),
           EX_MISSING, "saved no results.json")


@case("malformed and truncated results files: exit 23 with line and column")
def _(s):
    good = open(os.path.join(s.base, "boot1", "results.json")).read()
    cut = write(os.path.join(s.tmp, "bad", "cut", "results.json"), good[:len(good) // 2])
    expect(tool("compare", cut, s.base), EX_MALFORMED, "malformed or truncated", "line")
    empty = write(os.path.join(s.tmp, "bad", "empty", "results.json"), "")
    expect(tool("compare", empty, s.base), EX_MALFORMED, "empty results file")
    notjson = write(os.path.join(s.tmp, "bad", "nj", "results.json"), "hello\n")
    expect(tool("gate", "--baseline", s.base, notjson), EX_MALFORMED, "malformed")
    other = write(os.path.join(s.tmp, "bad", "other", "results.json"), '{"a": 1}')
    expect(tool("compare", other, s.base), EX_MALFORMED, "not an ipibench results file")
    doc = json.loads(good)
    doc["records"][3]["cycles"]["p50"] = 10 ** 9
    bad = write(os.path.join(s.tmp, "bad", "rec", "results.json"), json.dumps(doc))
    expect(tool("compare", bad, s.base), EX_MALFORMED, "record 4", "percentiles out of order")
    doc = json.loads(good)
    del doc["records"]
    bad = write(os.path.join(s.tmp, "bad", "norec", "results.json"), json.dumps(doc))
    expect(tool("compare", bad, s.base), EX_MALFORMED, "'records' missing")


@case("unknown versions: results format or record schema -> exit 24")
def _(s):
    doc = json.loads(open(os.path.join(s.base, "boot1", "results.json")).read())
    doc["version"] = 2
    p = write(os.path.join(s.tmp, "ver", "a", "results.json"), json.dumps(doc))
    expect(tool("compare", p, s.base), EX_SCHEMA, "format version 2")
    doc["version"] = 1
    doc["records"][2]["schema"] = 7
    p = write(os.path.join(s.tmp, "ver", "b", "results.json"), json.dumps(doc))
    expect(tool("gate", "--baseline", s.base, p), EX_SCHEMA, "schema 7")


if __name__ == "__main__":
    sys.exit(main(CASES))
