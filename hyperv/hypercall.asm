; SPDX-License-Identifier: GPL-2.0-only
;
; Hyper-V hypercall invocation, x64 (TLFS hypercall-interface.md "Hypercall
; Calling Conventions"; docs/hyperv-abi.md 2.2 and 2.4):
;   RCX = control word; slow: RDX = input GPA, R8 = output GPA;
;   fast: RDX, R8 = input bytes 0..15; XMM-fast: XMM0..XMM5 = bytes 16..111.
;   RAX = result (status 15:0, reps completed 43:32).
;
; Every call goes through the hypercall page, as the TLFS says ("issues a
; CALL to the beginning of the hypercall page", 3.13): hv_trap jumps to the
; page, whose RET returns to hv_hypercall's caller, the stack as after that
; CALL. KVM would also take the bare instruction (vmcall on Intel, vmmcall
; on AMD: the KVM selftests issue it), and ipibench once did; Xen's viridian
; does not: its page is `or eax, 0x80000000; vmmcall; ret`, and a call
; without bit 31 of EAX goes to Xen's own hypercall table, which answers
; -ENOSYS (docs/xen.md). The indirect jump is the cost of the spec's way.
; hv_page_entry is the page's address once hv_calls_on() enabled it; until
; then hv_no_page, which answers every call with status 0xffff (no
; hypervisor's: the caller reports it as UNKNOWN) instead of jumping to 0.
;
; Clobbers: the TLFS changes only RAX (and output registers) and KVM writes
; only RAX, but, like Linux's hv_do_hypercall(), callers must treat RCX,
; RDX and R8-R11 as clobbered; all are caller-saved in the SysV ABI. The
; XMM-fast path loads XMM0-XMM5, also caller-saved; the kernel's C code
; never uses XMM (-mgeneral-regs-only), so no interrupt handler disturbs
; them between the loads and the call. SSE is on (CR4.OSFXSR, CR0.MP,
; CR0.EM clear) on every CPU from boot/multiboot.asm and the trampoline.

section .data
align 8
global hv_page_entry
hv_page_entry:	dq hv_no_page

section .text
bits 64
default rel

; uint64_t hv_hypercall(uint64_t control, uint64_t rdx, uint64_t r8)
; Slow and fast calls load the same registers; only their meaning differs.
global hv_hypercall
hv_hypercall:
	mov rcx, rdi
	mov r8, rdx
	mov rdx, rsi
	jmp hv_trap

; uint64_t hv_hypercall_xmm(uint64_t control, const uint64_t *q)
; q is the input laid out as for a slow call, 16-byte aligned, 14 qwords
; (bytes past the call's input zero): movdqa faults on a misaligned q.
global hv_hypercall_xmm
hv_hypercall_xmm:
	mov rcx, rdi
	mov rdx, [rsi]
	mov r8, [rsi + 8]
	movdqa xmm0, [rsi + 16]
	movdqa xmm1, [rsi + 32]
	movdqa xmm2, [rsi + 48]
	movdqa xmm3, [rsi + 64]
	movdqa xmm4, [rsi + 80]
	movdqa xmm5, [rsi + 96]
hv_trap:
	jmp [hv_page_entry]

; A call before the hypercall page was enabled: a status, not a jump to 0.
hv_no_page:
	mov eax, 0xffff
	ret

section .note.GNU-stack noalloc noexec nowrite progbits
