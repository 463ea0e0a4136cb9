# SPDX-License-Identifier: GPL-2.0-only
"""What each record of schema 1 holds: its fields (FIELDS, by kind) and the
words its string fields take, each with its meaning. validate.py takes the
fields every record of a kind must have from here, and
tools/doc_reference.py writes docs/record-fields.md from the same tables,
so the page and the checks cannot part. The benchmarks and backends are
not listed here: they are the guest's registries (build/guest-keys.json).
Meanings are Markdown, one table cell each."""
from typing import NamedTuple

ALWAYS = "always"      # every record of the kind has it: validate.py requires it
OLDER = "always; older logs may lack it"  # so validate.py does not require it
ON_SUCCESS = "SUCCESS"  # exactly the records whose status is SUCCESS
TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list}


class Field(NamedTuple):
    key: str      # a dotted key names a member of an object field
    type: str     # a JSON type, a key of TYPES
    present: str  # ALWAYS, ON_SUCCESS, or when, in words
    meaning: str


class Word(NamedTuple):
    word: str
    meaning: str


def required(kind, json_type=None):
    """(key, Python type) of the fields every record of kind must have, in
    the table's order; only those of json_type when given. A dotted key is
    a member of such a field, checked by its own code in validate.py."""
    return [(f.key, TYPES[f.type]) for f in FIELDS[kind]
            if f.present == ALWAYS and "." not in f.key and json_type in (None, f.type)]


def words(table):
    """The words of a Word table, in its order."""
    return tuple(w.word for w in table)


ENV = (
    Field("version", "string", ALWAYS, "`git describe` of the build"),
    Field("cmdline", "string", ALWAYS, "the kernel command line as received"),
    Field("loader", "string", OLDER,
          "the multiboot loader's name (`qemu`, `GNU GRUB 2.06`), or `pvh` for the PVH entry "
          "(its start info names no loader)"),
    Field("cpu", "object", ALWAYS, "`vendor`, `brand`, `family`, `model`, `stepping`"),
    Field("features", "object", ALWAYS,
          "booleans `x2apic`, `tsc_deadline`, `rdtscp`, `invariant_tsc`, `hypervisor`"),
    Field("hypervisor", "object", ALWAYS,
          "`vendor` (leaf 0x40000000's signature), `max_leaf`, `hyperv` (interface \"Hv#1\"), "
          "`hv_features_eax/ebx/edx`, `hv_recommendations`, `kvm_base`, `kvm_features`, "
          "`xen_base` (the leaf of Xen's \"XenVMMXenVMM\": 0x40000000, or 0x40000100 under "
          "viridian), `xen_version` (major << 16 | minor); hex strings, `\"0x0\"` when absent"),
    Field("tsc", "object", ALWAYS, "the TSC as the guest found it: the members below"),
    Field("tsc.khz", "integer", ALWAYS, "its frequency"),
    Field("tsc.source", "string", ALWAYS, "where the frequency came from, in the order kernel/tsc.c "
          "tries them: `Hyper-V TSC frequency MSR`, `hypervisor leaf 0x40000010`, `Xen "
          "time leaf`, `CPUID 0x15`, `kvmclock`, `PIT calibration`, `ACPI PM timer "
          "calibration`, `CPUID 0x16 (...)`, or `a guess` (`tsc-freq-guessed`)"),
    Field("tsc.pit_khz", "integer", ALWAYS,
          "the PIT calibration, or the PM timer's without a PIT; 0 if none"),
    Field("tsc.skew_bound_cycles", "integer", ALWAYS, "the bound on any two CPUs' TSC skew"),
    Field("tsc.skew_consistent", "boolean", ALWAYS, "whether the skew measurements agreed"),
    Field("tsc.timing_end", "string", ALWAYS,
          "how a timed region ends: `rdtscp;lfence` or `mfence;lfence;rdtsc`"),
    Field("cpus", "object", ALWAYS, "`count` (online), `listed` (in the MADT), `apic_ids` "
          "(an array, by CPU number: one per online CPU, no two alike)"),
    Field("harness_cycles", "integer", ALWAYS, "the median cost of an empty timed region"),
    Field("trust", "object", OLDER,
          "the guest's own checks of what makes figures untrustworthy (lib/trust.h): the "
          "members below"),
    Field("trust.rdtsc_cycles", "integer", ALWAYS, "the cheapest of 64 back-to-back RDTSC pairs"),
    Field("trust.cpuid_cycles", "integer", ALWAYS,
          "the cheapest CPUID leaf 0: what one intercepted instruction costs here"),
    Field("trust.warnings", "array", ALWAYS, "`{id, text, per_figure}` per warning; "
          "`per_figure` true when every timed figure carries it (`untrusted`)"),
)

