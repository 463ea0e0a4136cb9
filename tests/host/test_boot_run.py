#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/run.py, `./run.sh` booting once, end to end against a stand-in QEMU
(fixtures.Fake, a shell script): make's output as one line, statuses
decoded, the console streamed, the results saved; --append held against
the guest's keys before QEMU starts; exit 35 for a SKIP that ran nothing
asked for; TCG said once; timeout -k and a second signal; the
timeouts of --accel kvm-in-tcg against a stand-in lane.sh.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import signal
import subprocess
import sys
import time

from harness import REPO, Fail, check, expect, registry, run_cmd
import synth
from fixtures import HV, RUN, main, rec, res

from ipibench.boot import guest_keys as GK
from ipibench.boot import outcome as O
from ipibench.boot import qemu as Q
from ipibench.boot import run as B
from ipibench.boot import summary as S
from ipibench.boot import tap as T
from ipibench.exit_codes import EX_NOTHING_RAN


CASES, case = registry()


@case("run.sh build: make's output as one line on success, all of it on failure")
def _(s):
    steps = "".join(f"  CC       build/kernel/f{i}.o\n" for i in range(60)) + \
        "  LD       build/ipibench.linked.elf\n  OBJCOPY  build/ipibench.elf32\n" \
        "  OBJCOPY  build/ipibench.elf\n"
    check(B.build_lines(steps, "the guest") == ["run.sh: built the guest: 60 CC, 1 LD, 2 "
                                                "OBJCOPY (make V=1 shows each command)"],
          f"{B.build_lines(steps, 'the guest')}")
    check(B.build_lines("", "the guest") == [], "nothing built, nothing said")
    # What is no step (nasm's and ld's warnings: C's are errors) is shown as make printed it.
    warn = "kernel/entry.asm:12: warning: uninitialized space declared in .text section"
    check(B.build_lines(f"  NASM     build/boot/x.o\n{warn}\n  LD       build/x.elf\n",
                        "the ISO") == [warn, "run.sh: built the ISO: 1 NASM, 1 LD (make V=1 "
                                       "shows each command)"], "other lines")
    check(B.build_lines("ld: warning: x.o: missing .note.GNU-stack section\n", "the guest") ==
          ["ld: warning: x.o: missing .note.GNU-stack section"], "a warning alone")
    # Against a stand-in make: 63 lines become one; a failure shows them all.
    bin_dir = os.path.join(s.tmp, "make-bin")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "make"), "w") as f:
        f.write("#!/bin/sh\nprintf '%s' \"$FAKE_MAKE_OUT\"\n"
                "[ -z \"$FAKE_MAKE_FAIL\" ] || { echo 'kernel/x.c:1: error: oops' >&2; exit 2; }\n")
    os.chmod(os.path.join(bin_dir, "make"), 0o755)
    env = dict(s.fake.env("exit:65"), PATH=bin_dir + os.pathsep + os.environ["PATH"],
               FAKE_MAKE_OUT=steps + warn + "\n", IPIBENCH_PREPARED="")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"], env, 60)
    built = [line for line in (out + err).splitlines() if "build/" in line or "built" in line or
             "warning" in line]
    check(rc == 0 and built == [warn, "run.sh: built the guest: 60 CC, 1 LD, 2 OBJCOPY (make "
                                      "V=1 shows each command)"],
          f"exit {rc}: {built}; {err[-300:]}")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"],
                           dict(env, FAKE_MAKE_FAIL="1"), 60)
    check(rc == 10 and err.count("  CC       build/") == 60 and "error: oops" in err and
          "build failed" in err, f"exit {rc}: {err[-400:]}")


