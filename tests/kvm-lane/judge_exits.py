#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The lane's exits pass: for each frame, the trace lane.sh --exits kept
(DIR/<frame>.trace) and the guest's records (DIR/<frame>.log) go through
host/ipibench/kvmhost/trace.py, and every line of an expectation file for the frame
(its TAG.PRESET name, where the file has lines of that name), else for its
preset, must hold within TOLERANCE exits per iteration. A frame is a preset
or TAG.PRESET (lane.sh --job). One TAP line per frame.

Every record with exits must also read apic_accel "no": the lane's KVM runs
on SVM without AVIC, so each IPI path's APIC accesses trap, and a record
that said "yes" here would say it of a host whose AVIC does nothing; the
records of the expectations must give a reason that names a trapped access.

Tolerance: exits per iteration are counts, not times; the noise is exits
the host causes (timer interrupts, a kick that finds the vCPU already out),
labelled "interrupt" or "vintr", which are not judged. 0.05 allows one
stray access in 20 iterations and still fails a send that grew a second
register access (1.00 -> 2.00) by a factor of 20.

A line's value may carry its own tolerance, "0 +- 0.25": where a count is
known to move with what the host does (a PV EOI cancelled by a stray exit).

With --model CLASS the frame's records are also judged against that class
of host-model.conf (host/ipibench/kvmhost/host_model.py): the lane's class
checked against the lane's real KVM; a divergence is a problem, and the
TAP line says how many records the model predicted.

The Xen lane's traces (xen-lane.sh --jobs option exits, read into the same
lines by host/ipibench/xenhost/xentrace.py) are judged the same way, with
--lane xen-lane: Xen's PIT is not traced there, and an event-channel
backend's records read apic_accel unknown (its path touches no APIC).

usage: judge_exits.py EXPECT DIR FRAME... [--expect-failure REGEX [--only] [--planted WHAT]]
                      [--model CLASS]
                      [--lane xen-lane]
  --expect-failure  pass when a problem matches REGEX (a planted change);
                    expectations whose records the run did not produce are
                    then not problems
  --only            and no other problem: the frame's other lines (those of
                    the side the plant leaves alone) must hold
  --planted WHAT    what was planted, for the TAP line (default: exit)
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "host"))
from ipibench.kvmhost import host_model  # noqa: E402
from ipibench.kvmhost import apicv, exit_labels, trace_read  # noqa: E402
from ipibench.kvmhost import trace as kvm_trace  # noqa: E402

TOLERANCE = exit_labels.EXITS_TOLERANCE
JUDGED = exit_labels.JUDGED


def expectations(path):
    out = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            f_ = [x.strip() for x in line.split("|")]
            preset, backend, bench, metric, variant, side, label, value = f_
            # "V" or "V +- T": T, where a line gives one, instead of TOLERANCE.
            v, _, tol = value.partition("+-")
            out.setdefault(preset, {}).setdefault((backend, bench, metric, variant, side),
                                                  {})[label] = (float(v),
                                                                float(tol) if tol else TOLERANCE)
    return out


# The guest stops the PIT after calibration and waits out its last one-shot
# tick (kernel/pit.c), before the plan's first marker: any tick after it is
# a PIT that kept running through the regions.
PIT_TICKS_MAX = 0


