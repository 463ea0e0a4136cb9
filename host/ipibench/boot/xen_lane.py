# SPDX-License-Identifier: GPL-2.0-only
"""--accel xen-in-tcg: one Xen preset (xen-presets.conf) under the Xen
hypervisor nested in a QEMU TCG VM, the Xen lane (host/lane/xen-lane.sh,
docs/xen.md); --accel xen: an HVM one on this host's Xen, from its dom0
(xen-lane.sh --dom0: the runner the lane's dom0 runs, xen-frames.sh). Its presets name xl settings (PVH or HVM, viridian's groups),
not QEMU -cpu flags; the guest's status is its console's last line (a Xen
guest has no isa-debug-exit), which xen-lane.sh turns into the KVM lane's
exit status. With --exits xentrace runs in dom0 for the frame, and its
trace, read into a KVM trace's lines (xenhost/xentrace.py), gives the
records their exits as a KVM run's; without, a record's exits stay unknown."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time

from ipibench.exit_codes import (EX_DEPS, EX_INTERRUPTED, EX_PRESET, EX_SAVE, EX_UNAVAILABLE,
                                 EX_USAGE, ToolError)
from ipibench import REPO
from ipibench.jobs import elapsed, say
from ipibench.options import memory_mib, XEN_ACCELS
from ipibench.boot import lane_stream as S

XEN_LANE = "host/lane/xen-lane.sh"
ACCELS = XEN_ACCELS  # the lane's and a real dom0's
XEN_PRESETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "xen-presets.conf")
# The outer VM's own share of the bound: Xen and dom0 boot (12 s here, 25 s
# on a loaded host) and power-off, with room for a slow host.
XEN_SETUP_S = 90
# A real dom0 takes HVM presets only (xen-lane.sh --dom0 says why).
DEFAULT_PRESET = {"xen-in-tcg": "xen-pvh", "xen": "xen-viridian"}
# What every result record of a Xen-lane run says of its exits (save.py).
EXITS_UNKNOWN = ("unknown: not traced (--exits runs xentrace in the lane's dom0: "
                 "docs/xen.md)")


def load_xen_presets(path=XEN_PRESETS):
    """xen-presets.conf -> {name: {type, vcpus, settings, keys, description}} (its
    format is in its header); ToolError 10 for a malformed table."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ToolError(EX_PRESET, f"{path}: cannot read the Xen presets: {e}")
    out = {}
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [x.strip() for x in line.split("|")]
        where = f"{path}:{n}"
        if len(fields) != 6:
            raise ToolError(EX_PRESET, f"{where}: {len(fields)} fields, expected 6 (name | type | vcpus | xl settings | guest keys | description)")
        name, kind, vcpus, settings, keys, desc = fields
        if not re.fullmatch(r"xen-[a-z0-9-]+", name) or name in out:
            raise ToolError(EX_PRESET, f"{where}: bad or repeated Xen preset name {name!r} (xen-, then lower-case letters, digits and '-')")
        if kind not in ("pvh", "hvm"):
            raise ToolError(EX_PRESET, f"{where}: type {kind!r} is not pvh or hvm")
        if not re.fullmatch(r"[1-9][0-9]{0,2}", vcpus):
            raise ToolError(EX_PRESET, f"{where}: vcpus {vcpus!r} is not a vCPU count")
        if any("=" not in k for k in keys.split()):
            raise ToolError(EX_PRESET, f"{where}: guest keys {keys!r} are not key=value words")
        out[name] = {"type": kind, "vcpus": int(vcpus), "settings": settings,
                     "keys": keys.split(), "description": desc}
    return out


def print_xen_presets(path=XEN_PRESETS):
    """`./run.sh list`'s second part: the Xen presets, described."""
    presets = load_xen_presets(path)
    width = max((len(n) for n in presets), default=4)
    print(f"\nXen presets (--accel xen-in-tcg; {os.path.relpath(path)}):")
    for name, p in presets.items():
        print(f"{name.ljust(width)}  {p['type']}, {p['vcpus']} vCPUs  {p['description']}")
        for line in filter(None, p["settings"].split(";")):
            print(f"{''.ljust(width)}  xl: {line.strip()}")
        if p["keys"]:
            print(f"{''.ljust(width)}  guest: {' '.join(p['keys'])}")
    return 0


