#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kvmhost/pin_perf.py: --pin and --perf-kvm are KVM's only; --pin's CPU
lists and perf kvm stat's report; the paused start against a stand-in QEMU
that speaks QMP and a stand-in perf; ab and matrix pin the vCPUs by default
under a stand-in KVM (fixtures.KVM_DRIVER), every boot's run.pin saying
whether and why.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import subprocess
import sys
import tempfile

from harness import HOST, Fail, check, registry, run_cmd
from fixtures import KVM_DRIVER, RUN, ab_console, ab_tree, main, qmp_stand_in, raises

from ipibench import machine
from ipibench.boot import qemu as Q
from ipibench.exit_codes import EX_USAGE, ToolError
from ipibench.kvmhost import pin_perf as K


CASES, case = registry()


@case("run.sh --pin and --perf-kvm: KVM only (exit 29), unless the tests' switch")
def _(_s):
    msg = raises(29, K.check_extras, "tcg-single", "", False)
    check(msg.startswith("--pin needs KVM (accel is tcg-single): under TCG"), msg)
    msg = raises(29, K.check_extras, "tcg", "1,2", True)
    check(msg.startswith("--pin and --perf-kvm needs KVM (accel is tcg)"), msg)
    check(K.check_extras("tcg", "", False, any_accel=True) is None, "IPIBENCH_PIN_ANY_ACCEL")
    check(K.check_extras("kvm", "", False) is None and K.check_extras("tcg", None, False) is None,
          "nothing asked")


@case("--pin CPU lists and the perf kvm stat report parser")
def _(s):
    check(K.parse_cpu_list("2-5,8") == [2, 3, 4, 5, 8], "2-5,8")
    check(K.parse_cpu_list("3,1") == [3, 1], "order kept")
    for bad in ("x", "5-2", "1-"):
        try:
            K.parse_cpu_list(bad)
            raise Fail(f"{bad!r} accepted")
        except ToolError as e:
            check(e.code == EX_USAGE, f"{bad}: code {e.code}")
    text = """Analyze events for all VMs, all VCPUs:

             VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time

     MSR_WRITE      10364    44.64%     1.28%      0.45us     48.25us      1.23us ( +-   0.78% )
           HLT       6063    26.12%    98.50%      0.66us  32446.31us    161.85us ( +-   6.69% )

Total Samples:16427, Total events handled time:996226.68us.
"""
    ex = K.perf_parse(text)
    check(len(ex) == 2 and ex[0] == {"reason": "MSR_WRITE", "samples": 10364, "samples_pct": 44.64,
                                     "time_pct": 1.28, "min_us": 0.45, "max_us": 48.25,
                                     "avg_us": 1.23}, f"{ex}")
    check(ex[1]["reason"] == "HLT" and ex[1]["avg_us"] == 161.85, "HLT line")
    # Lines that only look like the table are left out, never a ValueError.
    odd = "  IO 12 1.2.3% 1% 1us 2us 3us\n  IO 12 1..% 1% 1us 2us 3us\n  IO 12 .5% 1% 1us 2us 3us\n"
    check(K.perf_parse(odd) == [], f"malformed decimals parsed: {K.perf_parse(odd)}")


FAKE_QMP_QEMU = qmp_stand_in(on_cont="sys.exit(65)")


FAKE_PERF = """#!/bin/sh
case "$3" in
record) out=$5; trap 'echo data >"$out"; exit 0' TERM; while :; do sleep 0.1; done ;;
report) [ -s "$5" ] || exit 1
	echo '             VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time'
	echo '     MSR_WRITE      10364    44.64%     1.28%      0.45us     48.25us      1.23us ( +-   0.78% )' ;;
esac
"""


