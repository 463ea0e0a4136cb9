# SPDX-License-Identifier: GPL-2.0-only
#
# ipibench: the guest kernel, its GRUB ISO, the host tools and the tests.
#
# One image recipe: link once at 1 MiB, with a multiboot header and a PVH
# entry note, then make two images of it: build/ipibench.elf32 (elf32-i386:
# QEMU's multiboot loader, hw/i386/multiboot.c load_multiboot(), refuses a
# 64-bit ELF and also elf32-x86-64, unless the header uses the a.out
# kludge) and build/ipibench.elf (ELF64, for PVH loaders, gdb and objdump).
#
#   make            both kernel images: build/ipibench.elf32 (multiboot) and build/ipibench.elf (PVH),
#                   and build/guest-keys.json, the guest's command-line keys
#   make iso        bootable GRUB ISO (build/ipibench.iso)
#   make unit       host unit tests of lib/ (sanitizers on)
#   make test       every test (tests/run): unit, boot, lint, KVM lane when possible
#   make lint       cppcheck and clang-tidy (C), pyflakes (Python), shellcheck (shell)
#   make fuzz       every fuzz target for FUZZ_SECONDS (60) s each (tests/fuzz/run.sh)
#   make bench      the default plan under TCG: wall time, spread across boots (not a test)
#   make bench-boot time to "all CPUs up" against a do-nothing kernel (not a test)

MAKEFLAGS += -rR
.SUFFIXES:
.DELETE_ON_ERROR:

B := build
# Quiet by default; `make V=1` shows every command.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-8s %s\n' $(1) $(2)
endif
CC := gcc
HOSTCC := gcc
NASM := nasm
LD := ld
OBJCOPY := objcopy
READELF := readelf
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
KCFLAGS := -std=gnu11 -ffreestanding -fno-pic -fno-pie -mno-red-zone -mgeneral-regs-only \
	-fno-stack-protector -fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-O2 -g $(WARN) -I. -DIPIBENCH_VERSION='"$(VERSION)"' -MMD -MP
HOSTCFLAGS := -std=gnu11 -O1 -g $(WARN) -Wno-missing-prototypes -I. \
	-fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS := -nostdlib -static -z max-page-size=0x1000 --no-warn-rwx-segments -T linker.ld
NASMFLAGS := -f elf64 -g -I$(B)/ -I$(B)/boot/ -I./

# Pure code: built into the kernel and into every host unit test.
LIB_SRCS := lib/acpi.c lib/backtrace.c lib/cmdline.c lib/cpu_topo.c lib/cpuset.c lib/crossover.c \
	lib/error.c lib/fmt.c lib/skew.c lib/hv_encode.c lib/icr.c lib/ipi_flags.c lib/json.c \
	lib/kut_names.c lib/kvm_pvipi.c lib/late_wake.c lib/lava.c lib/mptable.c lib/pv_result.c \
	lib/record.c lib/vring.c \
	lib/sort.c lib/stats.c lib/trust.c lib/watch_line.c lib/xen_evtchn.c

KERNEL_SRCS := kernel/boot.c kernel/console.c kernel/cpu.c kernel/host_read.c kernel/lapic.c \
	kernel/lava_board.c kernel/libc.c kernel/main.c kernel/mm.c kernel/multiboot.c \
	kernel/options.c kernel/pci.c kernel/percpu.c kernel/pic.c kernel/pit.c kernel/plan.c \
	kernel/pvh.c kernel/smp.c kernel/status.c kernel/topology.c kernel/trap.c kernel/tsc.c \
	kernel/tsc_sync.c kernel/virtio_console.c kernel/watchdog.c

# The IPI core and its backends.
IPI_SRCS := ipi/core.c ipi/flush_native.c ipi/flush_registry.c ipi/irq.c ipi/switch.c \
	apic/check.c apic/x2apic.c apic/xapic.c \
	hyperv/flush_calls.c hyperv/hv.c hyperv/icr_msr.c hyperv/send_ipi.c \
	kvm/probe.c kvm/pv_eoi.c kvm/pv_ipi.c \
	xen/evtchn.c