def judge(expect, trace_path, log_path, model_class=None):
    with open(trace_path, errors="replace") as f:
        trace = trace_read.parse(f)
    with open(log_path, errors="replace") as f:
        lines = f.read().splitlines()
    recs = kvm_trace.attach_console(trace, lines)
    model = host_model.judge(recs, model_class) if model_class else None
    by_key = {}
    for r in recs:
        by_key.setdefault((r["backend"], r["bench"], r["metric"], r["variant"]), []).append(r)
    problems, checks, unaccelerated = [], 0, 0
    checks += not trace.xen
    if trace.xen:
        pass  # Xen emulates the PIT itself: nothing of it is in the trace
    elif trace.pit_ticks is None:
        problems.append("the PIT: kvm_set_irq was not traced (no pit-traced header)")
    elif trace.pit_ticks > PIT_TICKS_MAX:
        problems.append(f"the PIT: {trace.pit_ticks} GSI 0 injections after the first marker, "
                        f"expected at most {PIT_TICKS_MAX}: its channel 0 still ticks")
    expected = {k[:4] for k in expect}
    for r in recs:
        key = (r["backend"], r["bench"], r["metric"], r["variant"])
        accel, why = r["exits"].get("apic_accel"), r["exits"].get("apic_accel_why", "")
        if "status" in r["exits"] or why == apicv.UPCALL_WHY:
            continue
        if accel == "yes" or (key in expected and (accel != "no" or "trapped" not in why)):
            problems.append(f"{' '.join(key)}: apic_accel {accel} ({why}), expected no: "
                            "the lane's hypervisor runs on SVM without AVIC")
        else:
            unaccelerated += accel == "no"
    for (backend, bench, metric, variant, side), want in expect.items():
        rs = by_key.get((backend, bench, metric, variant), [])
        where = f"{backend} {bench} {metric} {variant} {side}"
        # A line names one record: where several share its key (a
        # broadcast's sets of one and of two targets), it cannot say which.
        if len(rs) > 1:
            sets = ", ".join(f"{x.get('sender')}->{x.get('targets')}" for x in rs)
            problems.append(f"{where}: {len(rs)} records share this line's key ({sets})")
            continue
        r = rs[0] if rs else None
        if r is None or "status" in r["exits"]:
            problems.append(f"{where}: no record with exits"
                            + (f" ({r['exits']['status']})" if r else ""))
            continue
        if side not in r["exits"]:
            problems.append(f"{where}: the record's exits have no {side}")
            continue
        got = r["exits"][side]
        for label, (value, tol) in want.items():
            checks += 1
            if abs(got.get(label, 0.0) - value) > tol:
                problems.append(f"{where}: {got.get(label, 0.0):.2f} {label} per iteration, "
                                f"expected {value:.2f}" + (f" +- {tol}" if tol != TOLERANCE else ""))
        # The sum rule covers the judged kinds (a "vintr" line is checked alone).
        judged = exit_labels.judged_total(got)
        total = sum(v for label, (v, _) in want.items() if JUDGED.match(label))
        checks += 1
        if abs(judged - total) > max([t for label, (_, t) in want.items()
                                      if JUDGED.match(label)] + [TOLERANCE]):
            extra = {k: v for k, v in got.items() if JUDGED.match(k) and k not in want}
            problems.append(f"{where}: {judged:.2f} register/hypercall/HLT exits per iteration, "
                            f"expected {total:.2f}; not expected: {extra}")
    if model is not None:
        checks += model["matched"] + len(model["diverging"])
        problems += [f"model {model_class}: {d['row']} ({d['class']}): {d['what']}"
                     for d in model["diverging"]]
    return checks, problems, unaccelerated, model


def main(argv):
    fail_re, only, planted = None, "--only" in argv, "exit"
    if "--planted" in argv:
        i = argv.index("--planted")
        planted = argv[i + 1]
        del argv[i:i + 2]
    if only:
        argv.remove("--only")
    if "--expect-failure" in argv:
        i = argv.index("--expect-failure")
        fail_re = re.compile(argv[i + 1])
        del argv[i:i + 2]
    lane = "kvm-lane"
    if "--lane" in argv:
        i = argv.index("--lane")
        lane = argv[i + 1]
        del argv[i:i + 2]
    model_class = None
    if "--model" in argv:
        i = argv.index("--model")
        model_class = argv[i + 1]
        del argv[i:i + 2]
    expect_path, out, frames = argv[1], argv[2], argv[3:]
    expect = expectations(expect_path)
    bad = 0
    for frame in frames:
        preset = frame.rsplit(".", 1)[-1]
        # exits.x2apic reads "exits: x2apic", as a preset's frame always has.
        name = frame if "." not in frame else frame.rsplit(".", 1)[0] + ": " + preset
        name = name if ": " in name else "exits: " + name
        trace = os.path.join(out, frame + ".trace")
        if not os.path.exists(trace):
            print(f"not ok - {lane}: {name}: no trace (was the lane run with --exits?)")
            bad += 1
            continue
        # A frame's own expectations (first field TAG.PRESET) stand for it
        # alone; else its preset's.
        checks, problems, no_accel, model = judge(expect.get(frame, expect.get(preset, {})),
                                                  trace, os.path.join(out, frame + ".log"),
                                                  model_class)
        if fail_re is not None:
            problems = [p for p in problems if "no record with exits" not in p]
            hit = [p for p in problems if fail_re.search(p)]
            other = [p for p in problems if not fail_re.search(p)] if only else []
            if hit and not other:
                print(f"ok - {lane}: {name}: the planted {planted} is caught: {hit[0]}")
            else:
                bad += 1
                print(f"not ok - {lane}: {name}: expected a failure matching "
                      f"/{fail_re.pattern}/" + (", and no other" if other else ""))
                for p in (other or problems)[:6]:
                    print(f"#   {p}")
            continue
        if problems:
            bad += 1
            print(f"not ok - {lane}: {name}")
            for p in problems:
                print(f"#   {p}")
        else:
            said = "" if model is None else \
                f"; the {model_class} model predicted {model['matched']} records"
            print(f"ok - {lane}: {name} ({checks} checks, each within "
                  f"{TOLERANCE} per iteration or its line's bound; {no_accel} records read "
                  f"apic_accel no{said})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
