#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tests/run, the one command CI runs (.ci/run), against stand-in groups
(TESTS_RUN_FAKE_GROUPS): two groups at a time, one that must run alone
alone but for a SCHED_IDLE companion, the next such group beside a
companion still running, a group that waits for another, each printed whole
with its counts, time and CPU time; --slowest; bad options exit 2.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import re
import sys
import textwrap

from harness import REPO, check, registry, run_cmd
from fixtures import main


CASES, case = registry()


@case("tests/run: groups two at a time, one that must run alone alone but for a SCHED_IDLE "
      "companion, which the next such group may start beside; a group that waits for another; "
      "each printed whole with its counts, time and CPU time; --slowest; bad options exit 2")
def _(s):
    fake = os.path.join(s.tmp, "groups.sh")
    with open(fake, "w") as f:
        f.write(textwrap.dedent("""\
            all_groups=(fails slow slow2 quiet judge broken)
            alone="slow slow2"
            beside="quiet judge"
            after="judge:slow"
            # The groups meet through files, not through how long each
            # takes: a SCHED_IDLE companion gets no CPU at all on a loaded
            # host, and the order under test is the runner's, not the
            # kernel's. Each wait gives up after 30 s, which only a wrong
            # order reaches (and the checks then fail).
            wait_for() { for _ in $(seq 300); do [ -e "$SPANS/$1" ] && return; sleep 0.1; done; }
            group_slow() {
                echo "$EPOCHREALTIME" >"$SPANS/slow.start"; sleep 1.2
                echo "ok - slow: first"; echo "ok - slow: second (0.3 s)"
                wait_for quiet.start; echo "$EPOCHREALTIME" >"$SPANS/slow.end"
            }
            group_fails() {
                echo "$EPOCHREALTIME" >"$SPANS/fails.start"; sleep 0.5
                echo "ok - fails: one"; echo "not ok - fails: two"; echo "#   why"
                echo "$EPOCHREALTIME" >"$SPANS/fails.end"
            }
            group_quiet() {
                echo "$EPOCHREALTIME" >"$SPANS/quiet.start"
                chrt -p "$BASHPID" >"$SPANS/quiet.policy"
                wait_for slow2.start
                echo "ok - quiet: skipped (0.1 s) # SKIP not here"
                echo "$EPOCHREALTIME" >"$SPANS/quiet.end"
            }
            group_slow2() {
                echo "$EPOCHREALTIME" >"$SPANS/slow2.start"; sleep 1.5
                echo "ok - slow2: one"
                python3 -c 'import time
            while time.process_time() < 1.6: pass'
                wait_for judge.start; echo "$EPOCHREALTIME" >"$SPANS/slow2.end"
            }
            group_judge() {
                echo "$EPOCHREALTIME" >"$SPANS/judge.start"
                chrt -p "$BASHPID" >"$SPANS/judge.policy"
                echo "ok - judge: one"
            }
            group_broken() { echo "$EPOCHREALTIME" >"$SPANS/broken.start"; echo "half a line"; return 3; }
            """))
    spans = os.path.join(s.tmp, "spans")
    os.makedirs(spans, exist_ok=True)
    rc, out, err = run_cmd([os.path.join(REPO, "tests", "run"), "--slowest", "4"],
                           env={"TESTS_RUN_FAKE_GROUPS": fake, "SPANS": spans})
    lines = out.splitlines()
    span = {g: [float(open(os.path.join(spans, f"{g}.{e}")).read()) for e in ("start", "end")]
            for g in ("slow", "fails", "slow2", "quiet")}
    check(span["slow"][0] >= span["fails"][1],
          f"the group that runs alone started before the one ahead of it ended: {span}")
    at = {g: float(open(os.path.join(spans, f"{g}.start")).read())
          for g in ("quiet", "broken", "judge")}
    check(span["slow"][0] <= at["quiet"] <= span["slow"][1],
          f"the companion did not start beside the group that runs alone: {span}, {at}")
    # quiet outlasts slow (it waits for slow2 first): slow2 starts beside it.
    check(span["slow"][1] <= span["slow2"][0] < span["quiet"][1],
          f"the next group that runs alone waited for a companion under SCHED_IDLE: {span}")
    check(span["quiet"][1] <= at["judge"] <= span["slow2"][1],
          f"the waiting group did not start after its first, beside slow2: {span}, {at}")
    check(at["broken"] >= span["slow2"][1],
          f"a group not in beside= started beside the one that runs alone: {span}, {at}")
    for g in ("quiet", "judge"):
        policy = open(os.path.join(spans, f"{g}.policy")).read()
        check("SCHED_IDLE" in policy, f"the companion {g} does not run under SCHED_IDLE: {policy!r}")
    check(rc == 1, f"exit {rc}, expected 1 (a group failed):\n{out}{err}")
    check(lines[-1] == "5 passed, 2 failed, 1 skipped", f"last line {lines[-1]!r}")
    for g, counts in (("slow", "2 passed, 0 failed, 0 skipped"),
                      ("fails", "1 passed, 1 failed, 0 skipped"),
                      ("quiet", "0 passed, 0 failed, 1 skipped"),
                      ("slow2", "1 passed, 0 failed, 0 skipped"),
                      ("judge", "1 passed, 0 failed, 0 skipped"),
                      ("broken", "0 passed, 1 failed, 0 skipped")):
        start = lines.index(f"# group {g}")
        end = next(i for i, l in enumerate(lines) if l.startswith(f"# group {g}: "))
        check(lines[end].startswith(f"# group {g}: {counts} in "), f"{lines[end]!r}")
        # slow2 burns 1.6 s of CPU in a child (at normal priority: a
        # SCHED_IDLE companion may get none on a loaded host); slow only sleeps.
        cpu = {"slow2": "2", "slow": "0", "quiet": "0"}.get(g)
        check(cpu is None or lines[end].endswith(f" s ({cpu} s CPU)"), f"CPU time: {lines[end]!r}")
        body = lines[start + 1:end]
        check(all(f" {g}:" in l or l.startswith("#   ") or l == "half a line" for l in body),
              f"group {g}'s output is not whole: {body}")
    check("not ok - broken: exited 3 without a failing test" in lines, "broken group not failed")
    # The CPU total beside the wall total, and both against the budget.
    cpu = next((l for l in lines if l.startswith("# CPU seconds: ")), "")
    check(re.search(r"; total 2 s CPU; this machine has \d+ CPUs$", cpu), f"CPU total: {cpu!r}")
    check(any(re.fullmatch(r"# budget: [\d.]+ of 480 s, 2 of 800 CPU s", l) for l in lines),
          f"no budget line: {lines[-6:]}")
    i = lines.index("# slowest 4 tests (seconds):")
    check(re.match(r"^# +1\.[5-9]  slow2: ok - slow2: one$", lines[i + 1])
          and re.match(r"^# +1\.[0-9]  slow: ok - slow: first$", lines[i + 2])
          and re.match(r"^# +0\.[5-9]  fails: ok - fails: one$", lines[i + 3])
          and re.match(r"^# +0\.3  slow: ok - slow: second", lines[i + 4]),
          f"slowest listing: {lines[i + 1:i + 5]}")
    for bad in (["--jobs", "x"], ["--slowest"], ["--only", "nope"], ["--frobnicate"]):
        rc, out, err = run_cmd([os.path.join(REPO, "tests", "run"), *bad],
                               env={"TESTS_RUN_FAKE_GROUPS": fake})
        check(rc == 2 and "tests/run: " in err, f"{bad}: exit {rc}, {err!r}")


if __name__ == "__main__":
    sys.exit(main(CASES))