# What runs after bring-up: the harness, the correctness suite, the benchmarks.
HARNESS_SRCS := harness/engine.c harness/env_record.c harness/flush_pages.c harness/kut_view.c \
	harness/params.c harness/runner.c harness/trust_probe.c
SUITE_SRCS := suite/delivery.c suite/flush_effect.c suite/nmi.c
BENCH_SRCS := bench/broadcast.c bench/exit_ref.c bench/norov.c bench/point.c bench/self.c \
	bench/tlb_flush.c

ASM_SRCS := boot/multiboot.asm boot/pvh.asm boot/isr.asm boot/extable.asm \
	boot/trampoline_blob.asm hyperv/hypercall.asm

KOBJS := $(patsubst %.c,$(B)/%.o,$(KERNEL_SRCS) $(IPI_SRCS) $(HARNESS_SRCS) $(SUITE_SRCS) \
	$(BENCH_SRCS) $(LIB_SRCS)) \
	$(patsubst %.asm,$(B)/%.o,$(ASM_SRCS))

UNIT_TESTS := $(patsubst tests/unit/%.c,$(B)/host/%,$(wildcard tests/unit/test_*.c))

.PHONY: all iso linux_calib unit unit_build test lint check-kvm check-xen bench bench-boot clean deps fuzz fuzz_build
all: $(B)/ipibench.elf32 $(B)/ipibench.elf $(B)/guest-keys.json $(B)/registry-lists.ok

$(B)/ipibench.linked.elf: $(KOBJS) linker.ld
	$(call say,LD,$@)
	$(Q)$(LD) $(LDFLAGS) -o $@ $(KOBJS)

# QEMU's -kernel tries multiboot before PVH and stops at an ELF64 that has a
# multiboot header ("Cannot load x86-64 image"): the ELF64's header is
# zeroed, so QEMU, like every PVH loader, boots it through its note. Zeroed,
# not removed: Xen's domain builder (libxenguest) refuses an image whose
# first segment does not start on a page ("segment boundary isn't page
# aligned (0x100010)"), and the header is what opens the first page. The
# elf32 copy keeps both; QEMU and GRUB take its multiboot header.
# Both images are written beside and renamed into place when checked: a
# QEMU that a test starts while make runs boots the old image or the new
# one, never half of one (tests/run runs two groups at a time).
$(B)/ipibench.elf: $(B)/ipibench.linked.elf
	$(call say,OBJCOPY,$@)
	$(Q)$(OBJCOPY) -O binary --only-section=.multiboot $< $@.mb && \
		LC_ALL=C tr '\000-\377' '\000' <$@.mb >$@.zero && \
		$(OBJCOPY) --update-section .multiboot=$@.zero $< $@.tmp && rm -f $@.mb $@.zero
	@! grub-file --is-x86-multiboot $@.tmp || { echo "$@: a multiboot header left in the PVH image" >&2; exit 1; }
	@$(READELF) -lW $@.tmp | awk '$$1 == "LOAD" { exit $$3 !~ /000$$/ }' || { echo "$@: its first segment does not start on a page (Xen's domain builder refuses it)" >&2; exit 1; }
	@mv $@.tmp $@

$(B)/ipibench.elf32: $(B)/ipibench.linked.elf
	$(call say,OBJCOPY,$@)
	$(Q)$(OBJCOPY) -O elf32-i386 $< $@.tmp
	@grub-file --is-x86-multiboot $@.tmp || { echo "$@: no multiboot header in the first 8 KiB" >&2; exit 1; }
	@[ "$$($(READELF) -lW $@.tmp | awk '$$1 == "LOAD" { print $$2, $$3 }' | while read -r o v; do echo $$((o - v)); done | sort -u | wc -l)" = 1 ] || { echo "$@: its segments are not one run of the file, as the multiboot header's load addresses say (boot/multiboot.asm)" >&2; exit 1; }
	@mv $@.tmp $@

# The guest's command-line keys, for run.sh to check --append against
# before it boots: read from the linked image's option groups (and the
# layouts from the headers), so the list cannot drift from the C source.
$(B)/guest-keys.json: $(B)/ipibench.linked.elf tools/guest_keys.py
	$(call say,GEN,$@)
	$(Q)python3 tools/guest_keys.py --cc "$(CC)" $< $@

