#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The reference pages written from the code, one job a page, so they
cannot drift from it:

  docs/exit-codes.md     host/ipibench/exit_codes.py (MEANINGS, MESSAGES),
                         the guest's statuses (include/status.h,
                         kernel/status.c) as boot/qemu.py decodes them
  docs/record-fields.md  host/ipibench/results/fields.py (what validate.py
                         checks), the benchmarks' and backends' registries
                         (build/guest-keys.json)
  docs/guest-keys.md     build/guest-keys.json (the keys, read from the ELF),
                         the fault injection keys' comments (include/options.h)

Each page's few hand-written words are its template, tools/templates/PAGE:
a line `<!-- table: NAME -->` there is replaced by that table. Pages that
read build/guest-keys.json need `make` first (the docs group of tests/run
builds before it checks).

usage: tools/doc_reference.py [--check] [PAGE...]
  --check  exit 1 (and say so) when a page is not what its sources write
           now; tests/run's docs group runs it. PAGE: exit-codes.md,
           record-fields.md or guest-keys.md (default: all three)."""
import json
import os
import re
import sys

from doc_pages import REPO, first_line, settle, table

sys.path.insert(0, os.path.join(REPO, "host"))
from ipibench import exit_codes as E  # noqa: E402
from ipibench.boot import guest_keys as G  # noqa: E402
from ipibench.boot import qemu as Q  # noqa: E402
from ipibench.results import fields as F  # noqa: E402

TOOL = "tools/doc_reference.py"
TEMPLATES = os.path.join(REPO, "tools", "templates")
TABLE_MARK = re.compile(r"^<!-- table: (\w+) -->$", re.M)


class Missing(Exception):
    """A source the page is written from is not there (or not as expected)."""


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def fill(page, source, tables):
    """The page: its first line, then its template with each table mark
    replaced by tables[NAME]."""
    def one(m):
        if m.group(1) not in tables:
            raise Missing(f"tools/templates/{page} names a table {m.group(1)} this page has not")
        return tables[m.group(1)].rstrip("\n")
    return first_line(TOOL, source) + TABLE_MARK.sub(one, read(f"tools/templates/{page}"))


def guest_keys_doc():
    """({key: spec}, the whole file) of build/guest-keys.json, or Missing."""
    try:
        with open(G.KEYS_FILE, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise Missing(f"{os.path.relpath(G.KEYS_FILE, REPO)}: {e} (make writes it)")
    return {k["key"]: k for k in doc["keys"]}, doc


# --- docs/exit-codes.md ---------------------------------------------------------------------

def guest_statuses():
    """(word, meaning, byte) of each guest status, in the enum's order:
    include/status.h's comments and byte base, kernel/status.c's words."""
    header, names = read("include/status.h"), read("kernel/status.c")
    enum = re.search(r"enum status \{(.*?)\};", header, re.S).group(1)
    base = int(re.search(r"#define STATUS_BYTE_BASE (0x[0-9a-f]+)", header).group(1), 16)
    words = dict(re.findall(r"\[(STATUS_\w+)\] = \"([A-Z-]+)\"", names))
    found = re.findall(r"(STATUS_\w+),\s*/\* (.*?) \*/", enum)
    if not found or any(name not in words for name, _ in found):
        raise Missing("include/status.h's statuses and kernel/status.c's words differ")
    return [(words[name], meaning, base + i) for i, (name, meaning) in enumerate(found)]


def guest_table():
    rows = []
    for word, meaning, byte in guest_statuses():
        qemu_exit = (byte << 1) | 1
        code, decoded = Q.decode_status(qemu_exit, "1.0", 10)
        if decoded != word:
            raise Missing(f"boot/qemu.py decodes QEMU exit {qemu_exit} as {decoded}, not {word}")
        run_exit = f"{code}, or {E.EX_NOTHING_RAN} when nothing asked for ran" \
            if word == "SKIP" else code
        rows.append((word, meaning, f"{byte:#04x}", qemu_exit, run_exit))
    return table(("status", "meaning", "byte", "QEMU exit", "run.sh exit"), rows)


def exit_codes_page():
    glance = table(("exit", "who", "meaning", "what to look at"),
                   [(m.code, m.commands, m.summary + (" ([more](#in-detail))" if m.detail else ""),
                     m.look) for m in E.MEANINGS])
    detail = "".join(f"- **{m.code}** ({m.commands}): {m.detail}.\n"
                     for m in E.MEANINGS if m.detail)
    messages = table(("message", "exit", "what it means"),
                     [(m.text, "the guest's" if m.code is None else m.code, m.meaning)
                      for m in E.MESSAGES])
    return fill("exit-codes.md", "host/ipibench/exit_codes.py and the guest's status table",
                {"glance": glance, "guest": guest_table(), "detail": detail,
                 "messages": messages})


# --- docs/record-fields.md ------------------------------------------------------------------

def anchor(heading):
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")


def field_rows(fields, kind=None):
    """A field table's rows; a field that takes words of a table links to it."""
    links = {field: heading for heading, takes, _ in F.WORD_TABLES for field in takes}
    rows = []
    for f in fields:
        heading = links.get((kind, f.key))
        link = f" ([{heading.lower()}](#{anchor(heading)}))" if heading else ""
        rows.append((f"`{f.key}`", f.type, f.present, f.meaning + link))
    return table(("key", "type", "present", "meaning"), rows)