@case("run.sh against a stand-in QEMU: statuses decoded, console streamed, results saved")
def _(s):
    f = s.fake
    _, out, err = expect(f.run("exit:65", "--no-save", "--append", "plan=boot"), 0,
                         "run.sh: done, everything passed (guest status SUCCESS, exit 0)")
    check("fake qemu: " in out and "ipibench: status from exit:65" in out, f"streamed: {out}")
    check("-accel tcg -M q35 -cpu max -smp 4 -m 256M" in out, f"command line: {out}")
    _, out, _ = expect(f.run("exit:71", "--no-save", "--quiet"), 4, "FAILURE (QEMU exit 71)")
    check(out == "", f"--quiet printed {out!r}")
    expect(f.run("sigterm", "--no-save", "--quiet"), 8,
           "QEMU-KILLED (signal 15: QEMU was told to terminate) (QEMU exit 0)")
    expect(f.run("kill", "--no-save", "--quiet"), 8, "QEMU-KILLED (signal 9) (QEMU exit 137)")
    expect(f.run("exit:3", "--no-save", "--quiet"), 8, "QEMU-UNKNOWN (exit 3)")
    # A SKIP without a record measured and checked nothing: exit 35 (below).
    _, _, err = expect(f.run("exit:67", "--quiet", "--label", "saved", "--preset", "hv"), 35,
                       "run.sh: nothing that was asked for ran: no record says why (guest "
                       "status SKIP, exit 35)\nrun.sh: results: ")
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(os.path.basename(d).endswith("-saved"), d)
    doc = json.load(open(os.path.join(d, "results.json")))
    run, host = doc["run"], doc["host"]
    check((run["status"], run["exit"], run["qemu_exit"], run["preset"], host["accel"]) ==
          ("SKIP", 35, 67, "hv", "tcg"), f"{run} {host['accel']}")
    check(host["qemu_cmdline"][0] == f.qemu and "max,hv-relaxed,hv-vpindex,hv-ipi,hv-tlbflush,"
          "hv-tlbflush-ext" in host["qemu_cmdline"] and "QEMU emulator version 9.2.0" in
          host["qemu_version"], f"{host}")
    check(sorted(os.listdir(d)) == ["console.log", "results.json", "summary.txt"], f"{d}")


# A guest that asked for hv-ipi under TCG: every check and benchmark SKIPs
# (the harness's dry-run aside), as `--append backends=hv-ipi` does there.
HV_ONLY = [
    json.dumps(synth.env(cpus=2, trust=["tcg"])),
    "check: delivery correctness on 2 CPUs: x2APIC-mode backends",
    f"ok 1 - hv-ipi: every check # SKIP {HV}",
    f"ok 2 - hv-flush: every flush hypercall # SKIP {HV}",
    "1..2", "check: 0 passed, 0 failed, 2 skipped",
    rec("check", backend="all", passed=0, failed=0, skipped=2),
    rec("phase", index=1, of=2, backend="none", bench="dry-run"),
    json.dumps(synth.result(("dry-run", "loop", "none", "none", "none", 0), [26, 27, 28])),
    rec("phase", index=2, of=2, backend="hv-ipi", bench="all"),
    json.dumps(synth.result(("single", "round-trip", "none", "hv-ipi", "spin", 1),
                            status="SKIP", reason=HV)),
    rec("end", status="SKIP", results=2),
]


@case("run.sh where results cannot be kept: exit 28 saying why, naming IPIBENCH_RESULTS and "
      "--no-save, before QEMU starts; --no-save then boots")
def _(s):
    f = s.fake
    blocker = os.path.join(s.tmp, "a-file")
    open(blocker, "w").close()
    env = f.env("exit:65", IPIBENCH_RESULTS=os.path.join(blocker, "results"))
    _, out, err = expect(run_cmd([RUN, "--accel", "tcg", "--append", "plan=boot"], env), 28,
                         f"run.sh: cannot create {blocker}/results: Not a directory; "
                         "IPIBENCH_RESULTS=DIR keeps them elsewhere, --no-save keeps nothing")
    check("fake qemu: " not in out, f"QEMU started: {out}")
    expect(run_cmd([RUN, "--accel", "tcg", "--no-save", "--append", "plan=boot"], env), 0,
           "everything passed")


@case("run.sh --append against the guest's keys (build/guest-keys.json): a typo key or choice "
      "exits 2 naming what it meant, before QEMU starts (a matrix: before its first boot); a "
      "good line boots, and so does any with IPIBENCH_GUEST_KEYS empty")
def _(s):
    f = s.fake
    check(os.path.isfile(GK.KEYS_FILE), f"no {GK.KEYS_FILE}: make writes it")
    for line, said in (("plna=check", "unknown key 'plna' in 'plna=check' (did you mean plan?)"),
                       ("plan=chek", "'plan=chek': unknown choice 'chek' (did you mean check?; "
                                     "accepted: default, boot, check, bench)")):
        _, out, _ = expect(f.run("exit:65", "--no-save", "--append", line), 2,
                           f"run.sh: --append: {said}")
        check("fake qemu: " not in out, f"QEMU started: {out}")
    root = os.path.join(s.tmp, "typo-matrix")
    _, out, _ = expect(run_cmd([RUN, "matrix", "--presets", "x2apic", "--boots", "1", "--accel",
                                "tcg", "--append", "plan=bench bench=singel"],
                               f.env("exit:65", IPIBENCH_RESULTS=root)), 2,
                       "run.sh: --append: 'bench=singel': unknown item 'singel' (did you mean "
                       "single?; accepted: ")
    check("fake qemu: " not in out and not os.path.exists(root), f"a boot or a folder: {out}")
    expect(f.run("exit:65", "--no-save", "--quiet", "--append", "plan=check bench=single "
                 "iters=1k lava=on"), 0, "everything passed")
    # IPIBENCH_GUEST_KEYS empty: no check, the guest's own parser decides.
    expect(run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet", "--append", "plna=check"],
                   f.env("exit:75", IPIBENCH_GUEST_KEYS="")), 6, "BAD-CMDLINE (QEMU exit 75)")


