#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""host/ipibench/kvmhost/hoststats.py (host reads of KVM's statistics):
the wake classification against hand-checked counter deltas, the lines of a
real lane frame (tests/fixtures/host-reads: single-halt under real KVM on
SVM nested in TCG, host_stats=1, default halt polling), and run.sh's
Answerer against a fake QMP and a real FIFO."""
import json
import os
import re
import sys
import tempfile

from harness import REPO, check, run_cases

from ipibench.kvmhost import hoststats as HS


HERE = os.path.dirname(os.path.abspath(__file__))

FIX = os.path.join(HERE, "..", "fixtures", "host-reads", "lane-single-halt.log")
CASES = []


def case(fn):
    CASES.append((fn.__name__.replace("_", " "), fn))
    return fn


def d(poll=0, wakeup=0, waited=0, halts=0, attempted=0):
    return {"halt_successful_poll": poll, "halt_wakeup": wakeup, "halt_wait_hist": waited,
            "halt_exits": halts, "halt_attempted_poll": attempted}


@case
def wake_reads_kvms_counters_by_hand(ctx=None):
    # halt_exits counts the halt still going at the end read: 21 for 20.
    # 20 halts each ended in KVM's poll loop: no kick found a waiter.
    w = HS.wake(d(poll=20, attempted=20, halts=21))
    check(w[0] == "poll" and w[2] == {"halts": 20, "polled": 20, "blocked": 0, "other": 0}, w)
    # 20 halts scheduled out and woken by a kick.
    w = HS.wake(d(wakeup=20, waited=20, attempted=20, halts=21))
    check(w[0] == "block" and w[2]["blocked"] == 20, w)
    # Polling off (halt_poll_ns=0): no poll counters; 18 slept, 2 were kicked
    # between set_current_state() and their check: 20 blocks.
    w = HS.wake(d(wakeup=20, waited=18, halts=21))
    check(w[0] == "block" and w[2]["blocked"] == 20 and w[2]["polled"] == 0, w)
    # The lane fixture's first pass (hand-checked): 16 halts with a poll
    # window, 12 of them ended unscheduled; 4 without a window; 6 slept, 8
    # kicks found a waiter. The 2 kicks that found a halt awake may have
    # been among the 12 (a window open) or among the 4 (none): 10 halts
    # polled (never slept), 8 blocked, 2 not certainly either.
    w = HS.wake(d(poll=12, attempted=16, wakeup=8, waited=6, halts=21))
    check(w[0] == "mixed" and w[2] == {"halts": 20, "polled": 10, "blocked": 8, "other": 2}, w)
    # With every halt under a window, such a kick is one of the polls: on
    # AVIC its halt had cleared IsRunning, a block.
    w = HS.wake(d(poll=12, attempted=20, wakeup=10, waited=8, halts=21))
    check(w[2] == {"halts": 20, "polled": 10, "blocked": 10, "other": 0}, w)
    # The end edge's re-halt wait ran out: the number of halts is not known.
    w = HS.wake(d(poll=20, attempted=20, halts=21), exact=False)
    check(w[0] == "poll" and w[2]["halts"] is None and w[2]["other"] is None, w)
    # Most halts counted neither way (an IPI pending at the HLT exit): unknown.
    w = HS.wake(d(halts=6))
    check(w[0] == "unknown" and w[2]["other"] == 5 and "most halts" in w[1], w)
    w = HS.wake(d(halts=1))
    check(w[0] == "unknown" and "no HLT exit in the pass" in w[1], w)
    # A kernel without the histograms: halt_wakeup alone.
    w = HS.wake({"halt_successful_poll": 3, "halt_wakeup": 2})
    check(w[0] == "mixed" and (w[2]["polled"], w[2]["blocked"]) == (3, 2), w)
    check(HS.wake({"halt_exits": 3})[0] == "unknown", "counters missing: unknown")


@case
def deltas_sum_histograms_and_skip_what_one_read_lacks(ctx=None):
    got = HS.deltas({"halt_wakeup": 5, "halt_wait_hist": [1, 2, 0], "exits": 10},
                    {"halt_wakeup": 9, "halt_wait_hist": [2, 4, 1], "exits": True})
    check(got == {"halt_wakeup": 4, "halt_wait_hist": 4}, got)


def lane_records():
    with open(FIX) as f:
        lines = f.read().splitlines()
    recs = [json.loads(x) for x in lines if x.startswith('{"record":"result"')]
    return HS.attach(recs, HS.read_lines(lines))


@case
def a_lane_frame_gives_each_pass_its_targets_wakes(ctx=None):
    rows = {(r["variant"], r["metric"]): r.get("host_stats") for r in lane_records()}
    rt = {v: s for (v, m), s in rows.items() if m == "round-trip"}
    check(set(rt) == {"none", "ack-after-eoi", "block", "vmexit-gap"}, sorted(rt))
    for v, s in rt.items():
        check(s["status"] == "read" and s["vcpu"] == 1, f"{v}: {s}")
        check(s["qom_path"] == "/machine/unattached/device[1]", s["qom_path"])
    # block_gap (10 x halt_poll_ns) outlasts KVM's window: every wake blocked.
    b = rt["block"]
    check(b["wake"] == "block" and b["blocked"] == 20 and b["polled"] == 0 and
          b["halts"] == 20, b)
    check(b["deltas"]["halt_wait_hist"] == 20, b["deltas"])
    # The 50 us gap: 10 of the first pass's 20 halts ended without the vCPU
    # sleeping (wake_reads_kvms_counters_by_hand has its counters).
    check((rt["none"]["polled"], rt["none"]["blocked"], rt["none"]["other"]) == (10, 8, 2),
          rt["none"])
    check(rt["ack-after-eoi"]["polled"] > 0, rt["ack-after-eoi"])
    # vmexit-gap's sends come 2000 cycles after the ack, mostly before the
    # target is back in HLT; KVM's window is 0 after the block pass.
    check(rt["vmexit-gap"]["wake"] == "unknown", rt["vmexit-gap"])
    # Each sampling's two metrics share one host read.
    check(rows[("none", "one-way")]["deltas"] == rt["none"]["deltas"], "one-way shares it")


@case
def what_has_no_statistics_says_why(ctx=None):
    recs = [{"host_read": 1, "host_read_state": "unanswered", "targets": "1"},
            {"host_read": 2, "host_read_state": "answered", "targets": "1"},
            {"host_read": 3, "host_read_state": "answered", "targets": "1"},
            {"host_read": 4, "host_read_state": "no-port", "targets": "1"}]
    reads = HS.read_lines([
        HS.cpus_line({"return": [{"cpu-index": 1, "qom-path": "/q1"}]}),
        HS.stats_line("begin", 3, 1, {"return": []}),
        HS.stats_line("end", 3, 1, {"return": []})])
    HS.attach(recs, reads)
    says = [r["host_stats"]["status"] for r in recs]
    check("unanswered" in says[0], says[0])
    check("no host read" in says[1], says[1])
    check("no KVM statistics" in says[2], says[2])
    check("no-port" in says[3], says[3])
    check(all(r["host_stats"]["wake"] == "unknown" for r in recs), "all unknown")


class FakeQmp:
    def __init__(self, fail=False):
        self.calls, self.fail = [], fail

    def execute(self, command, **arguments):
        self.calls.append((command, arguments))
        if self.fail:
            raise RuntimeError("QMP went away")
        if command == "query-cpus-fast":
            return [{"cpu-index": 1, "qom-path": "/q1"}]
        n = len(self.calls)
        return [{"provider": "kvm", "qom-path": "/q1",
                 "stats": [{"name": "halt_wakeup", "value": n},
                           {"name": "halt_successful_poll", "value": 0}]}]


@case
def the_answerer_reads_then_answers_on_the_fifo(ctx=None):
    for fail in (False, True):
        with tempfile.TemporaryDirectory() as t:
            HS.make_fifos(t)
            # QEMU holds hostread.in open for reading: so does this test.
            rd = os.open(os.path.join(t, "hostread.in"), os.O_RDONLY | os.O_NONBLOCK)
            qmp = FakeQmp(fail)
            a = HS.Answerer(lambda: qmp, os.path.join(t, "hostread.in"), os.path.join(t, "log"))
            a.line("console text")
            a.line("@@@ host-read begin 7 cpu=1 go\r")
            a.line("@@@ host-read end 7 cpu=1 go")
            got = os.read(rd, 16)
            os.close(rd)
            # 'A' + (2 x 7 + end) mod 26: the bytes name their edges.
            check(got == b"OP", f"one byte an edge, QMP failing or not: {got!r}")
            check(HS.answer_byte("begin", 13) == b"A" and HS.answer_byte("end", 25) == b"Z",
                  "the byte wraps at 26")
            with open(os.path.join(t, "log")) as f:
                reads = HS.read_lines(f.read().splitlines())
            check(set(reads["reads"]) == {(7, "begin"), (7, "end")}, reads["reads"])
            if fail:
                check("error" in reads["reads"][(7, "end")][1], reads)
                continue
            check([c for c, _ in qmp.calls] == ["query-cpus-fast", "query-stats", "query-stats"],
                  qmp.calls)
            check(qmp.calls[1][1] == HS.QUERY, "the query names the statistics")
            r = {"host_read": 7, "host_read_state": "answered", "targets": "1", "iterations": 1}
            HS.attach([r], reads)
            check(r["host_stats"]["deltas"]["halt_wakeup"] == 1, r["host_stats"])


@case
def the_lane_asks_for_the_same_statistics(ctx=None):
    with open(os.path.join(REPO, "host", "lane", "lane.sh")) as f:
        m = re.search(r"^HOST_READ_NAMES='(.*)'$", f.read(), re.M)
    check(m is not None, "lane.sh has HOST_READ_NAMES")
    check(json.loads(f"[{m.group(1)}]") == list(HS.NAMES), m.group(1))


def main():
    return 1 if run_cases(CASES, "hoststats") else 0


if __name__ == "__main__":
    sys.exit(main())