RESULT = (
    Field("bench", "string", ALWAYS, "the benchmark's registry name; `ipi_benchmark` prints "
          "`norov` records instead"),
    Field("metric", "string", ALWAYS, "what one sample is"),
    Field("variant", "string", ALWAYS, "the shape within the benchmark, or `none`"),
    Field("backend", "string", ALWAYS, "the backend that sent, or `none` for a benchmark that "
          "sends no IPI (the flush hypercalls)"),
    Field("flags", "string", ALWAYS,
          "the backend's delivery semantics, then the benchmark's own, as words"),
    Field("target_state", "string", ALWAYS, "the target's state"),
    Field("sender", "integer", ALWAYS, "the sender's CPU number"),
    Field("targets", "string", ALWAYS, "the targets' CPU numbers as a set (`1`, `1-7`, `none`)"),
    Field("ntargets", "integer", ALWAYS, "how many targets"),
    Field("after_x2apic", "boolean", OLDER,
          "some CPU of this boot had been in x2APIC mode before this was measured (the "
          "firmware's choice, bring-up of APIC IDs above 254, or a switch). On AMD AVIC without "
          "x2AVIC (Zen 1 to 3) an xAPIC-mode figure with it true was measured on trapped, "
          "emulated MMIO although AVIC reads as active (docs/exits-and-apicv.md, \"Zen 1 to "
          "3\"). The plan runs every xAPIC-mode backend before the first switch, so in a plain "
          "boot only the x2APIC-mode ones say true; once true, it stays true for the rest of "
          "the log (validate.py checks it)"),
    Field("status", "string", ALWAYS, "`SUCCESS`, `SKIP`, `ERROR`, `FAILURE`"),
    Field("reason", "string", "not SUCCESS",
          "why. A one-way figure (`one-way`, `first`, `last`) the TSCs cannot time is a SKIP "
          "whose reason starts `one-way not reported: ` (the skew bound is not under a tenth of "
          "the latency, or deltas below 0): run.sh counts these as withheld figures, apart from "
          "the benchmarks that SKIP (docs/host-tools.md, \"What run.sh prints\")"),
    Field("iterations", "integer", ALWAYS, "measured iterations (after warm-up and calibration)"),
    Field("mark", "integer", "with `markers=1`",
          "the phase marker of the sampling that measured this record (records of one sampling "
          "share it, a one-way figure withheld for timing included); absent on records of no "
          "sampling: another variant's SKIP, an ERROR or FAILURE, the flush crossovers derived "
          "from other samplings"),
    Field("host_read", "integer", "with `host_stats=1`, on `single-halt`'s records",
          "the number of the host read around the sampling that measured this record "
          "(kernel/host_read.c)"),
    Field("host_read_state", "string", "with `host_read`",
          "how that read went; the host's side attaches `host_stats` "
          "([exits.md](exits.md), \"KVM's statistics\")"),
    Field("invalid", "integer", "optional (0)",
          "of `iterations`, those whose sample was invalid (a one-way delta below 0) and so not "
          "summarised; the histogram counts `iterations - invalid`"),
    Field("samples", "integer", ON_SUCCESS,
          "samples summarised (a uniform reservoir of at most 16384); at most `iterations`"),
    Field("unit", "string", ON_SUCCESS, "`cycles`"),
    Field("cycles", "object", ON_SUCCESS,
          "`min`, `p50`, `mean`, `p90`, `p99`, `max`, `stddev` (nearest-rank percentiles, "
          "population stddev); `min <= p50 <= p90 <= p99 <= max` and `min <= mean <= max`"),
    Field("ns", "object", "SUCCESS, with a known TSC frequency", "the same in nanoseconds"),
    Field("dryrun_cycles", "integer", ON_SUCCESS, "the harness's cost, to set beside the figure"),
    Field("untrusted", "array", "with a `per_figure` warning",
          "the ids of the env record's `per_figure` warnings; the console's table "
          "row ends in `[untrusted: IDS]`"),
    Field("late_wakes", "integer", "single-halt",
          "of the kept samples, how many were over the late bound: a vCPU the host left blocked "
          "until something else woke it, neither lost nor an ordinary slow sample. The late "
          "samples stay in the statistics; past 16384 samples the count is of the kept ones. The "
          "console row adds `[late-wakes=N, max M us]` when N > 0"),
    Field("late_bound_cycles", "integer", "single-halt",
          "the late bound: 10 x the samples' median, or `late_wake` (us) if that is more"),
    Field("late_max_cycles", "integer", "single-halt", "the slowest late wake (0 when none)"),
    Field("tick_iterations", "integer", "single-halt's round trips",
          "the measured iterations in which the target took a timer interrupt between the "
          "gap's end and the region's (its watchdog tick stays armed on two vCPUs, "
          "`target-timer=armed`)"),
    Field("late_tick_wakes", "integer", "single-halt's round trips",
          "of the late samples, those of such an iteration (the first 8 are remembered): "
          "counted here and not in `late_wakes`, the tick named as the likely cause. The "
          "console row adds `[late-by-tick=N]` when N > 0"),
    Field("rehalt_timeouts", "integer", "single-halt's round trips",
          "the measured iterations in which the sender's wait for the target to be back in HLT "
          "(its idle loop publishes the count as it enters HLT) ran out after `deadline`, so "
          "that gap ran from the deadline: an NMI between that store and the HLT, or a target "
          "the host kept from running. The console row adds `[rehalt-timeouts=N]` when N > 0 "
          "(`debug=no-halt-mark` plants one)"),
    Field("histogram", "array", ON_SUCCESS,
          "non-empty buckets as `[low, high, count]`, 4 per power of two, ascending and not "
          "overlapping, over every measured iteration: the counts sum to `iterations - "
          "invalid` (the percentiles come from the samples the reservoir kept)"),
)