def xen_preset(name):
    """The named Xen preset, or ToolError 10 listing them."""
    presets = load_xen_presets()
    if name not in presets:
        raise ToolError(EX_PRESET, f"unknown Xen preset {name!r} (--accel xen-in-tcg takes "
                        f"those of {XEN_PRESETS}: {', '.join(presets)})")
    return presets[name]


def boot(b):
    """Boot b's preset in the Xen lane: sets b.qemu (the lane's command, kept
    in results.json), b.started, b.seconds and b.rc, and writes the guest's
    console to b.log, as Boot.boot_lane does for the KVM lane."""
    from ipibench.boot import run as B  # run.py imports this module: not at its top
    o = b.o
    if o.cpu:
        say(f"run.sh: --accel xen-in-tcg takes the guest's interfaces from the Xen preset ({b.preset}), not --cpu")
    for line in preset_notes(b.preset, o.append, b.accel):
        say(line)
    b.qemu = [XEN_LANE, *frame_args(b)]  # kept
    try:
        out = tempfile.mkdtemp(prefix="ipibench-xen-lane.", dir="/tmp")
    except OSError:
        raise ToolError(EX_SAVE, "cannot create a temporary directory")
    keep = False
    try:
        b.started = B.utc_now()
        t0 = time.monotonic_ns()
        traced = "Xen's exits traced (xentrace in dom0)" if o.exits else "exits are not traced"
        if b.accel == "xen":
            say(f"run.sh: this host's Xen, from its dom0 (preset {b.preset}); {traced}")
        else:
            say(f"run.sh: Xen nested inside QEMU TCG (preset {b.preset}): timings are doubly "
                f"emulated, only behaviour counts; {traced}")
        # The guest's lines and the lane's progress as they come (lane_stream).
        lock = threading.Lock()
        frame = S.FrameLines(b.preset, B.Lines(b.console, b.screen if o.verbose else None), lock)
        lane_txt = os.path.join(out, "lane.txt")
        with open(lane_txt, "wb") as f:
            follow = [B.Follower(os.path.join(out, "outer.log"), frame),
                      B.Follower(lane_txt, S.LaneProgress(o.quiet, b.console, lock))]
            try:
                rc = b.jobs.run(lane_argv(b, out), stdout=f, stderr=subprocess.STDOUT)
            finally:
                for x in follow:
                    x.finish()
        b.seconds = elapsed(t0)
        frm = b.env.environ.get("IPIBENCH_XEN_FROM")
        if frm:
            # Handed over from the matrix's outer boot: the frame's own time.
            b.seconds = frame_seconds(B.read_text(os.path.join(out, "outer.log")),
                                      b.preset) or b.seconds
        if rc == EX_INTERRUPTED:
            b.jobs.check(b.seconds)
        keep = take(b, out, rc)
        if frm and isinstance(b.xen, dict):
            # Say where the frame ran: the matrix's one outer VM, after others.
            name = b.env.environ.get("IPIBENCH_XEN_FRAME", "")
            m = re.match(r"m([0-9]+)\.", name)
            b.xen["batch"] = {"folder": frm, "frame": name,
                              "frames_before": int(m.group(1)) - 1 if m else None}
        if b.rc not in (65, 67):  # neither SUCCESS nor SKIP: a fault we know?
            lane = B.read_text(lane_txt) + B.read_text(os.path.join(out, "outer.log"))
            for why in S.known_causes(B.read_text(b.log), lane, skips_in_force(b.preset, o.append, b.accel)):
                say(f"run.sh: a known cause: {why}")
        if not frame.count:
            # No guest line came live (a lane that failed before the frame,
            # or a stand-in that wrote none): the guest's log, after the fact.
            lines = S.guest_lines(B.read_text(b.log))
            if o.verbose:
                b.screen.write("\n".join(lines))
            for line in lines:
                b.console.line(line)
    finally:
        if not keep:
            shutil.rmtree(out, ignore_errors=True)


def frame_args(b):
    """The frame as xen-lane.sh takes it: the preset, the command line, and
    the domain's vCPUs and memory where --smp and --memory asked for them
    (options.check_xen let through only what xl.cfg can say)."""
    args = ["--presets", b.preset, "--append", frame_append(b.o)]
    if b.o.exits:
        args.append("--exits")
    if b.o.smp:
        args += ["--vcpus", b.o.smp]
    if b.o.asked("memory"):
        args += ["--memory", str(max(1, round(memory_mib(b.o.memory))))]
    return args


