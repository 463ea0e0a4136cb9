# SPDX-License-Identifier: GPL-2.0-only
"""KVM-host helpers of run.sh (docs/exits.md, "--pin and --perf-kvm").

check_extras: whether --pin and --perf-kvm can work here (exit 29 if not).

PausedStart: a boot started paused (-S) with a QMP socket; attach perf to
QEMU while the guest has not run, pin (qmp_start), let it run; after QEMU
ended, stop perf and keep its report. The tracer of --exits attaches
the same way.

qmp_start: QEMU was started paused (-S) with a QMP socket. Ask it for the
vCPU thread ids (query-cpus-fast), pin each thread to one host CPU with
sched_setaffinity (what taskset -p does), move QEMU's other threads (its
main loop, I/O and RCU threads) off those CPUs where others are left, as
libvirt's emulatorpin does, record both, then let the guest run (cont).
Pinning happens before the guest executes one instruction, so every
measurement runs pinned.

default_cpus: where pinning goes when nobody named the CPUs: never CPU 0's
core, never two SMT siblings of one core.

perf_parse: the VM-exit table of `perf kvm stat report`, as records.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time

from ipibench import machine
from ipibench.exit_codes import EX_UNAVAILABLE, EX_USAGE, ToolError
from ipibench.jobs import say
from ipibench.write import write_new


def check_extras(accel, pin, perf, any_accel=False):
    """--pin (pin not None) and --perf-kvm need a real KVM, QMP, and for perf
    its tracepoints. any_accel: IPIBENCH_PIN_ANY_ACCEL, for the tests only."""
    if (pin is not None or perf) and accel != "kvm" and not any_accel:
        what = " and ".join(n for n, on in (("--pin", pin is not None), ("--perf-kvm", perf)) if on)
        raise ToolError(EX_UNAVAILABLE, f"{what} needs KVM (accel is {accel}): under TCG vCPU threads emulate and their placement measures nothing; use --accel kvm on a host with /dev/kvm")
    if perf:
        if not shutil.which("perf"):
            raise ToolError(EX_UNAVAILABLE,
                            "--perf-kvm: perf is missing (Debian package linux-perf)")
        if not machine.tracefs():
            raise ToolError(EX_UNAVAILABLE, "--perf-kvm: no kvm:kvm_exit tracepoint (tracefs not mounted, kvm not loaded, or not root)")


def pin_plan(asked, by_default, accel, vcpus, cpus, software=None, core=machine.cpu_core):
    """Whether a boot pins its vCPUs, decided before it starts: (the --pin
    value to pin with, None for no pinning; why, for the run record's "pin").
    asked: --pin's value (None: not given); by_default: ab and matrix, which
    pin under KVM unless --no-pin (None: --no-pin given, False: a plain run);
    vcpus: the -smp count; cpus: the host CPUs run.sh may use, of which
    default_cpus() picks. Default pinning never fails a boot: where it
    cannot pin, the why says so. Under
    kvm-in-tcg the lane pins its own inner vCPUs (take_lane reads it);
    software: why the host's KVM is software (PVM), whose vCPU placement
    measures that software, so default pinning leaves it alone."""
    if asked is not None:
        return asked, "asked: --pin"
    if by_default is None:
        return None, "--no-pin"
    if not by_default:
        return None, "not asked: no --pin (ab and matrix pin by default under KVM)"
    if accel != "kvm":
        return None, (f"accel {accel}: vCPU threads emulate, and where they run measures "
                      "nothing" if accel not in ("kvm-in-tcg", "xen-in-tcg") else
                      "the lane pins its inner vCPUs itself" if accel == "kvm-in-tcg" else
                      "Xen's scheduler places the guest's vCPUs")
    if software:
        return None, f"{software}: where its vCPUs run measures that software"
    picks, why = default_cpus(cpus, vcpus, core)
    if picks is None:
        return None, why
    return ",".join(map(str, picks)), ("by default under KVM: ab and matrix pin unless "
                                      "--no-pin; " + why)


def default_cpus(cpus, n, core=machine.cpu_core):
    """(the host CPUs of cpus that n vCPUs are pinned to by default, in
    order, and what was left out) or (None, why not). Never a CPU of CPU
    0's core: the host's housekeeping runs there (its tick, RCU callbacks,
    most device interrupts by default). One CPU a core: two SMT siblings
    share the core's pipeline and caches, so one vCPU's spinning would time
    into the other's figures. So libvirt's and tuned's realtime placements
    do; a user who wants siblings or CPU 0 names them with --pin=CPUS.
    core(cpu): (package, core, siblings) or None, machine.cpu_core."""
    picks = machine.host_cores(cpus, core)
    if len(picks) < n:
        return None, (f"{n} vCPUs, {len(picks)} host cores to pin them to, one a core, "
                      f"CPU 0's core left to the host (of CPUs {format_cpus(cpus)})")
    left = sorted(set(cpus) - set(picks[:n]))
    return picks[:n], f"CPU 0's core and SMT siblings left out ({format_cpus(left) or 'none'})"


def format_cpus(cpus):
    """[0, 1, 2, 5] -> "0-2,5"."""
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


def pin_record(pins, why):
    """The run record's "pin": {"state": "pinned" | "not pinned" | "unknown",
    "map": [{vcpu, thread_id, host_cpu, core, siblings}, ...], "emulator":
    where QEMU's other threads ran, "why": text} from what pin.json holds
    ({"map", "emulator"}; a bare map before the emulator was recorded;
    None: none was written) and pin_plan's why (None: the saver was not
    told)."""
    emulator = None
    if isinstance(pins, dict):
        pins, emulator = pins.get("map"), pins.get("emulator")
    if isinstance(pins, list) and pins:
        return {"state": "pinned", "map": pins, "why": why or "",
                **({"emulator": emulator} if emulator else {})}
    if why is None:
        return {"state": "unknown", "map": [], "why": "run.sh did not say"}
    return {"state": "not pinned", "map": [], "why": why}


def lane_pin(outer):
    """The run record's "pin" of a lane boot, from the outer VM's
    `@@@ lane-info vcpu-pin` line (host/lane/lane.sh pin_vcpus): the
    inner vCPUs against the outer VM's (L1) CPUs."""
    m = re.search(r"^@@@ lane-info vcpu-pin (.*)$", outer, re.M)
    if not m:
        return {"state": "unknown", "map": [], "why": "the lane said nothing of its pinning"}
    text = m.group(1).strip()
    if text.startswith("none:"):
        return {"state": "not pinned", "map": [],
                "why": f"the lane did not pin them: {text[5:].strip()}"}
    pairs = re.findall(r"(\d+):(\d+|failed)", text.split(";", 1)[0])
    pins = [{"vcpu": int(v), "host_cpu": int(c)} for v, c in pairs if c != "failed"]
    failed = [v for v, c in pairs if c == "failed"]
    if failed or not pins:
        return {"state": "not pinned", "map": pins,
                "why": f"the lane could not pin vCPU {', '.join(failed) or 'any'}"}
    return {"state": "pinned", "map": pins,
            "why": "by the lane: inner vCPU i on L1 CPU i, the outer VM's"}