NOROV = (
    Field("test", "string", ALWAYS, "Norov's test"),
    Field("backend", "string", ALWAYS, "the backend that sent"),
    Field("iterations", "integer", ALWAYS, "the loop's length (`norov_iters`), after `warmup` "
          "untimed iterations of the same loop"),
    Field("delivery_ns", "integer", ALWAYS,
          "Normal IPI's summed send-to-handler-entry time; 0 beside a `delivery_note`"),
    Field("delivery_note", "string", "without a delivery figure",
          "why there is none: the test does not timestamp, Self-IPI sends no IPI, a delta was "
          "negative, or the pair's skew bound is not under a tenth of the mean"),
    Field("total_ns", "integer", ALWAYS, "the whole loop's time"),
    Field("after_x2apic", "boolean", OLDER, "as in `result`"),
    Field("ack", "string", OLDER, "`none-nmi` on an NMI backend, which takes no EOI; else "
          "`after-eoi`: the handlers write EOI before they count, as Linux's call-function "
          "handler does, so each iteration holds its targets' EOIs"),
    Field("status", "string", ALWAYS, "as in `result`"),
)

KUT = (
    Field("name", "string", ALWAYS, "the kvm-unit-tests x86/vmexit.c test (lib/kut_names.c)"),
    Field("backend", "string", ALWAYS, "the backend of the result record it comes from"),
    Field("mean_cycles", "integer", ALWAYS, "that record's `mean`: vmexit.c divides a whole loop "
          "by its iterations, so nothing new is measured"),
)

CHECK = (
    Field("backend", "string", ALWAYS, "the backend the correctness suite checked"),
    Field("passed", "integer", ALWAYS, "its checks that passed"),
    Field("failed", "integer", ALWAYS, "its checks that failed"),
    Field("skipped", "integer", ALWAYS, "its checks that SKIPped"),
)

PHASE = (
    Field("index", "integer", ALWAYS, "the unit's number, from 1"),
    Field("of", "integer", ALWAYS, "the units of the whole walk, known from the first one"),
    Field("backend", "string", ALWAYS, "the unit's backend; `none` for a benchmark that sends "
          "no IPI (`dry-run`, `exit-ref`)"),
    Field("bench", "string", ALWAYS, "the unit's benchmark; `all` for a backend whose probe "
          "refused it (its benchmarks' SKIP records follow, with the probe's reason)"),
)

END = (
    Field("status", "string", ALWAYS, "the final status word"),
    Field("results", "integer", ALWAYS, "the result records printed"),
)

FIELDS = {"env": ENV, "result": RESULT, "norov": NOROV, "kut": KUT, "check": CHECK,
          "phase": PHASE, "end": END}

METRICS = (
    Word("loop", "`dry-run`: the harness's empty region"),
    Word("cpuid", "`exit-ref`: one CPUID (leaf 0)"),
    Word("pio-0x80", "`exit-ref`: one `out` to port 0x80"),
    Word("send-to-handler", "`self`: a self send until its handler ran"),
    Word("send", "what the sender pays for one send (`send-cost`, `broadcast`)"),
    Word("round-trip", "send until the target's handler has counted"),
    Word("one-way", "send to the target's handler entry, on two TSCs"),
    Word("first", "`broadcast`: send to the earliest handler entry of any target"),
    Word("last", "`broadcast`: send to the latest handler entry of any target"),
    Word("all-ack", "`broadcast`: send until every target's count is seen"),
    Word("shootdown", "`flush`, native: IPI, INVLPG per page (a CR3 reload in the "
         "`native-cr3-*` variants), ack"),
    Word("call", "`flush`: one flush hypercall with its input encoded inside the region, as "
         "Linux does per call"),
    Word("target-loss", "`flush`: the longest single pass of the targets' page-touching loop, "
         "worst target, among the passes completed since the previous sample: what the "
         "interrupt, or the VM exit, flush and re-entry, and the TLB refills cost the targets, "
         "one ordinary pass included; collected after the sender's region; the `undisturbed` "
         "variant is the same with no flush"),
    Word("crossover-targets", "`flush`: the winning call's p50 at the smallest target count "
         "where a hypercall beats the native shootdown; a SKIP record when it never does"),
    Word("crossover-pages", "`flush`: the same at the smallest page count"),
    Word("-", "a record without samples"),
)

