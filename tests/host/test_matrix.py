#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/matrix.py, `./run.sh matrix` against a stand-in QEMU: the boots, the
summary and the first failure's code; --smp topologies each in a folder of
its own; --exits and --require-apicv refused before the first boot where
they cannot work, else passed to every boot; gate --exits on the matrix.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import sys

from harness import REPO, check, registry, run_cmd
import hosts
from fixtures import RUN, main, qmp_stand_in


CASES, case = registry()


@case("run.sh matrix against a stand-in QEMU: boots, summary, the first failure's code")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "matrix")
    rc, out, err = run_cmd([RUN, "matrix", "--presets", "xapic,x2apic", "--boots", "2",
                            "--accel", "tcg", "--label", "m x"],
                           f.env("exit:71", IPIBENCH_RESULTS=root), 60)
    check(rc == 4, f"exit {rc}: {err[-300:]}")
    (mdir,) = os.listdir(root)
    check(mdir.endswith("-m_x"), mdir)
    summary = open(os.path.join(root, mdir, "summary.txt")).read().splitlines()
    check(summary == ["matrix m x: presets xapic,x2apic, -smp per preset, 2 boots",
                      "xapic-smp2 boot1 exit 4 FAILURE", "xapic-smp2 boot2 exit 4 FAILURE",
                      "x2apic-smp2 boot1 exit 4 FAILURE", "x2apic-smp2 boot2 exit 4 FAILURE"],
          f"{summary}")
    # No boot measured anything: no backend pair to suggest, the configurations' still.
    check("matrix: [4] x2apic-smp2 boot 2: exit 4 (" in err and "--pair" not in err and
          f"(same backends, same -smp): ./run.sh compare {root}/{mdir}/xapic-smp2 "
          f"{root}/{mdir}/x2apic-smp2" in err, err)
    doc = json.load(open(os.path.join(root, mdir, "x2apic-smp2", "boot2", "results.json")))
    check(doc["run"]["label"] == "x2apic-smp2" and doc["run"]["exit"] == 4, f"{doc['run']}")
    # A bad option for the boots stops the matrix before anything is made.
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--timeout", "x"],
                         f.env("exit:65", IPIBENCH_RESULTS=os.path.join(s.tmp, "m2")), 60)
    check(rc == 2 and "--timeout takes whole seconds, not 'x'" in err and
          not os.path.exists(os.path.join(s.tmp, "m2")), f"exit {rc}: {err}")


@case("run.sh matrix --smp with topologies: each boot gets its -smp value whole, one folder "
      "each; a bad one stops the matrix before anything is made")
def _(s):
    f = s.fake
    root = os.path.join(s.tmp, "matrix-topo")
    rc, _, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--boots", "1", "--accel", "tcg",
                          "--smp", "2;4,sockets=2,cores=2,threads=1", "--label", "t"],
                         f.env("exit:65", IPIBENCH_RESULTS=root), 60)
    check(rc == 0, f"exit {rc}: {err[-300:]}")
    (mdir,) = os.listdir(root)
    mdir = os.path.join(root, mdir)
    check(sorted(os.listdir(mdir)) == ["summary.txt", "xapic-smp2", "xapic-smp4-s2c2t1"],
          f"{os.listdir(mdir)}")
    log = open(os.path.join(mdir, "xapic-smp4-s2c2t1", "boot1", "console.log")).read()
    check(" -smp 4,sockets=2,cores=2,threads=1 " in log, log[:300])
    summary = open(os.path.join(mdir, "summary.txt")).read().splitlines()
    check(summary[1:] == ["xapic-smp2 boot1 exit 0 SUCCESS or SKIP",
                          "xapic-smp4-s2c2t1 boot1 exit 0 SUCCESS or SKIP"], f"{summary}")
    bad = os.path.join(s.tmp, "matrix-topo-bad")
    rc, out, err = run_cmd([RUN, "matrix", "--presets", "xapic", "--accel", "tcg", "--smp",
                            "2;8,sockets=2,cores=2,threads=1"], f.env("exit:65",
                                                                      IPIBENCH_RESULTS=bad), 60)
    check(rc == 2 and "run.sh: matrix: --smp '8,sockets=2,cores=2,threads=1': sockets 2 x "
          "cores 2 x threads 1 = 4 CPUs, but maxcpus is 8" in err and not os.path.exists(bad),
          f"exit {rc}: {err}")


# A stand-in QEMU for --exits (run.sh under IPIBENCH_PIN_ANY_ACCEL on a
# fixture host with a stand-in tracefs, IPIBENCH_HOST_ROOT): started paused with QMP and a pid
# file; on `cont` the guest "runs": a captured lane console (result records
# with their marks) on the serial line and that boot's KVM trace where the
# tracefs keeps it, then the SUCCESS status. It plays back a fixture's
# console and trace (FAKE_FIX) at `cont`.
FAKE_EXITS_QEMU = qmp_stand_in(before="""\
if args[:1] == ["--version"]:
    print("QEMU emulator version 9.2.0 (stand-in)")
    sys.exit(0)
print("fake qemu: " + " ".join(args), flush=True)""", on_cont="""\
fx = os.environ["FAKE_FIX"]
sys.stdout.write(open(fx + ".log").read())
shutil.copyfile(fx + ".trace", os.path.join(os.environ["IPIBENCH_HOST_ROOT"], "sys", "kernel",
                                            "tracing", "trace"))
sys.exit(65)""")


