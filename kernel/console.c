// SPDX-License-Identifier: GPL-2.0-only
/*
 * Polled 16550 UART on COM1 (115200 8N1) and the kernel printf on top of it.
 * Output is serialised by a lock with a deadline: a CPU that crashed while
 * holding it must not silence the CPU reporting the crash. What a CPU
 * prints is progress for the stall watchdog (include/watchdog.h): only the
 * BSP prints in a healthy run, never inside a timed region.
 *
 * With console=virtio (include/virtio_console.h), once the command line
 * is read, what is printed under the lock goes to the virtio console
 * instead, one send a print: the same bytes, CR before each LF included,
 * for one exit instead of one a byte. A print without the lock (its holder
 * stuck, or a trap on top of a print) still takes the UART, which needs no
 * state that the holder may have left half-written, after the holder's
 * unsent bytes; so does everything once a send has failed. Both are meant
 * to reach one place (the KVM lane muxes them onto one chardev). Opt-in:
 * the driver cannot tell a console on port 0 from a controller without one,
 * whose lines QEMU discards as if it had taken them.
 */
#include <stddef.h>
#include "include/console.h"
#include "include/options.h"
#include "include/status.h"
#include "include/uart.h"
#include "include/virtio_console.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"

/*
 * THRE set means the whole transmit FIFO is empty, so one LSR read may be
 * followed by a FIFO's worth of THR writes (Linux's 8250 tx_loadsz). Under
 * a VMM each port access is an exit: two a byte become 17 per 16 bytes,
 * which is what a console costs a guest nested inside TCG (the KVM lane, host/lane).
 */
#define FIFO_BYTES 16

/* Spins, not time: the TSC may not be calibrated yet when we print. */
#define THRE_SPINS 100000
#define LOCK_SPINS 50000000

static int console_lock;
static int uart_present;
static int tx_load = 1;	/* bytes one THRE lets us write: 1, or FIFO_BYTES */
static int tx_room;	/* of those, not yet written (counted under console_lock) */
static bool virtio_on;
static char vbuf[VIRTCON_MAX];	/* a print on its way to the virtio console */
static size_t vlen;		/* both under console_lock */

void serial_init(void)
{
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, LCR_DLAB);
	outb(COM1 + UART_THR, 1);	/* divisor 1: 115200 baud */
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, LCR_8N1);
	outb(COM1 + UART_FCR, 0xc7);	/* enable and clear FIFOs */
	outb(COM1 + UART_MCR, 0x03);
	/* A missing UART floats the bus: LSR reads 0xff. */
	uart_present = inb(COM1 + UART_LSR) != 0xff;
	/* An 8250 or 16450 has no FIFO and leaves IIR[7:6] clear. */
	if (uart_present && (inb(COM1 + UART_IIR) & IIR_FIFO_ON) == IIR_FIFO_ON)
		tx_load = FIFO_BYTES;
}

void console_use_virtio(void)
{
	int err;

	if (options.console != CONSOLE_VIRTIO)
		return;
	err = virtcon_init();
	if (err) {
		kprintf("console: console=virtio, but %s: COM1 stays\n",
			err == -E_NODEV ? "no legacy virtio console on PCI bus 0"
					: "its transmit queue is larger than this driver holds");
		return;
	}
	virtio_on = true;
	kprintf("console: %s; what follows goes there\n", virtcon_where());
}

/* locked: this CPU holds console_lock, so tx_room is its own to count down. */
static void uart_putc(char c, bool locked)
{
	if (!locked || tx_room <= 0) {
		for (int i = 0; i < THRE_SPINS; i++) {
			if (inb(COM1 + UART_LSR) & LSR_THRE)
				break;
			cpu_relax();
		}
		tx_room = locked ? tx_load : 0;
	}
	tx_room--;
	outb(COM1 + UART_THR, (uint8_t)c);
}

/*
 * COM1, CR before each LF when crlf (bytes the virtio path kept already have
 * theirs); without COM1 (a Xen PVH guest has no emulated UART) the debug
 * port, which Xen prints as "(dN) ..." (guest_loglvl=all) and QEMU's
 * isa-debugcon writes out; a port nothing decodes drops the bytes. The
 * debug port takes the piece as one REP OUTSB: one exit where a byte each
 * cost one (Xen's emulator runs the repeats, hvm_process_io_intercept()),
 * which under the Xen lane's nested TCG was seconds a frame and most of
 * its trace (docs/xen.md).
 */
static void serial_out(const char *s, size_t n, bool locked, bool crlf)
{
	if (!uart_present) {
		outsb(DEBUG_PORT, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (crlf && s[i] == '\n')
			uart_putc('\r', locked);
		uart_putc(s[i], locked);
	}
}

/* Under console_lock. A send that failed goes to the serial console, and so does all that follows. */
static void virtio_flush(void)
{
	if (vlen && virtcon_send(vbuf, vlen)) {
		virtio_on = false;
		serial_out(vbuf, vlen, true, false);
	}
	vlen = 0;
}

static void virtio_putc(char c)
{
	if (vlen == sizeof(vbuf))
		virtio_flush();
	vbuf[vlen++] = c;
}

/*
 * ctx: whether console_lock was taken. A CPU printing without it (the
 * holder is stuck) or a trap printing on top of a print on the same CPU may
 * meet another writer mid-count: without the lock every byte waits for
 * THRE, and a count that went below zero is read as no room.
 */
static void console_out(void *ctx, const char *s, size_t n)
{
	const bool locked = *(const bool *)ctx;

	if (locked && virtio_on) {
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '\n')
				virtio_putc('\r');
			virtio_putc(s[i]);
		}
		return;
	}
	serial_out(s, n, locked, true);
}

static bool console_lock_take(void)
{
	for (long i = 0; i < LOCK_SPINS; i++) {
		if (!__atomic_exchange_n(&console_lock, 1, __ATOMIC_ACQUIRE))
			return true;
		cpu_relax();
	}
	/*
	 * The holder is stuck (or this CPU, trapped inside its own print): print
	 * anyway, after what it had not sent yet, which would otherwise be lost
	 * with it (on COM1 it would have been out already).
	 */
	if (virtio_on && vlen) {
		serial_out(vbuf, vlen, false, false);
		vlen = 0;
	}
	return false;
}

static void console_lock_drop(bool taken)
{
	if (!taken)
		return;
	if (virtio_on)
		virtio_flush();
	__atomic_store_n(&console_lock, 0, __ATOMIC_RELEASE);
}

void console_write(const char *s, unsigned long n)
{
	bool taken = console_lock_take();

	console_out(&taken, s, n);
	console_lock_drop(taken);
	watch_step();
}

void kvprintf(const char *fmt, va_list ap)
{
	bool taken = console_lock_take();

	fmt_vcallback(console_out, &taken, fmt, ap);
	console_lock_drop(taken);
	watch_step();
}

void kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
}

void panic(const char *fmt, ...)
{
	va_list ap;

	kprintf("PANIC: ");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
	status_exit(STATUS_ERROR);
}