VARIANTS = (
    Word("none", "the benchmark has one shape"),
    Word("sti-nop, sti-hlt, tpr, tpr-sti-nop, tpr-sti-hlt", "`self`: its five shapes through "
         "the backend's self send"),
    Word("icr-sti-nop ...", "`self`, on x2APIC: the five again through the ICR self shorthand"),
    Word("icr2-sti-nop ...", "`self`, on xAPIC: the five again as kvm-unit-tests' "
         "`apic_icr_write()` sends: the delivery-status poll, ICR2 and ICR"),
    Word("ack-after-eoi", "`single`, `single-halt`: the target's handler writes EOI before it "
         "counts"),
    Word("block", "`single-halt`: the gap before each send is `block_gap`, beyond halt "
         "polling"),
    Word("vmexit-gap", "`single-halt`: a 2000-cycle spin after the count, inside the region "
         "(kvm-unit-tests' `ipi_halt`)"),
    Word("shorthand", "`broadcast`: once, to all the others by the all-but-self shorthand"),
    Word("set", "`broadcast`: the backend's set send"),
    Word("loop", "`broadcast`: a unicast send per target"),
    Word("native-invlpg-8p, list-ex-xmm-33p, space-slow ...", "`flush`: the implementation, "
         "with its page count where it takes one; `-as-slow` after its name when the call fell "
         "back to the slow form"),
    Word("undisturbed", "`flush`: the targets' loop with no flush (`target-loss`)"),
)

# The backend's words (lib/ipi_flags.c, each backend's .words), then the
# benchmark's own (bench/*.c).
FLAGS = (
    Word("dest=physical|logical", "the destination mode"),
    Word("delivery=nmi", "NMI backends: no vector, no EOI; with `self=to-own-id "
         "all=allbutself+self`, since the self shorthand, the SELF IPI register and "
         "all-including-self are Fixed only"),
    Word("delivery=upcall", "xen-evtchn: Xen injects its event-channel upcall itself, not "
         "through the local APIC: no EOI, IF holds it, the TPR does not"),
    Word("upcall=vcpu-vector eoi=first", "xen-evtchn (`xen_upcall=vcpu`): each vCPU's own "
         "upcall vector through its vlapic (HVMOP_set_evtchn_upcall_vector), its EOI written "
         "before the ports are read, as Linux 6.0 and later take it "
         "([xen.md](xen.md#event-channels))"),
    Word("upcall=callback-vector eoi=none", "xen-evtchn (`xen_upcall=callback`): "
         "HVM_PARAM_CALLBACK_IRQ's vector, one for every vCPU, which Xen injects itself while "
         "the vCPU's `evtchn_upcall_pending` is set: no EOI"),
    Word("icr-wait=before|after|never", "xAPIC: polls the delivery status before the ICR "
         "write, after it, or never"),
    Word("icr=hv-msr eoi=hv-msr", "hv-icr: the ICR and the EOI through Hyper-V's synthetic "
         "MSRs"),
    Word("send=hypercall self=hypercall", "a hypercall backend: every send, self and the "
         "shorthands too, is a call (no poll, no fence)"),
    Word("fence=mfence+lfence fence-per=send", "x2APIC on every CPU vendor but AMD and Hygon, "
         "as Linux's `weak_wrmsr_fence()`: MFENCE;LFENCE once per send call, before its first "
         "ICR WRMSR, the ICR self shorthand included; the several writes of one set send share "
         "it, the unicast sends of broadcast's `loop` shape fence each"),
    Word("fence=none", "x2APIC on AMD and Hygon, where Linux clears "
         "`X86_FEATURE_APIC_MSRS_FENCE`: no fence (the vendor is the env record's "
         "`cpu.vendor`)"),
    Word("set=loop|one-write|write-per-cluster|one-call|call-per-128-ids|call-per-target",
         "how a set send reaches its targets"),
    Word("vp<64", "hv-ipi, hv-ipi-slow: the call's 64-bit mask reaches VP indices 0-63 only"),
    Word("all=set-all", "the Ex calls send to all as `HV_GENERIC_SET_ALL`"),
    Word("set-writes=N", "x2apic-cluster set sends: the ICR writes one send made"),
    Word("eoi=kvm-pv-eoi", "x2apic-pv-eoi: the handlers' EOI through KVM's PV EOI flag, the "
         "register only when KVM did not set it"),
    Word("self=shorthand|self-ipi-msr|hypercall", "how a self send goes"),
    Word("self-fence=none", "the SELF IPI register is written without the fence, as Linux "
         "does"),
    Word("call=...", "the hypercall"),
    Word("form=slow|fast|xmm-fast", "its input: in memory, in registers, in XMM "
         "registers"),
    Word("via=hypercall-page", "Hyper-V calls go through the page the hypervisor filled, as "
         "Windows and Linux make them; KVM's own hypercall is a VMCALL or VMMCALL of the "
         "guest's, which KVM patches to the CPU's"),
    Word("over-11-banks=slow", "hv-ipi-ex-xmm: a set of more than 11 banks (VP indices spread "
         "over more than 704) does not fit the XMM registers and goes slow"),
    Word("empty-bank=lowest-absent", "hv-ipi-ex-pad: every sparse VP set gets an empty "
         "bank, the lowest it lacks, so that the hypervisor reads more than one bank"),
    Word("hv-guest-os-id=0", "kvm-pv-ipi: the Hyper-V guest OS ID is cleared, so that KVM takes "
         "the VMCALL as KVM_HC_SEND_IPI"),
    Word("ack=count-before-eoi", "the handler's count, the acknowledgement the sender waits "
         "for, is stored before its EOI"),
    Word("ack=after-eoi", "the `ack-after-eoi` variants: EOI first, then the count, as Linux's "
         "call-function handler does, so the region holds the target's EOI"),
    Word("next-send=after-loop-ack", "the next send waits, outside the region, until the "
         "target's spin loop has seen that count: EOI and IRET done"),
    Word("next-send=after-rehalt-and-gap", "single-halt: the sender waits until the target is "
         "back in HLT after counting the last IPI, then `halt-gap-us=N` us (`halt_gap`, or "
         "`block_gap` in the `block` variant); older records said `after-halt-gap`, a gap from "
         "the sender's seeing the count"),
    Word("next-send=after-ack", "`halt_gap=0`: kvm-unit-tests' `ipi`, the next send once the "
         "count is seen"),
    Word("next-send=after-2000-cycle-spin-in-region", "single-halt's `vmexit-gap` pass: "
         "kvm-unit-tests' `ipi_halt` loop, the spin inside the timed region"),
    Word("wake-aim=poll|block", "single-halt: whether the gap is inside the host's "
         "halt-polling window, `halt-poll-ns=N` and `halt-poll-grow=G` as run.sh read them "
         "from the host's kvm module (`assumed-200000` and `assumed-2`, KVM's defaults, when "
         "nobody said); `poll` only when the gap is under half of the window and G is not 0. "
         "An aim: what happened is the host's evidence, `exits.wake` in a traced run "
         "(docs/exits.md)"),
    Word("target-timer=paused|armed", "single-halt: the halted target's watchdog tick was "
         "paused while it was measured (which needs a third CPU to watch the sender), or "
         "stayed armed; when the target does not take the call that pauses it within 2 x "
         "`deadline`, the pass's records are ERRORs without figures, never `unknown`"),
    Word("next-send=after-loop-answer", "flush: the next send waits, outside the region, until "
         "every target's loop has answered the `target-loss` collection"),
    Word("input=encoded-in-region", "flush calls: inside the timed region, the targets' VP "
         "indices from a walk of the target set, then the input, and for XMM-fast the zeroing "
         "of the XMM registers past it; the slow form writes nothing past its input"),
)

