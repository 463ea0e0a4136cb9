# SPDX-License-Identifier: GPL-2.0-only
"""What the host test files of tests/host share beyond harness.py: the
context every case is handed (Context: a temporary folder of its own, the
stand-in QEMU made there, and the synthetic result sets, made there when a
case first reads one), the stand-ins of QEMU, KVM and the module parameters
that more than one file boots against, and the small helpers around them.

main(CASES) runs a test file's cases, "ok - tools: ..." a line (harness's
--case and --list work on it); run() runs any list of cases, as
together.py does for several files in one process (tests/run)."""
import json
import os
import subprocess
import tempfile

from harness import IPIBENCH, REPO, Fail, check, run_cases, run_cmd
import synth

from ipibench import options as O
from ipibench.compare.model import row_key, row_name
from ipibench.exit_codes import ToolError
from ipibench.presets import load_presets
from ipibench.presets import PRESETS as PRESETS_CONF


# --- the readers on the synthetic result sets


# run.sh as a user runs it; the row that the slower and faster sets change.
TOOL = IPIBENCH
SLOW_KEY = ("single", "round-trip", "none", "x2apic", "spin", 1)
SLOW = row_name(SLOW_KEY)


def tool(*args, env=None):
    return run_cmd(TOOL + list(args), env)


class Sets:
    """The synthetic sets, made once (saving is the slow part)."""

    def __init__(self, tmp):
        j = lambda n: os.path.join(tmp, n)  # noqa: E731
        self.tmp = tmp
        self.base = synth.make_set(j("base"), seed=1)
        self.same = synth.make_set(j("same"), seed=1)
        self.rerun = synth.make_set(j("rerun"), seed=2)
        self.slow = synth.make_set(j("slow"), seed=3, scale={SLOW_KEY: 1.2})
        self.fast = synth.make_set(j("fast"), seed=4, scale={SLOW_KEY: 0.8})
        self.noisy_a = synth.make_set(j("noisy_a"), seed=5, boot_noise=0.35)
        self.noisy_b = synth.make_set(j("noisy_b"), seed=6, boot_noise=0.35,
                                      scale={SLOW_KEY: 1.2})
        self.cpus8 = synth.make_set(j("cpus8"), seed=7, cpus=8)
        self.tsc = synth.make_set(j("tsc"), seed=8, tsc_source="PIT calibration")
        other = {("ipi_benchmark", "total", "none", "x2apic", "spin", 1): 5000}
        self.disjoint = synth.make_set(j("disjoint"), boots=2, seed=9, rows=other)

        def fail_one(i, recs):
            if i == 2:
                for r in recs:
                    if r.get("bench") == "single" and r.get("backend") == "xapic":
                        r.clear()
                        r.update(synth.result(row_key({"bench": "single",
                                 "metric": "round-trip", "variant": "none", "backend": "xapic",
                                 "target_state": "spin", "ntargets": 1}), status="FAILURE",
                                 reason="IPI from CPU 0 to CPU 1 lost"))
                        break
        self.failure = synth.make_set(j("failure"), seed=1, mutate=fail_one)

        def check_failed(i, recs):
            recs[1]["failed"] = 2
        self.checkfail = synth.make_set(j("checkfail"), boots=1, seed=1, mutate=check_failed)
        self.crash = synth.make_set(j("crash"), boots=1, seed=1, status="CRASH", qemu_exit=73)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def executable(path, text):
    """write(), then made executable: a stand-in script (xl, xen-lane.sh, ...)."""
    os.chmod(write(path, text), 0o755)
    return path


# --- run.sh's own logic: its parsers, a stand-in KVM, made-up console lines


RUN = os.path.join(REPO, "run.sh")
PRESETS = load_presets(PRESETS_CONF)


def raises(code, fn, *args, **kw):
    """fn(*args) raises a ToolError or UsageError with code: its message."""
    try:
        fn(*args, **kw)
    except (ToolError, O.UsageError) as e:
        check(e.code == code, f"{fn.__name__}{args}: exit {e.code}, expected {code}: {e.message}")
        return e.message
    raise Fail(f"{fn.__name__}{args}: no error, expected exit {code}")


