; SPDX-License-Identifier: GPL-2.0-only
;
; The PVH entry: Xen's x86/HVM direct boot ABI, which QEMU's -kernel (any
; machine, microvm included), Cloud Hypervisor and Firecracker use for an ELF
; kernel that carries the note below (Xen docs/misc/pvh.pandoc; the start
; info's layout: xen/include/public/arch-x86/hvm/start_info.h).
;
; The loader reads the 32-bit physical entry point from the ELF note
; XEN_ELFNOTE_PHYS32_ENTRY (type 18, owner "Xen") and enters it in 32-bit
; protected mode: paging off, CR0.PE set and CR0's other writable bits clear,
; CR4 0, flat 4 GiB code and data segments, EFLAGS.IF and .TF clear, the rest
; of EFLAGS (DF included) and ESP unspecified, EBX = the physical address of
; struct hvm_start_info. That is the multiboot entry's state, minus a stack
; and DF, so this entry only sets DF and EAX and joins the multiboot path at
; boot_entry32 (boot/multiboot.asm): one way to long mode for both loaders.
; kmain() tells them apart by EAX: the start info's magic here, 0x2BADB002
; there.

%include "asm-offsets.inc"

XEN_ELFNOTE_PHYS32_ENTRY equ 18

; One note, in its own PT_NOTE segment (linker.ld). Its owner name "Xen\0"
; is 4 bytes, so the descriptor starts 16 bytes in whatever alignment a
; reader rounds the name to, 4 (the ELF rule) or the segment's, which the
; section's align=4 keeps at 4: QEMU rounds by the segment's alignment. The
; descriptor is 8 bytes, as Linux writes it on x86-64: QEMU reads a 64-bit
; value from an ELF64 image, Xen's libelf and the rust-vmm loader (Cloud
; Hypervisor, Firecracker) read the 32-bit address it starts with.
section .note.Xen note alloc noexec nowrite align=4
	dd 4				; namesz: "Xen\0"
	dd 8				; descsz
	dd XEN_ELFNOTE_PHYS32_ENTRY	; type
	db "Xen", 0
	dq pvh_start

section .text.boot progbits alloc exec nowrite align=16
bits 32
global pvh_start
extern boot_entry32
pvh_start:
	cli
	cld
	mov eax, BOOT_PVH_MAGIC
	jmp boot_entry32

section .note.GNU-stack noalloc noexec nowrite progbits
