#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/ab.py, `./run.sh ab`: against a stand-in QEMU and stand-in module
parameters, the sides interleaved A B B A, the parameter switched before
each side's boots and put back, the order said in summary.txt and in every
boot's run record, compare on each side's folder; in the lane, side B
granted what side A got ends the question (exit 34).
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import sys

from harness import REPO, check, registry, run_cmd
from fixtures import RUN, ab_console, ab_tree, main


CASES, case = registry()


@case("ab in the lane: side B granted what side A got ends the question after B's first "
      "boot (or before it), the refusal said once a boot, exit 34, nothing compared")
def _(s):
    import contextlib
    import io
    from ipibench.boot import ab as AB
    from ipibench.boot import run as B
    from ipibench.jobs import Jobs
    booted = []

    def fake_run(argv, env, jobs, prepared=False, pin_default=False, ab=None):
        # What the lane's run does: load the value, say what was granted
        # (as boot/run.py does, once a boot), save it in results.json.
        asked = argv[argv.index("--module-param") + 1].split("=", 1)[1]
        got = "N"
        d = argv[argv.index("--results-dir") + 1]
        booted.append(d)
        os.makedirs(d)
        mp = {"param": "kvm_amd.avic", "asked": asked, "got": got,
              "why": "" if asked == "0" else "the CPU has no AVIC"}
        json.dump({"run": {"module_param": mp}}, open(os.path.join(d, "results.json"), "w"))
        print(f"run.sh: the lane's kvm_amd.avic: asked {asked}, got {got}"
              + (f": {mp['why']}" if mp["why"] else ""), file=sys.stderr)
        return 0
    saved = B.run, B.prepare
    B.run, B.prepare = fake_run, lambda env, jobs: None
    try:
        # A B B A ...: the order stops after side B's first boot (0,1: A B),
        # or before it, its value known from side A's first (1,0: A).
        for values, b_boots in (("0,1", 1), ("1,0", 0)):
            booted.clear()
            env = B.Env(REPO, s.tmp, {"IPIBENCH_RESULTS": os.path.join(s.tmp, "ab-lane")})
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = AB.run(["--module-param", f"kvm_amd.avic={values}", "--boots", "3",
                             "--accel", "kvm-in-tcg", "--preset", "x2apic"], env, Jobs())
            text = out.getvalue() + err.getvalue()
            check(rc == 34, f"{values}: exit {rc}: {text[-600:]}")
            b_side = [d for d in booted if f"avic_{values[2]}" in d]
            check(len(booted) == 1 + b_boots and len(b_side) == b_boots,
                  f"{values}: booted {booted}")
            check(text.count("asked 1, got N: the CPU has no AVIC") == 1,
                  f"{values}: the refusal not once a boot: {text}")
            check("ab: both sides " in text and "kvm_amd.avic=N: nothing to compare" in text
                  and "against" not in text, f"{values}: {text}")
    finally:
        B.run, B.prepare = saved


# A QEMU for ab under TCG: says what the stand-in module parameters read as it
# boots (AB_PARAMS: files), then plays back FAKE_CONSOLE and exits SUCCESS.
AB_QEMU = r"""#!/bin/sh
case "$1" in --version) echo 'QEMU emulator version 9.2.0 (stand-in)'; exit 0 ;; esac
for f in $AB_PARAMS; do echo "stand-in param $(basename "$f")=$(cat "$f")"; done
cat "$FAKE_CONSOLE"
exit 65
"""


@case("run.sh ab: the sides interleaved A B B A, the parameter switched before each side's "
      "boots (written, or its module reloaded) and put back; the order said, in summary.txt "
      "and in every boot's run record; compare reads each side's folder")
