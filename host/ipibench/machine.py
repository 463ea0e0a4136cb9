# SPDX-License-Identifier: GPL-2.0-only
"""The one seam between ipibench and the machine it runs on: every fact read
from /proc, /sys or /dev, and the kernel's and CPUs' own facts, is read here.

IPIBENCH_HOST_ROOT names a folder that stands for / (default: / itself).
The tests point it at a fixture host (tests/host/hosts.py: Intel or AMD
with hardware KVM, Hygon, PVM, no /dev/kvm, a /dev/kvm not accessible), so
that no test reads the machine it happens to run on unless it tests this
module. tools/check_imports.py refuses a /proc, /sys or /dev path written
anywhere else in the host package or its tests.

What is not a fact of the host, and so never redirected: the processes this
tool started or waits for (process(): their /proc entries are real, under
any root), and the CPUs this process may pin threads to (allowed_cpus()).
QEMU's version is asked of the binary $QEMU names, the tests' stand-in or
the real one; that variable is its seam."""
import contextlib
import errno
import os
import re

ROOT_VAR = "IPIBENCH_HOST_ROOT"
# The device KVM offers VMs through (its host path).
KVM_DEVICE = "/dev/kvm"
# A fixture's stand-in for what root cannot meet otherwise: a file
# "<device>.errno" beside a device holds the errno name its open fails with
# (EACCES: root passes every mode check, and a fixture cannot mknod).
ERRNO_SUFFIX = ".errno"


def root(environ=None):
    """The folder that stands for / (IPIBENCH_HOST_ROOT, default /)."""
    environ = os.environ if environ is None else environ
    return environ.get(ROOT_VAR) or "/"


# Set while host_facts() (kvmhost/facts.py) takes the snapshot a results
# folder keeps: note() marks those reads, which a test of the seam makes on
# every fixture host (tests/host/test_machine.py).
_in_snapshot = False


@contextlib.contextmanager
def snapshot():
    """with machine.snapshot(): the reads inside are the saved snapshot's."""
    global _in_snapshot
    outer, _in_snapshot = _in_snapshot, True
    try:
        yield
    finally:
        _in_snapshot = outer


def note(where, r):
    """IPIBENCH_HOST_LOG (the tests' runner: tests/host/harness.py sets it,
    tests/host/on_hosts.py reads it): a file
    that gets "ROOT<tab>PATH<tab>PID" for every host read, so that the
    runner knows which cases read the host, and whether in the test's own
    process or in a run.sh it started; "<tab>snapshot" after a read of
    host_facts()'s, which a case only carries into its results."""
    log = os.environ.get("IPIBENCH_HOST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{r}\t{where}\t{os.getpid()}" + ("\tsnapshot" if _in_snapshot else "")
                    + "\n")


def path(where, environ=None):
    """The host path `where` (absolute: "/sys/module") under the root."""
    r = root(environ)
    note(where, r)
    return where if r == "/" else os.path.join(r, where.lstrip("/"))


