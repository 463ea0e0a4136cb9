#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`run.sh --accel xen` on a real Xen host's dom0 (xen-lane.sh --dom0), with
a stand-in xl: the frames go through host/lane/xen-frames.sh, the runner
the Xen lane's dom0 runs (the xen-lane group proves it under real Xen),
the guest's COM1 comes from the file its xl.cfg names, live (none of it
lost where a helper that reads the file dies, as busybox's sed once did
in the lane's dom0), and the run
is saved as any run is, with what xl info said of Xen. A host that is no
dom0 (77 from the lane, 9 from run.sh) and a PVH preset (2) are refused,
and so are a device model older than QEMU 8.0 or none (77, 9),
debug=corrupt-vpset (2: XSA-475) and a traced frame while another xentrace
runs (29). The preset's skips for the lane's outer emulator do not apply on
a real host.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os

from harness import REPO, check, registry, run_cmd
from fixtures import RUN, ab_console, executable, main, write

from ipibench.options import plants_corrupt_vpset

CASES, case = registry()

# xl as the runner uses it: create (the guest writes its console into the
# file its xl.cfg names, CRLF as a UART sends it, then powers off), domid,
# list, destroy, dmesg, info.
STAND_IN_XL = r"""#!/bin/sh
echo "xl $*" >>"$XL_STATE/calls"
case "$1" in
info) printf 'xen_version            : 4.17.5\nxen_commandline        : dom0_mem=4G\n' ;;
create)
	out=$(sed -n 's/^serial="file:\(.*\)"$/\1/p' "$2")
	[ -n "$out" ] || { echo "no serial file in $2" >&2; exit 1; }
	: >"$XL_STATE/alive"
	( sleep 1; sed 's/$/\r/' "$FAKE_CONSOLE" >>"$out"; sleep 1; rm -f "$XL_STATE/alive" ) &
	;;
domid) [ -e "$XL_STATE/alive" ] && echo 7 ;;
list)
	[ -e "$XL_STATE/alive" ] || exit 1
	printf 'Name ID Mem VCPUs State Time(s)\nipibench 7 64 2 r----- 1.0\n' ;;
destroy) rm -f "$XL_STATE/alive" ;;
dmesg) ;;
esac
"""


# The device model's --version, as QEMU words it.
STAND_IN_DM = """#!/bin/sh
echo "QEMU emulator version $DM_VERSION (Debian 1:$DM_VERSION+ds-2)"
echo "Copyright (c) 2003-2023 Fabrice Bellard and the QEMU Project developers"
"""


def doc_cmdline(d):
    """The guest's command line in the run's xl.cfg (results.json run.xen.xl_cfg)."""
    (run_dir,) = [os.path.join(d, "results", x) for x in os.listdir(os.path.join(d, "results"))]
    doc = json.load(open(os.path.join(run_dir, "results.json")))
    return [c for c in doc["run"]["xen"]["xl_cfg"] if c.startswith("cmdline=")]


def setup(s, name):
    d = os.path.join(s.tmp, name)
    state, bin_ = os.path.join(d, "state"), os.path.join(d, "bin")
    os.makedirs(state)
    os.makedirs(bin_)
    executable(os.path.join(bin_, "xl"), STAND_IN_XL)
    dm = executable(os.path.join(d, "qemu-system-i386"), STAND_IN_DM)
    console = os.path.join(d, "console")
    with open(ab_console(s.tmp)) as f, open(console, "w") as g:
        g.write(f.read() + '{"record":"end","schema":1,"status":"SUCCESS","results":0}\n'
                "ipibench: status SUCCESS\n")
    caps = write(os.path.join(d, "capabilities"), "control_d\n")
    env = {"PATH": bin_ + os.pathsep + os.environ["PATH"], "XL_STATE": state,
           "FAKE_CONSOLE": console, "XEN_LANE_DOM0_CAPS": caps,
           "XEN_LANE_DEVICE_MODEL": dm,
           "DM_VERSION": "8.2.2",
           "IPIBENCH_RESULTS": os.path.join(d, "results"), "IPIBENCH_PREPARED": "1"}
    return d, env


@case("--accel xen: a real dom0's frame through the lane's own runner (xen-frames.sh), the "
      "guest's COM1 from its file as it comes, saved with xl info's Xen, no lane skips; not a "
      "dom0 77/9, PVH 2")
