# SPDX-License-Identifier: GPL-2.0-only
"""One boot, `./run.sh [run]`: dependencies and build (prepare), --append
against the guest's keys (boot/guest_keys.py), the accelerator
(boot/accel.py), the QEMU command line (boot/qemu.py), a new results
directory and its console.log, QEMU under `timeout -k` with the console
followed (or the KVM lane for --accel kvm-in-tcg), the status
decoded, results.json and summary.txt saved (boot/save.py). What is
printed of the console: its progress (boot/console.py) and a summary
(boot/summary.py), the whole of it with --verbose, nothing with --quiet.
Exit codes: docs/exit-codes.md; signals: jobs.py."""
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ipibench.boot import console as C
from ipibench.boot import outcome as O
from ipibench.boot import qemu as Q
from ipibench.boot import xen_lane as X
from ipibench.boot.accel import choose, extras_asked, HostKvm
from ipibench.boot.guest_keys import check_append, KEYS_FILE
from ipibench.boot.save import save_run
from ipibench.boot.summary import says_tcg, summary
from ipibench.boot.tap import suite_labels, tap_failures
from ipibench.exit_codes import (EX_APICV_INHIBITED, EX_BUILD, EX_DEPS, EX_INTERRUPTED,
                                 EX_PRESET, EX_USAGE,
                                 EX_NOTHING_RAN, EX_OK, EX_QEMU_OLD, EX_SAVE, EX_TIMEOUT,
                                 EX_UNAVAILABLE, ToolError)
from ipibench import machine
from ipibench.jobs import elapsed, Interrupted, say
from ipibench.kvmhost import apicv as AV
from ipibench.kvmhost import facts as KF
from ipibench.kvmhost import host_class, host_model
from ipibench.kvmhost import hoststats as HS
from ipibench.kvmhost import pin_perf as K
from ipibench.kvmhost import trace as KT
from ipibench.kvmhost import trace_read as TR
from ipibench.kvmhost import tracefs as TF
from ipibench.kvmhost import modparam
from ipibench.options import check_memory, parse_run, smp_cpus, USAGE_RUN, UsageError
from ipibench.presets import get_preset, host_vcpus, load_presets, PRESETS
from ipibench.results.records import parse_console

LANE = "host/lane/lane.sh"
# What the lane's outer VM needs besides the guest's own --timeout: booting
# its kernel and loading kvm_amd (about 5 s here) and, with --exits, sending
# the trace of the marker windows (some 10 s for the default plan's), with
# room for a slow host. The guest's bound (--timeout) ends first, so the
# outer VM still sends its console and the trace of what it finished.
LANE_SETUP_S = 60
# What a timed-out lane run keeps beside the guest's console (console.log):
# the outer VM's whole console and lane.sh's progress lines.
LANE_KEPT = ("outer.log", "lane.txt")


def host_halt_poll(root="/"):
    """This host's kvm.halt_poll_ns and kvm.halt_poll_ns_grow, each None when
    KVM is not loaded or it says something else than a count."""
    out = []
    for name in ("halt_poll_ns", "halt_poll_ns_grow"):
        try:
            with open(os.path.join(root, "sys/module/kvm/parameters", name)) as f:
                text = f.read().strip()
        except OSError:
            text = ""
        out.append(int(text) if text.isdigit() else None)
    return tuple(out)


# The lane's KVM (Debian's 6.12 kvm module) loads with KVM's x86 defaults:
# halt_poll_ns 200000 (KVM_HALT_POLL_NS_DEFAULT), halt_poll_ns_grow 2.
LANE_HALT_POLL = {"kvm.halt_poll_ns": 200000, "kvm.halt_poll_ns_grow": 2}


def lane_halt_poll(module_param):
    """The lane's halt_poll_ns and halt_poll_ns_grow: KVM's defaults, unless
    --module-param sets one of them (MODULE.PARAM=VALUE)."""
    values = dict(LANE_HALT_POLL)
    name, _, value = (module_param or "").partition("=")
    if name in values and value.isdigit():
        values[name] = int(value)
    return values["kvm.halt_poll_ns"], values["kvm.halt_poll_ns_grow"]


def with_halt_poll(append, ns, grow):
    """The guest's single-halt tells a poll wake from a block wake against the
    host's halt polling (bench/point.c): tell it the window and whether it
    grows, each unless the command line already does or nobody knows it."""
    for key, value in (("halt_poll_ns", ns), ("halt_poll_grow", grow)):
        if value is not None and not re.search(rf"(^|\s){key}=", append):
            append = f"{append} {key}={value}".strip()
    return append


class Env:
    """What run.sh's place and environment say, read once. Paths the caller
    gives are relative to where it ran run.sh (caller_dir); run.sh itself works
    in the repository (repo)."""

    def __init__(self, repo, caller_dir, environ):
        self.repo, self.caller_dir = repo, caller_dir
        # Another build of QEMU: QEMU=/path/to/qemu-system-x86_64.
        qemu = environ.get("QEMU") or "qemu-system-x86_64"
        self.qemu = os.path.join(caller_dir, qemu) if "/" in qemu else qemu
        root = environ.get("IPIBENCH_RESULTS")
        self.results_root = os.path.join(caller_dir, root) if root else "results"
        # Set by whoever prepared already (a matrix did, for its boots).
        self.prepared = environ.get("IPIBENCH_PREPARED") == "1"
        self.pin_any_accel = environ.get("IPIBENCH_PIN_ANY_ACCEL") == "1"
        self.presets = PRESETS
        # Another lane.sh: the host tests' stand-in (tests/host/test_boot_run.py).
        self.lane = environ.get("IPIBENCH_LANE") or LANE
        # The guest's keys that --append is checked against: the build's, or
        # another file; empty, none (the boot tests of the guest's own parser).
        keys = environ.get("IPIBENCH_GUEST_KEYS", KEYS_FILE)
        self.guest_keys = os.path.join(caller_dir, keys) if keys else ""
        self.environ = environ


