# SPDX-License-Identifier: GPL-2.0-only
"""APICv and AVIC in a KVM trace: the inhibit events in either kernel's
form, the VM's inhibit state, and whether each record's APIC was
accelerated.

APICv/AVIC events (kvm_apicv_inhibit_changed, kvm_avic_*) are collected with
their times, so a record can say whether the accelerated path was inhibited
while it ran. That state alone proves nothing: each record also says whether
its APIC was accelerated in the way that counts (apic_accel), from its own
exits: an IPI path's APIC register access that left guest mode (an NPF or
APIC-access exit on the APIC page, an x2APIC or Hyper-V APIC MSR exit, AVIC's
unaccelerated-access exit) is a trap, and one per iteration or more says "no"."""
import re

from ipibench.kvmhost.exit_labels import EXITS_TOLERANCE, kind_sum

# kvm_apicv_inhibit_changed (5.19 on): "set reason=9, inhibits=0x200", the
# reason's number and every inhibit now in force, their names appended
# ("inhibits=0x200 PIT_REINJ", joined with '|') from 6.12 on; without
# names an inhibit is its bit ("bit 9"): the enum's order is the kernel's.
INHIBIT = re.compile(r"^(?P<what>set|cleared) reason=(?P<reason>[^,\s]+),?"
                     r"(?: inhibits=(?P<mask>0x[0-9a-f]{1,16})\s*(?P<names>.*))?")
# Before it, kvm_apicv_update_request (5.7 to 5.18): "deactivate bit=4",
# traced only where the VM's APICv flips (kvm_request_apicv_update()
# returns first when the inhibits were and stay both none or both some):
# deactivate sets the first inhibit (the bit), activate clears the last.
# Inhibits set and cleared while another held go untraced.
UPDATE_REQUEST = re.compile(r"^(?P<what>activate|deactivate) bit=(?P<bit>\d{1,2})\b")
# The module parameter that turns APIC virtualization on, per vendor module.
APICV_PARAMS = (("kvm_amd.avic", "AVIC", "kvm_amd"), ("kvm_intel.enable_apicv", "APICv", "kvm_intel"))


def _mask_bits(mask):
    """An inhibit mask without names, as the bits it sets ("bit 9")."""
    return {f"bit {i}" for i in range(64) if mask >> i & 1}


def inhibit_change(event, body, now):
    """(the inhibits in force after this event, "set" or "cleared", what it
    names) of an APICv/AVIC inhibit event in either kernel's form, or None
    for a body neither reads."""
    if event == "kvm_apicv_update_request":
        p = UPDATE_REQUEST.match(body)
        if not p:
            return None
        bit = f"bit {p['bit']}"
        if p["what"] == "deactivate":
            return {bit}, "set", bit
        return set(), "cleared", bit
    p = INHIBIT.match(body)
    if not p:
        return None
    names = (p["names"] or "").replace("|", " ").split()
    if p["mask"]:
        after = set(names) or _mask_bits(int(p["mask"], 16))
    else:
        after = now | {p["reason"]} if p["what"] == "set" else now - {p["reason"]}
    return after, p["what"], " ".join(names) or f"reason {p['reason']}"


def ipiv_off(kvm_params):
    """Whether the host's KVM says AVIC's IPI virtualization is off:
    kvm_amd.enable_ipiv=N (Linux 6.17 and later; forced off on Zen 1 and 2
    by 8de4a1c8164e, on Hygon family 18h by 9a12fa5213cf). KVM then never
    sets a vCPU's IsRunning bit (d921665e01ba), so every send to another
    vCPU exits "target not running", whether the target blocked or not."""
    return str((kvm_params or {}).get("kvm_amd.enable_ipiv", "")) in ("N", "n", "0")


# An event-channel backend's path (xen-evtchn: EVTCHNOP_send, Xen's upcall)
# reads and writes no APIC register: no exit of it could show an APIC trapped
# or accelerated.
UPCALL_WORD = "delivery=upcall"
UPCALL_WHY = ("its IPI path touches no APIC register (an event channel and Xen's upcall): "
              "nothing of the APIC to judge")


