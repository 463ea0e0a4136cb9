#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Installs what building, booting and testing ipibench needs, from Debian's
# (or Ubuntu's) own packages. Run as root it installs what is missing; run as
# anyone else it prints the exact command to run and fails.
#
# usage: tools/deps.sh [build|test|report]
#   build  compiler, assembler, QEMU >= 8.1, GRUB and ISO tools (default)
#   test   build plus what the tests use (host sanitizers, cppcheck, clang-tidy,
#          pyflakes and shellcheck for make lint,
#          gnuplot for the report tests, clang and its libFuzzer runtime for
#          the fuzz targets, LAVA's dispatcher for the lab's jobs)
#   report build plus gnuplot (`run.sh report` draws its plots with it)
#
# QEMU >= 8.1 is needed for x2APIC under TCG. Debian 12 ships 7.2, so on
# bookworm the backports suite is enabled and QEMU is taken from it.
set -euo pipefail

want=${1:-build}
pkgs=(make gcc libc6-dev binutils nasm qemu-system-x86 qemu-utils grub-pc-bin
      grub-common xorriso mtools python3)
case "$want" in
build) ;;
# libclang-rt-dev, not a versioned libclang-rt-N-dev: it follows the default
# clang, and libFuzzer must come from the same LLVM as the compiler.
# lava-dispatcher: lava-run and the lava-test-shell helpers (tests/lava/),
# about 130 packages and 190 MB without its recommends.
test) pkgs+=(cppcheck clang-tidy clang-format shellcheck pyflakes3 gnuplot-nox clang libclang-rt-dev lava-dispatcher) ;;
report) pkgs+=(gnuplot-nox) ;;
*) echo "usage: $0 [build|test|report]" >&2; exit 2 ;;
esac

APT=(apt-get -o DPkg::Lock::Timeout=600 -y -q)
min_qemu=8.1

# DEPS_QEMU_VERSION: the first line of `qemu-system-x86_64 --version`, as
# run.sh asked it already (it asks once a command).
qemu_ok() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 || return 1
	local v
	v=${DEPS_QEMU_VERSION-$(qemu-system-x86_64 --version)}
	v=$(sed -n '1s/.*version \([0-9]*\.[0-9]*\).*/\1/p' <<<"$v")
	[ -n "$v" ] && [ "$(printf '%s\n%s\n' "$min_qemu" "$v" | sort -V | head -n1)" = "$min_qemu" ]
}

# One dpkg-query for every package: run.sh calls this before each boot, and
# a process a package was half of a plan=boot run's time. dpkg-query exits 1
# when any package is unknown to dpkg, the very case this script is for: its
# status must not end the script (set -e with pipefail) before it says what
# is missing.
installed=" $({ dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null || :; } |
	awk '$2 == "install" && $3 == "ok" && $4 == "installed" { printf "%s ", $1 }')"
missing=()
for p in "${pkgs[@]}"; do
	[[ "$installed" == *" $p "* ]] || missing+=("$p")
done
qemu_ok || missing+=(qemu-system-x86)

[ ${#missing[@]} -eq 0 ] && exit 0

# shellcheck source=/dev/null
codename=$( . /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}")
backports=()
if [ "$codename" = bookworm ]; then
	backports=(-t bookworm-backports)
fi

if [ "$(id -u)" -ne 0 ]; then
	# Commands a user can paste: through sudo where it is installed (each
	# one, the redirection inside sh -c), else as they are, for a root
	# shell (su -). DEPS_SUDO (tests only) says whether sudo is there.
	sudo=${DEPS_SUDO-$(command -v sudo >/dev/null 2>&1 && echo yes)}
	p=""
	if [ -n "$sudo" ]; then
		p="sudo "
		echo "ipibench: missing packages: ${missing[*]}" >&2
		echo "ipibench: install them with sudo, then run this command again:" >&2
	else
		echo "ipibench: missing packages: ${missing[*]}" >&2
		echo "ipibench: install them as root (su -; sudo is not installed), then run this command again:" >&2
	fi
	if [ ${#backports[@]} -gt 0 ]; then
		list="echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/bookworm-backports.list"
		if [ -n "$sudo" ]; then echo "  sudo sh -c \"$list\"" >&2; else echo "  $list" >&2; fi
	fi
	echo "  ${p}apt-get update && ${p}apt-get install -y ${missing[*]} && ${p}apt-get install -y ${backports[*]} qemu-system-x86 qemu-utils" >&2
	exit 1
fi

if [ ${#backports[@]} -gt 0 ] &&
   ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	echo 'deb http://deb.debian.org/debian bookworm-backports main' \
		>/etc/apt/sources.list.d/bookworm-backports.list
fi
echo "ipibench: installing ${missing[*]}" >&2
unset DEPS_QEMU_VERSION # what is installed now is asked anew
"${APT[@]}" update >/dev/null
export DEBIAN_FRONTEND=noninteractive
"${APT[@]}" install --no-install-recommends "${missing[@]}" >/dev/null
if ! qemu_ok; then
	"${APT[@]}" install --no-install-recommends "${backports[@]}" qemu-system-x86 qemu-utils >/dev/null
fi
# The dispatcher's package also enables lava-worker, a service that keeps
# trying to reach a LAVA server (http://localhost/ until configured): the
# tests run lava-run alone, so a worker this script brought is stopped.
case " ${missing[*]} " in *" lava-dispatcher "*)
	if [ -d /run/systemd/system ] && systemctl is-enabled --quiet lava-worker.service 2>/dev/null; then
		systemctl disable --now lava-worker.service >/dev/null 2>&1 &&
			echo "ipibench: lava-worker disabled (the tests need lava-run only)" >&2
	fi ;;
esac
qemu_ok || { echo "ipibench: QEMU >= $min_qemu is still missing" >&2; exit 1; }
