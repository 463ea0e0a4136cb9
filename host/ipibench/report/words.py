# SPDX-License-Identifier: GPL-2.0-only
"""Record fields in words, for titles, legends and captions: what one
sample of a benchmark's metric is, a variant ('icr-sti-nop' -> 'ICR self
shorthand, STI;NOP'), a target state, a target count. Labels are words,
not record fields."""
import re


# (bench, metric): what one sample is.
METRIC_WORDS = {
    ("dry-run", "loop"): "an empty timed region",
    ("exit-ref", "cpuid"): "one CPUID, an exit under a hypervisor",
    ("exit-ref", "pio-0x80"): "one port 0x80 write, an exit",
    ("self", "send-to-handler"): "self IPI, send until the handler ran",
    ("send-cost", "send"): "what the sender pays for one send",
    ("single", "round-trip"): "send until the target's handler counted",
    ("single", "one-way"): "send until the target's handler entry",
    ("single-halt", "round-trip"): "target halted in HLT, send until its handler counted",
    ("single-halt", "one-way"): "target halted in HLT, send until its handler entry",
    ("broadcast", "send"): "what the sender pays for the broadcast's send(s)",
    ("broadcast", "first"): "send until the first target's handler entry",
    ("broadcast", "last"): "send until the last target's handler entry",
    ("broadcast", "all-ack"): "send until every target acknowledged",
    ("flush", "shootdown"): "TLB shootdown: IPI, INVLPG, every target's ack",
    ("flush", "call"): "one flush hypercall",
    ("flush", "target-loss"): "the targets' longest pass, what a flush costs them",
}
VARIANT_WORDS = {"shorthand": "shorthand", "set": "set send", "loop": "unicast loop",
                 "ack-after-eoi": "EOI before the ack", "block": "blocked wake",
                 "vmexit-gap": "vmexit.c ipi_halt loop", "undisturbed": "no flush"}
SHAPE_WORDS = {"sti-nop": "STI;NOP", "sti-hlt": "STI;HLT", "tpr": "TPR drop",
               "tpr-sti-nop": "TPR, STI;NOP", "tpr-sti-hlt": "TPR, STI;HLT"}
FIELD_WORDS = {"set": "configuration", "backend": "backend", "variant": "variant",
               "state": "target state"}


def variant_words(v):
    """'icr-sti-nop' -> 'ICR self shorthand, STI;NOP', 'loop' -> 'unicast loop'."""
    if not v or v == "none":
        return ""
    if v in VARIANT_WORDS:
        return VARIANT_WORDS[v]
    for prefix, words in (("icr2-", "ICR2 then ICR, "), ("icr-", "ICR self shorthand, ")):
        if v.startswith(prefix) and v[len(prefix):] in SHAPE_WORDS:
            return words + SHAPE_WORDS[v[len(prefix):]]
    if v in SHAPE_WORDS:
        return SHAPE_WORDS[v]
    m = re.fullmatch(r"(.*?)-?(\d+)p", v)      # flush: native-invlpg-8p, 33p
    if m:
        pages = f"{m.group(2)} page" + ("" if m.group(2) == "1" else "s")
        return f"{m.group(1).replace('-', ' ')}, {pages}" if m.group(1) else pages
    return v.replace("-", " ")


def state_words(state, n=None):
    """'spin' -> 'spinning targets' ('spinning target' for one)."""
    one = n == 1
    return {"spin": "spinning target" if one else "spinning targets",
            "halt": "halted target" if one else "halted targets",
            "self": "self IPI", "none": ""}.get(state, state or "")


def field_words(field, value, n=None, legend=False):
    """A field's value in words; in a legend a configuration is its name alone,
    elsewhere 'configuration NAME'."""
    if field == "variant":
        return variant_words(value)
    if field == "state":
        return state_words(value, n)
    if field == "set" and not legend:
        return f"configuration {value}" if value else ""
    return value or ""


def metric_head(bench, metric):
    words = METRIC_WORDS.get((bench, metric))
    return f"{bench} {metric} ({words})" if words else f"{bench} {metric}"


def targets_words(bench, n, cpus):
    """'1 target', 'to all 3 other CPUs', '8 targets'."""
    if not isinstance(n, int):
        return ""
    if bench == "broadcast" and cpus and n == cpus - 1:
        return f"to all {n} other CPUs"
    return f"{n} target" + ("" if n == 1 else "s")