@case("run.sh exit 35: a SKIP that measured and checked nothing asked for never passes")
def _(s):
    f = s.fake
    # What counts: a check passed, or a result of a backend; not the harness's dry-run.
    suite = T.suite_labels("\n".join(x for x in HV_ONLY if isinstance(x, str)))
    records = [json.loads(x) for x in HV_ONLY if x.startswith("{")]
    check(O.ran_nothing(records, suite) == [HV], f"{O.ran_nothing(records, suite)}")
    one = T.suite_labels("ok 1 - x2apic: self on CPU 0, vector 0x41\n")
    check(O.ran_nothing(records, one) is None, "a passed check ran")
    check(O.ran_nothing(records + [json.loads(res("x2apic", "single", "round-trip"))], {})
          is None and O.ran_nothing([json.loads(res("none", "flush", "call"))]) is None,
          "a measured figure ran")
    # The harness's dry-run counts when it was asked for by name.
    asked = [dict(records[0], cmdline="bench=dry-run,single backends=hv-ipi")] + records[1:]
    check(O.ran_nothing(asked, suite) is None, "bench=dry-run")
    check(O.ran_nothing([{"record": "check", "passed": 3}]) is None, "the check record")
    # Under TCG, saved: the summary says why 35, the last line the reasons; the
    # results keep the guest's SKIP and the exit code.
    root = os.path.join(s.tmp, "nothing")
    rc, out, err = run_cmd([RUN, "--accel", "tcg", "--label", "hv"],
                           f.env("exit:67", FAKE_LINES="\n".join(HV_ONLY), IPIBENCH_RESULTS=root),
                           60)
    flat = " ".join(line.strip() for line in out.splitlines())
    check(rc == 35 and f"run.sh: nothing that was asked for ran: {HV} (guest status SKIP, exit "
          "35)\nrun.sh: results: " in err, f"exit {rc}: {err[-400:]}")
    check("why exit 35: nothing that was asked for ran (under TCG): every check and benchmark "
          "SKIPped (reasons above)" in flat and "skipped: hv-ipi: no Hyper-V interface (see "
          "above)" in flat and "why SKIP, exit 0" not in flat and
          "proved: no delivery check could run here; 1 backend SKIPped every check" in flat,
          flat[-900:])
    (d,) = os.listdir(root)
    run = json.load(open(os.path.join(root, d, "results.json")))["run"]
    check((run["status"], run["exit"]) == ("SKIP", 35), f"{run}")
    # One passed check is something that ran: exit 0 as before.
    passed = HV_ONLY[:2] + ["ok 1 - x2apic: self on CPU 0, vector 0x41"] + HV_ONLY[2:]
    expect(run_cmd([RUN, "--accel", "tcg", "--no-save", "--quiet"],
                   f.env("exit:67", FAKE_LINES="\n".join(passed)), 60), 0,
           "run.sh: done, nothing failed (guest status SKIP, exit 0)")
    # plan=boot asks for nothing measured and ends SUCCESS: exit 0.
    expect(f.run("exit:65", "--no-save", "--quiet", "--append", "plan=boot"), 0,
           "everything passed")
    # A matrix boot with 35 is a failing boot: the matrix exits 35, the summary says why.
    root = os.path.join(s.tmp, "nothing-matrix")
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "x2apic", "--boots", "2", "--accel",
                          "tcg", "--label", "n"], f.env("exit:67", IPIBENCH_RESULTS=root), 60)
    (mdir,) = os.listdir(root)
    summary = open(os.path.join(root, mdir, "summary.txt")).read().splitlines()
    check(rc == 35 and summary[1:] == ["x2apic-smp2 boot1 exit 35 NOTHING-RAN (guest SKIP: "
                                       "nothing asked for ran)", "x2apic-smp2 boot2 exit 35 "
                                       "NOTHING-RAN (guest SKIP: nothing asked for ran)"],
          f"exit {rc}: {summary}; {err[-300:]}")
    check(EX_NOTHING_RAN == 35 and EX_NOTHING_RAN not in Q.SETUP_CODES, "35")