def frame_append(o):
    """The guest's command line: --exits adds markers=1 (the windows
    xentrace's records are read in), as it does for a KVM run."""
    return f"{o.append} markers=1".strip() if o.exits else o.append


def preset_notes(name, append, accel="xen-in-tcg"):
    """What the preset adds to the guest's command line that changes what
    runs, said once: what it skips (xen-presets.conf), for the lane's outer
    emulator only (a real dom0 takes no skip=, xen-lane.sh --dom0)."""
    if accel == "xen":
        return []
    asked = {w.split("=", 1)[0] for w in append.split()}
    return [f"run.sh: the Xen lane skips what its outer emulator cannot run ({k}, {name}'s; "
            "skip=none runs it): the TPR holds livelock in Xen's TPR window, and a CR8 write "
            "with an IPI pending aborts the outer QEMU (docs/xen.md)"
            for k in xen_preset(name)["keys"] if k.startswith("skip=") and "skip" not in asked]


def skips_in_force(name, append, accel="xen-in-tcg"):
    """The skip= words the guest runs with: the command line's, else the
    lane's preset's (xen-presets.conf)."""
    words = [w for w in append.split() if w.startswith("skip=")] or \
        [k for k in xen_preset(name)["keys"] if k.startswith("skip=") and accel != "xen"]
    return {x for w in words for x in w.split("=", 1)[1].split(",")}


def lane_argv(b, out):
    """xen-lane.sh's command line for b's frame, its logs in out; a boot of
    a matrix takes its frame from the matrix's one outer boot
    (IPIBENCH_XEN_FROM and IPIBENCH_XEN_FRAME, matrix.xen_batch)."""
    env = b.env.environ
    lane = env.get("IPIBENCH_XEN_LANE") or XEN_LANE
    handed = ["--from", env["IPIBENCH_XEN_FROM"], "--frame", env.get("IPIBENCH_XEN_FRAME", "")] \
        if env.get("IPIBENCH_XEN_FROM") else []
    return [lane, *frame_args(b), "--out", out, "--inner-timeout", b.o.timeout,
            "--timeout", str(int(b.o.timeout) + XEN_SETUP_S), *dom0_args(b.accel), *handed]


def dom0_args(accel):
    """xen-lane.sh's --dom0 under --accel xen: no outer VM, this host's Xen."""
    return ["--dom0"] if accel == "xen" else []


def check_dom0_preset(name):
    """--accel xen takes an HVM preset: ToolError 2 for a PVH one."""
    if xen_preset(name)["type"] != "hvm":
        raise ToolError(EX_USAGE, f"--accel xen: {name} is PVH, whose console is Xen's debug "
                        "port, which a release Xen logs at debug level only (hvm_print_line()); "
                        "an HVM preset's COM1 goes to a file (xen-viridian)")


def frame_seconds(outer, frame):
    """The seconds a frame's domain ran, from its lane-end line in outer.log,
    or None."""
    m = re.findall(rf"^@@@ lane-end {re.escape(frame)} \S+ time=([0-9.]+)s$", outer, re.M)
    return m[-1] if m else None


