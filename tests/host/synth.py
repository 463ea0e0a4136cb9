# SPDX-License-Identifier: GPL-2.0-only
"""Synthetic runs for the host-tool tests: console logs whose records follow
docs/record-fields.md exactly (nearest-rank percentiles, population stddev, the
guest's 4-buckets-per-power-of-two histogram), saved into results.json by the
real save of run.sh (boot/save.py). The timing of each row is chosen by the test:
a centre per row, a spread between boots and a spread within a boot."""
import contextlib
import json
import math
import os
import random
import tempfile

__import__("harness")  # puts host/ on sys.path
import hosts

from ipibench.boot.save import save_run
from ipibench.machine import ROOT_VAR

# The host every synthetic run was "saved on": the same facts whatever
# machine the tests run on (tests/host/hosts.py). Its CPU's model names the
# series history --store files the runs in.
HOST = "intel-kvm"
HOST_SERIES = "intel-r-xeon-r-platinum-8480"
_host_root = []


@contextlib.contextmanager
def on_host():
    """Inside: the seam reads HOST's tree, made once a process."""
    if not _host_root:
        _host_root.append(hosts.make(tempfile.mkdtemp(prefix="ipibench-synth-host-"), HOST))
    old = os.environ.get(ROOT_VAR)
    os.environ[ROOT_VAR] = _host_root[0]
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ROOT_VAR)
        else:
            os.environ[ROOT_VAR] = old


KHZ = 2_000_000

# bench, metric, variant, backend, target_state, ntargets -> centre p50 (cycles)
ROWS = {
    ("single", "round-trip", "none", "x2apic", "spin", 1): 2000,
    ("single", "one-way", "none", "x2apic", "spin", 1): 1000,
    ("send-cost", "send", "none", "x2apic", "spin", 1): 300,
    ("self", "send-to-handler", "sti-nop", "x2apic", "self", 1): 900,
    ("single", "round-trip", "none", "xapic", "spin", 1): 3000,
    ("send-cost", "send", "none", "xapic", "spin", 1): 700,
}
for _n in (1, 2, 3):
    ROWS[("broadcast", "all-ack", "set", "x2apic", "spin", _n)] = 2500 + 800 * _n
    ROWS[("broadcast", "all-ack", "set", "xapic", "spin", _n)] = 3500 + 1200 * _n

# The kvm-unit-tests view (docs/results.md, "kut"): (x86/vmexit.c name,
# backend) -> centre mean cycles per iteration; x2apic_* has no xAPIC figure.
KUT = {("self_ipi_sti_nop", "xapic"): 3200, ("self_ipi_sti_nop", "x2apic"): 1600,
       ("self_ipi_tpr", "xapic"): 3500, ("self_ipi_tpr", "x2apic"): 1900,
       ("x2apic_self_ipi_sti_nop", "x2apic"): 1580,
       ("ipi_halt", "xapic"): 4600, ("ipi_halt", "x2apic"): 2700}


def bucket(v):
    if v < 4:
        return v, v
    e = v.bit_length() - 1
    w = 1 << (e - 2)
    low = v & ~(w - 1)
    return low, low + w - 1


def stats(samples):
    s = sorted(samples)
    n = len(s)

    def rank(p):
        return s[max(0, math.ceil(p * n / 100) - 1)]
    mean = sum(s) // n
    var = sum((x - sum(s) / n) ** 2 for x in s) / n
    return {"min": s[0], "p50": rank(50), "mean": mean, "p90": rank(90), "p99": rank(99),
            "max": s[-1], "stddev": int(math.sqrt(var))}


def histogram(samples):
    h = {}
    for v in samples:
        lo, hi = bucket(v)
        h.setdefault(lo, [lo, hi, 0])[2] += 1
    return [h[k] for k in sorted(h)]


