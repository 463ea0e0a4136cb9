# SPDX-License-Identifier: GPL-2.0-only
"""What ran, in words, for every figure: the accelerator with the trust
warnings of its records ("TCG: emulated, behaviour only") and the guest's
CPUs (with sockets, cores and threads where -smp named them); and the
boot facts the figures need (the guest's CPU count, its TSC frequency)."""
import math


ACCEL_WORDS = {"tcg": "TCG", "tcg-single": "TCG", "kvm": "KVM",
               "kvm-in-tcg": "KVM nested in TCG", "xen-in-tcg": "Xen nested in TCG",
               "xen": "Xen"}
# The trust warnings (the env record's "trust", results.json's host
# "warnings"), most telling first.
WARNING_WORDS = {
    "tcg": "emulated, behaviour only",
    "kvm-in-tcg": "doubly emulated, behaviour and exit counts only",
    "xen-in-tcg": "doubly emulated, behaviour only",
    "kvm-software": "PVM, virtualization in software: figures measure PVM",
    "rdtsc-exits": "RDTSC exits inflate every figure",
    "tsc-freq-guessed": "TSC frequency guessed, ns off by an unknown ratio",
    "overcommit": "more vCPUs than host CPUs",
    "tsc-unstable": "no invariant TSC",
    "tsc-skew": "TSC skew, one-way figures doubtful",
}


def parse_smp(spec):
    """(cpus, {key: int}) of a -smp value: '8,sockets=2,cores=2,threads=2'."""
    cpus, keys = None, {}
    for part in str(spec or "").split(","):
        k, eq, v = part.partition("=")
        if not v.isdigit() and not (not eq and k.isdigit()):
            continue
        if not eq:
            cpus = int(k)
        elif k == "cpus":
            cpus = int(v)
        else:
            keys[k] = int(v)
    return cpus, keys