def apic_accel(rec, kvm_params=None):
    """("yes" | "no" | "unknown", why) for a record with exits: was its APIC
    accelerated in the way that counts? Read from its exits per iteration,
    never from the inhibit state alone: AVIC or APICv can be on and not
    inhibited while the path still traps (x2APIC without x2AVIC, an ICR
    write without IPI virtualization)."""
    e = rec["exits"]
    traps = {side: kind_sum(e[side], "trap") for side in ("sender", "targets")}
    total = round(traps["sender"][0] + traps["targets"][0], 4)
    if total > EXITS_TOLERANCE:
        parts = []
        for side in ("sender", "targets"):
            n, hit = traps[side]
            if n > 0:
                what = ", ".join(k for k, _ in sorted(hit.items(), key=lambda kv: -kv[1]))
                parts.append(f"{n:.2f} on the {side} ({what})")
        return "no", f"{total:.2f} trapped APIC accesses per iteration: " + "; ".join(parts)
    unnamed = round(sum(kind_sum(e[side], "msr?")[0] for side in ("sender", "targets")), 4)
    if unnamed > EXITS_TOLERANCE:
        return "unknown", (f"{unnamed:.2f} MSR exits per iteration whose MSR the trace does "
                           "not name (kvm_msr not traced): APIC accesses among them cannot "
                           "be told")
    if rec.get("backend") in (None, "none"):
        return "unknown", "the record sends no IPI: nothing of the APIC to judge"
    if UPCALL_WORD in str(rec.get("flags", "")).split():
        return "unknown", UPCALL_WHY
    if str(e.get("apicv", "")).startswith("inhibited"):
        return "unknown", ("no trapped APIC access, but APICv/AVIC was inhibited ("
                           + e["apicv"].split(":", 1)[-1].strip() + ") while it ran: the "
                           "record touched no APIC register an exit would show")
    miss = round(sum(kind_sum(e[side], "doorbell")[0] for side in ("sender", "targets")), 4)
    ipiv = str((kvm_params or {}).get("kvm_amd.enable_ipiv", ""))
    if miss > 0 and ipiv_off(kvm_params):
        # kvm_amd.enable_ipiv=N: KVM never sets a vCPU's IsRunning bit
        # (d921665e01ba), so AVIC completes no IPI to another vCPU and KVM
        # delivers each one itself, halted target or spinning. Linux 6.17
        # forces it off on family 17h (Zen 1, Zen 2: erratum #1235,
        # 8de4a1c8164e) and 7.1 on Hygon family 18h (9a12fa5213cf).
        return "no", (f"{miss:.2f} avic_incomplete_ipi per iteration and kvm_amd.enable_ipiv="
                      f"{ipiv} on the host: KVM never sets IsRunning, AVIC's IPI "
                      "virtualization is off and KVM delivered each IPI")
    running = rec.get("target_state") in ("spin", "self")
    if miss > EXITS_TOLERANCE and running and not ipiv and ipiv_absent(kvm_params):
        # Before 6.17 (d921665e01ba added enable_ipiv) avic_vcpu_load() sets
        # IsRunning for every vCPU it loads that is not blocking: a spinning
        # target's miss is the host's scheduling (avic_vcpu_put() cleared
        # it), nothing else.
        return "yes", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running target: "
                       "the host descheduled it (kvm_amd has no enable_ipiv, a kernel before "
                       "6.17, which sets IsRunning for every loaded vCPU not blocking); no "
                       "trapped APIC access")
    if miss > EXITS_TOLERANCE and running and not ipiv:
        # A spinning target is running (a self IPI's target is the sender
        # itself), unless the host descheduled its vCPU (avic_vcpu_put()
        # clears IsRunning): with every send of a one-target record missing,
        # the likelier cause is IsRunning never set (enable_ipiv off, above),
        # which this host's parameters, not read, would have told; fewer is
        # the host's scheduling. Neither is proven.
        if miss >= 1 - EXITS_TOLERANCE and rec.get("ntargets", 1) == 1:
            return "unknown", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running "
                               "target: every send found it not running, as when KVM never "
                               "sets IsRunning (kvm_amd.enable_ipiv=N: Zen 1/2 since Linux "
                               "6.17) or when the host deschedules it for every send; "
                               "kvm_amd.enable_ipiv was not read")
        return "unknown", (f"{miss:.2f} avic_incomplete_ipi per iteration with a running "
                           "target: some sends found it not running (descheduled by the host, "
                           "or IsRunning never set); kvm_amd.enable_ipiv was not read")
    why = "no trapped APIC access in its exits on either side"
    if miss > 0:
        why += (f"; {miss:.2f} avic_incomplete_ipi per iteration (doorbell misses: a target "
                "was not running, KVM delivered those)")
    return "yes", why