def exits_tracefs(env, accel):
    """--exits under accel: the tracefs to trace this host's KVM through, None
    for the lane (its outer VM traces), or ToolError 29 when it cannot work
    here. matrix asks it of every preset before its first boot."""
    if accel in ("kvm-in-tcg", *X.ACCELS):
        return None  # the lane traces (the KVM lane's outer kernel), or xentrace in Xen's dom0
    if accel != "kvm" and not env.pin_any_accel:
        raise ToolError(EX_UNAVAILABLE, f"--exits traces KVM's events: use --accel kvm on a KVM host (tracefs, root) or --accel kvm-in-tcg (the lane), not --accel {accel}")
    found = machine.tracefs(env.environ)
    if not found:
        raise ToolError(EX_UNAVAILABLE, "--exits: no tracefs with KVM's events (mount -t tracefs nodev /sys/kernel/tracing, as root, with kvm loaded); or run it in the lane: --accel kvm-in-tcg")
    return found


def check_host(env, o, preset, preset_cpu):
    """What would stop a boot of preset (its -cpu flags preset_cpu) under run
    options o on this host before QEMU starts, as the boot itself finds it:
    ToolError 31 (KVM asked for or needed and not usable here), 2 or 29.
    matrix asks it of every preset, ab of its configuration, before the
    first boot (ab: before the module is touched); a key of --append the
    guest would refuse comes first (2). The accelerator."""
    check_append(o.append, env.guest_keys)
    accel, _, _ = choose(o.accel, o.cpu, preset, preset_cpu, o.machine, o.allow_fallback,
                         HostKvm(env.qemu, env.environ), extras_asked(o))
    K.check_extras(accel, o.pin, o.perf_kvm, env.pin_any_accel)
    if o.exits:
        exits_tracefs(env, accel)
    return accel


def usage_error(e):
    if e.usage:
        sys.stderr.write(e.usage)
    say(f"run.sh: {e.message}")
    if getattr(e, "hint", None):
        say(f"run.sh: {e.hint}")
    return e.code


def first_line(argv):
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, errors="replace").stdout
    except OSError:
        return ""
    return out.split("\n", 1)[0]


@functools.lru_cache(maxsize=None)
def qemu_version(binary):
    """The first line of `BINARY --version`, asked once a command (a QEMU
    start is some 0.05 CPU-s, and a boot wanted it three times)."""
    return first_line([binary, "--version"])


def qemu_too_old(binary):
    """Why this QEMU is too old (or of no telling version), or None."""
    return Q.too_old(binary, shutil.which(binary) or "", qemu_version(binary))


def prepare(env, jobs):
    """Dependencies, QEMU's version and the build, once per command."""
    if env.prepared:
        return
    # deps.sh's own check of QEMU's version reads the line asked here.
    deps_env = dict(os.environ)
    if shutil.which("qemu-system-x86_64"):
        deps_env["DEPS_QEMU_VERSION"] = qemu_version("qemu-system-x86_64")
    if subprocess.call(["tools/deps.sh", "build"], env=deps_env) != 0:
        jobs.check()
        if shutil.which("qemu-system-x86_64"):
            why = qemu_too_old("qemu-system-x86_64")
            if why:
                raise ToolError(EX_QEMU_OLD, why)
        raise ToolError(EX_DEPS, None)  # deps.sh printed what to do
    if not shutil.which(env.qemu):
        raise ToolError(EX_DEPS, f"QEMU={env.qemu}: no such program")
    why = qemu_too_old(env.qemu)
    if why:
        raise ToolError(EX_QEMU_OLD, why)
    os.makedirs("build", exist_ok=True)
    # Two runs started at once must not build the same objects together.
    # A job a CPU this process may run on: a first run builds some 90
    # objects (tests/run builds with -j2 too).
    make = ["make", "-s", f"-j{len(machine.allowed_cpus())}", "all"]
    if shutil.which("flock"):
        make = ["flock", "build/.run.lock"] + make
    if build(make, "the guest") != 0:
        jobs.check()
        raise ToolError(EX_BUILD, "build failed")
    jobs.check()


# A step of the Makefile's quiet output (its `say`: "  %-8s %s"), as
# "  CC       build/kernel/main.o": CC, NASM, LD, OBJCOPY, GEN, HOSTCC ...
BUILD_STEP = re.compile(r"  ([A-Z][A-Z0-9]*) +\S+$")


