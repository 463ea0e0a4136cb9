#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds and caches what the real-KVM lane boots: KVM nested inside a
# QEMU TCG VM. TCG emulates AMD SVM well enough for Debian's kvm_amd to load in
# the outer VM, so an inner `qemu-system-x86_64 -accel kvm` there runs the guest
# against the real KVM hypervisor, Hyper-V and KVM PV interfaces included.
#
# Everything comes from Debian packages:
#   - the kernel and four modules of linux-image-amd64 from bookworm-backports
#     (the outer VM's kernel; the host's own kernel is not used, it may lack
#     kvm_amd or be a distribution we do not know);
#   - busybox-static (the outer VM's userland);
#   - the host's own qemu-system-x86_64 with every shared library ldd lists and
#     the firmware it loads, at the same paths (the inner QEMU).
#
# Cache, under build/kvm-lane/ (relative to the repository root):
#   kernel-<image package version>/vmlinuz, *.ko   downloaded once per version
#   base-<key>.cpio                                 initramfs without the guest
#   base.env                                        KVM_LANE_KERNEL, KVM_LANE_BASE
# <key> hashes the package versions and the bytes of every file copied in, so a
# QEMU or library upgrade rebuilds the initramfs and a second run reuses it.
#
# usage: host/lane/prepare.sh [-q]
#   -q  print nothing but errors
# exit: 0 ready (paths in build/kvm-lane/base.env); 77 cannot prepare here
#   (a package is missing and we are not root, or the download failed; the
#   message says what to run); 1 any other failure.
set -euo pipefail

# 77 is the automake "skipped" status: callers report the lane as skipped.
readonly EXIT_CANNOT_PREPARE=77
readonly SUITE=bookworm-backports
readonly META=linux-image-amd64
# Load order matters: there is no modules.dep, insmod resolves nothing itself.
# kvm needs irqbypass; kvm-amd needs kvm and ccp (for SEV, even when unused).
readonly MODULES=(irqbypass ccp kvm kvm-amd)
# The Xen lane's dom0 runs this kernel too (xen-prepare.sh): its Xen modules
# come out of the same package in the same pass, kept apart under xen/ (the
# KVM lane's archive does not hold them).
readonly XEN_MODULES=(xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xenfs)
# What `-M pc` and `-M q35 -kernel <multiboot ELF>` make QEMU load, found
# with strace: SeaBIOS, multiboot_dma.bin and kvmvapic.bin (-nodefaults asks
# for no option ROM). linuxboot_dma.bin and pvh.bin cover Linux and PVH too,
# bios-microvm.bin is microvm's firmware, SeaBIOS built for it (lane.sh
# --machine microvm,...).
readonly FIRMWARE=(bios-256k.bin multiboot_dma.bin linuxboot_dma.bin kvmvapic.bin pvh.bin
	bios-microvm.bin)
readonly APT=(apt-get -o DPkg::Lock::Timeout=600 -q)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$repo/build/kvm-lane
quiet=0
[ "${1:-}" = -q ] && quiet=1

readonly LANE_TAG=kvm-lane
# shellcheck source=host/lane/lane-lib.sh
. "$repo/host/lane/lane-lib.sh"

pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }

check_host_tools() {
	local t
	for t in qemu-system-x86_64 dpkg-deb dpkg-query apt-get apt-cache xz ldd sha256sum flock; do
		command -v "$t" >/dev/null 2>&1 ||
			cannot "$t not found" "${APT[*]} install -y qemu-system-x86 xz-utils"
	done
}

# busybox-static is the whole userland of the outer VM, and its cpio builds the
# archive (so the host needs no cpio package).
ensure_busybox() {
	dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'install ok installed' &&
		return 0
	is_root || cannot "busybox-static is not installed" \
		"${APT[*]} install -y busybox-static"
	say "installing busybox-static"
	"${APT[@]}" install -y busybox-static >/dev/null ||
		cannot "apt-get install busybox-static failed"
}

# The metapackage's version in the backports suite, from the local apt lists
# only, so a cached run needs no network. Refreshes the lists once if needed.
meta_version() {
	local v
	v=$(apt_cached "$cache/apt/madison-$META" apt-cache madison "$META" |
		awk -F' *[|] *' -v s="$SUITE/" 'index($3, s) { print $2; exit }')
	if [ -z "$v" ] && is_root; then
		"${APT[@]}" update >/dev/null 2>&1 || true
		v=$(apt_cached "$cache/apt/madison-$META" apt-cache madison "$META" |
			awk -F' *[|] *' -v s="$SUITE/" 'index($3, s) { print $2; exit }')
	fi
	[ -n "$v" ] || cannot "$META is not available from $SUITE (is $SUITE in the apt sources?)" \
		"echo 'deb http://deb.debian.org/debian $SUITE main' > /etc/apt/sources.list.d/$SUITE.list && ${APT[*]} update"
	echo "$v"
}

