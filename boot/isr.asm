; SPDX-License-Identifier: GPL-2.0-only
;
; One entry stub per IDT vector. Each pushes a uniform frame (a zero error
; code where the CPU pushes none, then the vector) and joins isr_common, which
; saves the general registers and calls trap_dispatch(struct trap_frame *).
; The layout is struct trap_frame in kernel/trap.h, checked there.
;
; Exceptions that push an error code: SDM vol. 3A 6.13 table 6-1
; (#DF 8, #TS 10, #NP 11, #SS 12, #GP 13, #PF 14, #AC 17, #CP 21, #VC 29, #SX 30).

%macro STUB 1
align 16
isr_%1:
%if %1 = 8 || (%1 >= 10 && %1 <= 14) || %1 = 17 || %1 = 21 || %1 = 29 || %1 = 30
%else
	push 0
%endif
	push %1
	jmp isr_common
%endmacro

section .text
bits 64

isr_common:
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	cld
	mov rdi, rsp
	extern trap_dispatch
	call trap_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16			; vector and error code
	iretq

%assign v 0
%rep 256
	STUB v
%assign v v + 1
%endrep

section .rodata
global isr_stub_table
align 8
isr_stub_table:
%assign v 0
%rep 256
	dq isr_ %+ v
%assign v v + 1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