def parse_cpu_list(text):
    """--pin's '2-5,8' -> [2, 3, 4, 5, 8] (order kept: vCPU i goes to the
    i-th); ToolError(EX_USAGE) naming what is wrong."""
    try:
        return machine.parse_cpu_list(text)
    except ValueError as e:
        raise ToolError(EX_USAGE, f"--pin: {e}")


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


class Qmp:
    """The smallest QMP client: one command at a time, events skipped."""

    def __init__(self, path, wait, watch=None):
        deadline = time.monotonic() + wait
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError as e:
                self.sock.close()
                if watch and not (watch() if callable(watch) else _alive(watch)):
                    raise ToolError(EX_UNAVAILABLE, "QEMU ended before its QMP socket answered (its own message is in the console log)")
                if time.monotonic() > deadline:
                    raise ToolError(EX_UNAVAILABLE, f"--pin/--perf-kvm: no QMP socket at {path} after {wait:g} s ({e.strerror})")
                time.sleep(0.05)
        self.sock.settimeout(wait)
        self.buf = b""
        greeting = self.read()
        if "QMP" not in greeting:
            raise ToolError(EX_UNAVAILABLE, f"QMP: unexpected greeting {greeting!r}")
        self.execute("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except OSError as e:
                raise ToolError(EX_UNAVAILABLE, f"QMP: {e}")
            if not chunk:
                raise ToolError(EX_UNAVAILABLE, "QMP: QEMU closed the socket")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command, **arguments):
        msg = {"execute": command, **({"arguments": arguments} if arguments else {})}
        try:
            self.sock.sendall(json.dumps(msg).encode() + b"\n")
        except OSError as e:  # QEMU died after its greeting (BrokenPipeError)
            raise ToolError(EX_UNAVAILABLE, f"QMP {command}: {e}")
        while True:
            msg = self.read()
            if "event" in msg:
                continue
            if "error" in msg:
                raise ToolError(EX_UNAVAILABLE, f"QMP {command}: {msg['error'].get('desc')}")
            return msg.get("return")