TARGET_STATES = (
    Word("spin", "the target polls with IF=1"),
    Word("halt", "the target is idle in HLT"),
    Word("self", "the sender is its own target"),
    Word("none", "no target"),
)

TRUST_IDS = (
    Word("tcg", "QEMU TCG's signature: all is emulated (per figure)"),
    Word("rdtsc-exits", "an RDTSC costs over 200 cycles (per figure)"),
    Word("tsc-unstable", "no invariant-TSC bit and no kvmclock `PVCLOCK_TSC_STABLE_BIT`"),
    Word("tsc-skew", "the skew bound is over 1000 cycles, or inconsistent"),
    Word("tsc-freq-guessed", "nothing declared or calibrated the TSC frequency: `khz` is an "
         "assumed 5 GHz, the ns figures off by an unknown ratio (per figure)"),
)

HOST_READ_STATES = (
    Word("answered", "the host answered both edges"),
    Word("not-rehalted", "answered, but the target was not back in HLT by the end edge, so the "
         "host's count of halts is not exact"),
    Word("unanswered", "an edge's wait ran out (`deadline`)"),
    Word("no-port", "no COM2"),
)

NOROV_TESTS = (
    Word("Dry-run", "every step of a Normal IPI iteration but the send (its wait finds the "
         "count already there), so a test's total minus Dry-run's is its sends and deliveries "
         "alone"),
    Word("Self-IPI", "what Norov's module measured under that name: its handler called "
         "locally with interrupts off, no IPI"),
    Word("Normal IPI", "one IPI to one target, waited for"),
    Word("Broadcast IPI", "an IPI to every other CPU; the waits add one satisfied poll per "
         "further target"),
    Word("Broadcast lock", "the same, the targets taking a lock"),
)

# The word tables of docs/record-fields.md: (heading, the fields that take
# the words, as (kind, key)), the words; None: the guest's registry of them
# (build/guest-keys.json), not a list kept here.
WORD_TABLES = (
    ("Benchmarks", (("result", "bench"),), None),
    ("Backends", (("result", "backend"), ("norov", "backend"), ("check", "backend")), None),
    ("Metrics", (("result", "metric"),), METRICS),
    ("Variants", (("result", "variant"),), VARIANTS),
    ("Flags", (("result", "flags"),), FLAGS),
    ("Target states", (("result", "target_state"),), TARGET_STATES),
    ("Host read states", (("result", "host_read_state"),), HOST_READ_STATES),
    ("Norov's tests", (("norov", "test"),), NOROV_TESTS),
    ("Trust warnings", (("env", "trust.warnings"), ("result", "untrusted")), TRUST_IDS),
)