@case("run.sh --pin and --perf-kvm: paused start against a stand-in QEMU (QMP) and perf")
def _(s):
    d = os.path.join(s.tmp, "paused")
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "save"))
    for name, text in (("qemu", FAKE_QMP_QEMU), ("bin/perf", FAKE_PERF)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(d, name), 0o755)
    rt = tempfile.mkdtemp(dir=d)
    cmd = Q.command_line(os.path.join(d, "qemu"), "kvm", "q35", "host", "1", "256M", "",
                         runtime_dir=rt, pidfile=True)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = os.path.join(d, "bin") + os.pathsep + old_path
    try:
        job = subprocess.Popen(cmd)
        cpu = machine.allowed_cpus()[-1]
        paused = K.PausedStart(rt, str(cpu), True, os.path.join(d, "save", "pin.json"))
        code = paused.start(job)
        rc = job.wait(timeout=20)
        paused.stop(os.path.join(d, "save"))
    finally:
        os.environ["PATH"] = old_path
    check(code == 0 and rc == 65, f"start {code}, the stand-in exited {rc}")
    pins = json.load(open(os.path.join(d, "save", "pin.json")))
    where = machine.cpu_core(cpu)
    want = {"vcpu": 0, "thread_id": job.pid, "host_cpu": cpu,
            "core": f"package {where[0]} core {where[1]}" if where else "unknown",
            "siblings": where[2] if where else []}
    check(pins["map"] == [want] and isinstance(pins["emulator"].get("threads"), int) and
          pins["emulator"]["why"], f"{pins}")
    report = open(os.path.join(d, "save", "perf-kvm.txt")).read()
    check([x["reason"] for x in K.perf_parse(report)] == ["MSR_WRITE"], report)
    check(sorted(os.listdir(os.path.join(d, "save"))) == ["perf-kvm.txt", "pin.json"],
          f"{os.listdir(os.path.join(d, 'save'))}")


@case("default pinning: never CPU 0's core, one CPU a core (no SMT siblings), else not "
      "pinned and why; a host whose sysfs gives no topology: each CPU a core")
def _(_s):
    # 4 cores of 2 threads: CPU i and i+4 are siblings.
    smt = {c: (0, c % 4, sorted({c % 4, c % 4 + 4})) for c in range(8)}.get
    for cpus, n, want in ((range(8), 3, [1, 2, 3]), (range(8), 4, None),
                          ([0, 4, 5, 6], 2, [5, 6]), ([4, 5, 1], 2, None)):
        got, why = K.default_cpus(list(cpus), n, smt)
        if want is None:
            check(got is None and why.startswith(f"{n} vCPUs, ") and
                  "CPU 0's core left to the host" in why, f"{list(cpus)} x{n}: {got} {why}")
        else:
            check(got == want and "CPU 0's core and SMT siblings left out" in why,
                  f"{list(cpus)} x{n}: {got}, expected {want}")
    got, _ = K.default_cpus([0, 1, 2], 2, lambda c: None)
    check(got == [1, 2], f"no topology: {got}")
    got, why = K.default_cpus([0], 1, lambda c: None)
    check(got is None and "0 host cores" in why, f"CPU 0 alone: {got} {why}")
    check(K.format_cpus([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8", K.format_cpus([0, 1, 2, 5, 7, 8]))
    # QEMU's other threads: off the vCPUs' cores (CPU 0's included), onto
    # a vCPU's SMT sibling only where nothing else is left. This process
    # stands for QEMU, its main thread for vCPU 0 (nothing is pinned).
    import threading
    me, done = os.getpid(), threading.Event()
    helper = threading.Thread(target=done.wait, daemon=True)  # a thread of "QEMU's"
    helper.start()
    before = set(machine.allowed_cpus())
    try:
        for allowed, want in (([0, 1, 2, 4, 5, 6], [0, 2, 4, 6]), ([1, 5], [5])):
            got = K.pin_emulator([{"vcpu": 0, "thread_id": me, "host_cpu": 1}], allowed, smt)
            check(got["cpus"] == want and ("siblings" in got["why"]) == (want == [5]),
                  f"allowed {allowed}: {got}")
    finally:
        done.set()
        os.sched_setaffinity(0, before)


@case("QMP: a QEMU that died after its greeting is exit 29 with QMP's words, not a broken pipe "
      "that run.sh's quiet end for a closed output would take for its reader leaving")
def _(_s):
    class DeadSocket:
        def sendall(self, data):
            raise BrokenPipeError(32, "Broken pipe")
    qmp = K.Qmp.__new__(K.Qmp)
    qmp.sock, qmp.buf = DeadSocket(), b""
    msg = raises(29, qmp.execute, "cont")
    check(msg.startswith("QMP cont: ") and "Broken pipe" in msg, msg)


# A QEMU that plays FAKE_CONSOLE back, at `cont` when started paused with QMP
# (the pinning start), else at once.
PIN_QEMU = qmp_stand_in(before="""\
if args[:1] == ["--version"]:
    print("QEMU emulator version 9.2.0 (stand-in)")
    sys.exit(0)
if "-S" not in args:  # not paused (a QMP socket for host reads, or none): runs at once
    sys.stdout.write(open(os.environ["FAKE_CONSOLE"]).read())
    sys.exit(65)""", on_cont="""\
sys.stdout.write(open(os.environ["FAKE_CONSOLE"]).read())
sys.exit(65)""")


def stand_in_kvm(s, name):
    """(env, driver, boots) for run.sh under the stand-in KVM in a folder
    of its own: boots(*args, **env) runs a command and gives the
    results.json of every boot it saved (in its folder's order) and its
    stderr."""
    d = os.path.join(s.tmp, name)
    os.makedirs(d)
    driver, qemu = os.path.join(d, "driver.py"), os.path.join(d, "qemu")
    for path, text in ((driver, KVM_DRIVER), (qemu, PIN_QEMU)):
        with open(path, "w") as f:
            f.write(text)
    os.chmod(qemu, 0o755)
    env = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, "results")), QEMU=qemu,
               FAKE_CONSOLE=ab_console(s.tmp), **ab_tree(os.path.join(d, "root")))
    made = []

    def boots(*args, **more):
        made.append(f"l{len(made)}")
        rc, out, err = run_cmd([sys.executable, driver, HOST, *args,
                                "--label", made[-1]], dict(env, **more), 120)
        check(rc == 0, f"{args}: exit {rc}: {err[-600:]}")
        res = os.path.join(d, "results")
        (root,) = [os.path.join(res, x) for x in os.listdir(res) if x.endswith(f"-{made[-1]}")]
        docs = [json.load(open(os.path.join(top, "results.json")))
                for top, _, files in sorted(os.walk(root)) if "results.json" in files]
        check(docs, f"{args}: no boot saved: {err[-300:]}")
        return docs, err
    return env, driver, boots


