// SPDX-License-Identifier: GPL-2.0-only
/* Names for the error codes of lib/error.h, for messages. */
#include "lib/error.h"

const char *error_name(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case E_NOENT:
		return "not found";
	case E_2BIG:
		return "too big";
	case E_NODEV:
		return "no such device";
	case E_INVAL:
		return "invalid";
	case E_NOSPC:
		return "no space";
	case E_RANGE:
		return "out of range";
	case E_PROTO:
		return "protocol error";
	case E_BADMSG:
		return "bad checksum or structure";
	case E_NOTSUP:
		return "not supported";
	case E_TIMEDOUT:
		return "timed out";
	default:
		return "unknown error";
	}
}