# What run.sh --exits and --host-stats add to a result record of
# results.json (kvmhost/trace.py, apicv.py and wake.py; kvmhost/hoststats.py),
# and to its run (trace.py's summary(), boot/save.py).
TRACED = "`--exits`, a record with a phase marker"
RECORD_EXITS = (
    Field("exits.iterations", "integer", TRACED,
          "the sampling's measured iterations, the divisor of every per-iteration figure; a "
          "figure withheld for timing (a one-way SKIP) takes its measured siblings' (the same "
          "`mark` and run), so whether a row has exit data never depends on timing"),
    Field("exits.sender, exits.targets", "object", TRACED,
          "`{label: exits per iteration}` inside the sampling's marker window: the marking "
          "vCPU's thread's, and every other vCPU's summed. A label is the reason and what it "
          "touched (`msr (ICR)`, `npf (ICR)`, `hypercall (KVM_HC_SEND_IPI)`)"),
    Field("exits.window_s", "number", TRACED, "the marker window's length in seconds"),
    Field("exits.targets_in_region", "object", "round trips and `flush` whose sends exit, under "
          "`debug=slow-eoi`",
          "the target exits inside the sender's region, per iteration: over after its latest "
          "send exit and before the region-end mark"),
    Field("exits.targets_in_region_why", "string", "round trips and `flush`, without "
          "`targets_in_region`", "why not: the sends made no exit (accelerated), so the "
          "region's start is not in the trace; or no `debug=slow-eoi`, without which nothing "
          "orders a target's exits against the region-end mark"),
    Field("exits.target_wakeups", "object", "a traced wake of a target",
          "`{\"poll\", \"wait\"}` per iteration: the targets' wakes from HLT, by "
          "`kvm_vcpu_wakeup`'s waited (false: halt polling or the pre-block check saw the IPI)"),
    Field("exits.poll_wakes_after_miss", "number", "with `target_wakeups`",
          "per iteration, the `poll` wakes paired with an AVIC send of the same iteration that "
          "exited \"target not running\": `kvm_vcpu_block()` had cleared IsRunning, so they "
          "count as blocks (not where `kvm_amd.enable_ipiv=N`, where every send misses)"),
    Field("exits.apicv", "string", TRACED,
          "`inhibited: REASONS` if an APICv/AVIC inhibit was in force in the window, else `no "
          "inhibit traced`; `apicv_changed_inside` true when one was set or cleared there"),
    Field("exits.apic_accel, apic_accel_why", "string", TRACED + ", or with `status`",
          "whether the APIC path was accelerated, proved by the record's own exits: `yes`, "
          "`no` or `unknown`, and why ([exits-and-apicv.md](exits-and-apicv.md))"),
    Field("exits.apic_accel_sides", "object", TRACED,
          "`{\"sender\": [verdict, why], \"targets\": [...]}`: the same per side (APICv "
          "without IPI virtualization traps the sender's ICR write, not the targets' EOI)"),
    Field("exits.wake, wake_why", "string", "a halted target (`target_state` `halt`)",
          "how it woke: `poll`, `block`, `mixed` or `unknown` (no wake traced), and why "
          "(kvmhost/wake.py)"),
    Field("exits.wake_counts", "object", "with `wake`, where wakes were traced",
          "`{\"poll\", \"block\"}` per iteration as `wake` counts them (an AVIC miss a "
          "block); compare's blocked share (`b`) is read from it"),
    Field("exits.wake_disagrees", "string", "`wake` and `host_stats.wake` differ",
          "the trace and KVM's statistics name different wakes: both kept, neither taken"),
    Field("exits.status", "string", "`--exits`, a record without exit data; every record "
          "of a Xen-lane run without `--exits`",
          "why there is none: no complete marker window in the trace (lost events named), no "
          "measured record of its sampling says its iterations, or a Xen-lane run not "
          "traced; `apic_accel` is then `unknown`"),
)

STATS = "`--host-stats`, a record with `host_read`"
RECORD_HOST_STATS = (
    Field("host_stats.status", "string", STATS,
          "`read`, or why there is nothing: the guest's edges were `unanswered` or `no-port`, "
          "no read of the pass was written down, QMP failed, or QEMU returned no KVM "
          "statistics (TCG, a kernel before 5.14); `wake` is then `unknown`"),
    Field("host_stats.vcpu, qom_path", "integer, string", "`read`",
          "the target vCPU, as the guest's CPU number (QEMU's cpu-index) and QEMU's path"),
    Field("host_stats.deltas", "object", "`read`",
          "the target vCPU's counters between the two reads: `halt_successful_poll`, "
          "`halt_attempted_poll`, `halt_poll_invalid`, `halt_wakeup`, `halt_poll_success_ns`, "
          "`halt_poll_fail_ns`, `halt_wait_ns`, `halt_wait_hist` (its buckets summed), "
          "`halt_exits`, `exits`, `irq_exits`"),
    Field("host_stats.halts", "integer", "`read`",
          "the HLT exits between the reads, less the one still going at the end read; `null` "
          "when the target was not re-halted by the end edge (`not-rehalted`)"),
    Field("host_stats.blocked", "integer", "`read`",
          "halts a kick found waiting in `kvm_vcpu_block()` (`halt_wakeup`) or that were "
          "scheduled out (`halt_wait_hist`): the larger, at most `halts`"),
    Field("host_stats.polled", "integer", "`read`",
          "halts that ended without the vCPU sleeping: `halt_successful_poll` less the kicks "
          "that found the vCPU awake (`halt_wakeup` less `halt_wait_hist`)"),
    Field("host_stats.other", "integer", "`read`",
          "the halts left (`null` with `halts`): an IPI pending at the HLT exit, one caught "
          "with no poll window open, and the kicked halts just named"),
    Field("host_stats.wake, wake_why", "string", STATS + "; `wake_why` with `read`",
          "`poll`, `block`, `mixed` or `unknown` (no HLT exit, none counted either way, or "
          "most halts `other`), and the counts behind it"),
    Field("host_stats.exits_per_iteration", "number", "`read`, with `iterations`",
          "the target's `exits` per measured iteration (its HLT exits among them)"),
)