@case("run.sh matrix --exits, --require-apicv: refused before the first boot where they cannot "
      "work; passed to every boot, whose folder then holds what run --exits keeps; gate --exits "
      "on the matrix")
def _(s):
    d = os.path.join(s.tmp, "mexits")
    os.makedirs(d)
    qemu = os.path.join(d, "qemu")
    with open(qemu, "w") as fh:
        fh.write(FAKE_EXITS_QEMU)
    os.chmod(qemu, 0o755)
    traced = hosts.make(d, "intel-kvm", tracefs=True)
    fix = os.path.join(REPO, "tests", "fixtures", "traces", "svm-apic")

    def matrix(root, *args, **env):
        base = dict(s.fake.env("", IPIBENCH_RESULTS=os.path.join(d, root)), QEMU=qemu,
                    FAKE_FIX=fix, IPIBENCH_HOST_ROOT=traced)
        return run_cmd([RUN, "matrix", "--accel", "tcg", "--boots", "2", "--label", root, *args],
                       dict(base, **env), 120)

    # Refused as run refuses them, before anything is made or booted.
    for args, env, code, msg in (
            (["--exits"], {}, 29, "run.sh: --exits traces KVM's events: use --accel kvm on a "
             "KVM host (tracefs, root) or --accel kvm-in-tcg (the lane), not --accel tcg"),
            (["--exits"], {"IPIBENCH_PIN_ANY_ACCEL": "1",
                           "IPIBENCH_HOST_ROOT": hosts.make(d, "no-kvm")}, 29,
             "run.sh: --exits: no tracefs with KVM's events"),
            (["--require-apicv"], {}, 2, "run.sh: --require-apicv reads the KVM trace: it needs "
             "--exits")):
        rc, out, err = matrix("refused", "--presets", "x2apic,xapic", *args, **env)
        check(rc == code and msg in err and "matrix: [1]" not in err and
              not os.path.exists(os.path.join(d, "refused")), f"{args}: exit {rc}: {err}")
    # Passed on: each boot traced, its trace and exits kept as run --exits keeps them.
    rc, out, err = matrix("m", "--presets", "x2apic", "--exits", IPIBENCH_PIN_ANY_ACCEL="1")
    check(rc == 0, f"exit {rc}: {err[-600:]}")
    check(err.count("run.sh: what the hypervisor did, exits per measured iteration:") == 2 and
          "x2apic send-cost send: sender 1.00 msr (ICR)" in err, err[-600:])
    (mdir,) = os.listdir(os.path.join(d, "m"))
    mdir = os.path.join(d, "m", mdir)
    for i in (1, 2):
        boot = os.path.join(mdir, "x2apic-smp2", f"boot{i}")
        check("kvm-trace.txt" in os.listdir(boot), f"boot{i}: {os.listdir(boot)}")
        doc = json.load(open(os.path.join(boot, "results.json")))
        marked = [r for r in doc["records"] if "exits" in r]
        check(doc["run"]["exits"] is not None and len(marked) >= 4 and
              "markers=1" in " ".join(doc["host"]["qemu_cmdline"]), f"boot{i}: {doc['run']}")
    # gate --exits on the matrix against itself: every exit row compared, none worse.
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", mdir, mdir], timeout=60)
    check(rc == 0 and "exit rows compared (0 with more exits)" in err and
          "0 exit rows" not in err, f"exit {rc}: {err[-400:]}")
    # --require-apicv: the captured trace has AVIC disabled, so every boot exits 32,
    # the matrix goes on and exits with it.
    rc, out, err = matrix("apicv", "--presets", "x2apic", "--exits", "--require-apicv",
                          IPIBENCH_PIN_ANY_ACCEL="1")
    (adir,) = os.listdir(os.path.join(d, "apicv"))
    summary = open(os.path.join(d, "apicv", adir, "summary.txt")).read().splitlines()
    check(rc == 32 and summary[1:] == ["x2apic-smp2 boot1 exit 32 APICV-INHIBITED",
                                       "x2apic-smp2 boot2 exit 32 APICV-INHIBITED"],
          f"exit {rc}: {summary}: {err[-300:]}")
    # A matrix root of two configurations is refused by gate: one folder a side.
    rc, out, err = matrix("two", "--presets", "x2apic,xapic", "--boots", "1", "--exits",
                          IPIBENCH_PIN_ANY_ACCEL="1")
    (tdir,) = os.listdir(os.path.join(d, "two"))
    tdir = os.path.join(d, "two", tdir)
    check(rc == 0 and sorted(os.listdir(tdir)) == ["summary.txt", "x2apic-smp2", "xapic-smp2"],
          f"exit {rc}: {err[-300:]}")
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", tdir, tdir], timeout=60)
    check(rc == 30 and "pools 2 configurations (x2apic-smp2, xapic-smp2): give one "
          "configuration folder a side" in err, f"exit {rc}: {err[-400:]}")
    rc, out, err = run_cmd([RUN, "gate", "--exits", "--baseline", os.path.join(tdir, "xapic-smp2"),
                            os.path.join(tdir, "xapic-smp2")], timeout=60)
    check(rc == 0, f"one configuration folder a side: exit {rc}: {err[-400:]}")


if __name__ == "__main__":
    sys.exit(main(CASES))