@case("run.sh under TCG says so once: in the summary, else from the accelerator it chose")
def _(s):
    f = s.fake
    notice = "under TCG: timings are emulated, only behaviour counts"
    # A boot of its own (a matrix's boots say nothing of it): a stand-in make, up to date.
    bin_dir = os.path.join(s.tmp, "make-none")
    os.makedirs(bin_dir, exist_ok=True)
    with open(os.path.join(bin_dir, "make"), "w") as fh:
        fh.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(bin_dir, "make"), 0o755)

    def boot(mode, *args, **more):
        env = f.env(mode, PATH=bin_dir + os.pathsep + os.environ["PATH"], IPIBENCH_PREPARED="",
                    **more)
        return run_cmd([RUN, "--accel", "tcg", *args], env, 60)
    # No record, so no summary (a boot that died before its env record): run.sh says it.
    for args in (["--no-save"], ["--no-save", "--verbose"], []):
        _, out, err = expect(boot("exit:71", "--label", "t", *args), 4)
        check((out + err).count(notice) == 1 and f"run.sh: ran {notice}\n" in err,
              f"{args}: {err[-300:]}")
    # --quiet says it before the boot, once.
    _, out, err = expect(boot("exit:71", "--no-save", "--quiet"), 4)
    check((out + err).count(notice) == 1 and f"run.sh: running {notice}" in err, err[-300:])
    # The summary said it: run.sh does not again.
    _, out, err = expect(boot("exit:67", "--no-save", FAKE_LINES="\n".join(HV_ONLY)), 35)
    check(notice not in out + err and "figures are emulated" in out, f"{out[-300:]}{err}")
    # Not TCG (the KVM lane says its own words): nothing.
    check(not any(notice in line for line in S.summary([{"record": "end", "status": "SKIP"}])),
          "summary")


@case("run.sh timeout -k: a QEMU deaf to SIGTERM is killed 5 s after --timeout; exit 7")
def _(s):
    t0 = time.monotonic()
    expect(s.fake.run("stubborn", "--no-save", "--quiet", "--timeout", "1"), 7,
           "TIMEOUT (QEMU exit 137)")
    secs = time.monotonic() - t0
    check(5.5 < secs < 20, f"ended after {secs:.1f} s, expected 1 + 5")


@case("run.sh signals: SIGTERM to a deaf QEMU, a second signal kills it at once; exit 11")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "sig")
    p = subprocess.Popen([RUN, "--accel", "tcg", "--quiet"], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **f.env("stubborn", IPIBENCH_RESULTS=root)))
    log, end = None, time.monotonic() + 20
    while time.monotonic() < end and not log:
        for r, _, files in os.walk(root):
            if "console.log" in files and "started" in open(os.path.join(r, "console.log")).read():
                log = os.path.join(r, "console.log")
        time.sleep(0.1)
    check(log is not None, "the stand-in never started")
    p.send_signal(signal.SIGHUP)
    time.sleep(1)
    check(p.poll() is None, "ended on SIGTERM though QEMU ignores it")
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Fail("a second signal did not end it")
    check(p.returncode == 11 and time.monotonic() - t0 < 3, f"exit {p.returncode}: {err}")
    check("run.sh: interrupted by SIGINT; incomplete log: " in err, err)
    last = open(log).read().rstrip().splitlines()[-1]
    check(last.startswith("run.sh: INCOMPLETE: interrupted by SIGINT after "), last)
    check(os.listdir(os.path.dirname(log)) == ["console.log"], "results saved")


# A stand-in host/lane/lane.sh (IPIBENCH_LANE): the files a real one
# leaves in --out when the outer VM's bound ran out inside the guest's frame
# (FAKE_LANE=outer, exit 124) or when the guest's own bound killed it and the
# outer VM still sent its console and trace (FAKE_LANE=inner, status 137).
FAKE_LANE = r"""#!/bin/sh
while [ $# -gt 0 ]; do
	case "$1" in --exits) shift; continue ;; --out) out=$2 ;; esac
	shift 2
done
fx=$FAKE_FIX
echo "kvm-lane: outer VM: booting (1 presets, bound 65s)"
case "$FAKE_LANE" in
outer)
	{ head -n 3 "$fx/svm-apic.log"; echo "the guest still running"; } >"$out/x2apic.log"
	{ echo "@@@ lane-begin x2apic"; cat "$out/x2apic.log"; } >"$out/outer.log"
	echo "kvm-lane: error: outer VM timed out after 65s, running preset x2apic (see $out/outer.log)" >&2
	exit 124 ;;
inner)
	cp "$fx/svm-apic.log" "$out/x2apic.log"
	cp "$fx/svm-apic.trace" "$out/x2apic.trace"
	echo 137 >"$out/x2apic.status"
	{ echo "@@@ lane-begin x2apic"; cat "$out/x2apic.log"; echo "@@@ lane-end x2apic status=137 time=5.00s"; } >"$out/outer.log"
	exit 0 ;;
lockup | host-rip)
	# A second run of the frame, after the outer kernel's soft lockup or the
	# outer TCG's reset.
	cp "$fx/svm-apic.log" "$out/x2apic.log"
	echo 65 >"$out/x2apic.status"
	why="soft-lockup: BUG: soft lockup - CPU#1 stuck for 22s! [qemu-system-x86:163]"
	[ "$FAKE_LANE" = lockup ] || why="host-rip=0xffffffffc0797b40 kvm_amd=0xffffffffc0780000+200704"
	{ echo "@@@ lane-begin x2apic"; echo "@@@ lane-rerun x2apic $why"; echo "@@@ lane-begin x2apic"
	  cat "$out/x2apic.log"; echo "@@@ lane-end x2apic status=65 time=5.00s"; } >"$out/outer.log"
	exit 0 ;;
esac
"""


