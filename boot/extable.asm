; SPDX-License-Identifier: GPL-2.0-only
;
; Fault-tolerant MSR access. Each instruction that may raise #GP has an entry
; (faulting RIP, fixup RIP) in .ex_table; trap_dispatch() resumes at the fixup
; instead of crashing. Used to probe MSRs that a hypervisor may not implement
; (style.md: "Probe with CPUID and with fault-tolerant MSR reads").

E_NODEV equ 19

section .text
bits 64

; int rdmsr_safe(uint32_t msr, uint64_t *val)
global rdmsr_safe
rdmsr_safe:
	mov ecx, edi
.insn:	rdmsr
	shl rdx, 32
	or rax, rdx
	mov [rsi], rax
	xor eax, eax
	ret
.fix:	mov eax, -E_NODEV
	ret

; int wrmsr_safe(uint32_t msr, uint64_t val)
global wrmsr_safe
wrmsr_safe:
	mov ecx, edi
	mov eax, esi
	mov rdx, rsi
	shr rdx, 32
.insn:	wrmsr
	xor eax, eax
	ret
.fix:	mov eax, -E_NODEV
	ret

section .ex_table progbits alloc noexec nowrite align=8
	dq rdmsr_safe.insn, rdmsr_safe.fix
	dq wrmsr_safe.insn, wrmsr_safe.fix

section .note.GNU-stack noalloc noexec nowrite progbits
