#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make lint: cppcheck and clang-tidy over every C file, pyflakes over the
# Python, shellcheck over the shell, and the import rules
# of docs/architecture.md (tools/check_imports.py, which also proves it would
# catch a planted violation of each rule), reported as TAP.
# clang-tidy runs one file per call: clang-tidy 14 reports false
# valist.Uninitialized findings on va_list users that are not the first
# file of a call (LLVM bug 41311).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

# Kernel files are freestanding; host tests and tools are hosted.
mapfile -t kernel_c < <(git ls-files --cached --others --exclude-standard \
	'boot/*.c' 'kernel/*.c' 'ipi/*.c' 'apic/*.c' 'hyperv/*.c' 'kvm/*.c' 'xen/*.c' 'harness/*.c' \
	'suite/*.c' 'bench/*.c' 'lib/*.c')
mapfile -t host_c < <(git ls-files --cached --others --exclude-standard 'tests/*.c' 'tools/*.c' 'host/*.c')

# What the sources include from build/: nasm's C layouts, and the fuzz
# target's words, generated from the guest's registries (tools/fuzz_words.py).
make -s build/asm-offsets.inc build/fuzz/cmdline_words.h >/dev/null ||
	{ echo "not ok - lint: build prerequisites"; exit 1; }

rc=0
if out=$(cppcheck --enable=warning,style,performance,portability --error-exitcode=1 -q \
	--inline-suppr --std=c11 -I. -D__x86_64__ --suppress=missingIncludeSystem \
	"${kernel_c[@]}" "${host_c[@]}" 2>&1) && [ -z "$out" ]; then
	echo "ok - lint: cppcheck (${#kernel_c[@]} kernel/lib files, ${#host_c[@]} host files)"
else
	echo "not ok - lint: cppcheck"
	echo "$out" | sed 's/^/#   /' | head -n 60
	rc=1
fi

kflags=(-std=gnu11 -ffreestanding -mno-red-zone -mgeneral-regs-only -I. -DIPIBENCH_VERSION='"lint"')
hflags=(-std=gnu11 -I.)
# The static analyzer (clang-analyzer-*, some 95% of clang-tidy's time) on
# the kernel's own code only: lib/, the host's unit tests and the fuzz
# targets run under AddressSanitizer and UndefinedBehaviorSanitizer every
# time the suite runs (Makefile: lib/ is built into every unit test and
# fuzz target, its parsers fuzzed), which find at run time what the
# analyzer guesses at statically; the rest of the kernel runs under
# neither. Their other checks stay. (lib/'s 25 files took some 25 of the
# suite's 800 CPU seconds.)
hchecks='--checks=-clang-analyzer-*'
# One clang-tidy per file, as many at once as there are CPUs (its analyzer
# takes about a second a file); each one's output in $tmp/N, reported in
# file order.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tidy() { # N file [clang-tidy option] -- flags...
	local n=$1 f=$2 opts=()
	shift 2
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	clang-tidy --quiet "${opts[@]}" "$f" -- "$@" >"$tmp/$n" 2>&1 || echo "$f" >"$tmp/$n.bad"
}
files=("${kernel_c[@]}" "${host_c[@]}") cpus=$(nproc)
for n in "${!files[@]}"; do
	if [ "$n" -ge ${#kernel_c[@]} ]; then tidy "$n" "${files[$n]}" "$hchecks" -- "${hflags[@]}" &
	elif [[ "${files[$n]}" == lib/* ]]; then tidy "$n" "${files[$n]}" "$hchecks" -- "${kflags[@]}" &
	else tidy "$n" "${files[$n]}" -- "${kflags[@]}" &
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$cpus" ]; do wait -n; done
done
wait
bad=()
for n in "${!files[@]}"; do
	[ -e "$tmp/$n.bad" ] || continue
	bad+=("${files[$n]}")
	grep -E 'warning:|error:' "$tmp/$n" | sed 's/^/#   /' | head -n 20
done
if [ ${#bad[@]} -eq 0 ]; then
	echo "ok - lint: clang-tidy ($(( ${#kernel_c[@]} + ${#host_c[@]} )) files; its analyzer on the kernel's, lib/ aside)"
else
	echo "not ok - lint: clang-tidy (${#bad[@]} files: ${bad[*]})"
	rc=1
fi

# The host's Python and the lanes' shell: pyflakes (names, imports, unused
# code) and shellcheck at its default severity, every finding an error.
# Files are found by name or by their #! line (tests/run, .ci/run). Each
# tool first shows it still fails on a planted mistake, so that a check
# that passes because it read nothing cannot pass here.
by_shebang() { # pattern ext: tracked files named *.ext or starting #!...pattern
	git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
		case $f in
		*."$2") echo "$f" ;;
		*.*) ;;
		*) [ -f "$f" ] && head -n 1 "$f" | grep -qE "^#!.*$1" && echo "$f" ;;
		esac
	done
}
mapfile -t py_files < <(by_shebang python py)
mapfile -t sh_files < <(by_shebang '(ba)?sh' sh)
printf 'import os\n' >"$tmp/planted.py"
printf '#!/bin/sh\nnever_read=1\n' >"$tmp/planted.sh"
for tool in pyflakes3 shellcheck; do
	case $tool in
	pyflakes3) files=("${py_files[@]}") planted=$tmp/planted.py ;;
	shellcheck) files=("${sh_files[@]}") planted=$tmp/planted.sh ;;
	esac
	if $tool "$planted" >/dev/null 2>&1; then
		echo "not ok - lint: $tool passes a planted mistake ($planted)"
		rc=1
	elif out=$($tool "${files[@]}" 2>&1); then
		echo "ok - lint: $tool (${#files[@]} files)"
	else
		echo "not ok - lint: $tool"
		echo "$out" | sed 's/^/#   /' | head -n 40
		rc=1
	fi
done

python3 tools/check_imports.py || rc=1
python3 tools/check_imports.py --self-test || rc=1
exit $rc
