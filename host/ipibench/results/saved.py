# SPDX-License-Identifier: GPL-2.0-only
"""A saved boot (one results.json's records with the host facts saved beside
them) and the words derived from its facts: pinning, power state, the host
kernel's version, the guest command line's instrumentation and faults."""
import os
import re

from ipibench.kvmhost import apicv as kvm_apicv


class SavedBoot:
    """One boot: its records and the host facts saved beside them."""

    def __init__(self, path, host, run, records, problems):
        self.path, self.host, self.run = path, host, run
        self.records, self.problems = records, problems
        kinds = {}
        for r in records:
            kinds.setdefault(r.get("record"), []).append(r)
        self.env = (kinds.get("env") or [{}])[0]
        self.results = kinds.get("result", [])
        self.checks = kinds.get("check", [])
        self.norov = kinds.get("norov", [])
        self.kut = kinds.get("kut", [])  # the kvm-unit-tests view, cell by cell
        self.end = (kinds.get("end") or [None])[-1]

    def config(self):
        """The configuration this boot ran: its label, or the file's folder."""
        return self.run.get("config") or self.run.get("label") or \
            os.path.basename(os.path.dirname(os.path.abspath(self.path)))

    def facts(self):
        """What must match for two boots' figures to be comparable."""
        cpus = self.env.get("cpus") if isinstance(self.env.get("cpus"), dict) else {}
        tsc = self.env.get("tsc") if isinstance(self.env.get("tsc"), dict) else {}
        qemu = self.host.get("qemu_cmdline") if isinstance(self.host.get("qemu_cmdline"),
                                                          list) else []
        warned = self.warnings()
        return {"hypervisor": hypervisor_of(self.env),
                "CPU count": cpus.get("count"), "TSC source": tsc.get("source"),
                "accelerator": self.host.get("accel"), "-cpu": _after(qemu, "-cpu"),
                "machine": _after(qemu, "-M"), "preset": self.run.get("preset") or None,
                "guest command line": figure_cmdline(self.env.get("cmdline")),
                "warning set": None if warned is None else
                " ".join(sorted(warned)) or "none"}

    def configuration(self):
        """What splits a history's series: what the user chose (CPU count,
        TSC source, accelerator, -cpu, machine, preset, the guest's command
        line), facts() less the warning set. The warning set, which gate
        also refuses across, follows what the host did (a KVM that starts
        trapping RDTSC), the very change a history is for: it is shown
        beside a change, not a split."""
        return {k: v for k, v in self.facts().items() if k != "warning set"}

    def timing_facts(self):
        """What must also match for two boots' timings (not their exit counts)
        to be comparable: the work added around or inside every timed region
        (INSTRUMENTS)."""
        return {"timed-region instrumentation": instrumentation(self.env.get("cmdline"),
                                                                self.run)}

    def warnings(self):
        """{id: text} of what makes every figure of this boot untrustworthy:
        the guest's own checks (env "trust", those marked per_figure) and the
        host's (results.json host "warnings"); None for results saved before
        either existed."""
        trust = self.env.get("trust") if isinstance(self.env.get("trust"), dict) else None
        host = self.host.get("warnings") if isinstance(self.host.get("warnings"), list) else None
        if trust is None and host is None:
            return None
        out = {}
        for w in (trust or {}).get("warnings") or []:
            if isinstance(w, dict) and w.get("per_figure") and isinstance(w.get("id"), str):
                out[w["id"]] = str(w.get("text", ""))
        for w in host or []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                out[f"host:{w['id']}"] = str(w.get("text", ""))
        return out

    def reported_facts(self):
        """What may legitimately differ (an A/B over a module parameter does) but
        a reader must see: the guest's build and QEMU's version (a nightly
        job that updates either must not read as a host change), the host
        kernel, its CPU flags and KVM parameters, the in-kernel PIT's lost-tick
        policy, its power state and command line, and whether the vCPUs were
        pinned."""
        kvm = self.host.get("kvm_params") if isinstance(self.host.get("kvm_params"),
                                                        dict) else {}
        flags = self.host.get("cpu_flags")
        out = {"ipibench": self.env.get("version"), "QEMU": self.host.get("qemu_version"),
               "host kernel": self.host.get("kernel"),
               "host CPU flags": " ".join(map(str, flags)) if isinstance(flags, list) else None}
        out.update({k: v for k, v in kvm.items()})
        # The in-kernel PIT's lost-tick policy: "delay" keeps AVIC inhibited
        # (boot/qemu.py, PIT_DISCARD); None under TCG and in results before it.
        out["PIT lost-tick policy"] = self.host.get("pit_policy")
        out.update({f"host {k}": v for k, v in power_facts(self.host)})
        cmdline = self.host.get("kernel_cmdline")
        out["host kernel command line"] = cmdline if isinstance(cmdline, str) else None
        pin = pin_of(self.run)
        out["vCPU pinning"] = pin_words(pin) if pin else None
        return out

    def apicv_state(self):
        """This boot's KVM's APICv/AVIC: 'apicv', 'avic' (the module enables
        it), 'off' (it does not), with ' inhibited' when --exits traced an
        inhibit for this VM; None when not known (TCG, or the parameter not
        read). The KVM --exits ran on (the lane's under kvm-in-tcg) first,
        else this host's under accel kvm."""
        exits = self.run.get("exits") if isinstance(self.run.get("exits"), dict) else {}
        params = exits.get("kvm_params") if isinstance(exits.get("kvm_params"), dict) else {}
        if not params and self.host.get("accel") == "kvm" and \
                isinstance(self.host.get("kvm_params"), dict):
            params = self.host["kvm_params"]
        for key, what, _ in kvm_apicv.APICV_PARAMS:
            if key in params:
                state = what.lower() if str(params[key]) in AVIC_ON else "off"
                inhibited = str(exits.get("apicv") or "").split("; ", 1)[-1]
                return state + (" inhibited" if inhibited.startswith("inhibited") else "")
        return None

    def avic_without_x2avic(self):
        """True when this boot ran on this host's KVM with AVIC enabled
        (kvm_amd.avic Y or 1) on a CPU without x2AVIC; None when AVIC was on
        but the CPU flags were not saved (results older than them); else False."""
        kvm = self.host.get("kvm_params") if isinstance(self.host.get("kvm_params"),
                                                        dict) else {}
        if self.host.get("accel") != "kvm" or str(kvm.get("kvm_amd.avic")) not in AVIC_ON:
            return False
        if kernel_before(self.host.get("kernel"), (6, 3)):
            return False  # before 2008fab34530: hybrid AVIC kept the memslot (6.0-6.2)
        flags = self.host.get("cpu_flags")
        return None if not isinstance(flags, list) else "x2avic" not in flags