def registry_words(heading, doc):
    """A word table the guest's registry holds: the benchmarks with their
    summaries, the backends in the registry's order (help=1's)."""
    if heading == "Benchmarks":
        return table(("bench", "what it measures"),
                     [(f"`{b['name']}`", b["summary"]) for b in doc["benchmarks"]])
    if heading == "Backends":
        names = next(k["choices"] for k in doc["keys"] if k["key"] == "backends")
        return ("In the registry's order, as `backends=` takes them (what each sends: "
                "[timed-regions.md](timed-regions.md#backends)): " +
                ", ".join(f"`{b}`" for b in names) + ".\n")
    raise Missing(f"fields.py's word table {heading} has no words and no registry")


def word_tables(doc):
    parts = []
    for heading, _, words in F.WORD_TABLES:
        body = registry_words(heading, doc) if words is None else \
            table(("word", "meaning"), [(f"`{w.word}`", w.meaning) for w in words])
        parts.append(f"### {heading}\n\n{body}")
    return "\n".join(parts)


def record_fields_page():
    _, doc = guest_keys_doc()
    tables = {kind: field_rows(fields, kind) for kind, fields in F.FIELDS.items()}
    tables.update(words=word_tables(doc), results_json=field_rows(F.RESULTS_JSON),
                  record_exits=field_rows(F.RECORD_EXITS),
                  record_host_stats=field_rows(F.RECORD_HOST_STATS),
                  run_exits=field_rows(F.RUN_EXITS))
    return fill("record-fields.md", "host/ipibench/results/fields.py and the guest's "
                "registries (build/guest-keys.json)", tables)


# --- docs/guest-keys.md ---------------------------------------------------------------------

def fault_keys(choices):
    """(name, what it does, how the run ends) per debug= choice, from the
    comments of include/options.h's enum debug_key, in the same order as
    the choices (kernel/options.c asserts one name per key)."""
    enum = re.search(r"enum debug_key \{(.*?)\};", read("include/options.h"), re.S).group(1)
    comments = [" ".join(c.split()) for c in
                re.findall(r"DEBUG_(?!COUNT)\w+,\s*/\*(.*?)\*/", enum, re.S)]
    if len(comments) != len(choices) or not all("->" in c for c in comments):
        raise Missing("include/options.h: every debug key wants a comment 'does -> ends'")
    return [(f"`debug={name}`", *[p.strip() for p in c.split("->", 1)])
            for name, c in zip(choices, comments)]


def guest_keys_page():
    keys, _ = guest_keys_doc()
    rows = [(f"`{k}`", G.shown(s), s["help"]) for k, s in keys.items()]
    faults = table(("key", "what it does", "how the run ends"),
                   fault_keys(keys["debug"]["choices"]))
    return fill("guest-keys.md", "build/guest-keys.json (the keys in the ELF) and "
                "include/options.h", {"keys": table(("key", "takes", "what it does"), rows),
                                      "faults": faults})


PAGES = {"exit-codes.md": exit_codes_page, "record-fields.md": record_fields_page,
         "guest-keys.md": guest_keys_page}


def main(argv):
    check = "--check" in argv
    names = [a for a in argv if a != "--check"] or list(PAGES)
    unknown = [n for n in names if n not in PAGES]
    if unknown:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    rc = 0
    for name in names:
        title = f"docs: docs/{name} is what {TOOL} writes from the code"
        try:
            want = PAGES[name]()
        except (Missing, OSError) as e:
            print(f"not ok - {title} # {e}")
            rc = 1
            continue
        rc |= settle(f"docs/{name}", want, title, f"{TOOL} {name}", check)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