# The default pinning depends on the host's CPUs (which core is CPU 0's),
# so this case runs on every fixture host (tests/host/on_hosts.py); what
# does not (--no-pin, a plain run, TCG, the lane) is the next case's, run
# once: together they took 26 s of the suite on seven hosts.
@case("run.sh ab and matrix pin the vCPUs by default under KVM, every boot's run.pin says so "
      "(pinned, its map; or not pinned and why: too few host CPUs, more vCPUs than cores)")
def _(s):
    cpus = machine.allowed_cpus()
    # A software KVM (PVM): default pinning leaves it alone and says why.
    pin, why = K.pin_plan(None, True, "kvm", 1, cpus, "this host's /dev/kvm is PVM")
    check(pin is None and why.startswith("this host's /dev/kvm is PVM"), f"PVM: {pin!r} {why}")
    _env, _driver, boots = stand_in_kvm(s, "pin-default")
    # matrix under KVM: pinned, before the guest ran, the map in every boot,
    # never on CPU 0's core (default_cpus); where this host has no other,
    # not pinned, and why.
    docs, _ = boots("matrix", "--accel", "kvm", "--presets", "x2apic", "--smp", "1",
                    "--boots", "2")
    want, why = K.default_cpus(cpus, 1)
    for doc in docs:
        pin = doc["run"].get("pin") or {}
        check(len(docs) == 2 and (
            pin.get("state") == "pinned" and want and want != [0] and
            [(p["vcpu"], p["host_cpu"]) for p in pin["map"]] == [(0, want[0])] and
            "by default under KVM" in pin["why"] and "-S" in doc["host"]["qemu_cmdline"]
            and pin["emulator"]["why"] if want else
            pin.get("state") == "not pinned" and pin["why"] == why), f"matrix: {pin}")
    # ab under KVM: both sides' boots pinned.
    docs, _ = boots("ab", "--module-param", "kvm.halt_poll_ns=0,1000", "--boots", "1",
                    "--accel", "kvm", "--smp", "1")
    check(len(docs) == 2 and all(doc["run"]["pin"]["state"] == ("pinned" if want else
                                                                 "not pinned") for doc in docs),
          f"ab: {[doc['run']['pin'] for doc in docs]}")
    # More vCPUs than host cores: not pinned, said, and the boots still run.
    many = str(len(cpus) + 1)
    docs, err = boots("matrix", "--accel", "kvm", "--presets", "x2apic", "--smp", many,
                      "--boots", "1")
    why = f"{many} vCPUs, "
    check(docs[0]["run"]["pin"]["state"] == "not pinned" and
          docs[0]["run"]["pin"]["why"].startswith(why) and
          f"run.sh: vCPUs not pinned: {why}" in err, f"{docs[0]['run']['pin']}: {err[-300:]}")