def build_lines(output, what):
    """make's output on success, as a person reads it: every line that is no
    step as make printed it (a nasm or ld warning: C warnings are errors),
    then the steps counted on one line ("run.sh: built the guest: 60 CC, 12
    NASM, 1 LD, 2 OBJCOPY"), none when there was no step (up to date)."""
    kinds, other = {}, []
    for line in output.splitlines():
        m = BUILD_STEP.match(line)
        if m:
            kinds[m.group(1)] = kinds.get(m.group(1), 0) + 1
        elif line.strip():
            other.append(line)
    if kinds:
        steps = ", ".join(f"{n} {k}" for k, n in kinds.items())
        other.append(f"run.sh: built {what}: {steps} (make V=1 shows each command)")
    return other


def build(argv, what):
    """make, its steps collapsed to one line (build_lines) when it succeeds,
    all of its output when it fails; make's exit status. On a terminal a
    note stands where that line will be while make runs."""
    tty = sys.stderr.isatty()
    if tty:
        sys.stdout.flush()
        sys.stderr.write(f"run.sh: building {what} ...")
        sys.stderr.flush()
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, text=True, errors="replace")
    except OSError as e:
        p = None
        why = e.strerror
    if tty:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
    if p is None:
        say(f"run.sh: cannot run {argv[0]}: {why}")
        return 127
    if p.returncode != 0:
        sys.stdout.flush()
        sys.stderr.write(p.stdout)
        sys.stderr.flush()
        return p.returncode
    for line in build_lines(p.stdout, what):
        say(line)
    return 0


def load_preset(env, name, accel="auto"):
    """A KVM preset of presets.conf; a Xen preset's name says which
    accelerator runs it rather than that it is unknown (exit 26 either way)."""
    presets = load_presets(env.presets)
    if name not in presets and name in X.load_xen_presets():
        raise ToolError(EX_PRESET, f"{name} is a Xen preset (xen-presets.conf): it runs under "
                        f"--accel xen-in-tcg or xen, not --accel {accel}")
    return get_preset(presets, name, env.presets)


# What to do when the results cannot be kept where they go, both of which work.
ELSEWHERE = "IPIBENCH_RESULTS=DIR keeps them elsewhere, --no-save keeps nothing"


def new_results_dir(root, label):
    """A new directory ROOT/<UTC date>-<label>[.N]: mkdir is atomic, so two
    runs started in the same second still get one directory each. Any
    failure but a name taken is a ToolError that says why, and what works."""
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot create {root}: {e.strerror}; {ELSEWHERE}")
    base = f"{root}/{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{label}"
    for name in [base] + [f"{base}.{n}" for n in range(2, 1000)]:
        try:
            os.mkdir(name)
            return name
        except FileExistsError:
            continue
        except OSError as e:
            raise ToolError(EX_SAVE, f"cannot create {name}: {e.strerror}; {ELSEWHERE}")
    raise ToolError(EX_SAVE, f"cannot create a new directory {base}.N: 999 taken; {ELSEWHERE}")


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def qemu_own_line(console, qemu):
    """QEMU's own last message in a console (QEMU writes its errors there):
    a line that starts with its program name, else the console's last line."""
    lines = [line for line in console.replace("\r", "").split("\n") if line.strip()]
    names = ("qemu-system-", os.path.basename(qemu) + ":")
    own = [line for line in lines if line.startswith(names)]
    return (own or lines or [""])[-1]


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Follower:
    """Follows a growing log until finish(), as `tail -f --pid` would: each
    chunk goes to sink.feed(chunk, now) as it is written, sink.tick(now) runs
    while nothing comes, and what was written before the end is all fed. A
    log that does not exist yet is waited for (a lane writes its own)."""

    POLL_S = 0.01  # a unit under TCG takes tens of ms: its time should show

    def __init__(self, path, sink):
        self.sink = sink
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(path,), daemon=True)
        self.thread.start()

    def _run(self, path):
        while not os.path.exists(path):
            if self.done.is_set():
                self.sink.close(time.monotonic())
                return
            self.sink.tick(time.monotonic())
            self.done.wait(self.POLL_S)
        with open(path, "rb") as f:
            while True:
                last = self.done.is_set()
                chunk = f.read(65536)
                if chunk:
                    self.sink.feed(chunk, time.monotonic())
                    continue
                if last:
                    self.sink.close(time.monotonic())
                    return
                self.sink.tick(time.monotonic())
                self.done.wait(self.POLL_S)

    def finish(self):
        self.done.set()
        self.thread.join()


class Screen:
    """Standard output for the console's lines; once nobody reads it, the
    boot goes on without it."""

    def __init__(self):
        self.broken = False
        self.tty = sys.stdout.isatty()
        self.width = shutil.get_terminal_size((C.WIDTH, 24)).columns

    def write(self, data):
        if self.broken:
            return
        try:
            if isinstance(data, bytes):
                sys.stdout.buffer.write(data)
            else:
                sys.stdout.write(data)
            sys.stdout.flush()
        except (OSError, ValueError):
            self.broken = True


class Lines:
    """A Follower's sink: the log cut into lines for a Console; raw: also
    every byte as it comes to the screen (--verbose)."""

    def __init__(self, console, raw=None, watch=None):
        self.console, self.raw, self.watch, self.rest = console, raw, watch, b""

    def feed(self, chunk, now):
        if self.raw:
            self.raw.write(chunk)
        *lines, self.rest = (self.rest + chunk).split(b"\n")
        for line in lines:
            text = line.decode("utf-8", "replace")
            if self.watch:
                self.watch(text)  # before the screen: the guest waits on it
            self.console.line(text, now)

    def tick(self, now):
        self.console.tick(now)

    def close(self, now):
        if self.rest:
            self.console.line(self.rest.decode("utf-8", "replace"), now)
            self.rest = b""
        self.console.tick(now)


