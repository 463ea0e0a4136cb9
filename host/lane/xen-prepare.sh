#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds and caches what the Xen lane boots: the Xen hypervisor inside a QEMU
# TCG VM (TCG emulates AMD SVM with nested paging, which Xen's HVM support
# takes: "HVM: SVM enabled", "HAP detected"), a Linux dom0, and the toolstack
# that starts ipibench as a PVH or HVM guest of that Xen.
#
# Everything comes from Debian packages:
#   - Xen 4.17 (xen-hypervisor-4.17-amd64: the gzipped multiboot image, stored
#     gunzipped, which QEMU's -kernel loads) and its toolstack
#     (xen-utils-4.17: xl, xenstored, xenconsoled, xen-init-dom0, xentrace,
#     hvmloader; the libxen* libraries);
#   - the device model of HVM guests (qemu-system-xen, 8.0 or later: the
#     host's own version where the lists have it, built against the same
#     Xen libraries in bookworm-backports) and SeaBIOS, which hvmloader
#     loads;
#   - dom0's kernel is the KVM lane's (prepare.sh: Debian's backports kernel
#     has CONFIG_XEN_DOM0 and hvc0), with the five Xen modules of the same
#     package that the toolstack needs (evtchn, grant tables, privcmd, xenfs);
#   - busybox-static and the host's libc and the few host libraries the tools
#     link (ldd lists them) for the rest of dom0's userland.
#
# Cache, under build/xen-lane/:
#   xen-<version>-qemu-<version>/xen.elf, root/  one Xen, toolstack and
#                                       device model per package versions
#   dom0-<kernel package version>/*.ko  the Xen modules of dom0's kernel, where
#                                       the KVM lane's kernel-*/xen/ lacks them
#   base-<key>.cpio                     dom0's initramfs without the guest
#   base.env                            XEN_LANE_XEN, XEN_LANE_KERNEL, XEN_LANE_BASE
#
# usage: host/lane/xen-prepare.sh [-q]
#   -q  print nothing but errors
# exit: 0 ready (paths in build/xen-lane/base.env); 77 cannot prepare here
#   (a package is missing and we are not root, or a download failed; the
#   message says what to run); 1 any other failure.
set -euo pipefail

readonly EXIT_CANNOT_PREPARE=77
readonly XEN_PACKAGES=(xen-hypervisor-4.17-amd64 xen-utils-4.17 libxenmisc4.17 libxencall1
	libxenevtchn1 libxenforeignmemory1 libxengnttab1 libxenstore4 libxentoollog1
	libxendevicemodel1 libxentoolcore1 libxenhypfs1 libyajl2 qemu-system-xen)
# The toolstack dom0 runs; all under /usr/lib/xen-4.17/bin but the device model.
readonly TOOLS=(xl xenstored xenconsoled xen-init-dom0 xentrace libxl-save-helper)
readonly DEVICE_MODEL=/usr/libexec/xen-qemu-system-i386
# Load order: xenfs needs privcmd (its depends=); the rest need nothing.
readonly DOM0_MODULES=(xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs)
# What hvmloader and the device model load, from the host's own packages:
# SeaBIOS (libxenlight's built-in path) and the option ROMs of a direct
# kernel boot (multiboot, as QEMU's own -kernel); and the keymap the device
# model reads even with no display (libxl passes -vnc none, and QEMU 7.2
# loads the en-us layout before it looks at "none").
readonly FIRMWARE=(/usr/share/seabios/bios-256k.bin)
readonly QEMU_ROMS=(multiboot_dma.bin linuxboot_dma.bin kvmvapic.bin keymaps/en-us)
readonly APT=(apt-get -o DPkg::Lock::Timeout=600 -q)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$repo/build/xen-lane
quiet=0
[ "${1:-}" = -q ] && quiet=1

readonly LANE_TAG=xen-lane
# shellcheck source=host/lane/lane-lib.sh
. "$repo/host/lane/lane-lib.sh"

# The candidate version of a package, from the local apt lists only.
candidate() {
	apt_cached "$cache/apt/policy-$1" apt-cache policy "$1" 2>/dev/null |
		awk '/Candidate:/ && !v { v = $2 } END { print v }'
}

