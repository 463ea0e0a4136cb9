#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`run.sh matrix --accel xen-in-tcg` (boot/matrix.py xen_batch): every
boot's frame in one outer VM, each boot then handed its own frame by
xen-lane.sh --from and saved as any boot is. Against a stand-in
xen-lane.sh whose --jobs run writes the frames as the real one would; the
real one hands them over (--from boots nothing), so its check that a frame
is the one the boot asks for is the real one's.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os

from harness import REPO, check, registry, run_cmd
from fixtures import RUN, ab_console, executable, main

CASES, case = registry()

STAND_IN = r"""#!/usr/bin/env bash
# A stand-in for host/lane/xen-lane.sh: a --jobs run writes each frame as
# the real one would (its log and status, DIR/jobs, outer.log with the
# guest's lines as Xen prints them); anything else is the real script's.
echo "$*" >>"$STAND_IN_LOG"
case " $* " in *" --jobs "*) ;; *) exec "$REAL_XEN_LANE" "$@" ;; esac
while [ $# -gt 0 ]; do
	case "$1" in --jobs) jobs=$2; shift ;; --out) out=$2; shift ;; --timeout) shift ;; esac
	shift
done
mkdir -p "$out"
while IFS= read -r spec; do
	line=$("$REAL_XEN_LANE" --dry-run --job "$spec") || exit 1
	frame=${line%%|*}
	echo "$line" >>"$out/jobs"
	echo "@@@ lane-begin $frame" >>"$out/outer.log"
	[ "$frame" = "${STAND_IN_UNFINISHED-}" ] && continue
	sed 's/^/(d1) /' "$FAKE_CONSOLE" >>"$out/outer.log"
	cp "$FAKE_CONSOLE" "$out/$frame.log"
	"$REAL_XEN_LANE" --dry-run --xl-cfg --job "$spec" | sed 1d >"$out/$frame.xl.cfg"
	echo 65 >"$out/$frame.status"
	# A traced frame (its options say exits): a trace as xenhost/xentrace.py writes one.
	case "$spec" in *"|"*exits*"|"*) echo "# ipibench-trace: xen" >"$out/$frame.trace" ;; esac
	echo "@@@ lane-end $frame status=- time=2.50s" >>"$out/outer.log"
done <"$jobs"
echo "xen-lane: [  9.9s] dom0: init started, up 4.00s"
"""


def stand_in(d):
    return executable(os.path.join(d, "xen-lane.sh"), STAND_IN)


@case("matrix --accel xen-in-tcg: one outer VM runs every boot's frame; each boot takes its "
      "own (xen-lane.sh --from), is saved with its frame's time, and one whose frame did not "
      "finish fails alone")