# The lists kept by hand beside the backend and preset registries (the
# Backends table of docs/timed-regions.md, the lane judge's MUST_RUN, the
# preset tables of docs/paravirt.md and docs/xen.md) checked against them:
# a backend or preset one of them misses fails the build, naming the line.
$(B)/registry-lists.ok: $(B)/guest-keys.json tools/registry_lists.py docs/timed-regions.md \
		tests/kvm-lane/judge.py docs/paravirt.md docs/xen.md host/ipibench/presets.conf \
		host/ipibench/xen-presets.conf
	$(call say,CHECK,$@)
	$(Q)python3 tools/registry_lists.py $< $@

$(B)/%.o: %.c | $(B)/asm-offsets.inc
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(KCFLAGS) -c $< -o $@

# asm-offsets: C layouts exported to nasm, one "%define NAME value" per line.
$(B)/asm-offsets.inc: kernel/asm-offsets.c include/boot.h include/trampoline.h include/percpu.h \
		include/status.h
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)$(CC) $(KCFLAGS) -MF $(B)/asm-offsets.d -S $< -o $(B)/asm-offsets.s
	$(Q)sed -n 's/^[[:space:]]*->\([A-Za-z0-9_]*\) \$$\{0,1\}\([-0-9]*\).*/%define \1 \2/p' \
		$(B)/asm-offsets.s > $@

$(B)/boot/trampoline.bin: boot/trampoline.asm boot/cpu_bits.inc $(B)/asm-offsets.inc
	@mkdir -p $(@D)
	$(call say,NASM,$@)
	$(Q)$(NASM) -f bin -I$(B)/ -I./ $< -o $@

$(B)/boot/trampoline_blob.o: $(B)/boot/trampoline.bin

$(B)/%.o: %.asm boot/cpu_bits.inc $(B)/asm-offsets.inc
	@mkdir -p $(@D)
	$(call say,NASM,$@)
	$(Q)$(NASM) $(NASMFLAGS) $< -o $@

iso: $(B)/ipibench.iso
$(B)/ipibench.iso: $(B)/ipibench.elf32 boot/grub.cfg
	@mkdir -p $(B)/iso/boot/grub
	cp $(B)/ipibench.elf32 $(B)/iso/boot/ipibench.elf
	cp boot/grub.cfg $(B)/iso/boot/grub/grub.cfg
	grub-mkrescue -o $@.tmp $(B)/iso >$(B)/grub-mkrescue.log 2>&1 || \
		{ cat $(B)/grub-mkrescue.log >&2; exit 1; }
	@mv $@.tmp $@

# The Linux calibration frame's /init (host/lane/linux/calib.c, issue 46):
# a static program, the whole userland of the lane's Linux guest;
# host/lane/calibrate.sh packs it into that guest's initramfs.
linux_calib: $(B)/lane/linux-calib/init
$(B)/lane/linux-calib/init: host/lane/linux/calib.c
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) -static -O2 -std=gnu11 -Wall -Wextra -Werror -pthread $< -o $@
	$(Q)strip $@

# The Xen lane's dom0 drops credit2's records from a trace before it sends
# it (host/lane/xen/trace_filter.c): static, as dom0's userland is busybox;
# xen-lane.sh makes it for a traced frame (not in all: it needs libc.a).
$(B)/lane/xentrace-filter: host/lane/xen/trace_filter.c
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) -static -O2 -std=gnu11 -Wall -Wextra -Werror $< -o $@
	$(Q)strip $@

# Host unit tests: every test links all of lib/, compiled once for them
# (each test compiling the whole of lib/ again was 60 s of a clean build).
HOST_LIB_OBJS := $(patsubst %.c,$(B)/host/%.o,$(LIB_SRCS))
.SECONDARY: $(HOST_LIB_OBJS)