@case("run.sh's vCPUs not pinned, and why: --no-pin (QEMU not started paused), a plain run "
      "under KVM, TCG; a lane boot's pinning as the outer VM said it")
def _(s):
    env, driver, boots = stand_in_kvm(s, "pin-not")
    # --no-pin: not pinned, QEMU not even started paused.
    for cmd in (["matrix", "--presets", "x2apic"], ["ab", "--module-param",
                                                    "kvm.halt_poll_ns=0,1000"]):
        docs, _ = boots(*cmd, "--accel", "kvm", "--smp", "1", "--boots", "1", "--no-pin")
        check(all(doc["run"]["pin"] == {"state": "not pinned", "map": [], "why": "--no-pin"}
                  and "-S" not in doc["host"]["qemu_cmdline"] for doc in docs),
              f"{cmd[0]} --no-pin: {[doc['run']['pin'] for doc in docs]}")
        rc, _, err = run_cmd([RUN, *cmd, "--no-pin", "--pin"], env, 30)
        check(rc == 2 and "--pin and --no-pin: give one" in err, f"exit {rc}: {err}")
    # A plain run under KVM is not pinned unless asked.
    rc, _, err = run_cmd([sys.executable, driver, HOST, "--accel", "kvm",
                          "--smp", "1", "--quiet"], env, 60)
    saved = err.rsplit("results: ", 1)[-1].split()[0]
    pin = json.load(open(os.path.join(saved, "results.json")))["run"]["pin"]
    check(rc == 0 and pin["state"] == "not pinned" and pin["why"].startswith("not asked"),
          f"exit {rc}: {pin}: {err[-300:]}")
    # Under TCG nothing changes: not pinned, and why.
    docs, err = boots("matrix", "--accel", "tcg", "--presets", "x2apic", "--boots", "1",
                      QEMU=s.fake.qemu, FAKE_MODE="exit:65")
    pin = docs[0]["run"]["pin"]
    check(pin["state"] == "not pinned" and pin["why"].startswith("accel tcg:") and
          "-S" not in docs[0]["host"]["qemu_cmdline"] and "not pinned" not in err,
          f"{pin}: {err[-300:]}")
    # A lane boot's: what the outer VM said of its inner vCPUs.
    check(K.lane_pin("@@@ lane-info vcpu-pin vCPU:L1-CPU 0:0 1:1; housekeeping on L1 CPU 0: "
                     "3 other threads\n") ==
          {"state": "pinned", "map": [{"vcpu": 0, "host_cpu": 0}, {"vcpu": 1, "host_cpu": 1}],
           "why": "by the lane: inner vCPU i on L1 CPU i, the outer VM's"}, "lane pinned")
    check(K.lane_pin("@@@ lane-info vcpu-pin none: 4 vCPUs on 2 L1 CPUs, left to L1's "
                     "scheduler\n")["state"] == "not pinned" and
          K.lane_pin("")["state"] == "unknown", "lane not pinned, unknown")


if __name__ == "__main__":
    sys.exit(main(CASES))