def lane_frame_text(line):
    """A frame as lane.sh --dry-run prints it (cpu flags|smp|QEMU arguments|
    exits|module parameter|image|load|command line) as the QEMU command the
    outer VM's init starts for it (lane.sh run_frame), its fixed devices aside."""
    f = line.split("|", 7)
    if len(f) != 8:
        return line
    cpu = "host" + (f",{f[0]}" if f[0] else "")
    qemu = ["qemu-system-x86_64", "-accel", "kvm", "-cpu", cpu, "-smp", f[1],
            *shlex.split(f[2]), "-kernel", f[5], "-append", f[7]]
    return (f"in the lane's outer VM (lane.sh adds its console and exit devices): "
            f"{shlex.join(qemu)}")


class Boot:
    """One `run`: its steps share what the options and the host decided."""

    def __init__(self, opts, env, jobs, prepared=False, pin_default=False, ab=None,
                 matrix=None):
        self.o, self.env, self.jobs = opts, env, jobs
        self.prepared = prepared or env.prepared
        # ab and matrix pin under KVM unless --no-pin (None); ab: this boot's
        # place in ab's sequence, for the run record (boot/ab.py); matrix:
        # its place among its configuration's boots (boot/matrix.py).
        self.pin_default, self.ab, self.matrix = pin_default, ab, matrix
        self.pin, self.pin_why, self.lane_pin = opts.pin, None, None
        self.preset, self.preset_cpu, self.preset_extra = opts.preset, "", []
        self.log, self.log_is_temp, self.runtime_dir, self.dir = None, False, None, ""
        self.rc, self.seconds, self.started = 1, "0", ""
        self.paused, self.host_read, self.host_stats = False, None, False
        self.trace, self.apicv, self.inhibited, self.kvm_params = "", "", None, {}
        self.module_param = None
        self.tcg_said = False  # TCG's notice (say_tcg), once
        # The bound that ended a timed-out run, when it is not --timeout (the
        # lane's outer VM), with what it covers.
        self.bound = ""
        # What is printed of the console (boot/console.py); it also follows
        # the boot under --quiet and --verbose, for the timeout's message.
        self.screen = Screen()
        self.console = C.Console(self.screen.write, self.screen.tty,
                                 not (opts.quiet or opts.verbose), self.screen.width)

    def run(self):
        """The run's steps, in order; its exit code."""
        self.decide()
        if self.o.dry_run:
            return self.dry_run()
        self.compose()
        self.open_log()
        self.jobs.check()
        if self.accel == "kvm-in-tcg":
            self.boot_lane()
        elif self.accel in X.ACCELS:
            X.boot(self)
        else:
            self.boot_qemu()
        return self.conclude()

    def decide(self):
        """The preset, dependencies and build, the accelerator and -cpu."""
        o = self.o
        if o.accel == "kvm-in-tcg" and not self.preset:
            self.preset = "x2apic"
        if o.accel in X.ACCELS and not self.preset:
            self.preset = X.DEFAULT_PRESET[o.accel]
        preset_smp = 4
        if o.accel in X.ACCELS:
            preset_smp = X.xen_preset(self.preset)["vcpus"]
            if o.accel == "xen":
                X.check_dom0_preset(self.preset)
        elif self.preset:
            p = load_preset(self.env, self.preset, o.accel)
            self.preset_cpu, preset_smp, self.preset_extra = \
                p["cpu"], host_vcpus(p["smp"], p["cpu"]), p["extra"]
        self.smp = o.smp or str(preset_smp)
        try:
            check_memory(o.memory, self.smp)
        except UsageError as e:
            raise ToolError(e.code, e.message)
        if not self.prepared:
            prepare(self.env, self.jobs)
        # Against the keys of the guest just built: a typo costs no boot.
        check_append(o.append, self.env.guest_keys)
        self.accel, self.cpu, notes = choose(o.accel, o.cpu, self.preset, self.preset_cpu,
                                             o.machine, o.allow_fallback,
                                             HostKvm(self.env.qemu, self.env.environ),
                                             extras_asked(o))
        for n in notes:
            say(n)
        if "cpu-pm=on" in " ".join(self.preset_extra or ()):
            say("run.sh: -overcommit cpu-pm=on: under KVM the guest's HLT, MWAIT and PAUSE do "
                "not exit, so single-halt's target halts in the CPU, not in KVM: its wake rows "
                "have no HLT exit, no halt polling and no block (under TCG it changes nothing)")
        K.check_extras(self.accel, o.pin, o.perf_kvm, self.env.pin_any_accel)
        soft = HostKvm(self.env.qemu, self.env.environ).software() \
            if self.accel == "kvm" else None
        self.pin, self.pin_why = K.pin_plan(o.pin, self.pin_default, self.accel,
                                            smp_cpus(self.smp), machine.allowed_cpus(),
                                            soft)
        if self.pin is None and self.pin_default and self.accel == "kvm":
            say(f"run.sh: vCPUs not pinned: {self.pin_why}")
        self.tracefs = exits_tracefs(self.env, self.accel) if o.exits else None
        if o.iso and build(["make", "-s", "iso"], "the ISO") != 0:
            raise ToolError(EX_BUILD, "ISO build failed")
        # The summary says it where it shows (docs/host-tools.md, "What run.sh
        # prints"); --quiet shows none; conclude() says it when the summary did not.
        if self.accel.startswith("tcg") and not self.prepared and o.quiet:
            self.say_tcg()

    def say_tcg(self, done="running"):
        """TCG's notice, from the accelerator run.sh chose, once per boot."""
        if not self.tcg_said:
            self.tcg_said = True
            say(f"run.sh: {done} under TCG: timings are emulated, only behaviour counts")

    def conclude(self):
        """The status decoded, the results saved, the summary and the last line said."""
        console = read_text(self.log)
        code, what = Q.decode_status(self.rc, self.seconds, self.o.timeout, console)
        if self.o.require_apicv and code == EX_OK and self.inhibited is not False:
            code = EX_APICV_INHIBITED
            what = ("APICV-INHIBITED: --require-apicv, but " + (self.apicv or "no trace")
                    + "; the accelerated path was not measured")
        now, late = time.monotonic(), ""
        if code == EX_TIMEOUT:
            # The last resort: say where the guest was when time ran out.
            late = f" after {self.bound or self.o.timeout} s; {self.console.last_progress(now)}"
            if self.accel == "kvm-in-tcg":
                late += ("; to run less in the lane: --append plan=check, or bench= and "
                         "backends= subsets (docs/command-line.md), or more "
                         "time: --timeout S")
        self.console.finish(now, None if self.rc in Q.GUEST else what.split(" ", 1)[0])
        # QEMU that did not start (or exited as QEMU never does) said why itself.
        qemu_line = qemu_own_line(console, self.env.qemu) if self.accel != "kvm-in-tcg" and \
            what.startswith(("QEMU-FAILED", "QEMU-UNKNOWN")) else ""
        records, _ = parse_console(console)
        suite = suite_labels(console)
        # A SKIP that measured and checked nothing passes nothing (exit 35);
        # results.json keeps the guest's status, SKIP, and this exit code.
        nothing = O.ran_nothing(records, suite) if (code, what) == (EX_OK, "SKIP") else None
        if nothing is not None:
            code = EX_NOTHING_RAN
        if self.o.save:
            code = self.save(what.split(" ", 1)[0], code)
        summary_tcg = self.show_summary(console, records, suite)
        # --verbose streamed the guest's own warning, if it got that far.
        streamed = self.o.verbose and re.search(r"^warning: tcg: ", console, re.M)
        if self.accel.startswith("tcg") and not (self.prepared or summary_tcg or streamed):
            self.say_tcg("ran")  # no summary said it (none shown, or no env record)
        where = f"; results: {self.dir}" if self.o.save else ""
        if code in (EX_OK, EX_NOTHING_RAN) and what in ("SUCCESS", "SKIP"):
            # Within 80 columns: the words, then where the run went.
            say(f"run.sh: {O.closing(what, code, self.rc, nothing)}")
            if self.o.save:
                say(f"run.sh: results: {self.dir}")
        else:
            say(f"run.sh: {O.closing(what, code, self.rc, qemu=self.accel not in X.ACCELS)}"
                f"{late}{where}")
        if qemu_line:
            say(qemu_line)  # QEMU's own word on why it did not start: the last line
        return code

    def show_summary(self, console, records, suite):
        """The summary under the progress lines (not with --quiet or --verbose);
        whether it said that the figures are TCG's."""
        if not self.console.show or not records:
            return False
        host = {}
        if self.o.save:
            try:
                with open(os.path.join(self.dir, "results.json")) as f:
                    host = json.load(f).get("host") or {}
            except (OSError, ValueError, AttributeError):
                host = {}
        lines = summary(records, host, tap_failures(console), said=self.console.seen,
                        suite=suite, saved=self.o.save)
        self.screen.write("\n" + "\n".join(lines) + "\n")
        return says_tcg(records, host)

    def compose(self):
        o, paused = self.o, self.pin is not None or self.o.perf_kvm or bool(self.tracefs)
        self.paused = paused
        # Host reads (docs/exits.md, "KVM's statistics"): by default
        # under a host's KVM, where the statistics are; asked for anywhere
        # else (the lane's init answers them itself, lane.sh host_reads).
        self.host_stats = bool(o.host_stats or (o.host_stats is None and self.accel == "kvm"
                                                and not o.machine.startswith("microvm")))
        reads_here = self.host_stats and self.accel != "kvm-in-tcg"
        if paused or reads_here:
            try:
                self.runtime_dir = tempfile.mkdtemp(prefix="ipibench-run.", dir="/tmp")
            except OSError:
                raise ToolError(EX_SAVE, "cannot create a temporary directory")
        self.host_read = self.runtime_dir if reads_here else None
        if reads_here:
            HS.make_fifos(self.runtime_dir)
        append = f"{o.append} markers=1".strip() if self.tracefs else o.append
        if self.accel == "kvm":
            append = with_halt_poll(append, *host_halt_poll())
        if self.host_stats:
            append = f"{append} host_stats=1".strip()
        self.qemu = Q.command_line(self.env.qemu, self.accel, o.machine, self.cpu, self.smp,
                                   o.memory, append, o.iso, self.preset_extra, o.qemu_args,
                                   self.runtime_dir if paused else None,
                                   o.perf_kvm or bool(self.tracefs), o.pvh, self.host_read)

    def open_log(self):
        """Sets dir (the run's new directory) and log."""
        o = self.o
        # The Xen lane's machine is its preset's domain type (pvh, hvm).
        machine = X.xen_preset(self.preset)["type"] if self.accel in X.ACCELS else o.machine
        self.label = Q.sanitize(o.label or Q.default_label(self.preset, self.accel, machine,
                                                           self.smp))
        if not o.save:
            fd, self.log = tempfile.mkstemp()
            os.close(fd)
            self.log_is_temp = True
            return
        if o.results_dir:
            try:
                os.makedirs(os.path.dirname(o.results_dir.rstrip("/")) or "/", exist_ok=True)
                os.mkdir(o.results_dir)
            except OSError:
                raise ToolError(EX_SAVE, f"cannot create {o.results_dir} (it must not exist: results are never overwritten)")
            self.dir = o.results_dir
        else:
            self.dir = new_results_dir(self.env.results_root, self.label)
        self.log = os.path.join(self.dir, "console.log")
        open(self.log, "wb").close()

    def boot_qemu(self):
        """QEMU under timeout(1), its console into the log and streamed."""
        o = self.o
        self.started = utc_now()
        t0 = time.monotonic_ns()
        with open(self.log, "wb") as out:
            job = self.jobs.start(["timeout", "-k", "5", o.timeout, *self.qemu],
                                  stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        answer = HS.Answerer(lambda: K.Qmp(os.path.join(self.host_read, "qmp.sock"), 10,
                                           lambda: job.poll() is None),
                             os.path.join(self.host_read, "hostread.in"),
                             os.path.join(self.dir or self.runtime_dir, HS.LOG)) \
            if self.host_read else None
        follow = Follower(self.log, Lines(self.console, self.screen if o.verbose else None,
                                          answer.line if answer else None))
        paused = None
        try:
            if self.paused:
                tracer = TF.HostTrace(self.tracefs) if self.tracefs else None
                paused = K.PausedStart(self.runtime_dir, self.pin, o.perf_kvm,
                                       os.path.join(self.dir or self.runtime_dir, "pin.json"),
                                       tracer)
                code = paused.start(job)
                if code:
                    job.send_signal(signal.SIGTERM)
                    self.jobs.wait()
                    paused.stop(None)
                    self.jobs.check()  # a signal ended QEMU: the run was interrupted
                    raise ToolError(code, "could not start the guest paused for --pin/--perf-kvm (above)")
            self.rc = self.jobs.wait()
            self.seconds = elapsed(t0)
        finally:
            if follow:
                follow.finish()
        if paused:
            paused.stop(self.dir or self.runtime_dir)
        self.jobs.check(self.seconds)
        if self.tracefs:
            self.trace = os.path.join(self.dir or self.runtime_dir, KT.TRACE_FILE)
            self.kvm_params = modparam.read_all()
            self.show_exits(where="this host's KVM")

    def boot_lane(self):
        """--accel kvm-in-tcg: the preset under real KVM nested in a TCG VM (the
        KVM lane, host/lane/); sets rc and seconds like boot_qemu."""
        o = self.o
        if o.cpu or o.smp:
            say(f"run.sh: --accel kvm-in-tcg takes -cpu and -smp from the preset ({self.preset})")
        try:
            out = tempfile.mkdtemp(prefix="ipibench-lane.", dir="/tmp")
        except OSError:
            raise ToolError(EX_SAVE, "cannot create a temporary directory")
        keep = False
        try:
            self.started = utc_now()
            t0 = time.monotonic_ns()
            say(f"run.sh: KVM nested inside QEMU TCG (preset {self.preset}): timings are doubly emulated, only behaviour counts")
            with open(os.path.join(out, "lane.txt"), "wb") as f:
                lane_rc = self.jobs.run(self.lane_argv(out), stdout=f, stderr=subprocess.STDOUT)
            self.seconds = elapsed(t0)
            if lane_rc == EX_INTERRUPTED:
                self.jobs.check(self.seconds)
            keep = self.take_lane(out, lane_rc)
            # Read after the fact: no times on its progress lines.
            if o.verbose:
                self.screen.write(read_text(self.log))
            for line in read_text(self.log).replace("\r", "").split("\n"):
                self.console.line(line)
        finally:
            if not keep:
                shutil.rmtree(out, ignore_errors=True)

    def lane_argv(self, out):
        """lane.sh's command line for this run's frame, its results in out;
        sets qemu (what results.json keeps of it)."""
        o = self.o
        append = f"{o.append} markers=1".strip() if o.exits else o.append
        append = with_halt_poll(append, *lane_halt_poll(o.module_param))
        if self.host_stats:
            append += " host_stats=1"  # the lane's init answers (lane.sh host_reads)
        exits = ["--exits"] if o.exits else []
        if o.module_param:
            exits += ["--module-param", o.module_param]
        frame = ["--presets", self.preset, *self.lane_machine(), *exits, "--append", append]
        self.qemu = [LANE, *frame]  # kept
        return [self.env.lane, "--image", Q.kernel_image(o.machine, o.pvh), *frame,
                "--out", out, "--inner-timeout", o.timeout,
                "--timeout", str(int(o.timeout) + LANE_SETUP_S)]

    def dry_run(self):
        """--dry-run: what run() would start, printed; nothing booted. The
        checks, the build and the choice of accelerator (decide) ran as for
        a boot, so a refusal shows here as it would there."""
        if self.accel == "kvm-in-tcg":
            argv = self.lane_argv("OUT")
            print(shlex.join(argv))
            # lane.sh composes the frame itself; its --dry-run prints it as
            # the outer VM's init reads it (lane.sh frame_line).
            done = subprocess.run([*argv[:argv.index("--out")], "--dry-run"],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise ToolError(EX_USAGE, f"lane.sh --dry-run: {done.stderr.strip()}")
            for line in done.stdout.splitlines():
                print(lane_frame_text(line))
        elif self.accel in X.ACCELS:
            X.dry_run(self)
        else:
            self.compose()
            if self.runtime_dir:
                shutil.rmtree(self.runtime_dir, ignore_errors=True)
            print(shlex.join(self.qemu))
        say("run.sh: --dry-run: nothing was booted")
        return EX_OK

    def lane_machine(self):
        """lane.sh's --machine for microvm; pc and q35 keep the lane's inner QEMU's
        default machine (pc), as the lane has always booted them."""
        m = self.o.machine
        return ["--machine", Q.machine_arg(m)] if m.startswith("microvm") else []

    def take_lane(self, out, lane_rc):
        """The lane's files in out: console.log gets the guest's console (as far
        as it got), rc its status. Returns True when out must be kept: the lane
        failed or ran out of time and there is no results directory to keep its
        logs in."""
        lane_txt = read_text(os.path.join(out, "lane.txt"))
        if lane_rc == 77:
            for line in lane_txt.splitlines()[-3:]:
                say(line)
            raise ToolError(EX_DEPS, "the KVM lane cannot be prepared here")
        outer = read_text(os.path.join(out, "outer.log"))
        guest = os.path.join(out, f"{self.preset}.log")
        status = read_text(os.path.join(out, f"{self.preset}.status")).strip()
        # The guest's console, complete or not: its records are saved either way.
        with open(self.log, "w") as f:
            f.write(read_text(guest) if os.path.exists(guest) else lane_txt)
        self.trace = os.path.join(out, f"{self.preset}.trace")
        m = re.search(r"^@@@ lane-info kvm-params(.*)$", outer, re.M)
        self.kvm_params = dict(w.split("=", 1) for w in (m.group(1).split() if m else [])
                               if "=" in w)
        # The frame's own log: a frame the lane ran twice has its last run there.
        self.lane_pin = K.lane_pin(read_text(guest) or outer)
        m = re.search(r"^@@@ lane-info module-param (\S+?)=(\S+) got (\S+)$", outer, re.M)
        if m:
            why = re.search(r"^@@@ lane-info module-why (.*)$", outer, re.M)
            self.module_param = {"param": m.group(1), "asked": m.group(2), "got": m.group(3),
                                 "why": why.group(1) if why else ""}
            say(f"run.sh: the lane's {m.group(1)}: asked {m.group(2)}, got {m.group(3)}"
                + (f": {why.group(1)}" if why else ""))
        keep = False
        if lane_rc != 0:
            keep = self.keep_lane(out)
            if lane_rc == 124:
                # The outer VM's own bound, past the guest's: one figure, and
                # what the guest had done by then.
                self.rc = 124
                self.bound = str(int(self.o.timeout) + LANE_SETUP_S)
                state = (f"the guest had ended (status {status}) and the outer VM was still "
                         "sending its console or the trace" if status.isdigit() else
                         "the guest was still running")
                say(f"run.sh: the KVM lane's outer VM ran past its bound, {self.bound} s (--timeout and {LANE_SETUP_S} s for its boot and the trace): {state}")
            else:
                why = re.findall(r"^kvm-lane: error: (.*?)(?: \(see [^)]*\))?$", lane_txt, re.M)
                if why:
                    say(f"run.sh: the KVM lane: {why[-1]}")
                self.rc = 1  # the lane failing, whatever the guest did
        else:
            try:
                self.rc = int(status)
            except ValueError:
                self.rc = 1
            if self.rc == 137:
                # The inner bound (--inner-timeout, our --timeout) killed the
                # guest: timeout(1)'s own code for that, whatever the clock says.
                self.rc = 124
                keep = self.keep_lane(out)
        if self.o.exits and (lane_rc == 0 or os.path.exists(self.trace)):
            self.show_exits()
        elif self.o.exits:
            say("run.sh: --exits: no trace came back (the outer VM did not send it)")
        for m in re.finditer(r"^@@@ lane-rerun \S+ (soft-lockup: |outer-oops: )?", outer, re.M):
            say("run.sh: " + ("the outer VM's kernel failed in the first boot ("
                              f"{m.group(1)[:-2]}); a fresh outer VM ran it again"
                              if m.group(1) else
                              "the first boot reset with the outer TCG's known SVM fault")
                + " (host/lane/README.md); this is the second")
        return keep

    def keep_lane(self, out):
        """A lane that failed or ran out of time: its outer console and progress
        lines go beside console.log (True: out is kept instead, under --no-save)."""
        if self.o.save and self.dir:
            for name in LANE_KEPT:
                if os.path.exists(os.path.join(out, name)):
                    shutil.copyfile(os.path.join(out, name), os.path.join(self.dir, name))
            say(f"run.sh: the lane's outer console is kept: {os.path.join(self.dir, 'outer.log')}")
            return False
        say(f"run.sh: the lane's logs are kept in {out} ({', '.join(LANE_KEPT)}, {self.preset}.log)")
        return True

    def show_exits(self, where="the lane's L1 KVM", xen=False):
        """The exits table on the console and, when saving, the trace beside the
        log. xen: Xen's trace (the Xen lane), which has no KVM parameters,
        APICv inhibits or host class to say."""
        if not os.path.exists(self.trace):
            say("run.sh: --exits: no trace came back (see the console above)")
            return
        kept = os.path.join(self.dir, KT.XEN_TRACE_FILE if xen else KT.TRACE_FILE) \
            if self.dir else ""
        if kept and os.path.abspath(kept) != os.path.abspath(self.trace):
            shutil.copyfile(self.trace, kept)
        with open(self.trace, errors="replace") as t, open(self.log, errors="replace") as g:
            trace = TR.parse(t)
            lines = g.read().splitlines()
        recs = KT.attach(trace, KT.records(lines), KT.cmdline_of(lines), self.kvm_params)
        say("run.sh: what the hypervisor did, exits per measured iteration:")
        for line in KT.table(recs, KT.summary(trace)):
            say("  " + line)
        if xen:
            lane = " (SVM without AVIC: the outer TCG offers none)" \
                if self.accel == "xen-in-tcg" else ""
            say(f"  {where}: Xen's own exits{lane}; no host-class model covers Xen, the table "
                "is the evidence (docs/xen.md)")
            return
        self.apicv = AV.apicv_line(self.kvm_params, trace)
        say(f"  {self.apicv} ({where})")
        kvm = self.accel == "kvm"
        kernel, cpu_pm = host_model.run_facts(
            self.accel, machine.kernel().get("kernel") if kvm else None, self.qemu)
        name, why = host_class.classify(self.accel, KF.cpu_flags() if kvm else None,
                                        self.kvm_params, KF.kvm_software() if kvm else None,
                                        kernel, KF.cpu_family() if kvm else None)
        say("  " + host_class.line(name, why))
        for line in host_model.lines(host_model.judge(recs, name, kernel=kernel,
                                                      cpu_pm=cpu_pm)):
            say("  " + line)
        self.inhibited = AV.apicv_inhibited(recs) or not self.apicv_enabled()

    def apicv_enabled(self):
        return any(self.kvm_params.get(k) in ("1", "Y", "y") for k, _, _ in AV.APICV_PARAMS)

    def save(self, status, code):
        """results.json and summary.txt (boot/save.py); code, or 28."""
        try:
            save_run(self.dir, label=self.label, config=self.label, preset=self.preset,
                     accel=self.accel, qemu_bin=shutil.which(self.env.qemu) or "",
                     qemu_version=qemu_version(self.env.qemu),
                     status=status, started=self.started, seconds=float(self.seconds),
                     qemu_exit=self.rc, exit=code, qemu=self.qemu, apicv=self.apicv,
                     exits_kvm_params=self.kvm_params, module_param=self.module_param,
                     pin_why=self.pin_why, pin=self.lane_pin, ab=self.ab,
                     matrix=self.matrix, xen=getattr(self, "xen", None))
        except ToolError as e:
            say(f"run.sh: {e.message}")
            code = EX_SAVE
        # A signal during the save: it wrote nothing.
        if not os.path.exists(os.path.join(self.dir, "results.json")):
            self.jobs.check(self.seconds)
        return code

    def interrupted(self, seconds):
        """An interrupted run: the console log says so on its last line, and no
        results file is written."""
        sig = self.jobs.interrupted
        self.console.finish(time.monotonic(), f"interrupted by {sig}")
        if self.log and not self.log_is_temp and os.path.isfile(self.log):
            with open(self.log, "a") as f:
                f.write(f"\nrun.sh: INCOMPLETE: interrupted by {sig} after {seconds} s; "
                        "this log is incomplete and no results were saved\n")
            say(f"run.sh: interrupted by {sig}; incomplete log: {self.log}")
        else:
            say(f"run.sh: interrupted by {sig}")
        return EX_INTERRUPTED

    def cleanup(self):
        if self.log_is_temp and os.path.lexists(self.log):
            os.unlink(self.log)
        if self.runtime_dir:
            shutil.rmtree(self.runtime_dir, ignore_errors=True)


def run(argv, env, jobs, prepared=False, pin_default=False, ab=None, matrix=None):
    """`./run.sh [run] ARGS`: its exit code. pin_default, ab, matrix: Boot's
    (ab and matrix give them)."""
    try:
        o = parse_run(argv, env.caller_dir)
    except UsageError as e:
        return usage_error(e)
    if o.help:
        sys.stdout.write(USAGE_RUN)
        return 0
    boot = Boot(o, env, jobs, prepared, pin_default, ab, matrix)
    try:
        return boot.run()
    except ToolError as e:
        if e.message:
            say(f"run.sh: {e.message}")
        return e.code
    except Interrupted as e:
        return boot.interrupted(e.seconds)
    finally:
        boot.cleanup()