def read(where, environ=None):
    """The stripped text of a host file, or None when it cannot be read."""
    try:
        with open(path(where, environ), encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def listdir(where, environ=None):
    """The names in a host folder, sorted; None when it cannot be listed."""
    try:
        return sorted(os.listdir(path(where, environ)))
    except OSError:
        return None


def isdir(where, environ=None):
    return os.path.isdir(path(where, environ))


def exists(where, environ=None):
    return os.path.exists(path(where, environ))


def xen_dom0(environ=None):
    """Whether this host is a Xen dom0 (/proc/xen/capabilities says control_d):
    where run.sh --accel xen runs (host/lane/xen-lane.sh --dom0 checks it too)."""
    return "control_d" in (read("/proc/xen/capabilities", environ) or "")


def tracefs(environ=None):
    """The tracefs folder (its real path) where KVM's events are, or None:
    /sys/kernel/tracing, else the older debugfs mount."""
    for t in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if exists(t + "/events/kvm/kvm_exit", environ):
            return path(t, environ)
    return None


def open_device(where, flags, environ=None):
    """os.open of a host device (a descriptor), honouring a fixture's
    "<device>.errno" stand-in under a root other than /."""
    p = path(where, environ)
    if root(environ) != "/":
        name = read(where + ERRNO_SUFFIX, environ)
        if name:
            code = getattr(errno, name, errno.EIO)
            raise OSError(code, os.strerror(code), p)
    return os.open(p, flags)


def kernel(environ=None):
    """{hostname, kernel, kernel_version, machine} as uname(2) gives them,
    read from /proc/sys/kernel so that a fixture host can say them (each
    None where its file is missing); uname's own on the real host."""
    names = (("hostname", "hostname"), ("kernel", "osrelease"),
             ("kernel_version", "version"), ("machine", "arch"))
    got = {k: read(f"/proc/sys/kernel/{f}", environ) for k, f in names}
    if root(environ) == "/":
        u = os.uname()
        real = {"hostname": u.nodename, "kernel": u.release, "kernel_version": u.version,
                "machine": u.machine}
        got = {k: real[k] if v is None else v for k, v in got.items()}
    return got


def parse_cpu_list(text):
    """"2-5,8" -> [2, 3, 4, 5, 8], the kernel's CPU list format (sysfs'
    online, --pin): order kept, each CPU once; ValueError saying why."""
    cpus = []
    for part in filter(None, text.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise ValueError(f"bad CPU list {text!r} (e.g. 2-5,8)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise ValueError(f"bad range {part!r}")
        cpus += [c for c in range(lo, hi + 1) if c not in cpus]
    return cpus


def cpus(environ=None):
    """How many CPUs the host has online (/sys/devices/system/cpu/online);
    else os.cpu_count() on the real host, None on a fixture host."""
    text = read("/sys/devices/system/cpu/online", environ)
    try:
        if text:
            return len(parse_cpu_list(text))
    except ValueError:
        pass
    return os.cpu_count() if root(environ) == "/" else None


def usable_cpus(environ=None):
    """How many host CPUs this tool's QEMU may run on: its affinity on the
    real host, every online CPU of a fixture host."""
    if root(environ) != "/":
        return cpus(environ)
    note("sched_getaffinity", "/")
    # The real host: this process's affinity (taskset, a cgroup's cpuset).
    try:
        return len(os.sched_getaffinity(0))
    except OSError:
        return os.cpu_count()


def cpu_core(cpu, environ=None):
    """(package, core, its SMT siblings) of host CPU N, from sysfs's
    topology; None where that does not say."""
    base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
    try:
        return (int(read(base + "physical_package_id", environ)),
                int(read(base + "core_id", environ)),
                parse_cpu_list(read(base + "thread_siblings_list", environ)))
    except (TypeError, ValueError):
        return None


def host_cores(cpus, core=None):
    """Of cpus, the first CPU of each core but CPU 0's, sorted: where vCPUs
    go when nobody named the CPUs (kvmhost/pin_perf.default_cpus) and what
    a preset scaled to the host counts (presets.host_vcpus). CPU 0's core
    is the host's housekeeping's; a second thread of a core would share
    its pipeline with the first. core: cpu_core (its environ's)."""
    housekeeping, first = core_key(0, core), {}
    for cpu in sorted(cpus):
        key = core_key(cpu, core)
        if cpu != 0 and key != housekeeping:
            first.setdefault(key, cpu)
    return sorted(first.values())


def core_key(cpu, core=None):
    """Which core host CPU N is on, (package, core), as core (cpu_core)
    says; where it does not say, the CPU is a core of its own."""
    t = (core or cpu_core)(cpu)
    return t[:2] if t else ("cpu", cpu)


def allowed_cpus():
    """The CPUs this process may pin threads to, sorted: its own affinity,
    under any root (pinning moves real threads)."""
    return sorted(os.sched_getaffinity(0))


def process(pid, *rest):
    """/proc/PID/... of a process this tool started or waits for: real under
    any root (a process is not a fact of the host). pid "" is /proc itself."""
    return os.path.join("/proc", str(pid), *rest) if pid != "" else "/proc"