RUN_EXITS = (
    Field("run.exits.trace", "string", "`--exits`", "the trace's file, `kvm-trace.txt`, or "
          "under the Xen lane `xen-trace.txt` (Xen's trace read into the same lines)"),
    Field("run.exits.traced", "string", "`--exits`",
          "`whole boot` on a host, `marker windows` in the lane"),
    Field("run.exits.outside", "object", "`--exits`",
          "`{label: exits}` in no record's window (boot, backend switches, printing; on a "
          "host COM1's port I/O is filtered out of the trace); `null` where only the windows "
          "were traced"),
    Field("run.exits.markers", "integer", "`--exits`",
          "the markers' port writes, whose exits are counted nowhere else"),
    Field("run.exits.unparsed", "integer", "`--exits`", "trace lines not read"),
    Field("run.exits.lost", "integer", "`--exits`",
          "events the ring buffer overwrote: gate and history refuse such a side (30)"),
    Field("run.exits.cut", "boolean", "`--exits`",
          "the trace ends before the boot did: later records have no exits"),
    Field("run.exits.apicv_inhibits", "array", "`--exits`",
          "`[{at_s, change, now}]`: each APICv/AVIC inhibit `set` or `cleared`, and what it "
          "names"),
    Field("run.exits.avic_events, events", "object", "`--exits`",
          "`{event: count}`: AVIC's, and every event's, over the capture"),
    Field("run.exits.pit_ticks", "integer", "`--exits`",
          "the in-kernel PIT's raises after the first marker: 0 once the guest stopped it; "
          "`null` when not traced"),
    Field("run.exits.apicv, kvm_params", "string, object", "`--exits`",
          "the module's APICv/AVIC setting and this VM's inhibits in one line; the KVM "
          "parameters the trace was read with (the lane's: its L1's)"),
    Field("run.exits.host_class", "object", "`--exits`",
          "`{name, why}`: the class of KVM host (`lane`, `pvm`, `svm-no-avic`, `avic`, "
          "`avic-1235`, `avic-ipiv-off`, `x2avic`, `x2avic-ipiv-off`, `vmx-no-apicv`, "
          "`apicv`, `apicv-ipiv`, `unknown`), from the saved facts "
          "(kvmhost/host_class.py)"),
    Field("run.exits.model", "object", "`--exits`",
          "the records judged against that class's predictions (host-model.conf): `{class, "
          "matched, diverging: [{row, class, what}], unmodelled, load_misses, notes: [{row, "
          "what}], model}` (`model`: the file's version and hash; "
          "[exits-and-apicv.md](exits-and-apicv.md))"),
    Field("run.perf_kvm.exits", "array", "`--perf-kvm`",
          "`perf kvm stat`'s rows, `[{reason, samples, samples_pct, time_pct, min_us, max_us, "
          "avg_us}]`, beside `report` (`perf-kvm.txt`)"),
    Field("run.host_stats", "object", "host reads in the run",
          "`{reads, records, log}`: the reads, the records that name one, and their file "
          "(`host-reads.log`, or `console.log` in the lane)"),
)