def pin_of(run):
    """A run record's "pin" as {"state", "map", "why"}. Older results hold
    the --pin map (a list: pinned) or null (not pinned); None when the run
    record has no "pin" at all."""
    pin = run.get("pin", False) if isinstance(run, dict) else False
    if pin is False:
        return None
    if pin is None:
        return {"state": "not pinned", "map": [], "why": ""}
    if isinstance(pin, list):
        return {"state": "pinned" if pin else "not pinned", "map": pin, "why": ""}
    if isinstance(pin, dict) and isinstance(pin.get("state"), str):
        return {"state": pin["state"],
                "map": pin["map"] if isinstance(pin.get("map"), list) else [],
                "why": pin["why"] if isinstance(pin.get("why"), str) else ""}
    return {"state": "unknown", "map": [], "why": ""}


def pin_words(pin):
    """'pinned: vCPU0->CPU2 vCPU1->CPU3', 'not pinned' or 'pinning unknown'.
    The map has no thread ids (they change every boot)."""
    if pin["state"] == "unknown":
        return "pinning unknown"
    pairs = " ".join(f"vCPU{p.get('vcpu')}->CPU{p.get('host_cpu')}" for p in pin["map"]
                     if isinstance(p, dict))
    return pin["state"] + (f": {pairs}" if pairs else "")


# The host's power state (host.power, as kvmhost/facts.py read_power saves it) as compare and
# summary.txt name it: (label, key in host.power).
POWER_FACTS = (("cpuidle driver", "cpuidle_driver"), ("cpuidle governor", "cpuidle_governor"),
               ("idle states", "cpuidle_states"), ("cpufreq driver", "cpufreq_driver"),
               ("cpufreq governor", "cpufreq_governor"), ("boost", "boost"),
               ("intel_pstate no_turbo", "intel_no_turbo"), ("amd_pstate", "amd_pstate"),
               ("SMT control", "smt_control"), ("SMT active", "smt_active"),
               ("isolated CPUs", "isolated"), ("nohz_full", "nohz_full"))