@case("run.sh --accel kvm-in-tcg timeouts: console, records, trace and the outer VM's log kept; one bound")
def _(s):
    stub = os.path.join(s.tmp, "lane-fake")
    with open(stub, "w") as f:
        f.write(FAKE_LANE)
    os.chmod(stub, 0o755)
    root = os.path.join(s.tmp, "lane-results")

    def lane(mode, *args):
        env = dict(s.fake.env("", IPIBENCH_RESULTS=root), IPIBENCH_LANE=stub, FAKE_LANE=mode,
                   FAKE_FIX=os.path.join(REPO, "tests", "fixtures", "traces"))
        return run_cmd([RUN, "--accel", "kvm-in-tcg", "--preset", "x2apic", "--quiet",
                        "--timeout", "5", *args], env, 60)

    # The outer VM's bound, inside the frame: that bound, once, and where the guest was.
    _, _, err = expect(lane("outer"), 7, "run.sh: the KVM lane's outer VM ran past its bound, "
                       f"65 s (--timeout and {B.LANE_SETUP_S} s for its boot and the trace): "
                       "the guest was still running", "TIMEOUT (QEMU exit 124) after 65 s",
                       "to run less in the lane: --append plan=check")
    check("after 5 s" not in err and "/tmp/ipibench-lane." not in err, err)
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(sorted(os.listdir(d)) == ["console.log", "lane.txt", "outer.log", "results.json",
                                    "summary.txt"], f"{os.listdir(d)}")
    check(open(os.path.join(d, "console.log")).read().endswith("the guest still running\n"),
          "console.log is not the guest's")
    doc = json.load(open(os.path.join(d, "results.json")))
    check(doc["run"]["status"] == "TIMEOUT" and
          len([r for r in doc["records"] if r.get("record") == "result"]) == 3, f"{doc['run']}")
    # The guest's own bound: the outer VM sent the trace of what it finished.
    _, _, err = expect(lane("inner", "--exits"), 7, "TIMEOUT (QEMU exit 124) after 5 s",
                       "| APIC accelerated: no (")
    d = err.rsplit("results: ", 1)[1].split()[0]
    check(sorted(os.listdir(d)) == ["console.log", "kvm-trace.txt", "lane.txt", "outer.log",
                                    "results.json", "summary.txt"], f"{os.listdir(d)}")
    doc = json.load(open(os.path.join(d, "results.json")))
    marked = [r for r in doc["records"] if "exits" in r]
    check(len(marked) == 6 and all(r["exits"]["apic_accel"] == "no" for r in marked),
          f"{[r.get('exits') for r in doc['records']]}")
    # A frame the lane ran twice: run.sh says why, and that this is the second.
    for mode, why in (("lockup", "the outer VM's kernel failed in the first boot (soft-lockup); "
                                 "a fresh outer VM ran it again"),
                      ("host-rip", "the first boot reset with the outer TCG's known SVM fault")):
        _, _, err = expect(lane(mode), 0, f"run.sh: {why} (host/lane/README.md); this is "
                           "the second")
        check(err.count("this is the second") == 1, err)
    # Nothing to save into: the lane's folder stays, and is named.
    _, _, err = expect(lane("outer", "--no-save"), 7, "run.sh: the lane's logs are kept in ")
    kept = err.split("run.sh: the lane's logs are kept in ", 1)[1].split()[0]
    check(os.path.isfile(os.path.join(kept, "outer.log")), f"{kept}: {err}")
    subprocess.run(["rm", "-rf", kept])


if __name__ == "__main__":
    sys.exit(main(CASES))