$(B)/host/lib/%.o: lib/%.c $(wildcard lib/*.h)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) $(HOSTCFLAGS) -c $< -o $@

$(B)/host/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(HOST_LIB_OBJS)
	@mkdir -p $(@D)
	$(call say,HOSTCC,$@)
	$(Q)$(HOSTCC) $(HOSTCFLAGS) $< $(HOST_LIB_OBJS) -o $@

unit_build: $(UNIT_TESTS)

unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do $$t || exit 1; done

# Fuzzing: a libFuzzer target per lib/ parser (tests/fuzz/fuzz_*.c), each
# linked with all of lib/ under clang's sanitizers; the host tools' readers
# are fuzzed in Python. The test command runs a short pass of the same.
FUZZCC := clang
FUZZCFLAGS := -std=gnu11 -g -O1 $(WARN) -I. -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
FUZZ_SECONDS ?= 60
FUZZ_BINS := $(patsubst tests/fuzz/fuzz_%.c,$(B)/fuzz/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LIB_OBJS := $(patsubst %.c,$(B)/fuzz/%.o,$(LIB_SRCS))
# Kept between builds: make would delete them as intermediates of the pattern rule below.
.SECONDARY: $(FUZZ_LIB_OBJS)

$(B)/fuzz/lib/%.o: lib/%.c $(wildcard lib/*.h)
	@mkdir -p $(@D)
	$(call say,FUZZCC,$@)
	$(Q)$(FUZZCC) $(FUZZCFLAGS) -c $< -o $@

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJS)
	$(call say,FUZZLD,$@)
	$(Q)$(FUZZCC) $(FUZZCFLAGS) $< $(FUZZ_LIB_OBJS) -o $@

# fuzz_cmdline's choice words and dictionary come from the guest's registries.
$(B)/fuzz/cmdline_words.h $(B)/fuzz/cmdline.dict &: $(B)/guest-keys.json tools/fuzz_words.py \
		tests/fuzz/cmdline.dict
	@mkdir -p $(@D)
	$(call say,GEN,$@)
	$(Q)python3 tools/fuzz_words.py $< $(B)/fuzz/cmdline_words.h $(B)/fuzz/cmdline.dict
$(B)/fuzz/fuzz_cmdline: $(B)/fuzz/cmdline_words.h $(B)/fuzz/cmdline.dict

fuzz_build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	./tests/fuzz/run.sh --seconds $(FUZZ_SECONDS)

test:
	./tests/run

lint:
	./tools/lint.sh

check-kvm: $(B)/ipibench.elf32
	./tests/run --only kvm-lane,kvm-lane-judge

check-xen: $(B)/ipibench.elf32
	./tests/run --only xen-lane

# The plan as users' TCG fallback runs it, then twice with an instruction-
# counted TSC: the spread that is left there is the harness's own.
# Boots of each pass (make bench BENCH_BOOTS=1 ICOUNT_BOOTS=1: a quick look);
# BENCH_APPEND adds to the kernel command line, or replaces plan=default when
# it names a plan (BENCH_APPEND='plan=bench bench=send-cost': one benchmark,
# no suite, as the doc test runs it).
BENCH_BOOTS ?= 5
ICOUNT_BOOTS ?= 2
BENCH_APPEND ?=
bench_append = $(if $(BENCH_APPEND),--append '$(BENCH_APPEND)')

bench: $(B)/ipibench.elf32
	python3 tools/bench_plan.py $(BENCH_BOOTS) $(bench_append)
	python3 tools/bench_plan.py $(ICOUNT_BOOTS) --icount $(bench_append)

bench-boot: $(B)/ipibench.elf32 $(B)/nothing.elf32
	python3 tools/bench_boot.py $(BENCH_BOOTS)

$(B)/nothing.elf32: tools/nothing.asm
	@mkdir -p $(@D)
	$(Q)$(NASM) -f elf32 $< -o $(B)/nothing.o
	$(Q)$(LD) -m elf_i386 -Ttext=0x100000 -e _start -o $@ $(B)/nothing.o

deps:
	./tools/deps.sh test

clean:
	rm -rf $(B)

# The compilers' dependency files; not the lanes' caches, whose unpacked
# Debian trees hold folders named *.d (etc/.../runtime.d) while a lane
# prepares them beside a build.
-include $(shell find $(B) \( -path '$(B)/kvm-lane' -o -path '$(B)/xen-lane' \) -prune -o \
	-name '*.d' -type f -print 2>/dev/null)