def power_facts(host):
    """[(label, text or None)] of POWER_FACTS: None where the file was not read
    (or results older than them); the idle states as 'POLL C1 C6(disabled)'."""
    power = host.get("power") if isinstance(host.get("power"), dict) else {}
    out = []
    for label, key in POWER_FACTS:
        v = power.get(key)
        if key == "cpuidle_states" and isinstance(v, list):
            said = {True: "", False: "(disabled)"}
            v = " ".join(f"{st.get('name')}" + (said[st["enabled"]] if isinstance(
                st.get("enabled"), bool) else "(not read)")
                for st in v if isinstance(st, dict)) or "none"
        elif key in ("isolated", "nohz_full") and v in ("", "(null)"):
            v = "none"
        out.append((label, None if v is None or isinstance(v, (list, dict)) else str(v)))
    return out


def kernel_before(release, version):
    """Whether a kernel release string ("6.1.0-18-amd64") is older than
    version (a (major, minor) tuple); False when it cannot be read."""
    m = re.match(r"(\d+)\.(\d+)", release) if isinstance(release, str) else None
    return bool(m) and (int(m.group(1)), int(m.group(2))) < version


# kvm_amd.avic's "on" spellings (a bool prints Y; kernels before 5.x had an int).
AVIC_ON = ("Y", "y", "1")
# The records that drive the local APIC through its MMIO page: an xAPIC-mode
# ICR write, which the record's flags say ("icr-wait=", lib/ipi_flags.c),
# whatever the backend is called (xapic, xapic-nmi, xapic-logical and any
# later one). hv-icr runs in xAPIC mode too but sends and EOIs through the
# Hyper-V MSRs ("icr=hv-msr"), never the page, so it is not among them. On
# AMD AVIC without x2AVIC (Zen 1 to 3), KVM since Linux 6.3 (commit
# 2008fab34530, avic_refresh_virtual_apic_mode()) deletes the APIC-access
# memslot the first time any vCPU enters x2APIC mode and never re-creates
# it: every xAPIC access after that is trapped and emulated although AVIC
# reads as active. The guest marks each result record measured after a CPU
# of its boot had been in x2APIC mode ("after_x2apic": true,
# docs/record-fields.md), and compare marks those rows. Records without flags
# (none the guest writes today) fall back to the names below.
XAPIC_MODE_BACKENDS = ("xapic", "xapic-nmi", "xapic-logical")


def xapic_mmio(rec):
    """Whether a record's backend writes the ICR through the xAPIC MMIO page:
    lib/ipi_flags.c writes icr-wait= for every backend in xAPIC mode that is
    not a hypercall one (an x2APIC one writes fence=, a hypercall one
    send=hypercall), and hv-icr, the one xAPIC-mode backend whose ICR is an
    MSR, says so with its own word."""
    flags = rec.get("flags")
    if not isinstance(flags, str) or not flags:
        return rec.get("backend") in XAPIC_MODE_BACKENDS
    words = flags.split()
    return any(w.startswith("icr-wait=") for w in words) and "icr=hv-msr" not in words
AFTER_X2APIC_MARK = "after x2APIC: emulated on AVIC without x2AVIC"


# What adds work to every timed region, so that timings with and without it
# are not comparable (exit counts stay comparable: each adds no exit of the
# kinds kvmhost/exit_labels.py judges):
# - markers=1: the guest's OUT to port 0xed, a KVM_EXIT_IO round trip to
#   QEMU (no device on KVM's PIO bus claims the port): for the round trips
#   (single, single-halt) after every iteration, just past the region's
#   closing TSC read (vcpu_put/vcpu_load on the sender, cold caches and
#   predictors for the next region, a longer halt for the target); for the
#   other benchmarks two per sampling, around its measured iterations, so
#   keying their timings on it too is stricter than they need, and safe;
# - kvm-trace: run.sh --exits enables KVM's tracepoints, which write an event
#   on every exit and entry inside the region;
# - perf-kvm: run.sh --perf-kvm's `perf kvm stat record` does the same
#   through perf's buffers;
# - host_stats=1: the guest waits at each single-halt pass's edges while
#   QEMU reads KVM's statistics (outside every region, the target spinning
#   through the first wait); shown neutral only under TCG with -icount, so
#   under KVM, where run.sh turns it on by default, it counts as
#   instrumentation until a hardware KVM host shows it moves no figure.
INSTRUMENTS = ("markers=1", "kvm-trace", "perf-kvm", "host_stats=1")


