# SPDX-License-Identifier: GPL-2.0-only
"""Synthetic KVM trace lines in the format a given kernel release prints
(tests/host/kvm-trace-formats.conf: the TP_printk strings, verbatim), for
the tests of host/ipibench/kvmhost/trace_read.py and the host-class model."""
import os
import re

FORMATS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kvm-trace-formats.conf")
# C's length modifiers, which Python's % formatting does not take.
LENGTH = re.compile(r"%([-#0 +]*\d*)(?:ll|l|h)([duxs])")
DEFAULTS = {"comm": "CPU 0/KVM", "cpu": 1, "flags4": "d...", "flags5": "d..1.", "sep": "",
            "flags": "", "rw": "write", "more": "", "gp": "", "fast": "fast", "immediate": "",
            "activate": "deactivate", "set": "set", "sp": "", "names": "", "waited": "wait",
            "valid": "valid", "rip": 0xffffffff81001234}


def release_tuple(text):
    return tuple(int(x) for x in text.split(".")[:2])


def load(path=FORMATS_FILE):
    """{event: [(first, last, format, [argument names])]}"""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            event, first, last, fmt, args = (x.strip() for x in line.split("|"))
            fmt = LENGTH.sub(r"%\1\2", fmt).replace("\\n", "\n")
            out.setdefault(event, []).append((release_tuple(first), release_tuple(last), fmt,
                                              args.split()))
    return out


FORMATS = load()
RELEASES = sorted({f[0] for forms in FORMATS.values() for f in forms} |
                  {f[1] for forms in FORMATS.values() for f in forms})


def has(release, event):
    """Whether the release prints this event at all (a tree read has it)."""
    return any(a <= release <= b for a, b, _, _ in FORMATS.get(event, ()))


def _fill(release, event, values):
    for first, last, fmt, args in FORMATS[event]:
        if first <= release <= last:
            return fmt % tuple(values.get(a, DEFAULTS.get(a, 0)) for a in args)
    raise KeyError(f"{event} is not printed by {release}")


def line(release, event, tid, ts, **values):
    """The trace's line(s) for one event (a format ending in a newline, as
    AVIC's events did before 5.4, leaves an empty line after it)."""
    sec, usec = int(ts), int(round((ts - int(ts)) * 1e6))
    # The conf's fields are stripped: the prefix's closing space is put back.
    head = _fill(release, "prefix", dict(values, pid=tid, sec=sec, usec=usec, event=event)) + " "
    return (head + _fill(release, event, values)).split("\n")