def _(s):
    d, env = setup(s, "xen-dom0")
    # The runner's first read of the console file dies, as busybox's sed
    # once did in the lane's dom0: no line may be lost for it.
    real_sed = next(os.path.join(p, "sed") for p in os.environ["PATH"].split(os.pathsep)
                    if os.access(os.path.join(p, "sed"), os.X_OK))
    executable(os.path.join(d, "bin", "sed"), f"""#!/bin/sh
case "$1 $2 $3" in
"-n "[0-9]*,[0-9]*"p "*.console)
	[ -e "$XL_STATE/sed-died" ] || {{ : >"$XL_STATE/sed-died"; kill -SEGV $$; }} ;;
esac
exec {real_sed} "$@"
""")
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--append", "plan=check"], env, 120)
    check(os.path.exists(os.path.join(d, "state", "sed-died")), "the stand-in sed never died")
    calls = open(os.path.join(d, "state", "calls")).read()
    check(rc == 0 and "xl create " in calls and "xl destroy ipibench" in calls,
          f"exit {rc}, xl calls {calls!r}: {err[-800:]}")
    check("this host's Xen, from its dom0 (preset xen-viridian)" in err and
          "xen-viridian: xl create" in err and "outer emulator" not in err, err[-800:])
    check("skip=" not in json.dumps(doc_cmdline(d)), "the lane's skip= went to a real host")
    (run_dir,) = [os.path.join(d, "results", x) for x in os.listdir(os.path.join(d, "results"))]
    doc = json.load(open(os.path.join(run_dir, "results.json")))
    log = open(os.path.join(run_dir, "console.log")).read()
    check(doc["host"]["accel"] == "xen" and doc["run"]["xen"]["version"] == "4.17.5" and
          doc["run"]["xen"]["cmdline"] == "dom0_mem=4G" and
          any(c.startswith("serial=\"file:") for c in doc["run"]["xen"]["xl_cfg"]),
          f"{doc['host'].get('accel')} {doc['run'].get('xen')}")
    check(log.startswith("ipibench ") and "\r" not in log and
          log.rstrip().endswith("ipibench: status SUCCESS"), log[:200])
    # Refused: a host that is no dom0, a PVH preset.
    write(env["XEN_LANE_DOM0_CAPS"], "\n")
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--no-save", "--append", "plan=boot"], env, 60)
    check(rc == 9 and "not a Xen dom0" in err and "no Xen dom0 run.sh can use" in err,
          f"exit {rc}: {err[-400:]}")
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--preset", "xen-pvh", "--no-save"], env, 60)
    check(rc == 2 and "xen-pvh is PVH" in err, f"exit {rc}: {err[-400:]}")


@case("--accel xen: a device model older than QEMU 8.0, or none, is refused (77, 9), naming "
      "its path, version and what to install; debug=corrupt-vpset, also in a list or as "
      "debug=all, is refused (2, XSA-475) by run.sh and by xen-lane.sh --dom0")
def _(s):
    d, env = setup(s, "xen-dom0-refused")
    dm = env["XEN_LANE_DEVICE_MODEL"]
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--no-save", "--append", "plan=boot"],
                           dict(env, DM_VERSION="7.2.11"), 60)
    check(rc == 9 and f"the device model {dm} is QEMU 7.2" in err and
          "needs 8.0 or later" in err and "qemu-system-xen" in err, f"exit {rc}: {err[-600:]}")
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--no-save", "--append", "plan=boot"],
                           dict(env, XEN_LANE_DEVICE_MODEL=dm + ".gone"), 60)
    check(rc == 9 and f"no device model for HVM frames at {dm}.gone" in err,
          f"exit {rc}: {err[-600:]}")
    check(not os.path.exists(os.path.join(d, "state", "calls")), "xl ran all the same")
    for debug in ("debug=corrupt-vpset", "debug=fault-ap,corrupt-vpset", "debug=all"):
        rc, out, err = run_cmd([RUN, "--accel", "xen", "--no-save", "--append",
                                f"plan=check {debug}"], env, 60)
        check(rc == 2 and "XSA-475" in err and "--accel xen-in-tcg" in err,
              f"{debug}: exit {rc}: {err[-400:]}")
        rc, out, err = run_cmd([os.path.join(REPO, "host/lane/xen-lane.sh"), "--dom0",
                                "--presets", "xen-viridian", "--append", debug,
                                "--out", os.path.join(d, "lane")], env, 60)
        check(rc == 2 and f"{debug} is refused" in err and "XSA-475" in err,
              f"xen-lane.sh {debug}: exit {rc}: {err[-400:]}")
    check(not os.path.exists(os.path.join(d, "state", "calls")), "xl ran all the same")
    # Other debug keys, and a list that does not name it, pass the check
    # (its own words: a whole frame against the stand-in costs 2 s).
    for append, refused in (("plan=check debug=fault-ap", False),
                            ("debug=fault-ap,stall plan=boot", False),
                            ("debug=corrupt-vpsets", False), ("debug=all", True),
                            ("plan=boot debug=stall,corrupt-vpset", True)):
        check(plants_corrupt_vpset(append) == refused, f"{append}: refused {not refused}")


