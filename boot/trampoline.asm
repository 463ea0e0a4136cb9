; SPDX-License-Identifier: GPL-2.0-only
;
; AP start-up trampoline, assembled as a flat blob and copied to
; TRAMPOLINE_PHYS (below 1 MiB, 4 KiB aligned) before each START-UP IPI.
;
; A START-UP IPI with vector VV starts the AP in real mode at CS = VV00h,
; IP = 0 (SDM vol. 3A 9.4.4.1 "Typical BSP Initialization Sequence", 11.6.1).
; From there: load a temporary GDT, enter protected mode, enable PAE and SSE,
; load the BSP's CR3, set EFER.LME, enable paging (IA-32e mode, SDM 10.8.5),
; then jump to the 64-bit C entry with the stack and per-CPU pointer that the
; BSP wrote into the argument block. Offsets of that block come from
; asm-offsets.inc, generated from struct trampoline_args, so C and asm agree.
;
; The code is position dependent: it assumes it runs at TRAMPOLINE_PHYS.

%include "asm-offsets.inc"

%define ABS(x) (TRAMPOLINE_PHYS + (x))

%include "boot/cpu_bits.inc"

bits 16
org 0

start16:
	jmp short real_entry

	times TRAMP_ARGS_OFFSET - ($ - $$) db 0
args:
	times TRAMP_ARGS_SIZE db 0

real_entry:
	cli
	cld
	mov ax, cs
	mov ds, ax
	lgdt [gdtr]
	mov eax, cr0
	or eax, CR0_PE
	mov cr0, eax
	jmp dword 0x08:ABS(pm32)

bits 32
pm32:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	ENTER_LONG_MODE [ABS(args + TA_CR3)]
	jmp 0x18:ABS(lm64)

bits 64
lm64:
	mov ax, 0x10
	mov ds, ax
	mov es, ax
	mov ss, ax
	mov rsp, [abs ABS(args + TA_STACK)]
	mov rdi, [abs ABS(args + TA_PERCPU)]
	mov rax, [abs ABS(args + TA_ENTRY)]
	call rax			; ap_entry() never returns
.dead:	cli
	hlt
	jmp .dead

align 8
gdt:
	dq 0				; null
	dq 0x00cf9a000000ffff		; 0x08: 32-bit code
	dq 0x00cf92000000ffff		; 0x10: data
	dq 0x00af9a000000ffff		; 0x18: 64-bit code
gdt_end:
gdtr:
	dw gdt_end - gdt - 1
	dd ABS(gdt)

%if ($ - $$) > 4096
%error "the trampoline must fit one page"
%endif