# Each backend's flags as the guest prints them (lib/ipi_flags.c): what tells
# an xAPIC MMIO ICR ("icr-wait=") from an MSR one.
FLAGS = {"xapic": "dest=physical icr-wait=before set=loop self=shorthand",
         "xapic-nmi": "dest=physical delivery=nmi icr-wait=before set=loop self=to-own-id "
                      "all=allbutself+self",
         "hv-icr": "dest=physical icr-wait=never set=loop self=shorthand icr=hv-msr eoi=hv-msr",
         "xapic-logical": "dest=logical icr-wait=before set=one-write self=shorthand",
         "x2apic": "dest=physical fence=none set=loop self=self-ipi-msr self-fence=none",
         "x2apic-cluster": "dest=logical fence=none set=write-per-cluster self=self-ipi-msr "
                           "self-fence=none"}


def result(key, samples=None, status="SUCCESS", reason=None):
    bench, metric, variant, backend, state, ntargets = key
    rec = {"record": "result", "schema": 1, "bench": bench, "metric": metric,
           "variant": variant, "backend": backend,
           "flags": FLAGS.get(backend, "dest=physical"),
           "target_state": state, "sender": 0,
           "targets": "1" if ntargets == 1 else f"1-{ntargets}", "ntargets": ntargets,
           "status": status}
    if status != "SUCCESS":
        rec["reason"] = reason or "synthetic"
        rec["iterations"] = 0
        return rec
    st = stats(samples)
    rec.update({"iterations": len(samples), "samples": len(samples), "unit": "cycles",
                "cycles": st, "ns": {k: v * 1_000_000 // KHZ for k, v in st.items()},
                "dryrun_cycles": 40, "histogram": histogram(samples)})
    return rec


# The guest's trust warnings (docs/record-fields.md, env "trust"): id -> (text, per_figure).
TRUST = {"tcg": ("QEMU TCG emulates every instruction: the cycles count the emulator's work, "
                 "not a CPU's; only behaviour counts", True),
         "rdtsc-exits": ("RDTSC costs 900 cycles: it exits", True),
         "tsc-unstable": ("no invariant TSC (CPUID 0x80000007 EDX[8]) and no kvmclock "
                          "TSC-stable flag", False)}


def trust_record(ids):
    return {"rdtsc_cycles": 30, "cpuid_cycles": 60,
            "warnings": [{"id": i, "text": TRUST[i][0], "per_figure": TRUST[i][1]} for i in ids]}


def env(cpus=4, tsc_source="CPUID 0x15", trust=None):
    rec = {"record": "env", "schema": 1, "version": "synthetic", "cmdline": "plan=bench",
            "loader": "qemu", "cpu": {"vendor": "GenuineIntel", "brand": "synthetic",
                                      "family": 6, "model": 85, "stepping": 4},
            "features": {"x2apic": True, "tsc_deadline": True, "rdtscp": True,
                         "invariant_tsc": True, "hypervisor": True},
            "hypervisor": {"vendor": "KVMKVMKVM", "max_leaf": "0x40000001", "hyperv": False,
                           "hv_features_eax": "0x0", "hv_features_ebx": "0x0",
                           "hv_features_edx": "0x0", "hv_recommendations": "0x0",
                           "kvm_base": "0x40000000", "kvm_features": "0x0"},
            "tsc": {"khz": KHZ, "source": tsc_source, "pit_khz": 0, "skew_bound_cycles": 50,
                    "skew_consistent": True, "timing_end": "rdtscp;lfence"},
            "cpus": {"count": cpus, "listed": cpus, "apic_ids": list(range(cpus))},
            "harness_cycles": 40}
    if trust:
        rec["trust"] = trust_record(trust)
    return rec


def console(records, status="SUCCESS"):
    lines = ["ipibench synthetic", "smp: 4 of 4 CPUs online"]
    lines += [json.dumps(r, separators=(",", ":")) for r in records]
    lines.append(f"ipibench: status {status}")
    return "\n".join(lines) + "\n"


def kut_records(rng, kut, boot_noise):
    """One "kut" record per cell, its mean spread between boots like a row's."""
    return [{"record": "kut", "schema": 1, "name": name, "backend": backend,
             "mean_cycles": int(centre * max(0.05, 1 + rng.gauss(0, boot_noise)))}
            for (name, backend), centre in kut.items()]


def noisy(rng, centre, boot_noise, sample_noise, samples):
    c = centre * max(0.05, 1 + rng.gauss(0, boot_noise))
    return [max(4, int(c * math.exp(rng.gauss(0, sample_noise)))) for _ in range(samples)]


def boot_records(rng, rows, boot_noise, sample_noise, samples, cpus, tsc_source,
                 status="SUCCESS", kut=None, trust=None, exact=(), matrix=None):
    recs = [env(cpus, tsc_source, trust), {"record": "check", "schema": 1, "backend": "x2apic",
                                           "passed": 20, "failed": 0, "skipped": 0}]
    untrusted = [i for i in trust or () if TRUST[i][1]]
    for key, centre in rows.items():
        vals = [int(centre)] * samples if key in exact else \
            noisy(rng, centre, boot_noise, sample_noise, samples)
        recs.append(result(key, vals))
    # matrix=1: single's round trip once per ordered pair, sender and target in the record.
    for backend, cells in (matrix or {}).items():
        for (snd, tgt), centre in cells.items():
            rec = result(("single", "round-trip", "none", backend, "spin", 1),
                         noisy(rng, centre, boot_noise, sample_noise, samples))
            rec.update({"sender": snd, "targets": str(tgt)})
            recs.append(rec)
    for rec in recs:
        if rec["record"] == "result" and rec["status"] == "SUCCESS" and untrusted:
            rec["untrusted"] = untrusted
    recs += kut_records(rng, kut, boot_noise) if kut else []
    results = sum(r["record"] == "result" for r in recs)
    recs.append({"record": "end", "schema": 1, "status": status, "results": results})
    return recs


def make_set(folder, boots=5, rows=None, scale=None, boot_noise=0.01, sample_noise=0.05,
             samples=300, seed=1, cpus=4, tsc_source="CPUID 0x15", mutate=None,
             status="SUCCESS", qemu_exit=65, accel="kvm", kut=None, trust=None, smp=None,
             exact=(), matrix=None):
    """Write `boots` runs under folder/bootN; scale: {key: factor} applied to centres.
    mutate(i, records) may change a boot's records (correctness cases); kut:
    {(name, backend): mean cycles} adds the kvm-unit-tests view (KUT); trust:
    the ids of the env record's trust warnings (TRUST), the per-figure ones
    also in every result's "untrusted"; smp: QEMU's -smp value (default the CPU
    count); exact: row keys whose every sample is the centre itself; matrix:
    {backend: {(sender, target): centre}}, matrix=1's records."""
    rng = random.Random(seed)
    rows = dict(rows or ROWS)
    for key, f in (scale or {}).items():
        rows[key] = rows[key] * f
    for i in range(1, boots + 1):
        d = os.path.join(folder, f"boot{i}")
        os.makedirs(d)
        recs = boot_records(rng, rows, boot_noise, sample_noise, samples, cpus, tsc_source,
                            status, kut, trust, exact, matrix)
        if mutate:
            mutate(i, recs)
        with open(os.path.join(d, "console.log"), "w") as f:
            f.write(console(recs, status))
        with on_host():
            save_run(d, label=os.path.basename(folder), accel=accel, status=status,
                     qemu_exit=qemu_exit, exit=0 if status in ("SUCCESS", "SKIP") else 4,
                     qemu_version="QEMU emulator version 9.2.0",
                     started="2026-01-01T00:00:00Z", seconds=1.5,
                     qemu=["qemu-system-x86_64", "-accel", accel, "-smp", str(smp or cpus)])
    return folder