# Each module's depends= (from its .modinfo) must be loaded before it, and
# nothing outside MODULES may be needed: that is the whole of modules.dep here.
check_module_deps() {
	local dir=$1 m d seen=" "
	for m in "${MODULES[@]}"; do
		for d in $(tr '\0' '\n' <"$dir/$m.ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
			[[ "$seen" == *" ${d//_/-} "* || "$seen" == *" $d "* ]] ||
				die "$m.ko needs $d, which is not loaded before it"
		done
		seen+="$m "
	done
}

# Downloads the versioned image package the metapackage depends on and keeps
# only vmlinuz and the four modules, decompressed (busybox insmod uses
# init_module, which takes no .xz). The .debs (about 100 MiB) are not kept.
fetch_kernel() {
	local mver=$1 dir tmp dep ipkg iver m pats=()
	dir=$cache/kernel-$mver
	[ -f "$dir/done" ] && { echo "$dir"; return 0; }
	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	say "downloading $META=$mver from $SUITE" >&2
	(cd "$tmp" && apt_download "$META=$mver")
	dep=$(dpkg-deb -f "$tmp"/"$META"_*.deb Depends)
	# "linux-image-6.12.95+deb12-amd64 (= 6.12.95-1~bpo12+1)"
	ipkg=$(sed -n 's/^\(linux-image-[^ ,]*\) *(= *\([^)]*\)).*/\1/p' <<<"$dep")
	iver=$(sed -n 's/^\(linux-image-[^ ,]*\) *(= *\([^)]*\)).*/\2/p' <<<"$dep")
	if [ -z "$ipkg" ] || [ -z "$iver" ]; then
		die "cannot parse $META's Depends: $dep"
	fi
	say "downloading $ipkg=$iver" >&2
	(cd "$tmp" && apt_download "$ipkg=$iver")
	mkdir -p "$tmp/x"
	for m in "${MODULES[@]}" "${XEN_MODULES[@]}"; do
		pats+=("*/$m.ko.xz")
	done
	dpkg-deb --fsys-tarfile "$tmp/$ipkg"_*.deb |
		tar -x -C "$tmp/x" --wildcards './boot/vmlinuz-*' "${pats[@]}"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz"
	for m in "${MODULES[@]}"; do
		xz -dc "$(find "$tmp/x" -name "$m.ko.xz" | head -n1)" >"$dir/$m.ko"
	done
	check_module_deps "$dir"
	mkdir -p "$dir/xen"
	for m in "${XEN_MODULES[@]}"; do
		xz -dc "$(find "$tmp/x" -name "$m.ko.xz" | head -n1)" >"$dir/xen/$m.ko"
	done
	echo "$ipkg=$iver" >"$dir/package"
	touch "$dir/done"
	rm -rf "$tmp"
	trap - EXIT
	echo "$dir"
}

# The inner QEMU and what it loads: the binary, every library ldd lists (by the
# path ldd prints, the loader included) and the firmware, all dereferenced.
qemu_files() {
	local qemu dirs f d found
	qemu=$(command -v qemu-system-x86_64)
	echo "$qemu"
	ldd "$qemu" | grep -o '/[^ ]*' | sort -u
	mapfile -t dirs < <(qemu-system-x86_64 -L help)
	for f in "${FIRMWARE[@]}"; do
		found=
		for d in "${dirs[@]}"; do
			[ -e "$d/$f" ] && { found=$d/$f; break; }
		done
		[ -n "$found" ] || die "QEMU firmware $f not found in ${dirs[*]}"
		echo "$found"
	done
}

# Stages the base root and writes it as an uncompressed newc archive: under
# TCG the outer kernel unpacks gzip slower than QEMU's fw_cfg DMA copies the
# extra bytes. Measured: 65 MiB raw unpacks in 0.7 s; gzip -1 (20 MiB) took
# 1.0-1.4 s, zstd -19 (15 MiB) 0.9-1.7 s. A compressed base would also need
# padding to 4 bytes before the appended archive ("invalid magic at start
# of compressed archive").
build_base() {
	local kdir=$1 out=$2 root m f a
	root=$(mktemp -d "$cache/root.XXXXXX")
	trap 'rm -rf "$root"' EXIT
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,lane/modules}
	cp /bin/busybox "$root/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	for m in "${MODULES[@]}"; do
		cp "$kdir/$m.ko" "$root/lane/modules/$m.ko"
	done
	while read -r f; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done < <(qemu_files)
	# The loader finds libraries by the paths ldd printed; no ld.so.cache.
	(cd "$root" && find . | sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$root"
	trap - EXIT
}

main() {
	local mver kdir key base
	check_host_tools
	ensure_busybox
	mkdir -p "$cache"
	# Two lanes started at once (make -j) must not build the cache twice.
	exec 9>"$cache/lock"
	flock 9
	mver=$(meta_version)
	kdir=$(fetch_kernel "$mver")
	key=$({
		echo "$mver $(cat "$kdir/package")"
		echo "busybox-static $(pkg_version busybox-static)"
		echo "qemu-system-x86 $(pkg_version qemu-system-x86)"
		# By content: the script is reached by relative and absolute paths.
		sha256sum <"${BASH_SOURCE[0]}"
		sha256sum /bin/busybox "$kdir"/*.ko
		qemu_files | xargs sha256sum
	} | sha256sum | cut -c1-16)
	base=$cache/base-$key.cpio
	if [ ! -f "$base" ]; then
		say "building $(basename "$base")"
		rm -f "$cache"/base-*.cpio
		build_base "$kdir" "$base"
	fi
	printf 'KVM_LANE_KERNEL=%q\nKVM_LANE_BASE=%q\n' "$kdir/vmlinuz" "$base" >"$cache/base.env"
	say "ready: $(du -sh "$cache" | cut -f1) in $cache"
}

main "$@"