class PausedStart:
    """QEMU started paused (-S, -qmp in runtime_dir, -pidfile there with perf):
    attach perf, pin (pin: None, "" for the CPUs run.sh may use, or a list),
    then let the guest run; pinmap: where the vCPU -> host CPU map goes."""

    def __init__(self, runtime_dir, pin, perf, pinmap, tracer=None):
        self.dir, self.pin, self.perf, self.pinmap = runtime_dir, pin, perf, pinmap
        self.perf_job, self.tracer = None, tracer

    def start(self, job):
        """0 once the guest runs, else an exit code (its messages printed);
        job: the Popen of QEMU (under timeout), watched while QMP is awaited.
        tracer (--exits): an tracefs.HostTrace, started on QEMU's pid."""
        if self.perf:
            code = self._attach_perf()
            if code:
                return code
        if self.tracer:
            qpid = self._qemu_pid()
            code = self.tracer.start(qpid) if qpid else EX_UNAVAILABLE
            if code:
                return code
        try:
            return qmp_start(os.path.join(self.dir, "qmp.sock"), self.pin,
                             self.pinmap if self.pin is not None else None, wait=20,
                             watch=lambda: job.poll() is None)
        except ToolError as e:
            say(f"qmp-start: {e.message}")
            return e.code

    def _qemu_pid(self):
        """QEMU's pid from its -pidfile, or None (said)."""
        pidfile = os.path.join(self.dir, "qemu.pid")
        for _ in range(100):
            if os.path.exists(pidfile) and os.path.getsize(pidfile) > 0:
                break
            time.sleep(0.1)
        try:
            with open(pidfile) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            say("run.sh: QEMU wrote no pid file")
            return None

    def _attach_perf(self):
        qpid = self._qemu_pid()
        if qpid is None:
            return EX_UNAVAILABLE
        log = os.path.join(self.dir, "perf.log")
        with open(log, "wb") as out:
            self.perf_job = subprocess.Popen(["perf", "kvm", "stat", "record", "-o",
                                              os.path.join(self.dir, "perf.data"), "-p",
                                              str(qpid)], stdout=out, stderr=subprocess.STDOUT)
        time.sleep(1)  # perf attaches its tracepoints before the guest runs
        if self.perf_job.poll() is not None:
            with open(log, errors="replace") as f:
                for line in f.read().splitlines():
                    say(f"perf: {line}")
            say("run.sh: --perf-kvm: perf kvm stat record failed")
            return EX_UNAVAILABLE
        return 0

    def stop(self, save_dir):
        """After QEMU ended: stop the tracer and perf; with save_dir, keep what
        they recorded there."""
        if self.tracer:
            self.tracer.stop(save_dir)
            self.tracer = None
        if self.perf_job is None:
            return
        # perf record ends cleanly on SIGTERM.
        try:
            self.perf_job.send_signal(signal.SIGTERM)
        except OSError:
            pass
        self.perf_job.wait()
        self.perf_job = None
        if not save_dir:
            return
        tmp = os.path.join(save_dir, ".perf-kvm.txt.tmp")
        with open(tmp, "wb") as out:
            rc = subprocess.call(["perf", "kvm", "stat", "report", "-i",
                                  os.path.join(self.dir, "perf.data"), "--stdio"],
                                 stdout=out, stderr=subprocess.STDOUT)
        if rc == 0:
            final = os.path.join(save_dir, "perf-kvm.txt")
            if not os.path.lexists(final):  # mv -n: never over an existing file
                os.rename(tmp, final)
            return
        say("run.sh: warning: perf kvm stat report failed:")
        with open(tmp, errors="replace") as f:
            for line in f.read().splitlines()[-3:]:
                say(f"  {line}")
        os.unlink(tmp)


def pin_vcpus(vcpus, cpus):
    """Pins each vCPU of query-cpus-fast's answer to the next of cpus."""
    if not isinstance(vcpus, list) or not vcpus:
        raise ToolError(EX_UNAVAILABLE, "--pin: query-cpus-fast returned no vCPUs")
    if len(cpus) < len(vcpus):
        raise ToolError(EX_UNAVAILABLE, f"--pin: {len(vcpus)} vCPUs but only {len(cpus)} host CPUs to pin them to ({cpus})")
    pins = []
    for v in sorted(vcpus, key=lambda v: v.get("cpu-index", 0)):
        tid = v.get("thread-id")
        if not isinstance(tid, int):
            raise ToolError(EX_UNAVAILABLE, f"--pin: vCPU {v.get('cpu-index')} has no thread id (is QEMU running vCPUs in threads?)")
        host = cpus[len(pins)]
        try:
            os.sched_setaffinity(tid, {host})
        except OSError as e:
            raise ToolError(EX_UNAVAILABLE, f"--pin: cannot pin thread {tid} to CPU {host}: {e.strerror}")
        where = machine.cpu_core(host)
        pins.append({"vcpu": v.get("cpu-index"), "thread_id": tid, "host_cpu": host,
                     "core": f"package {where[0]} core {where[1]}" if where else "unknown",
                     "siblings": where[2] if where else []})
    return pins


