; SPDX-License-Identifier: GPL-2.0-only
;
; Multiboot v1 header and the 32-bit entry that takes the BSP to long mode.
;
; A multiboot loader (QEMU -kernel, GRUB) enters _start in 32-bit protected
; mode with paging off, EAX = 0x2BADB002 and EBX = the multiboot information
; (Multiboot Specification 0.6.96, 3.2 "Machine state"). A PVH loader enters
; pvh_start (boot/pvh.asm) in the same state with EBX = its hvm_start_info;
; that entry sets EAX to the start info's magic and joins here at
; boot_entry32, so both loaders share what follows. We clear .bss,
; identity-map the first 4 GiB with 2 MiB pages (the top 32 MiB, which holds
; the IOAPIC, HPET and local APIC MMIO, uncached), enable PAE, SSE and
; EFER.LME, turn paging on and jump to 64-bit code (SDM vol. 3A 10.8.5
; "Initializing IA-32e Mode").

%include "asm-offsets.inc"

extern __bss_end

MB_MAGIC	equ 0x1badb002
; Page-align modules, want memory info, and the load addresses below (bit
; 16, the "a.out kludge": spec 3.1.3). With them QEMU's -kernel hands the
; image to its option ROM through fw_cfg (hw/i386/multiboot.c) instead of
; registering each ELF segment as a ROM blob at its load address. Under Xen
; the device model writes such blobs into guest RAM at its reset, over the
; hvmloader that libxl put at 1 MiB: with the addresses an HVM domain boots
; the image directly (xl.cfg kernel=), with no GRUB CD and no boot menu.
; GRUB takes the addresses too. The Makefile checks that the ELF file holds
; the loaded bytes as one run, as the addresses say.
MB_FLAGS	equ (1 << 0) | (1 << 1) | (1 << 16)

PTE_P		equ 1 << 0
PTE_RW		equ 1 << 1
PTE_PWT		equ 1 << 3
PTE_PCD		equ 1 << 4
PTE_PS		equ 1 << 7
UC_FIRST_2M	equ 0xfe000000 >> 21	; first 2 MiB page mapped uncached

%include "boot/cpu_bits.inc"

extern __kernel_start, __load_end

section .multiboot progbits alloc noexec nowrite align=4
mb_header:
	dd MB_MAGIC
	dd MB_FLAGS
	dd -(MB_MAGIC + MB_FLAGS)
	dd mb_header		; header_addr: where this header loads
	dd __kernel_start	; load_addr: the file's bytes from here ...
	dd __load_end		; load_end_addr: ... to the end of .data
	dd __bss_end		; bss_end_addr: zeroed up to here
	dd _start		; entry_addr

section .data
global boot_gdt64, boot_magic, boot_info
align 8
boot_magic:	dd 0			; which entry: multiboot's or PVH's magic
boot_info:	dd 0			; the loader's information, physical
align 16
boot_gdt64:
	dq 0				; null
	dq 0x00af9a000000ffff		; 0x08: 64-bit code, DPL 0
	dq 0x00cf92000000ffff		; 0x10: data
boot_gdt64_end:
boot_gdt64_ptr:
	dw boot_gdt64_end - boot_gdt64 - 1
	dq boot_gdt64

section .bss nobits alloc noexec write align=4096
global boot_pml4, boot_stack_top
boot_pml4:	resb 4096
boot_pdpt:	resb 4096
boot_pd:	resb 4 * 4096		; 4 x 1 GiB of 2 MiB pages
boot_stack:	resb BOOT_STACK_SIZE
boot_stack_top:

section .text.boot progbits alloc exec nowrite align=16
bits 32
global _start, boot_entry32
_start:
	cli
	cld
; Both entries from here: EAX = the loader's magic, EBX = its information,
; 32-bit protected mode, paging off, flat segments, no stack yet.
boot_entry32:
	mov [boot_magic], eax
	mov [boot_info], ebx
	mov esp, boot_stack_top

	; Multiboot loaders zero .bss, but a bare "we did it ourselves" costs
	; nothing and makes the image loader-independent.
	extern __bss_start
	mov edi, __bss_start
	mov ecx, __bss_end
	sub ecx, edi
	shr ecx, 2
	xor eax, eax
	rep stosd

	; Long mode present? CPUID.80000001H:EDX.LM[bit 29]
	mov eax, 0x80000000
	cpuid
	cmp eax, 0x80000001
	jb .no_long_mode
	mov eax, 0x80000001
	cpuid
	test edx, 1 << 29
	jz .no_long_mode

	; PML4[0] -> PDPT, PDPT[0..3] -> PD 0..3
	mov dword [boot_pml4], boot_pdpt + PTE_P + PTE_RW
	mov edi, boot_pdpt
	mov eax, boot_pd + PTE_P + PTE_RW
	mov ecx, 4
.pdpt:	mov [edi], eax
	add edi, 8
	add eax, 4096
	loop .pdpt

	; 2048 PD entries, entry i maps i * 2 MiB
	mov edi, boot_pd
	xor ebx, ebx
.pd:	mov eax, ebx
	shl eax, 21
	or eax, PTE_P + PTE_RW + PTE_PS
	cmp ebx, UC_FIRST_2M
	jb .wb
	or eax, PTE_PCD + PTE_PWT
.wb:	mov [edi], eax
	add edi, 8
	inc ebx
	cmp ebx, 2048
	jb .pd

	ENTER_LONG_MODE boot_pml4

	lgdt [boot_gdt64_ptr]
	jmp 0x08:long_mode

.no_long_mode:
	; Say why on COM1 and leave through isa-debug-exit with ERROR.
	mov esi, no_lm_msg
.putc:	lodsb
	test al, al
	jz .exit
	mov dx, 0x3fd
.busy:	mov ah, al
	in al, dx
	test al, 0x20
	mov al, ah
	jz .busy
	mov dx, 0x3f8
	out dx, al
	jmp .putc
.exit:	mov al, STATUS_BYTE_ERROR
	out 0xf4, al
.hang:	hlt
	jmp .hang

no_lm_msg: db "ipibench: this CPU has no long mode (CPUID.80000001H:EDX[29]); status ERROR", 13, 10, 0

bits 64
long_mode:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
	mov rsp, boot_stack_top
	mov edi, [boot_magic]
	mov esi, [boot_info]
	extern kmain
	call kmain
.dead:	cli
	hlt
	jmp .dead

section .note.GNU-stack noalloc noexec nowrite progbits