def _(s):
    d = os.path.join(s.tmp, "ab-order")
    os.makedirs(d)
    qemu = os.path.join(d, "qemu")
    with open(qemu, "w") as f:
        f.write(AB_QEMU)
    os.chmod(qemu, 0o755)
    tree = os.path.join(d, "root")
    params = {"kvm.halt_poll_ns": os.path.join(tree, "sys/module/kvm/parameters/halt_poll_ns"),
              "kvm_amd.avic": os.path.join(tree, "sys/module/kvm_amd/parameters/avic")}
    env = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, "results")), QEMU=qemu,
               FAKE_CONSOLE=ab_console(s.tmp), AB_PARAMS=" ".join(params.values()),
               **ab_tree(tree))
    for spec, boots, seq, back in (("kvm.halt_poll_ns=0,1000", 3, "A B B A A B", "200000"),
                                   ("kvm_amd.avic=0,1", 2, "A B B A", "1")):
        name, values = spec.split("=")[0], spec.split("=")[1].split(",")
        label = name.replace(".", "-")
        rc, out, err = run_cmd([RUN, "ab", "--module-param", spec, "--boots", str(boots),
                                "--label", label, "--accel", "tcg", "--smp", "2"], env, 120)
        check(rc == 0, f"{spec}: exit {rc}: {err[-800:]}")
        check(f"ab: order {seq} (A: {name}={values[0]}, B: {name}={values[1]})" in out,
              f"{spec}: the order not said: {out[:400]}")
        (root,) = [os.path.join(d, "results", x) for x in os.listdir(os.path.join(d, "results"))
                   if x.endswith(f"-{label}")]
        sides = {"A": os.path.join(root, f"{name}_{values[0]}"),
                 "B": os.path.join(root, f"{name}_{values[1]}")}
        check(sorted(os.listdir(root)) == sorted([os.path.basename(p) for p in sides.values()]
                                                 + ["summary.txt"]), f"{os.listdir(root)}")
        summary = open(os.path.join(root, "summary.txt")).read().splitlines()
        check(summary[1] == f"order {seq}" and len(summary) == 2 + 2 * boots, f"{summary}")
        # Each boot, in the order it ran: its side's folder, its place in the
        # record, and the parameter as the module read it while it booted.
        n = {"A": 0, "B": 0}
        for pos, side in enumerate(seq.split(), 1):
            n[side] += 1
            boot = os.path.join(sides[side], f"boot{n[side]}")
            check(summary[1 + pos].startswith(f"[{pos}] {side} {os.path.relpath(boot, root)} "
                                              "exit 0"), f"{summary[1 + pos]}")
            run = json.load(open(os.path.join(boot, "results.json")))["run"]
            want = {"param": name, "side": side, "asked": values["AB".index(side)],
                    "got": values["AB".index(side)], "position": pos, "of": 2 * boots,
                    "side_boot": n[side], "order": seq}
            check(run.get("ab") == want, f"{boot}: run.ab {run.get('ab')}, want {want}")
            log = open(os.path.join(boot, "console.log")).read()
            at_boot = f"stand-in param {name.split('.')[1]}={values['AB'.index(side)]}\n"
            check(at_boot in log, f"{boot}: the module did not hold its side's value: "
                  f"{log[:200]}")
        check(open(params[name]).read().strip() == back, f"{name} not put back to {back}")
        # compare B against A, each side's folder as before the order changed.
        check(f"A: {sides['A']} ({boots} boots)" in out and
              f"B: {sides['B']} ({boots} boots)" in out, f"compare: {out[-800:]}")
    # The load-time parameter: one reload a switch of side (A, B, A), then
    # the original put back.
    calls = [line.strip() for line in open(os.path.join(tree, "modprobe.log"))]
    check(calls == ["-r kvm_amd", "kvm_amd avic=0", "-r kvm_amd", "kvm_amd avic=1",
                    "-r kvm_amd", "kvm_amd avic=0", "-r kvm_amd", "kvm_amd avic=1"],
          f"modprobe calls {calls}")


if __name__ == "__main__":
    sys.exit(main(CASES))
