# SPDX-License-Identifier: GPL-2.0-only
"""Correctness: what always fails a gate, whatever the timings say."""
import os


GOOD_STATUSES = ("SUCCESS", "SKIP")


def correctness_failures(boot):
    """Why this boot is not a correct run ([] when it is)."""
    out = [f"invalid record: {p}" for p in boot.problems]
    status = boot.run.get("status")
    if status and status not in GOOD_STATUSES:
        out.append(f"guest status {status}")
    if boot.env and boot.end is None:
        out.append("no end record: the guest did not finish")
    if boot.end is not None and boot.end.get("status") not in GOOD_STATUSES:
        if boot.end.get("status") != status:
            out.append(f"end record status {boot.end.get('status')}")
    for rec in boot.results + boot.norov:
        if rec.get("status") == "FAILURE":
            what = f"FAILURE: {rec.get('bench') or rec.get('test')} on {rec.get('backend')}"
            out.append(what + (f": {rec['reason']}" if rec.get("reason") else ""))
    for rec in boot.checks:
        if rec.get("failed", 0) > 0:
            out.append(f"correctness suite: {rec['failed']} failed on {rec.get('backend')}")
    if out:
        out += [f"guest: {line}" for line in guest_not_ok(boot)]
    return out


def guest_not_ok(boot, limit=20):
    """The guest's own 'not ok' TAP lines, from the console.log beside the boot's
    results.json: what each failed check says, for the gate's TAP and JUnit."""
    log = os.path.join(os.path.dirname(os.path.abspath(boot.path)), "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [l.rstrip() for l in f if l.startswith("not ok ")]
    except OSError:
        return []
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])