def _(s):
    d = os.path.join(s.tmp, "xen-matrix")
    os.makedirs(d)
    console = os.path.join(d, "console")
    with open(ab_console(s.tmp)) as f, open(console, "w") as g:
        g.write(f.read() + '{"record":"end","schema":1,"status":"SUCCESS","results":0}\n'
                "ipibench: status SUCCESS\n")
    log = os.path.join(d, "calls")
    env = {"IPIBENCH_XEN_LANE": stand_in(d), "REAL_XEN_LANE": os.path.join(
        REPO, "host/lane/xen-lane.sh"), "STAND_IN_LOG": log, "FAKE_CONSOLE": console,
        "IPIBENCH_RESULTS": os.path.join(d, "results"), "IPIBENCH_PREPARED": "1"}
    argv = [RUN, "matrix", "--accel", "xen-in-tcg", "--presets", "xen-pvh,xen-viridian",
            "--boots", "2", "--append", "plan=check", "--label", "xm"]
    rc, out, err = run_cmd(argv, env, 120)
    calls = open(log).read().splitlines()
    jobs = [c for c in calls if "--jobs" in c]
    froms = [c for c in calls if "--from" in c]
    check(rc == 0 and len(jobs) == 1 and len(froms) == 4, f"exit {rc}, {len(jobs)} --jobs "
          f"runs, {len(froms)} hand-overs: {err[-600:]}")
    check([c.split("--frame ")[1].split()[0] for c in froms] ==
          ["m1.xen-pvh", "m2.xen-pvh", "m3.xen-viridian", "m4.xen-viridian"], f"{froms}")
    check("run.sh: xen-lane: [  9.9s] dom0: init started" in err and
          "matrix: 4 frames in one outer VM" in err and
          "matrix: [4] xen-viridian-smp2 boot 2: exit 0 (its frame 2.50 s in the outer VM)" in err,
          f"the lane's progress: {err[-600:]}")
    (top,) = [os.path.join(d, "results", x) for x in os.listdir(os.path.join(d, "results"))]
    for cfg in ("xen-pvh-smp2", "xen-viridian-smp2"):
        for i in (1, 2):
            doc = json.load(open(os.path.join(top, cfg, f"boot{i}", "results.json")))
            n = (cfg == "xen-viridian-smp2") * 2 + i
            check(float(doc["run"]["seconds"]) == 2.5 and doc["host"]["accel"] == "xen-in-tcg" and
                  doc["run"]["xen"]["batch"]["frame"] == f"m{n}.{cfg[:-5]}" and
                  doc["run"]["xen"]["batch"]["frames_before"] == n - 1,
                  f"{cfg} boot{i}: {doc['run']['seconds']} {doc['run']['xen'].get('batch')}")
    # A frame that did not finish: its boot fails, the others are saved.
    rc, out, err = run_cmd(argv, dict(env, STAND_IN_UNFINISHED="m2.xen-pvh"), 120)
    check(rc == 8 and "matrix: [2] xen-pvh-smp2 boot 2: exit 8" in err and
          "matrix: [3] xen-viridian-smp2 boot 1: exit 0" in err and
          "its frame m2.xen-pvh did not finish" in err, f"exit {rc}: {err[-800:]}")
    # Refused before the outer VM runs: a topology, a newline in --append.
    for more, code, words in ((["--smp", "4,sockets=2"], 2, "--smp: the Xen lane takes a "),
                              (["--append", "plan=check\nbackends=x2apic"], 2, "no newline or '|'")):
        open(log, "w").close()
        rc, out, err = run_cmd(argv[:-4] + more + argv[-2:], env, 60)
        check(rc == code and words in err and open(log).read() == "",
              f"{more}: exit {rc}, calls {open(log).read()!r}: {err[-300:]}")
    # --exits: every frame traced in the batch (its jobs option, markers=1 on
    # its command line), each boot handed its trace with its frame.
    open(log, "w").close()
    rc, out, err = run_cmd(argv[:4] + ["--presets", "xen-pvh", "--boots", "1", "--exits"] + argv[8:],
                           env, 120)
    spec = open(os.path.join(d, "results", sorted(os.listdir(os.path.join(d, "results")))[-1],
                             "xen-lane", "jobs.in")).read()
    check(rc == 0 and "| inner-timeout=" in spec and " exits " in spec and "markers=1" in spec and
          "what the hypervisor did" in err and "Xen's trace (xentrace in the lane's dom0)" in err,
          f"exit {rc}, jobs {spec!r}: {err[-600:]}")
    # A boot asking for another frame than its own is refused by --from.
    rc, out, err = run_cmd([os.path.join(REPO, "host/lane/xen-lane.sh"), "--presets", "xen-pvh",
                            "--append", "plan=boot", "--from", os.path.join(top, "xen-lane"),
                            "--frame", "m1.xen-pvh", "--out", os.path.join(d, "wrong")], env, 30)
    check(rc != 0 and "ran 'xen-pvh|plan=check" in err, f"exit {rc}: {err}")
    # The same command line on another domain (4 vCPUs where the frame had 2).
    rc, out, err = run_cmd([os.path.join(REPO, "host/lane/xen-lane.sh"), "--presets", "xen-pvh",
                            "--append", "plan=check", "--vcpus", "4", "--from",
                            os.path.join(top, "xen-lane"), "--frame", "m1.xen-pvh", "--out",
                            os.path.join(d, "wrong")], env, 30)
    check(rc != 0 and "ran another domain" in err, f"exit {rc}: {err}")


if __name__ == "__main__":
    main(CASES)