def _said_on(cmdline, key):
    """Whether the guest command line's last KEY= word turns it on."""
    said = [w.split("=", 1)[1] for w in cmdline.split() if w.startswith(key + "=")]
    return bool(said) and said[-1] in ("1", "on", "yes", "true")


def instrumentation(cmdline, run):
    """The INSTRUMENTS a boot ran with, or "none"; None when its guest
    command line is unknown (results older than it)."""
    if not isinstance(cmdline, str):
        return None
    on = ["markers=1"] if _said_on(cmdline, "markers") else []
    run = run if isinstance(run, dict) else {}
    if run.get("exits"):
        on.append("kvm-trace")
    if run.get("perf_kvm"):
        on.append("perf-kvm")
    if _said_on(cmdline, "host_stats"):
        on.append("host_stats=1")
    return " ".join(on) or "none"


# Guest command-line keys that choose what runs or bound a wait, but change no
# figure that runs: left out of the comparison (markers= counts for timings
# only, through instrumentation()). Everything else (iters,
# warmup, budget, halt_gap, sender, target, norov_iters, ...) counts, and so
# does deadline: it also sets the stall watchdog's tick (every 2.5 s at the
# default 1 s, 10.5 s at 10 s), and each tick is an EOI exit inside whatever
# region it lands in (and a HLT exit more on a halted target).
# halt_poll_ns and halt_poll_grow are the host's KVM parameters as run.sh
# read them and told the guest: two sides that differ there differ in the
# host facts, where compare shows it (ab over kvm.halt_poll_ns is exactly
# that question), not in what the user asked the guest to do. lava=1 only
# adds console lines (docs/lab.md): a lab's job and a run.sh run compare.
# host_stats=1 waits for the host between calibration and the first measured
# iteration and after the last one, outside every region, with the target
# spinning through the first wait so that KVM's polling window stays as the
# warm-up left it (bench/point.c, point_host_edge); under -icount it moved
# no median, so exit counts compare across it; timings do not
# (INSTRUMENTS), as no hardware KVM has shown it neutral yet.
NEUTRAL_KEYS = ("plan", "backends", "bench", "help", "markers", "ap_timeout",
                "debug_cpu", "matrix", "halt_poll_ns", "halt_poll_grow", "lava", "host_stats")


# Fault injection (docs/command-line.md, "Fault injection"): debug= plants a fault, debug_cpu=
# names its CPU. A planted fault is the candidate of a gate that must fail
# (debug=extra-exit: one exit more per send), so it cannot make the two sides
# incomparable; gate and compare say that they ignored it (ignored_words).
FAULT_KEYS = ("debug", "debug_cpu")


def figure_cmdline(cmdline):
    """The guest's key=value words that change figures, sorted; None if unknown."""
    if not isinstance(cmdline, str):
        return None
    words = [w for w in cmdline.split() if "=" in w and
             w.split("=", 1)[0] not in NEUTRAL_KEYS + FAULT_KEYS]
    return " ".join(sorted(words)) or "(defaults)"


def fault_words(cmdline):
    """The fault-injection words (debug=..., debug_cpu=...) of a guest command line."""
    if not isinstance(cmdline, str):
        return []
    return [w for w in cmdline.split() if "=" in w and w.split("=", 1)[0] in FAULT_KEYS]


def _hex(value):
    try:
        return int(value, 16) if isinstance(value, str) else 0
    except ValueError:
        return 0


def hypervisor_of(env):
    """The hypervisor the guest found, from its env record: KVM or Xen (its
    version, and viridian when Xen offers the Hyper-V interface too) by
    their own CPUID leaves, else the vendor signature of leaf 0x40000000,
    else "none"; None for a record without the hypervisor object. Two runs
    under different hypervisors are never comparable, whatever the
    accelerator option said (a Xen guest booted by hand and imported)."""
    hv = env.get("hypervisor") if isinstance(env.get("hypervisor"), dict) else None
    if hv is None:
        return None
    if _hex(hv.get("xen_base")):
        v = _hex(hv.get("xen_version"))
        viridian = " with viridian" if hv.get("hyperv") is True else ""
        return f"Xen {v >> 16}.{v & 0xffff}{viridian}"
    if _hex(hv.get("kvm_base")):
        return "KVM"
    vendor = hv.get("vendor")
    return vendor if isinstance(vendor, str) and vendor else "none"


def _after(argv, flag):
    """The value after flag in a command line, or None."""
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None
