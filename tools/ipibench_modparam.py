# SPDX-License-Identifier: GPL-2.0-only
"""A KVM module parameter, set for one side of an A/B run and put back after
(`./run.sh ab --module-param`, issue 11).

Parameters KVM lets change at run time (kvm.halt_poll_ns) are written in
/sys/module; the others (kvm_amd.avic, kvm_intel.enable_apicv and
enable_ipiv) are read when the module loads, so the module is reloaded
with the value. Whatever was set is read back: the module may not grant it
(AVIC on a CPU without it reads N), and the run says so. Before touching
anything it refuses, with exit 33 and the reason, when it would fail or
hurt: not root, an unknown parameter, the module not loaded, another process
holding /dev/kvm (a reload would pull KVM from under its VMs).

Paths and the modprobe command come from a Host, so that tests can point
them at a stand-in tree (IPIBENCH_AB_ROOT, IPIBENCH_AB_EUID, IPIBENCH_AB_MODPROBE:
for tests only)."""
import os
import subprocess

EX_MODPARAM = 33

# What may be set, and whether the module must be reloaded for it.
KNOWN = {"kvm_amd.avic": "reload", "kvm_intel.enable_apicv": "reload",
         "kvm_intel.enable_ipiv": "reload", "kvm.halt_poll_ns": "write",
         "kvm.halt_poll_ns_grow": "write", "kvm.halt_poll_ns_shrink": "write"}
# Why a module may not grant a value, where the host can tell.
WHY_NOT = {"kvm_amd.avic": ("avic", "the CPU has no AVIC (CPUID 0x8000000A EDX[13])"),
           "kvm_intel.enable_apicv": ("vapic", "the CPU has no APIC virtualization"),
           "kvm_intel.enable_ipiv": ("ipi_virt", "the CPU has no IPI virtualization")}


class Refused(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.code, self.message = EX_MODPARAM, message


class Host:
    def __init__(self, environ=os.environ):
        self.root = environ.get("IPIBENCH_AB_ROOT", "/")
        self.euid = int(environ.get("IPIBENCH_AB_EUID", os.geteuid()))
        self.modprobe = environ.get("IPIBENCH_AB_MODPROBE", "modprobe")

    def path(self, *parts):
        return os.path.join(self.root, *parts)


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
        if any(link.endswith("/dev/kvm") for link in links):
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
        self.file = host.path("sys", "module", module, "parameters", param)
        self.original = None

    def check(self):
        """Raises Refused with the reason when setting it would fail or hurt."""
        if self.name not in KNOWN:
            raise Refused(f"unknown parameter {self.name}: ab sets "
                          f"{', '.join(sorted(KNOWN))}")
        if self.host.euid != 0:
            raise Refused(f"setting {self.name} needs root (run ./run.sh ab as root); "
                          "nothing was changed")
        if not os.path.exists(self.file):
            raise Refused(f"{self.name}: module {self.module} is not loaded here "
                          f"(no {self.file}); nothing was changed")
        busy = holders(self.host)
        if busy and KNOWN[self.name] == "reload":
            raise Refused(f"{self.name} needs {self.module} reloaded, but /dev/kvm is held by "
                          f"{', '.join(busy)}: stop its VMs first; nothing was changed")
        self.original = self.read()

    def read(self):
        with open(self.file) as f:
            return f.read().strip()

    def set(self, value):
        """Sets value; returns what the module reports now."""
        if KNOWN[self.name] == "write":
            with open(self.file, "w") as f:
                f.write(value)
            return self.read()
        for argv in ([self.host.modprobe, "-r", self.module],
                     [self.host.modprobe, self.module, f"{self.param}={value}"]):
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                raise Refused(f"{' '.join(argv)} failed: {p.stdout.strip()[-200:]}")
        return self.read()

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
    """Whether the module's read-back matches the value asked (Y/N vs 1/0)."""
    norm = {"y": "1", "n": "0", "true": "1", "false": "0"}
    return norm.get(got.lower(), got) == norm.get(asked.lower(), asked)
