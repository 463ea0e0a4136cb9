# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced by both lanes' scripts (prepare.sh and xen-prepare.sh, lane.sh and
# xen-lane.sh): what they share. The sourcing script sets LANE_TAG (kvm-lane
# or xen-lane: its messages' prefix) and may set quiet (1: say nothing); the
# prepare helpers also use APT (the apt-get command) and EXIT_CANNOT_PREPARE.

say() { [ "${quiet:-0}" -eq 1 ] || echo "$LANE_TAG: $*"; }
die() { echo "$LANE_TAG: error: $*" >&2; exit 1; }
# cannot WHY [COMMAND]: what is missing, and what root would run; exit 77.
cannot() {
	echo "$LANE_TAG: cannot prepare: $1" >&2
	[ -z "${2:-}" ] || echo "$LANE_TAG: run as root: $2" >&2
	exit "$EXIT_CANNOT_PREPARE"
}
is_root() { [ "$(id -u)" -eq 0 ]; }

# What an apt-cache answer depends on: the lists, the package cache, the
# sources and the pins (a pin moves a candidate), each file's name, mtime to
# the nanosecond and size; empty where none can be read.
apt_state() {
	stat -c '%n %.9Y %s' /var/cache/apt/pkgcache.bin /var/lib/apt/lists /etc/apt/sources.list \
		/etc/apt/sources.list.d /etc/apt/sources.list.d/* /etc/apt/preferences \
		/etc/apt/preferences.d /etc/apt/preferences.d/* 2>/dev/null | tr '\n' ' ' || true
}

# apt_cached FILE COMMAND...: COMMAND's output, kept in FILE and given again
# while the apt state is the same. An apt-cache query takes most of a second
# of CPU; the lanes' tests once made 18 a suite, for the same answers. A
# command that fails returns its status and is not kept; nothing is kept
# where the state cannot be read.
apt_cached() {
	local f=$1 state out first tmp
	shift
	state=$(apt_state)
	if [ -n "$state" ] && [ -f "$f" ] && { IFS= read -r first && [ "$first" = "$state" ] &&
		cat; } <"$f"; then
		return 0
	fi
	out=$("$@") || return $?
	if [ -n "$state" ] && mkdir -p "$(dirname "$f")" && tmp=$(mktemp "$f.XXXXXX"); then
		printf '%s\n%s\n' "$state" "$out" >"$tmp" && mv -f "$tmp" "$f"
	fi
	printf '%s\n' "$out"
}

# apt-get download PKG=VER... into the current directory, in one call; on a
# miss (stale lists after the archive moved on) refresh the lists once, as
# root, and retry.
apt_download() {
	"${APT[@]}" download "$@" >/dev/null 2>&1 && return 0
	is_root && "${APT[@]}" update >/dev/null 2>&1 && "${APT[@]}" download "$@" >/dev/null 2>&1 &&
		return 0
	cannot "apt-get download $* failed (network, or stale apt lists)" "${APT[*]} update"
}

# run_piped DIR PROGRESS COMMAND...: runs the outer VM's command, its pid in
# DIR/pid, its console through the function PROGRESS (which gets DIR/pid,
# and kills the command once the lane's last line came, leaving
# DIR/pid.done); returns the command's status, 0 when PROGRESS ended it so.
# A SIGTERM or SIGINT to this script (run.sh's Ctrl-C) is passed on to the
# command (timeout(1), which passes it on to the outer QEMU), and the
# script then ends 143: bash runs no trap while it waits for a foreground
# pipeline, so the pipeline runs in the background and `wait`, which a
# trapped signal interrupts, waits for it.
run_piped() {
	local dir=$1 progress=$2 rc pipe stopped=0
	shift 2
	set +e
	rm -f "$dir/pid" "$dir/rc"
	{
		"$@" </dev/null 2>&1 &
		echo $! >"$dir/pid"
		wait $!
		echo $? >"$dir/rc"
	} | "$progress" "$dir/pid" &
	pipe=$!
	trap 'kill -TERM "$(cat "$dir/pid" 2>/dev/null)" 2>/dev/null; stopped=1' TERM INT
	# wait ends early on a trapped signal: wait again until the pipeline is gone.
	while kill -0 "$pipe" 2>/dev/null; do
		wait "$pipe"
	done
	trap - TERM INT
	rc=$(cat "$dir/rc" 2>/dev/null || echo 1)
	set -e
	[ "$stopped" = 0 ] || exit 143
	# Stopped by PROGRESS after the lane's last line: the end it waits for.
	[ "$rc" != 143 ] || [ ! -e "$dir/pid.done" ] || rc=0
	return "$rc"
}
