# SPDX-License-Identifier: GPL-2.0-only
"""KVM's module parameters: every one sysfs shows for kvm, kvm_amd and
kvm_intel, read for the host facts (read_all), and one of them set for a side
of an A/B run and put back after (`./run.sh ab --module-param`, issues 11 and
20).

Which parameters exist is asked of /sys/module/MODULE/parameters, never kept
in a list here: kernels add them (kvm_amd.enable_ipiv, kvm_amd.vnmi) and drop
them. A parameter whose file is writable (mode 0644) is changed at run time
by writing it; one that is read-only (0444) is read when the module loads, so
the module is reloaded with the value, the modules that hold it (kvm_amd
holds kvm) taken out first and loaded again after. Whatever was set is read
back: the module may not grant it (AVIC on a CPU without it reads N), and
the run says so.

It stays narrow on purpose. Only the modules kvm, kvm_amd and kvm_intel; a
parameter name is a plain identifier (never a path); each value is checked
against the parameter's type, told from what it reads now (Y/N: bool; a
decimal integer: integer; anything else is not set) before anything is
changed; modprobe gets an argv list, never a shell. Before touching
anything it refuses, with exit 33 and the reason, when it would fail or
hurt: an unknown parameter (the message lists those that exist), a value of
the wrong type, not root, the module not loaded or built into the kernel,
another process holding /dev/kvm (a reload would pull KVM from under its
VMs).

Paths and the modprobe command come from a Host, so that tests can point
them at a stand-in tree (IPIBENCH_HOST_ROOT, machine.py; IPIBENCH_AB_EUID, IPIBENCH_AB_MODPROBE:
for tests only)."""
import os
import re
import stat
import subprocess

from ipibench import machine
from ipibench.exit_codes import EX_MODPARAM  # noqa: F401

# The modules whose parameters are recorded and may be set: KVM itself and
# its two hardware vendors. Nothing else is ever loaded or unloaded here.
MODULES = ("kvm", "kvm_amd", "kvm_intel")
# A parameter (or module) name as the kernel spells it: never '/', '..' or '='.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# A value the kernel prints for an integer parameter (int, uint, long, ulong).
INTEGER = re.compile(r"-?[0-9]{1,20}")
# What a bool parameter accepts, and what it means (the kernel's kstrtobool
# takes more; these are the spellings the docs promise).
BOOL_WORDS = {"0": "0", "1": "1", "N": "0", "n": "0", "Y": "1", "y": "1"}

# Why a module may not grant a value, where the host's CPU flags can tell.
WHY_NOT = {"kvm_amd.avic": ("avic", "the CPU has no AVIC (CPUID 0x8000000A EDX[13])"),
           "kvm_amd.vnmi": ("vnmi", "the CPU has no virtual NMI (CPUID 0x8000000A EDX[25])"),
           "kvm_intel.enable_apicv": ("vapic", "the CPU has no APIC virtualization"),
           "kvm_intel.enable_ipiv": ("ipi_virt", "the CPU has no IPI virtualization")}