def dry_run(b):
    """--dry-run under xen-in-tcg: the lane's command, the guest's command
    line and the frame's xl.cfg, as xen-lane.sh composes them."""
    for line in preset_notes(b.preset, b.o.append, b.accel):
        say(line)
    argv = lane_argv(b, "OUT")
    print(shlex.join(argv))
    frame = argv[:argv.index("--out")]
    for extra, show in ((["--dry-run"], command_line_text), (["--dry-run", "--xl-cfg"], str)):
        done = subprocess.run([*frame, *extra], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ToolError(EX_USAGE, f"xen-lane.sh --dry-run: {done.stderr.strip()}")
        print(show(done.stdout.rstrip("\n")))


def command_line_text(lines):
    """xen-lane.sh --dry-run's FRAME|PRESET|COMMAND LINE lines, in words."""
    out = []
    for line in lines.splitlines():
        frame, _, rest = line.partition("|")
        out.append(f"frame {frame}: the guest's command line: {rest.partition('|')[2]}")
    return "\n".join(out)


def xen_facts(outer, frame_argv, kept_cfg=""):
    """What ran the guest, from the outer VM's console (Xen's boot lines),
    the lane's cache (dom0's kernel) and the frame's xl.cfg: the one the
    frame ran with (kept_cfg, xen-lane.sh's DIR/FRAME.xl.cfg), else as
    xen-lane.sh writes it (frame_argv: its command line without --out):
    results.json's run.xen."""
    def line(*patterns):
        for pattern in patterns:
            m = re.search(pattern, outer, re.M)
            if m:
                return m.group(1).strip()
        return None
    svm = re.search(r"^\(XEN\) SVM: Supported advanced features:\n((?:\(XEN\)  +- .*\n)*)",
                    outer, re.M)
    kernel = None
    try:
        with open(os.path.join(REPO, "build", "xen-lane", "base.env"), encoding="utf-8") as f:
            m = re.search(r"^XEN_LANE_KERNEL=.*/(kernel-[^/]+)/", f.read(), re.M)
            kernel = m.group(1) if m else None
    except OSError:
        pass
    cfg = kept_cfg or subprocess.run([*frame_argv, "--dry-run", "--xl-cfg"],
                                     capture_output=True, text=True, check=False).stdout
    # A real dom0's runner says them from xl info (xen-lane.sh --dom0).
    return {"version": line(r"^\(XEN\) Xen version (.*)$", r"^@@@ lane-info xl-xen_version (.*)$"),
            "cmdline": line(r"^\(XEN\) Command line: (.*)$",
                            r"^@@@ lane-info xl-xen_commandline (.*)$"),
            "svm_features": [f.split("- ", 1)[1] for f in svm.group(1).splitlines()] if svm
            else None,
            "dom0_kernel": line(r"^@@@ lane-info dom0-kernel (.*)$") or kernel,
            "xl_cfg": [c for c in cfg.splitlines() if c and not c.startswith("#")] or None}


def take(b, out, rc):
    """The lane's files: console.log gets the guest's console, b.rc its status,
    b.xen what ran it. True when out must be kept (the lane failed and
    nothing is saved)."""
    from ipibench.boot import run as B  # as in boot()
    lane_txt = B.read_text(os.path.join(out, "lane.txt"))
    # The xl.cfg from xen-lane.sh itself, whoever ran the frame
    # (IPIBENCH_XEN_LANE: the tests' replay).
    b.xen = xen_facts(B.read_text(os.path.join(out, "outer.log")),
                      [os.path.join(REPO, XEN_LANE), *frame_args(b), *dom0_args(b.accel)],
                      B.read_text(os.path.join(out, f"{b.preset}.xl.cfg")))
    if rc == 77:
        for line in lane_txt.splitlines()[-3:]:
            say(line)
        raise ToolError(EX_DEPS, "this host is no Xen dom0 run.sh can use (above)"
                        if b.accel == "xen" else "the Xen lane cannot be prepared here")
    guest = os.path.join(out, f"{b.preset}.log")
    status = B.read_text(os.path.join(out, f"{b.preset}.status")).strip()
    with open(b.log, "w") as f:
        f.write(B.read_text(guest) if os.path.exists(guest) else lane_txt)
    if rc != 0:
        b.rc = 124 if rc == 124 else 1
        if rc == 124:
            b.bound = str(int(b.o.timeout) + XEN_SETUP_S)
            what = "the frame" if b.accel == "xen" else "the Xen lane's outer VM"
            say(f"run.sh: {what} ran past its bound, {b.bound} s (--timeout and {XEN_SETUP_S} s for Xen and dom0)")
        else:
            why = re.findall(r"^xen-lane: (?:error: )?(.*)$", lane_txt, re.M)
            if why:
                say(f"run.sh: the Xen lane: {why[-1]}")
        return b.keep_lane(out)
    if status == "2":
        # Not run: a traced frame where another xentrace runs (xen-frames.sh).
        why = re.findall(r"^@@@ lane-info not-run \S+: (.*)$",
                         B.read_text(os.path.join(out, "outer.log")), re.M)
        raise ToolError(EX_UNAVAILABLE, f"--exits: {why[-1] if why else 'the frame was not run'}")
    b.rc = int(status) if status.isdigit() else 1
    if b.o.exits:
        b.trace = os.path.join(out, f"{b.preset}.trace")
        b.show_exits(where="Xen's trace (xentrace in " + (
            "this host's dom0)" if b.accel == "xen" else "the lane's dom0)"), xen=True)
    if b.rc == 137:
        b.rc = 124  # the guest's own bound (--timeout) destroyed the domain
        return b.keep_lane(out)
    return False

