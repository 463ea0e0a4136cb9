; SPDX-License-Identifier: GPL-2.0-only
;
; Embeds the flat trampoline (boot/trampoline.asm, assembled by the Makefile
; to trampoline.bin) into the kernel image; smp.c copies it below 1 MiB.

section .rodata
global trampoline_blob, trampoline_blob_end
align 16
trampoline_blob:
	incbin "trampoline.bin"
trampoline_blob_end:

section .note.GNU-stack noalloc noexec nowrite progbits