@case("--accel xen --exits: while another xentrace runs on the host the frame is not run "
      "(xen-frames.sh status 2, run.sh 29), and says why")
def _(s):
    d, env = setup(s, "xen-dom0-xentrace")
    executable(os.path.join(d, "bin", "pgrep"),
               '#!/bin/sh\n[ "$*" = "-x xentrace" ] && echo 4242\n')
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--exits", "--no-save", "--append",
                            "plan=boot"], env, 60)
    check(rc == 29 and "another xentrace runs on this host (pid 4242)" in err and
          "xen-viridian: another xentrace" in err, f"exit {rc}: {err[-600:]}")
    calls = os.path.join(d, "state", "calls")
    check("xl create" not in (open(calls).read() if os.path.exists(calls) else ""),
          "the frame ran")
    # Untraced, the same host runs it.
    rc, out, err = run_cmd([RUN, "--accel", "xen", "--no-save", "--append", "plan=boot"],
                           env, 120)
    check(rc == 0, f"untraced: exit {rc}: {err[-400:]}")


# xl create that dies of SIGSEGV, leaving a core where the runner's pattern
# says (the runner sets it in the lane's dom0; here a file stands for
# /proc/sys/kernel/core_pattern).
CRASHING_XL = r"""#!/bin/sh
case "$1" in
create)
	pattern=$(cat "$XEN_FRAMES_CORE_PATTERN")
	printf 'a core of xl\n' >"$(echo "$pattern" | sed 's/%e/xl/; s/%p/77/')"
	ulimit -c 0  # the core above stands for it: this host's pattern writes none
	kill -SEGV $$ ;;
domid | list) exit 1 ;;
esac
"""


@case("xen-frames.sh: xl create killed by a signal is named, its core sent and kept "
      "(DIR/FRAME.xl-core.gz), the frame run once more, then given up (status 1)")
def _(s):
    import gzip
    d = os.path.join(s.tmp, "xl-crash")
    frames, bin_, cores = (os.path.join(d, x) for x in ("frames", "bin", "cores"))
    for x in (frames, bin_, cores):
        os.makedirs(x)
    executable(os.path.join(bin_, "xl"), CRASHING_XL)
    write(os.path.join(frames, "list"), "c.xen-pvh|30|1|0\n")
    write(os.path.join(frames, "c.xen-pvh.cfg"), 'name="ipibench"\n')
    env = {"PATH": bin_ + os.pathsep + os.environ["PATH"], "XEN_FRAMES_CORES": cores,
           "XEN_FRAMES_CORE_PATTERN": os.path.join(d, "core_pattern")}
    rc, out, err = run_cmd(["sh", os.path.join(REPO, "host/lane/xen-frames.sh"), frames, "xen"],
                           env, 60)
    check(rc == 0 and out.count("@@@ lane-info xl create died of signal 11") == 2 and
          "@@@ lane-rerun c.xen-pvh xl-signal" in out and
          "@@@ lane-end c.xen-pvh status=1" in out and out.count("@@@ lane-core-begin") == 2,
          f"exit {rc}: {out[-600:]} {err[-300:]}")
    # The lane's split keeps the core beside the frame's console.
    lane = os.path.join(d, "lane")
    os.makedirs(lane)
    write(os.path.join(lane, "outer.log"), out)
    rc, _, err = run_cmd([os.path.join(REPO, "host/lane/xen-lane.sh"), "--resplit", lane], {}, 30)
    core = os.path.join(lane, "c.xen-pvh.xl-core.gz")
    check(rc == 0 and os.path.exists(core) and
          gzip.open(core).read() == b"a core of xl\n" and
          open(os.path.join(lane, "c.xen-pvh.status")).read().strip() == "1",
          f"exit {rc}: {sorted(os.listdir(lane))} {err[-300:]}")


if __name__ == "__main__":
    main(CASES)