# The device model's version: the host's own QEMU's where the apt lists
# have it (on Debian 12, bookworm-backports' QEMU, which run.sh needs
# anyway), else the candidate. Its option ROMs are the host's, which the
# lane copies (QEMU_ROMS); and Debian 12's own QEMU 7.2 cannot boot an HVM
# frame's image: its direct kernel boot offers multiboot_dma.bin on a
# fw_cfg without DMA (xen_load_linux()), and the ROM waits forever for its
# copy. QEMU 8.0 gave that fw_cfg DMA.
device_model_version() {
	local host listed v
	host=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
	listed=$(apt_cached "$cache/apt/madison-qemu-system-xen" apt-cache madison qemu-system-xen \
		2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
	if [ -n "$host" ] && grep -qxF "$host" <<<"$listed"; then
		echo "$host"
		return 0
	fi
	# Else the newest the lists have: madison lists the newest first.
	for v in $listed; do
		if dpkg --compare-versions "$v" ge 1:8.0; then
			echo "$v"
			return 0
		fi
	done
	cannot "no qemu-system-xen of 8.0 or later in the apt lists (Debian 12: bookworm-backports)" \
		"${APT[*]} update"
}

# The packages' files, unpacked into xen-<version>-qemu-<version>/root;
# xen.elf beside it.
fetch_xen() {
	local ver=$1 qver=$2 dir tmp p v wanted
	# (A ':' of an epoch would split the LD_LIBRARY_PATH made of it.)
	dir=$cache/xen-${ver//:/_}-qemu-${qver//:/_}
	[ -f "$dir/done" ] && { echo "$dir"; return 0; }
	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	for p in "${XEN_PACKAGES[@]}"; do
		if [ "$p" = qemu-system-xen ]; then v=$qver; else v=$(candidate "$p"); fi
		case "$v" in "" | "(none)") cannot "$p is not in the apt lists" "${APT[*]} update" ;; esac
		echo "$p=$v" >>"$tmp/packages"
	done
	say "downloading ${#XEN_PACKAGES[@]} packages: ${XEN_PACKAGES[*]}" >&2
	# One apt-get for all: its start-up (reading the lists) once.
	mapfile -t wanted <"$tmp/packages"
	(cd "$tmp" && apt_download "${wanted[@]}")
	mkdir -p "$tmp/root"
	for p in "$tmp"/*.deb; do
		dpkg-deb -x "$p" "$tmp/root"
	done
	rm -rf "$dir"
	mkdir -p "$dir"
	gzip -dc "$tmp"/root/boot/xen-4.17-amd64.gz >"$dir/xen.elf"
	rm -rf "$tmp"/root/boot "$tmp"/root/usr/share
	mv "$tmp/root" "$tmp/packages" "$dir/"
	touch "$dir/done"
	rm -rf "$tmp"
	trap - EXIT
	echo "$dir"
}

# dom0's Xen modules, from the image package the KVM lane's kernel came from:
# prepare.sh keeps them under kernel-*/xen/ (it decompresses that package
# anyway); a kernel cache made before it did is served by a download of the
# package (its name in kernel-*/package), decompressed for busybox insmod.
fetch_dom0_modules() {
	local kdir=$1 pkg dir tmp m pats=()
	if [ -f "$kdir/xen/xenfs.ko" ]; then
		echo "$kdir/xen"
		return 0
	fi
	pkg=$(cat "$kdir/package")
	dir=$cache/dom0-${pkg#*=}
	[ -f "$dir/done" ] && { echo "$dir"; return 0; }
	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	say "downloading $pkg for dom0's Xen modules" >&2
	(cd "$tmp" && apt_download "$pkg")
	for m in "${DOM0_MODULES[@]}"; do
		pats+=("*/$m.ko.xz")
	done
	mkdir -p "$tmp/x"
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/x" --wildcards "${pats[@]}"
	rm -rf "$dir"
	mkdir -p "$dir"
	for m in "${DOM0_MODULES[@]}"; do
		xz -dc "$(find "$tmp/x" -name "$m.ko.xz" | head -n1)" >"$dir/$m.ko"
	done
	touch "$dir/done"
	rm -rf "$tmp"
	trap - EXIT
	echo "$dir"
}

# Every file dom0's userland needs from the Xen tree, as a path under ROOT,
# and then the host's files the binaries link, as host paths.
xen_files() {
	local xdir=$1 t bins=()
	for t in "${TOOLS[@]}"; do
		bins+=("$xdir/root/usr/lib/xen-4.17/bin/$t")
	done
	bins+=("$xdir/root$DEVICE_MODEL")
	printf 'xen %s\n' "${bins[@]#"$xdir/root"}" /usr/lib/xen-4.17/boot/hvmloader
	(cd "$xdir/root" && find usr/lib/x86_64-linux-gnu usr/lib/xen-4.17/lib -name '*.so*') |
		sed 's|^|xen /|'
	# The host libraries: what ldd resolves outside the Xen tree. pthread_cancel
	# dlopens libgcc_s, which ldd cannot see (xl aborts without it).
	LD_LIBRARY_PATH=$xdir/root/usr/lib/x86_64-linux-gnu ldd "${bins[@]}" |
		grep -o '/[^ ]*' | grep -v "^$xdir/" | sort -u | sed 's/^/host /'
	echo "host /lib/x86_64-linux-gnu/libgcc_s.so.1"
	printf 'host %s\n' "${FIRMWARE[@]}"
	local d r
	for r in "${QEMU_ROMS[@]}"; do
		for d in /usr/share/qemu /usr/lib/ipxe/qemu; do
			[ -e "$d/$r" ] && { echo "host $d/$r"; break; }
		done
	done
}

build_base() {
	local xdir=$1 mdir=$2 out=$3 root kind f a m
	root=$(mktemp -d "$cache/root.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,etc/xen,var/lib/xen,var/log/xen,var/run/xen} \
		"$root/lane/xen"
	cp /bin/busybox "$root/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	for m in "${DOM0_MODULES[@]}"; do
		cp "$mdir/$m.ko" "$root/lane/xen/$m.ko"
	done
	while read -r kind f; do
		[ -e "$f" ] || [ "$kind" = xen ] || die "$f not found on this host"
		mkdir -p "$root$(dirname "$f")"
		if [ "$kind" = xen ]; then
			cp -L "$xdir/root$f" "$root$f"
		else
			cp -L "$f" "$root$f"
		fi
	done < <(xen_files "$xdir")
	# xl reads its global configuration; an empty one takes the defaults.
	: >"$root/etc/xen/xl.conf"
	(cd "$root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$root"
	trap - EXIT
}

main() {
	local kvm_env kdir xver qver xdir mdir key base
	for t in dpkg-deb apt-get apt-cache xz gzip ldd sha256sum flock; do
		command -v "$t" >/dev/null 2>&1 || cannot "$t not found" "${APT[*]} install -y xz-utils"
	done
	# dom0's kernel and busybox are the KVM lane's: prepare them first.
	"$repo/host/lane/prepare.sh" -q || exit $?
	kvm_env=$repo/build/kvm-lane/base.env
	kdir=$(sed -n 's/^KVM_LANE_KERNEL=//p' "$kvm_env")
	kdir=$(dirname "$(eval "echo $kdir")")
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	xver=$(candidate xen-hypervisor-4.17-amd64)
	case "$xver" in "" | "(none)")
		cannot "xen-hypervisor-4.17-amd64 is not in the apt lists (Debian 12's main suite has it)" \
			"${APT[*]} update" ;;
	esac
	# XSA-475: before 4.17.6 a guest's VP set can make Xen write past a
	# CPU mask and read past d->vcpu[] (viridian.c); debug=corrupt-vpset,
	# which the lane runs, names VPs there.
	dpkg --compare-versions "$xver" ge 4.17.6 ||
		cannot "Xen $xver in the apt lists is older than 4.17.6 (XSA-475)" "${APT[*]} update"
	qver=$(device_model_version)
	xdir=$(fetch_xen "$xver" "$qver")
	mdir=$(fetch_dom0_modules "$kdir")
	key=$({
		cat "$xdir/packages" "$kdir/package"
		echo "busybox-static $(dpkg-query -W -f='${Version}' busybox-static)"
		sha256sum <"${BASH_SOURCE[0]}"
		sha256sum /bin/busybox "$mdir"/*.ko
		xen_files "$xdir" | awk '$1 == "host" { print $2 }' | xargs sha256sum
	} | sha256sum | cut -c1-16)
	base=$cache/base-$key.cpio
	if [ ! -f "$base" ]; then
		say "building $(basename "$base")"
		rm -f "$cache"/base-*.cpio
		build_base "$xdir" "$mdir" "$base"
	fi
	printf 'XEN_LANE_XEN=%q\nXEN_LANE_KERNEL=%q\nXEN_LANE_BASE=%q\n' \
		"$xdir/xen.elf" "$kdir/vmlinuz" "$base" >"$cache/base.env"
	say "ready: $(du -sh "$cache" | cut -f1) in $cache"
}

main "$@"