class Refused(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.code, self.message = EX_MODPARAM, message


class Host:
    """The host whose modules ab changes: its files through the seam
    (machine.py), its euid and modprobe (IPIBENCH_AB_EUID and
    IPIBENCH_AB_MODPROBE stand in for them in the tests)."""

    def __init__(self, environ=os.environ):
        self.environ = environ
        self.euid = int(environ.get("IPIBENCH_AB_EUID", os.geteuid()))
        self.modprobe = environ.get("IPIBENCH_AB_MODPROBE", "modprobe")

    def path(self, *parts):
        return machine.path("/" + "/".join(parts), self.environ)


# --- what exists, for the host facts and for the refusals


def param_dir(sysfs, module):
    return os.path.join(sysfs, "module", module, "parameters")


def names(sysfs, module):
    """The parameters sysfs shows for a module, sorted ([] when not loaded)."""
    try:
        found = os.listdir(param_dir(sysfs, module))
    except OSError:
        return []
    return sorted(n for n in found if NAME.fullmatch(n))


def read_value(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().strip()


def read_all(environ=None):
    """{'module.param': value} of every parameter of kvm, kvm_amd and kvm_intel
    that the host's sysfs shows and lets this process read."""
    # Among those that move an IPI figure: APIC virtualization (avic,
    # enable_apicv, enable_ipiv), vnmi, the preemption timer, halt polling
    # (halt_poll_ns*), and pause-loop exiting (ple_gap, ple_window*,
    # pause_filter_*), which takes a vCPU spinning on PAUSE out of guest
    # mode: an exit that a spinning target's or polling sender's figure
    # does not name.
    sysfs, out = machine.path("/sys", environ), {}
    for module in MODULES:
        for p in names(sysfs, module):
            try:
                out[f"{module}.{p}"] = read_value(os.path.join(param_dir(sysfs, module), p))
            except OSError:
                continue
    return out


def kind_of(value):
    """'bool' (reads Y or N), 'integer' (a decimal integer; one reading 0 or 1
    may be a bool printed as a number, so it takes Y/N too), or None."""
    if value in ("Y", "N"):
        return "bool"
    if INTEGER.fullmatch(value):
        return "integer"
    return None


def writable_value(kind, current, value):
    """The text to give the module for value, or None when value does not fit
    the type. A 0/1 integer given Y or N gets 1 or 0: right for a bool that
    prints as a number, and for an integer that takes 0 and 1."""
    if kind == "bool":
        return value if value in BOOL_WORDS else None
    if INTEGER.fullmatch(value):
        return value
    if current in ("0", "1") and value in BOOL_WORDS:
        return BOOL_WORDS[value]
    return None


def check_name(module, param):
    """Refused unless MODULE.PARAM names a parameter these tools may touch at all."""
    if module not in MODULES:
        raise Refused(f"{module}.{param}: ab sets parameters of {', '.join(MODULES)} only "
                      "(as /sys/module spells them: kvm_amd, not kvm-amd); nothing was changed")
    if not NAME.fullmatch(param):
        raise Refused(f"{module}.{param}: a parameter is a plain name (letters, digits, '_'), "
                      "never a path; nothing was changed")


def check_words(name, values):
    """Refused unless every value is a bool or integer word (the lane's module,
    whose type this host cannot read)."""
    for v in values:
        if not (v in BOOL_WORDS or INTEGER.fullmatch(v)):
            raise Refused(f"{name}: '{v}' is neither a bool (0, 1, Y, N, y, n) nor an "
                          "integer; nothing was changed")


def parse(spec):
    """'kvm_amd.avic=0,1' -> ('kvm_amd', 'avic', ['0', '1']); ValueError otherwise."""
    name, _, values = spec.partition("=")
    module, _, param = name.partition(".")
    vals = [v for v in values.split(",") if v]
    if not module or not param or len(vals) != 2:
        raise ValueError(f"--module-param wants MODULE.PARAM=A,B (two values), not '{spec}'")
    return module, param, vals


def holders(host):
    """'PID (comm)' of every other process with /dev/kvm open."""
    out, proc = [], host.path("proc")
    for pid in sorted(os.listdir(proc)) if os.path.isdir(proc) else []:
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        fds = os.path.join(proc, pid, "fd")
        try:
            links = [os.readlink(os.path.join(fds, fd)) for fd in os.listdir(fds)]
        except OSError:
            continue
        if any(link.endswith(machine.KVM_DEVICE) for link in links):
            try:
                with open(os.path.join(proc, pid, "comm")) as f:
                    comm = f.read().strip()
            except OSError:
                comm = "?"
            out.append(f"{pid} ({comm})")
    return out


class Param:
    """One parameter on this host: check, set, read back, restore."""

    def __init__(self, host, module, param):
        self.host, self.module, self.param = host, module, param
        self.name = f"{module}.{param}"
        self.sysfs = host.path("sys")
        self.file = os.path.join(param_dir(self.sysfs, module), param)
        self.original = None
        self.kind = self.how = None
        self.dependents = []  # modules that hold this one: out before a reload, back after

    def check(self, values):
        """Raises Refused with the reason when setting values would fail or hurt;
        nothing is changed either way."""
        check_name(self.module, self.param)
        if not os.path.isdir(os.path.join(self.sysfs, "module", self.module)):
            raise Refused(f"{self.name}: module {self.module} is not loaded here "
                          f"(no {os.path.join(self.sysfs, 'module', self.module)}); "
                          "nothing was changed")
        known = names(self.sysfs, self.module)
        if self.param not in known:
            raise Refused(f"unknown parameter {self.name}: {self.module} has "
                          f"{', '.join(known) or 'no parameters'}; nothing was changed")
        try:
            current, mode = self.read(), os.stat(self.file).st_mode
        except OSError as e:
            raise Refused(f"{self.name}: cannot read {self.file}: {e.strerror}; "
                          "nothing was changed")
        self.kind = kind_of(current)
        if self.kind is None:
            raise Refused(f"{self.name} reads '{current}', neither a bool nor an integer: ab "
                          "sets only those; nothing was changed")
        bad = [v for v in values if writable_value(self.kind, current, v) is None]
        if bad:
            what = ("a bool (0, 1, Y, N, y or n)" if self.kind == "bool" else
                    "an integer" + (", or Y or N" if current in ("0", "1") else ""))
            raise Refused(f"{self.name} takes {what} (it reads {current}), not '{bad[0]}'; "
                          "nothing was changed")
        if self.host.euid != 0:
            raise Refused(f"setting {self.name} needs root (run ./run.sh ab as root); "
                          "nothing was changed")
        self.how = "write" if mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) else "reload"
        if self.how == "reload":
            self.check_reload()
        self.original = current

    def check_reload(self):
        """What a reload needs: a loadable module, no VM on /dev/kvm."""
        base = os.path.join(self.sysfs, "module", self.module)
        if not os.path.exists(os.path.join(base, "initstate")):
            raise Refused(f"{self.name} is read when {self.module} loads, and {self.module} is "
                          f"built into this kernel (no {os.path.join(base, 'initstate')}): only "
                          f"the kernel command line sets it; nothing was changed")
        try:
            found = os.listdir(os.path.join(base, "holders"))
        except OSError:
            found = []
        self.dependents = sorted(m for m in found if NAME.fullmatch(m))
        busy = holders(self.host)
        if busy:
            raise Refused(f"{self.name} needs {self.module} reloaded, but /dev/kvm is held by "
                          f"{', '.join(busy)}: stop its VMs first; nothing was changed")

    def read(self):
        return read_value(self.file)

    def loaded(self, module):
        return os.path.isdir(os.path.join(self.sysfs, "module", module))

    def modprobe(self, *args):
        argv = [self.host.modprobe, *args]
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise Refused(f"{' '.join(argv)} failed: {p.stdout.strip()[-200:]}")

    def set(self, value):
        """Sets value (checked by check()); returns what the module reports now."""
        text = writable_value(self.kind, self.original, value)
        if self.how == "write":
            try:
                with open(self.file, "w") as f:
                    f.write(text)
            except OSError as e:
                raise Refused(f"writing {text} to {self.file} failed: {e.strerror}")
            return self.read()
        # The holders first (kvm_amd holds kvm), each only while sysfs still
        # shows it: taking kvm_amd out may take an unused kvm with it. A
        # reload sets only this parameter: others written at run time since
        # the module loaded go back to their defaults (or /etc/modprobe.d).
        for module in self.dependents + [self.module]:
            if self.loaded(module):
                self.modprobe("-r", module)
        self.modprobe(self.module, f"{self.param}={text}")
        for module in self.dependents:
            self.modprobe(module)
        try:
            return self.read()
        except OSError as e:
            raise Refused(f"{self.name}: cannot read it back: {e.strerror}")

    def why_not(self):
        """Why the module would not grant an enabling value, when the host shows it."""
        flag, why = WHY_NOT.get(self.name, (None, None))
        if not flag:
            return ""
        try:
            with open(self.host.path("proc", "cpuinfo")) as f:
                flags = f.read().split()
        except OSError:
            return ""
        return "" if flag in flags else why

    def restore(self):
        if self.original is not None:
            self.set(self.original)


def granted(asked, got):
    """Whether the module's read-back matches the value asked (Y/N vs 1/0, 010 vs 10)."""
    def norm(v):
        v = {"y": "1", "n": "0", "true": "1", "false": "0"}.get(v.lower(), v)
        return str(int(v)) if INTEGER.fullmatch(v) else v
    return norm(got) == norm(asked)