class FakeKvm:
    """A stand-in for HostKvm: usable or not (unusable: why not), software
    or not; probe refuses what matches."""

    def __init__(self, usable=True, refuse=None, why="kernel doesn't allow setting HyperV VP_INDEX",
                 unusable="/dev/kvm is missing (No such file or directory)", software=None):
        self._usable, self.refuse, self.why, self.probed = usable, refuse, why, []
        self._unusable, self._software = unusable, software

    def usable(self):
        return self._usable

    def unusable(self):
        return None if self._usable else self._unusable

    def software(self):
        return self._software

    def probe(self, model, machine):
        self.probed.append((model, machine))
        return self.why if self.refuse and self.refuse(model) else None


# The guest's reason for a backend that needs Hyper-V, as long as the real one.
HV = ('no Hyper-V interface: QEMU TCG (CPUID 0x40000000 "TCGTCGTCGTCG") emulates none; boot '
      'with -accel kvm and hv-* flags in -cpu')


def rec(kind, **kw):
    return json.dumps(dict({"record": kind, "schema": 1}, **kw), separators=(",", ":"))


def res(backend, bench, metric, status="SUCCESS", reason=None, p50=100, variant="none", n=1):
    r = {"bench": bench, "metric": metric, "variant": variant, "backend": backend,
         "status": status, "ntargets": n}
    if status == "SUCCESS":
        r["cycles"], r["ns"] = {"p50": p50}, {"p50": p50 // 2}
    else:
        r["reason"] = reason
    return rec("result", **r)


# --- stand-in QEMUs, KVM and module parameters to boot against


FAKE_QEMU = r"""#!/bin/sh
case "$1" in --version) echo 'QEMU emulator version 9.2.0 (stand-in)'; exit 0 ;; esac
case " $* " in *" -accel kvm "*) echo "fake: no KVM here" >&2; exit 1 ;; esac
echo "fake qemu: $*"
[ -z "$FAKE_LINES" ] || printf '%s\n' "$FAKE_LINES"
case "$FAKE_MODE" in
exit:*) echo "ipibench: status from $FAKE_MODE"; exit "${FAKE_MODE#exit:}" ;;
sigterm) echo "qemu-system-x86_64: terminating on signal 15 from pid 1 (x)" >&2; exit 0 ;;
kill) kill -KILL $$ ;;
stubborn) trap '' TERM; echo started; exec sleep 60 ;;
esac
"""


class Fake:
    def __init__(self, tmp):
        self.tmp = tmp
        self.qemu = os.path.join(tmp, "qemu-fake")
        with open(self.qemu, "w") as f:
            f.write(FAKE_QEMU)
        os.chmod(self.qemu, 0o755)

    def env(self, mode, **more):
        return dict({"QEMU": self.qemu, "FAKE_MODE": mode, "IPIBENCH_PREPARED": "1",
                     "IPIBENCH_RESULTS": os.path.join(self.tmp, "results")}, **more)

    def run(self, mode, *args, timeout=60):
        return run_cmd([RUN, "--accel", "tcg", *args], self.env(mode), timeout)


def qmp_stand_in(on_cont, before=""):
    """A stand-in QEMU that answers QMP on -qmp's socket (query-cpus-fast
    names its own thread), writes -pidfile, runs the Python lines `before`
    first and `on_cont` when told to `cont`."""
    return "\n".join([
        "#!/usr/bin/env python3",
        "import json, os, shutil, socket, sys",
        "args = sys.argv[1:]",
        before,
        'path = args[args.index("-qmp") + 1].split(",")[0][len("unix:"):]',
        'if "-pidfile" in args:',
        '    with open(args[args.index("-pidfile") + 1], "w") as f:',
        '        f.write(f"{os.getpid()}\\n")',
        "srv = socket.socket(socket.AF_UNIX)",
        "srv.bind(path)",
        "srv.listen(1)",
        "conn, _ = srv.accept()",
        'f = conn.makefile("rw")',
        'f.write(json.dumps({"QMP": {"version": {}}}) + "\\n")',
        "f.flush()",
        "for line in f:",
        '    cmd = json.loads(line)["execute"]',
        '    ret = [{"cpu-index": 0, "thread-id": os.getpid()}] if cmd == "query-cpus-fast" else {}',
        '    f.write(json.dumps({"return": ret}) + "\\n")',
        "    f.flush()",
        '    if cmd == "cont":',
        *("        " + l for l in on_cont.splitlines()),
        ""])


def ab_console(tmp):
    """A synthetic boot's console (one check, the synth rows), for stand-in
    QEMUs that play it back so that compare has rows to read."""
    import random
    path = os.path.join(tmp, "ab-console.log")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(synth.console(synth.boot_records(random.Random(1), synth.ROWS, 0.01, 0.05,
                                                     20, 2, "CPUID 0x15")))
    return path


def ab_tree(root):
    """IPIBENCH_HOST_ROOT: kvm.halt_poll_ns written at run time (0644), and
    kvm_amd.avic read at load time (0444): a stand-in modprobe that logs
    its argv and grants what it is asked."""
    for mod, param, val, mode in (("kvm", "halt_poll_ns", "200000", 0o644),
                                  ("kvm_amd", "avic", "1", 0o444)):
        d = os.path.join(root, "sys/module", mod)
        os.makedirs(os.path.join(d, "parameters"))
        with open(os.path.join(d, "initstate"), "w") as f:
            f.write("live\n")
        with open(os.path.join(d, "parameters", param), "w") as f:
            f.write(val + "\n")
        os.chmod(os.path.join(d, "parameters", param), mode)
    os.makedirs(os.path.join(root, "proc"))
    mp, log = os.path.join(root, "modprobe"), os.path.join(root, "modprobe.log")
    with open(mp, "w") as f:
        f.write("#!/bin/sh\n"
                f"printf '%s ' \"$@\" >> {log}; echo >> {log}\n"
                "[ \"$1\" = -r ] && exit 0\n"
                f"f={root}/sys/module/$1/parameters/${{2%%=*}}\n"
                "rm -f \"$f\"; echo \"${2#*=}\" > \"$f\"; chmod 444 \"$f\"\n")
    os.chmod(mp, 0o755)
    return {"IPIBENCH_HOST_ROOT": root, "IPIBENCH_AB_EUID": "0", "IPIBENCH_AB_MODPROBE": mp}


# run.sh with a stand-in KVM: /dev/kvm usable, hardware (not PVM), any vCPU
# model; the rest is run.sh as it is (host/ipibench/cli.py).
KVM_DRIVER = """import sys
sys.path.insert(0, sys.argv.pop(1))
from ipibench.boot import accel as A
A.HostKvm.usable = lambda self: True
A.HostKvm.unusable = lambda self: None
from ipibench.kvmhost import facts
facts.kvm_software = lambda environ=None: None
A.HostKvm.probe = lambda self, model, machine: None
from ipibench import cli
sys.exit(cli.main(sys.argv[1:]))
"""


# --- running the cases


class Context:
    """What every case is handed: tmp, a folder of the run's own; fake, the
    stand-in QEMU (Fake) made there; and each of the synthetic sets (Sets:
    s.base, s.slow ...), all made there when a case first reads one."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.fake = Fake(tmp)
        self._sets = None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if self._sets is None:
            self._sets = Sets(self.tmp)
        return getattr(self._sets, name)


def run(cases, select=True):
    """Runs cases with one Context, "ok - tools: NAME" a line; the count of
    failures. select: pick them by the command line first (--case, --list:
    harness.selected); False where the caller did."""
    if not cases:
        return 0
    ctx = Context(tempfile.mkdtemp(prefix="ipibench-host-"))
    try:
        return run_cases(cases, "tools", ctx, also=(subprocess.TimeoutExpired,), select=select)
    finally:
        subprocess.run(["rm", "-rf", ctx.tmp])


def main(cases):
    """A test file's exit status: 1 when a case it ran failed, else 0."""
    return 1 if run(cases) else 0
