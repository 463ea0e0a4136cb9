# SPDX-License-Identifier: GPL-2.0-only
"""The guest's command line (--append) held against the guest's own keys
before a boot, so that a typo costs no boot (in the KVM lane, a whole outer
VM's). The keys are those the build read from the linked kernel
(build/guest-keys.json, tools/guest_keys.py); the rules are lib/cmdline.c's:
tokens split on spaces, tabs, newlines and carriage returns, each
key=value (the value runs to the next separator and may hold '='), each
key once, the value as the key's type takes it. A bare word is refused, as
the guest refuses it: QEMU puts the image path first on a multiboot
command line, which is the one bare word the guest skips, and nothing at
all first on a PVH one.

Where the file is missing (nothing built yet) or cannot be read, nothing
is checked: the guest's own parser stays the authority, and says
BAD-CMDLINE (exit 6) itself. So it is with IPIBENCH_GUEST_KEYS set empty
(run.py's Env), for the tests of that parser, which boot through run.sh.
What the table cannot say is left to the guest too: a CPU number beyond
the machine's (sender=9), and keys that clash
(debug=late-wake,no-halt-mark). Pure but for reading the file."""
import difflib
import json
import os
import re

from ipibench import REPO
from ipibench.exit_codes import EX_USAGE, ToolError

KEYS_FILE = os.path.join(REPO, "build", "guest-keys.json")
SEPARATORS = re.compile(r"[ \t\n\r]+")  # lib/cmdline.c's is_sep()
BOOL_WORDS = ("0", "1", "off", "on", "no", "yes", "false", "true")
QUOTE_MAX = 40  # lib/cmdline.c quotes no more of a token than this
NEAR = 0.6  # difflib's own cutoff: a key or name a typo was meant to be


def load(path=KEYS_FILE):
    """{key: spec} of the keys file, or None where there is none to read."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        return {k["key"]: k for k in doc["keys"] if isinstance(k.get("key"), str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def check_append(append, path=KEYS_FILE):
    """ToolError 2 (usage) naming the first token the guest would refuse;
    nothing when it would take them all, or when there are no keys to
    check them against (path empty, missing or unreadable)."""
    keys = load(path) if path else None
    why = problem(append or "", keys) if keys else None
    if why:
        raise ToolError(EX_USAGE, why)


def problem(append, keys):
    """Why the guest would refuse the line append, in one line, or None."""
    seen = set()
    for tok in SEPARATORS.split(append):
        if not tok:
            continue
        key, eq, value = tok.partition("=")
        if not eq:
            return f"--append: {quote(tok)} is not key=value{hint(tok, keys, '=...')}"
        if key not in keys:
            return f"--append: unknown key {quote(key)} in {quote(tok)}{hint(key, keys)}"
        if key in seen:
            return f"--append: duplicate key {quote(key)} in {quote(tok)}: the guest takes each key once"
        seen.add(key)
        why = value_problem(tok, keys[key], value)
        if why:
            return why
    return None


def quote(text):
    """A piece of the line in quotes, cut as the guest cuts it."""
    return f"'{text}'" if len(text) <= QUOTE_MAX else f"'{text[:QUOTE_MAX]}...'"


def near(word, names):
    """The name word was most likely meant to be, or None."""
    found = difflib.get_close_matches(word, list(names), 1, NEAR)
    return found[0] if found else None


def hint(word, keys, then=""):
    """The key a mistaken word was most likely meant to be (then: what
    follows it), else the keys there are, as the guest lists them."""
    meant = near(word, keys)
    return f" (did you mean {meant}{then}?)" if meant else f" (keys: {', '.join(keys)})"


def shown(spec):
    """What a key takes, as help=1's value column says it (lib/cmdline.c's
    describe_spec); docs/guest-keys.md's column too."""
    kind = spec.get("type")
    if kind == "uint":
        return f"{spec.get('min')}..{spec.get('max')}"
    if kind == "bool":
        return "0/1, on/off, yes/no, true/false"
    if kind in ("enum", "list"):
        return ", ".join(spec.get("choices") or []) + \
            (", comma-separated, or all" if kind == "list" else "")
    if spec.get("max"):
        return f"text of {spec.get('min')}..{spec.get('max')} bytes"
    return "any text"


def accepted(spec, meant=None):
    """What a key takes, as the guest's messages say it (describe_spec, a
    number's forms added), after the name a mistaken one was most likely
    meant to be."""
    what = shown(spec)
    if spec.get("type") == "uint":
        what += ", decimal or 0x hex, suffix k or M"
    return f" (did you mean {meant}?; accepted: {what})" if meant else f" (accepted: {what})"


def value_problem(tok, spec, value):
    """Why the guest would refuse this key's value, or None."""
    kind = spec.get("type")
    if value == "":
        return f"--append: empty value in {quote(tok)}{accepted(spec)}"
    if kind == "uint":
        return number_problem(tok, spec, value)
    if kind == "bool":
        return None if value in BOOL_WORDS else \
            f"--append: bad boolean in {quote(tok)}{accepted(spec)}"
    if kind == "enum":
        return None if value in spec.get("choices", []) else \
            f"--append: {quote(tok)}: unknown choice {quote(value)}{accepted(spec, near(value, spec.get('choices', [])))}"
    if kind == "list":
        return list_problem(tok, spec, value)
    return string_problem(tok, spec, value)


def number(text):
    """lib/cmdline.c's number_scan(): (value, None), or (None, "bad number"
    or "number too large"): decimal or 0x hex, then k (x1000) or M
    (x1000000); a malformed number is called bad before it is too large."""
    mul = {"k": 1000, "M": 1000000}.get(text[-1:], 1)
    digits = text[:-1] if mul > 1 else text
    base = 16 if len(digits) > 2 and digits[:2] in ("0x", "0X") else 10
    digits = digits[2:] if base == 16 else digits
    ok = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if not digits or any(c not in ok for c in digits):
        return None, "bad number"
    n = int(digits, base) * mul
    return (n, None) if n < 1 << 64 else (None, "number too large")


def number_problem(tok, spec, value):
    """A number: its syntax, then its bounds."""
    n, why = number(value)
    if why:
        return f"--append: {why} in {quote(tok)}{accepted(spec)}"
    if not spec.get("min", 0) <= n <= spec.get("max", 0):
        return f"--append: number out of range in {quote(tok)}{accepted(spec)}"
    return None


def list_problem(tok, spec, value):
    """A list value: "all" alone, or names of its choices, each once."""
    if value == "all":
        return None
    choices, seen = spec.get("choices", []), set()
    for item in value.split(","):
        if not item:
            return f"--append: {quote(tok)}: empty item{accepted(spec)}"
        if item == "all":
            return f"--append: {quote(tok)}: 'all' must stand alone, not as item{accepted(spec)}"
        if item not in choices:
            return f"--append: {quote(tok)}: unknown item {quote(item)}{accepted(spec, near(item, choices))}"
        if item in seen:
            return f"--append: {quote(tok)}: duplicate item {quote(item)}{accepted(spec)}"
        seen.add(item)
    return None


def string_problem(tok, spec, value):
    """Text: its length in bytes, as the guest counts it, where bounded."""
    size = len(value.encode("utf-8", "surrogateescape"))
    if spec.get("max") and not spec.get("min", 0) <= size <= spec["max"]:
        return f"--append: text length out of range in {quote(tok)}{accepted(spec)}"
    return None