def smp_topology(spec, count):
    """[(count, 'socket'), ('die'), ('cluster'), ('core'), ('thread')] of a
    -smp value that names any of sockets, cores and threads (the rest
    derived as QEMU 6.2 and later derive it: threads 1, then cores before
    sockets); None when it names none of them."""
    cpus, k = parse_smp(spec)
    if not {"sockets", "cores", "threads"} & set(k):
        return None
    total = k.get("maxcpus") or cpus or count or 1
    threads = k.get("threads") or 1
    inner = (k.get("dies") or 1) * (k.get("clusters") or 1) * threads
    sockets, cores = k.get("sockets"), k.get("cores")
    if not cores:
        cores = max(1, total // (inner * (sockets or 1)))
    if not sockets:
        sockets = max(1, total // (inner * cores))
    return [(sockets, "socket")] + [(k[x], x[:-1]) for x in ("dies", "clusters") if x in k] + \
        [(cores, "core"), (threads, "thread")]


def smp_words(spec, count):
    """The guest's topology in words: '8 CPUs: 2 sockets x 2 cores x 2
    threads' where -smp named any of them, else '4 CPUs (-smp 4)'."""
    count = count or parse_smp(spec)[0]
    head = f"{count} CPU" + ("" if count == 1 else "s") if count else "CPUs unknown"
    parts = smp_topology(spec, count)
    if parts is None:
        return head + (f" (-smp {spec})" if spec else "")
    return head + ": " + " x ".join(f"{n} {w}" + ("" if n == 1 else "s") for n, w in parts)


def socket_size(boots, n):
    """CPUs per socket when every boot's -smp named the sockets of exactly
    its n CPUs (QEMU numbers them socket by socket), else None."""
    sizes = set()
    for boot in boots:
        parts = smp_topology(smp_of(boot), n)
        if parts is None:
            return None
        per = math.prod(c for c, _ in parts[1:])
        if parts[0][0] < 2 or parts[0][0] * per != n:
            return None
        sizes.add(per)
    return sizes.pop() if len(sizes) == 1 else None


def id_ranges(ids):
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def smp_of(boot):
    qemu = boot.host.get("qemu_cmdline") if isinstance(boot.host.get("qemu_cmdline"),
                                                       list) else []
    return next((qemu[i + 1] for i in range(len(qemu) - 1) if qemu[i] == "-smp"), None)


def set_context(boots):
    """What ran, in one line: 'TCG: emulated, behaviour only; no invariant
    TSC; guest 4 CPUs (-smp 4)'. The warnings are every boot's: the guest's
    own (env trust), the host's (results.json host warnings) and those its
    result records carry (untrusted)."""
    accels, warned, guests = [], {}, []
    for boot in boots:
        accel = boot.host.get("accel")
        if accel and ACCEL_WORDS.get(accel, accel) not in accels:
            accels.append(ACCEL_WORDS.get(accel, accel))
        trust = boot.env.get("trust") if isinstance(boot.env.get("trust"), dict) else {}
        for w in trust.get("warnings") or []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                warned.setdefault(w["id"], str(w.get("text", "")))
        host = boot.host.get("warnings")
        for w in host if isinstance(host, list) else []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                warned.setdefault(w["id"], str(w.get("text", "")))
        for rec in boot.results:
            own = rec.get("untrusted")
            for i in own if isinstance(own, list) else []:
                warned.setdefault(str(i), "")
        cpus = boot.env.get("cpus") if isinstance(boot.env.get("cpus"), dict) else {}
        guest = smp_words(smp_of(boot), cpus.get("count"))
        ids = cpus.get("apic_ids")
        if isinstance(ids, list) and all(isinstance(i, int) for i in ids) and \
                ids != list(range(len(ids))):
            guest += f", APIC IDs {id_ranges(ids)}"
        if guest not in guests:
            guests.append(guest)
    order = list(WARNING_WORDS)
    ids = sorted(warned, key=lambda i: order.index(i) if i in order else len(order))
    words = [WARNING_WORDS.get(i) or warned[i].split(":")[0] or i for i in ids]
    line = " / ".join(accels) or "accelerator not recorded"
    line += (": " + "; ".join(words)) if words else ""
    return line + "; guest " + " / ".join(guests or ["not recorded"])


class Context(dict):
    """{set name: what ran, in words (set_context)}; boots: {set name: its
    boots}, for the line that says what ran over several sets at once."""

    def __init__(self, names, sets):
        super().__init__((n, set_context(b)) for n, (_, b) in zip(names, sets))
        self.boots = {n: b for n, (_, b) in zip(names, sets)}


def context_lines(names, context):
    """The figure's lines on what ran: one when its sets agree, else one per set."""
    texts = list(dict.fromkeys(context[n] for n in names if n in context))
    if len(texts) == 1:
        return texts
    return [f"{n}: {context[n]}" for n in dict.fromkeys(names) if n in context]


def context_title(names, context):
    """(one line on what ran, the lines for the caption): when the sets
    differ, the line names every accelerator, warning and guest of them all
    (no warning is left to the caption), and the caption says which set is
    which."""
    lines = context_lines(names, context)
    if len(lines) < 2:
        return lines, []
    boots = getattr(context, "boots", {})
    every = [b for n in dict.fromkeys(names) for b in boots.get(n, [])]
    return ([set_context(every)] if every else []), lines


def env_cpus(boots):
    """The guest's CPU count, the largest the boots' env records give; None
    where none gives one."""
    counts = [b.env["cpus"].get("count") for b in boots if isinstance(b.env.get("cpus"), dict)]
    return max((c for c in counts if isinstance(c, int)), default=None)


def tsc_khz(boot):
    """The boot's TSC frequency in kHz, None where its env record has none."""
    tsc = boot.env.get("tsc") if isinstance(boot.env.get("tsc"), dict) else {}
    khz = tsc.get("khz")
    return khz if isinstance(khz, (int, float)) and khz > 0 else None