def pin_emulator(pins, allowed, core=machine.cpu_core):
    """QEMU's threads other than its vCPUs (main loop, I/O, RCU, workers),
    moved to the allowed CPUs of cores no vCPU was pinned to (CPU 0's core
    among them: the host's housekeeping is theirs too), as libvirt's
    emulatorpin does: {"threads", "cpus", "why"}; onto the vCPUs' SMT
    siblings only where no other core is left, said so. Where no CPU at
    all is left they stay where the host puts them, and the record says
    so. A thread a vCPU's thread starts later inherits that vCPU's CPU."""
    vcpu_tids = {p["thread_id"] for p in pins}
    try:
        with open(machine.process(pins[0]["thread_id"], "status")) as f:
            status = f.read()
    except OSError:
        status = ""
    tgid = re.search(r"^Tgid:\s*(\d+)", status, re.M)
    try:
        tids = [int(t) for t in os.listdir(machine.process(tgid.group(1), "task"))] \
            if tgid else []
    except (OSError, ValueError):
        tids = []
    others = sorted(set(tids) - vcpu_tids)
    taken = {p["host_cpu"] for p in pins}
    vcores = {machine.core_key(c, core) for c in taken}
    free = sorted(c for c in set(allowed) - taken if machine.core_key(c, core) not in vcores)
    where = "off the vCPUs' cores (as libvirt's emulatorpin)"
    if not free:
        free = sorted(set(allowed) - taken)
        where = "on the vCPUs' SMT siblings: no other core is left"
    if not others:
        return {"threads": 0, "cpus": [], "why": "QEMU has no thread besides its vCPUs"
                if tgid else "QEMU's threads could not be read"}
    if not free:
        return {"threads": len(others), "cpus": [], "why": "no CPU left besides the vCPUs': "
                "QEMU's other threads run where the host puts them, beside the vCPUs"}
    moved = 0
    for tid in others:
        try:
            os.sched_setaffinity(tid, set(free))
            moved += 1
        except OSError:
            pass  # a thread that ended meanwhile
    return {"threads": moved, "cpus": free, "why": where}


def qmp_start(socket_path, pin, out, wait, watch):
    """Pin the paused guest's vCPU threads (pin: a CPU list, "" or "auto" for
    the CPUs run.sh may use, None for none), write the map to out (if any),
    then let the guest run; watch() is false once QEMU has ended."""
    qmp = Qmp(socket_path, wait, watch)
    if pin is not None:
        allowed, vcpus = machine.allowed_cpus(), qmp.execute("query-cpus-fast")
        if pin in ("", "auto"):
            cpus, why = default_cpus(allowed, len(vcpus) if isinstance(vcpus, list) else 0)
            if cpus is None:
                raise ToolError(EX_UNAVAILABLE, f"--pin: {why}; name the CPUs (--pin=CPUS)")
        else:
            cpus = parse_cpu_list(pin)
        pins = pin_vcpus(vcpus, cpus)
        emulator = pin_emulator(pins, allowed)
        if out:
            write_new(out, json.dumps({"map": pins, "emulator": emulator}, indent=1) + "\n")
    qmp.execute("cont")
    return 0


# One line of the VM-exit table, e.g.
#   MSR_WRITE  10364  44.64%  1.28%  0.45us  48.25us  1.23us ( +-  0.78% )
# A decimal is digits with at most one point: "1.2.3" is no number, and a line
# holding one is not a table line (float() would refuse it).
DEC = r"(\d+(?:\.\d+)?)"
EXIT_LINE = re.compile(rf"^\s*(\S+)\s+(\d+)\s+{DEC}%\s+{DEC}%\s+{DEC}us\s+{DEC}us\s+{DEC}us")


def perf_parse(text):
    exits = []
    for line in text.splitlines():
        m = EXIT_LINE.match(line)
        if m:
            exits.append({"reason": m.group(1), "samples": int(m.group(2)),
                          "samples_pct": float(m.group(3)), "time_pct": float(m.group(4)),
                          "min_us": float(m.group(5)), "max_us": float(m.group(6)),
                          "avg_us": float(m.group(7))})
    return exits
