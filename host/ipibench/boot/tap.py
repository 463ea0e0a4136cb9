# SPDX-License-Identifier: GPL-2.0-only
"""The correctness suite's TAP lines read from a console: a line's label,
what it checks (its kind, CHECK_KINDS), the suite counted by label and
kind (suite_labels()), and the `not ok` lines. The live progress
(console.py) and the summary's closing lines (outcome.py) read the suite
through it."""
import re

TAP = re.compile(r"(not )?ok \d+ - (.*?)(?: # SKIP (.*))?$")
# What each of the suite's TAP lines checks, by its name after the label
# (suite/delivery.c, suite/nmi.c, suite/flush_effect.c): the first kind
# whose pattern matches from the start of it; "other" for none.
CHECK_KINDS = [(kind, re.compile(p)) for kind, p in (
    # delivery_name(): one send, and every CPU of the destination counts it once.
    ("delivery", r"(self on CPU \d+|CPU \d+ -> (CPU \d+|all-but-self|all-including-self|"
                 r"set \{[^}]*\})), (vector 0x[0-9a-f]+|NMI)(: |$)"),
    ("delivery", r"sends from an AP$"),          # the AP's sends, SKIPped on one CPU
    ("masking", r"(TPR 0x[0-9a-f]+|IF=0) holds vector "),
    ("nmi", r"(an NMI .* is taken through |of two NMIs |an NMI held while in the handler)"),
    ("wake", r"CPU \d+ wakes CPU \d+ from HLT "),
    ("switch", r"switch all \d+ CPUs to \S+ mode"),
    # The flushes: the hypercalls' return status, the native shootdown over
    # a backend; each then that no target reads through a stale translation.
    ("flush", r"(Hv\w+ \(|every flush hypercall$|enable |IPI shootdown over |every shootdown$)"),
    ("backend", r"every check$"),                # a backend whose probe refused it
)]
KIND_WORDS = {"delivery": "delivery", "masking": "TPR/IF=0 masking", "nmi": "NMI masking",
              "wake": "wake-from-HLT", "switch": "mode-switch", "flush": "flush",
              "backend": "whole-backend", "other": "other"}


def check_kind(name):
    """The kind of a TAP line's name after its label (CHECK_KINDS)."""
    return next((kind for kind, p in CHECK_KINDS if p.match(name)), "other")


# suite/flush_effect.c's line before a flush check's TAP line when no
# target still held the old translation before the flush: the check then
# could not see whether the flush dropped it.
UNSEEN = re.compile(r"check: (.*): the TLB effect went unseen: ")


def suite_labels(text):
    """The correctness suite's TAP lines of a console by label, in order:
    {label: {kind: [passed, failed, skipped, [skip reasons], unproven]}}
    ("xapic (again)" and "xapic (for the flush checks)" count as xapic;
    kinds: CHECK_KINDS). unproven: the passed flush checks whose TLB effect
    went unseen (UNSEEN), counted among the passed: the flush completed,
    but nothing showed that it flushed."""
    out, unseen = {}, set()
    for line in text.replace("\r", "").split("\n"):
        u = UNSEEN.match(line)
        if u:
            unseen.add(u.group(1))
            continue
        m = TAP.match(line)
        if not m:
            continue
        label, _, name = m.group(2).partition(": ")
        label = re.sub(r" \((again|for the flush checks)\)$", "", label)
        n = out.setdefault(label, {}).setdefault(check_kind(name), [0, 0, 0, [], 0])
        n[1 if m.group(1) else 2 if m.group(3) is not None else 0] += 1
        if m.group(3) is not None and not m.group(1):
            n[3].append(m.group(3))
        if not m.group(1) and m.group(3) is None and m.group(2) in unseen:
            n[4] += 1
    return out


def tally(kinds):
    """[passed, failed, skipped] of a label, all its kinds together."""
    return [sum(n[i] for n in kinds.values()) for i in range(3)]


def flush_label(kinds):
    """A label whose every line is a flush check (hv-flush, hv-flush-xmm,
    native): no backend of its own."""
    return bool(kinds) and set(kinds) == {"flush"}


def tap_failures(text):
    """The `not ok` lines of a console, without their number."""
    return [m.group(1) for m in re.finditer(r"^not ok \d+ - (.*)$", text, re.M)]