def ipiv_absent(kvm_params):
    """kvm_amd was read (its avic parameter is there) and has no enable_ipiv:
    a kernel before 6.17, on which a loaded vCPU's IsRunning is always set."""
    p = kvm_params or {}
    return "kvm_amd.avic" in p and "kvm_amd.enable_ipiv" not in p


def apic_accel_sides(rec, kvm_params=None):
    """{"sender": [verdict, why], "targets": [verdict, why]}: apic_accel()
    for each side apart, so that APICv without IPIv (the sender's ICR write
    trapped, the targets' EOI and delivery virtualized) and hybrid AVIC (an
    x2APIC access trapped on either side, the doorbell still rung) do not
    read as one flat "no". The sender's ICR write counts as accelerated even
    where AVIC then missed a doorbell (the target not running: KVM
    delivered that IPI, which is the wake path's question, not the APIC's)."""
    e = rec["exits"]
    out = {}
    for side in ("sender", "targets"):
        n, hit = kind_sum(e[side], "trap")
        unnamed = kind_sum(e[side], "msr?")[0]
        if n > EXITS_TOLERANCE:
            what = ", ".join(k for k, _ in sorted(hit.items(), key=lambda kv: -kv[1]))
            out[side] = ["no", f"{n:.2f} trapped APIC accesses per iteration ({what})"]
        elif unnamed > EXITS_TOLERANCE:
            out[side] = ["unknown", f"{unnamed:.2f} MSR exits per iteration the trace does "
                         "not name"]
        elif str(e.get("apicv", "")).startswith("inhibited"):
            out[side] = ["unknown", "no trapped APIC access, but APICv/AVIC was inhibited"]
        elif UPCALL_WORD in str(rec.get("flags", "")).split():
            out[side] = ["unknown", UPCALL_WHY]
        else:
            out[side] = ["yes", "no trapped APIC access"]
    miss = kind_sum(e["sender"], "doorbell")[0]
    if miss > EXITS_TOLERANCE and out["sender"][0] == "yes" and ipiv_off(kvm_params):
        out["sender"] = ["no", f"{miss:.2f} sends per iteration exited 'target not running': "
                         "with kvm_amd.enable_ipiv=N KVM never sets IsRunning and delivers "
                         "every IPI itself"]
    elif miss > EXITS_TOLERANCE and out["sender"][0] == "yes":
        out["sender"][1] += (f"; {miss:.2f} doorbell misses per iteration (target not "
                             "running: KVM delivered those)")
    if rec.get("backend") in (None, "none"):
        out["sender"] = ["unknown", "the record sends no IPI"]
    return out


def apicv_line(kvm_params, trace):
    """One line: what the module allows, and what this VM had."""
    module = "module parameter not read"
    name = "APICv/AVIC"
    for key, what, mod in APICV_PARAMS:
        if key in kvm_params:
            name = what
            on = kvm_params[key] in ("1", "Y", "y")
            module = f"{'enabled' if on else 'disabled'} in {mod} ({key}={kvm_params[key]})"
            for ipiv in ("kvm_intel.enable_ipiv", "kvm_amd.enable_ipiv"):
                if key.split(".")[0] == ipiv.split(".")[0] and ipiv in kvm_params:
                    module += f", IPI virtualization {kvm_params[ipiv]}"
    if not trace.apicv:
        vm = "no inhibit change traced"
    else:
        first = next((a for a in trace.apicv if a[1] == "set"), trace.apicv[0])
        last = trace.apicv[-1]
        vm = (f"inhibited for this VM from {first[0]:.2f} s: {last[2]}" if last[2] and
              not last[2].startswith("reason") else f"inhibits changed {len(trace.apicv)} times")
        if last[1] == "cleared" and not trace.inhibits:
            vm = f"active from {last[0]:.2f} s (inhibits cleared)"
    return f"{name}: {module}; {vm}"


def apicv_inhibited(recs):
    """The records measured while an APICv/AVIC inhibit was in force."""
    return [r for r in recs if str(r.get("exits", {}).get("apicv", "")).startswith("inhibited")]