# results.json (boot/save.py): the guest's records with what the host
# adds. A field of older results may be missing; readers say so.
RESULTS_JSON = (
    Field("format", "string", ALWAYS, "`ipibench-results`; a reader refuses another (exit 23)"),
    Field("version", "integer", ALWAYS, "1; a reader refuses another (exit 24)"),
    Field("host.hostname, kernel, kernel_version, machine, cpu_model, cpus", "various", ALWAYS,
          "the host, as uname and /proc/cpuinfo say"),
    Field("host.cpu_vendor, cpu_family", "string, integer", ALWAYS,
          "the first CPU's (`AuthenticAMD`, 23): an erratum KVM keys on a family needs them "
          "(the host class `avic-1235`); `null` where not read"),
    Field("host.cpu_flags", "array", ALWAYS,
          "sorted, which of kvmhost/facts.py's CPU_FLAGS, those that decide how KVM delivers an "
          "IPI, the first CPU shows (`flags` and `vmx flags` of /proc/cpuinfo); `null` when not "
          "read, so that \"no x2avic\" and \"not read\" differ. With `kvm_params` it tells AVIC "
          "without x2AVIC (`kvm_amd.avic=Y`, no `x2avic`: Zen 1 to 3), which compare reads "
          "with each record's `after_x2apic` ([comparing.md](comparing.md), \"After x2APIC\")"),
    Field("host.qemu_version", "string", ALWAYS, "QEMU's, as `--version` says it"),
    Field("host.kvm_params", "object", ALWAYS,
          "every parameter of the modules `kvm`, `kvm_amd` and `kvm_intel` that sysfs shows, as "
          "`MODULE.PARAM` with the text the module prints (`\"kvm_amd.avic\": \"Y\"`): the "
          "kernel's list, not one kept here (`modparam.read_all`); summary.txt's `KVM "
          "parameters:` line. APIC virtualization, vNMI, the preemption timer, halt polling "
          "and pause-loop exiting among them change an IPI figure"),
    Field("host.power", "object", ALWAYS,
          "the power state, which moves figures while no KVM parameter changes: "
          "`cpuidle_driver`, `cpuidle_governor`, `cpuidle_states` (cpu0's, `[{name, "
          "enabled}]`), `cpufreq_driver`, `cpufreq_governor`, `boost`, `intel_no_turbo`, "
          "`amd_pstate`, `smt_control`, `smt_active`, `isolated`, `nohz_full` (kvmhost/facts.py); "
          "each `null` where its file was not read; summary.txt's `host power:` line"),
    Field("host.kernel_cmdline", "string", ALWAYS, "`/proc/cmdline`"),
    Field("host.accel, qemu_binary, qemu_cmdline", "string, string, array", ALWAYS,
          "the accelerator and the QEMU that ran, with its command line"),
    Field("host.pit_policy", "string", ALWAYS,
          "the in-kernel PIT's lost-tick policy on the QEMU line, the last `-global` that sets "
          "it: `discard`, or QEMU's default `delay`, which keeps AVIC inhibited on AMD "
          "(boot/qemu.py); `null` without an in-kernel PIT (TCG, microvm, a split irqchip, "
          "`pit=off`) or where run.sh did not start that QEMU (the lanes)"),
    Field("host.warnings", "array", ALWAYS,
          "the host's trust warnings, which every figure of the run carries "
          "([timed-regions.md](timed-regions.md))"),
    Field("run.label, config, preset, started, seconds", "various", ALWAYS,
          "what ran, when, for how long"),
    Field("run.qemu_exit, status, exit", "integer, string, integer", ALWAYS,
          "QEMU's exit status, run.sh's status word for it (`SUCCESS`, `TIMEOUT`, "
          "`QEMU-KILLED` ...) and run.sh's exit code ([exit-codes.md](exit-codes.md))"),
    Field("run.console", "string", ALWAYS, "the console log's file, `console.log`"),
    Field("run.pin", "object", ALWAYS,
          "whether and how the vCPUs were pinned: `state` (`pinned`, `not pinned`, or "
          "`unknown`: an older run, or a lane that said nothing), `map` (`--pin`'s `[{vcpu, "
          "thread_id, host_cpu, core, siblings}]`; under the lane `[{vcpu, host_cpu}]`), "
          "`emulator` (where QEMU's other threads went, off the vCPUs' cores, as libvirt's "
          "emulatorpin does) and `why`; summary.txt's `pinned:` line. Older runs hold the map "
          "itself or `null`"),
    Field("run.module_param", "object", "a lane boot with `--module-param` (ab's)",
          "`{param, asked, got}`: the parameter as the lane set it and read it back"),
    Field("run.xen", "object", "a Xen lane boot (`--accel xen-in-tcg`)",
          "what ran the guest: `version` and `cmdline` (Xen's boot lines), `svm_features` "
          "(the nested SVM features Xen found), `dom0_kernel` (the lane's cache), `xl_cfg` "
          "(the domain's xl.cfg, a line each); in a matrix, `batch` `{folder, frame, "
          "frames_before}`: its frame ran in the matrix's one outer VM after that many "
          "others, and `run.seconds` is the frame's domain's own time; `host.kvm_params` is "
          "then empty: this host's KVM ran nothing of it"),
    Field("run.ab", "object", "ab's boots",
          "the boot's place in ab's order: `param`, `side` (`A` or `B`), `asked`, `got` (this "
          "host's read-back; `null` under the lane), `position` and `of`, `side_boot`, "
          "`order` (`A B B A A B`)"),
    Field("run.matrix", "object", "a matrix's boots",
          "`{\"boot\": i, \"boots\": n}`: `history --store` refuses a night without all n "
          "(exit 37)"),
    Field("run.exits, run.perf_kvm, run.host_stats", "object", "with `--exits`, `--perf-kvm`, "
          "`--host-stats`", "the host's view of the run, each record's `exits` and `host_stats` "
          "beside it ([what the host adds](#what-the-host-adds))"),
    Field("problems", "array", ALWAYS,
          "each record line that is not JSON or breaks these tables, left out of `records` and "
          "named (validate.py decides); a record of another schema is kept and named, so that "
          "readers refuse the file by name. gate counts a problem as a correctness failure"),
    Field("records", "array", ALWAYS, "the guest's records, unchanged, in console order"),
)
