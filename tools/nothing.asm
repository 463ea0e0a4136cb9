; SPDX-License-Identifier: GPL-2.0-only
;
; A do-nothing multiboot kernel: the yardstick of `make bench-boot`. It
; reports SUCCESS through isa-debug-exit the moment it is entered, so its
; boot time is QEMU's and the firmware's alone.
bits 32
section .text
align 4
	dd 0x1badb002, 0, -0x1badb002	; multiboot v1: magic, no flags, checksum
global _start
_start:
	mov al, 0x20
	out 0xf4, al
.hang:	hlt
	jmp .hang
section .note.GNU-stack noalloc noexec nowrite progbits
