#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/fuzz/run.sh: every fuzz target for a bounded time, as TAP lines
# ("ok - fuzz: TARGET (N runs)", "not ok - ..."). Each target first replays
# tests/fuzz/regressions/TARGET/ (inputs that once broke it), then fuzzes from
# tests/fuzz/corpus/TARGET/ and the corpus earlier runs grew in
# build/fuzz/corpus/TARGET/. A crash leaves its input in build/fuzz/artifacts/TARGET/.
#
# usage: tests/fuzz/run.sh [--seconds N] [--only TARGET[,TARGET...]] [--list]
#   --seconds N  fuzzing time per target (default 60; make fuzz, FUZZ_SECONDS=N)
#
# libFuzzer targets (built by `make fuzz_build` into build/fuzz/): cmdline,
# madt, acpi, mptable, cpuset, json. Python targets (tests/fuzz/fuzz_tools.py):
# results, console, presets.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

c_targets=(cmdline madt acpi mptable cpuset json)
py_targets=(results console presets kvm-trace)
all=("${c_targets[@]}" "${py_targets[@]}")
seconds=60 only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds) seconds=${2:?}; shift ;;
	--only) only=${2:?}; shift ;;
	--list) printf '%s\n' "${all[@]}"; exit 0 ;;
	-h | --help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "tests/fuzz/run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
# libFuzzer's -max_total_time takes whole seconds
case "$seconds" in '' | *[!0-9]* | 0)
	echo "tests/fuzz/run.sh: --seconds takes a whole number above 0, not '$seconds'" >&2; exit 2 ;;
esac
targets=("${all[@]}")
if [ -n "$only" ]; then
	IFS=, read -r -a targets <<<"$only"
	for t in "${targets[@]}"; do
		case " ${all[*]} " in *" $t "*) ;; *)
			echo "tests/fuzz/run.sh: unknown target '$t' (targets: ${all[*]})" >&2; exit 2 ;;
		esac
	done
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

# What a failed run said, as TAP comments: the sanitizer's or the assertion's
# report and its stack (libFuzzer), or the end of the log (a Python traceback).
show_log() {
	if grep -q -E '^==[0-9]+==|runtime error:|property broken:' "$log"; then
		grep -E '==ERROR|runtime error:|property broken:|^ +#[0-9]+ 0x|^SUMMARY:' "$log"
	else
		tail -n 25 "$log"
	fi | head -n 30 | sed 's/^/#   /'
}

# Inputs that once broke the target must not break it again.
replay() { # target command...
	local t=$1 dir=tests/fuzz/regressions/$1 files
	shift
	[ -d "$dir" ] || return 0
	mapfile -t files < <(find "$dir" -type f | sort)
	[ ${#files[@]} -gt 0 ] || return 0
	if "$@" "${files[@]}" >"$log" 2>&1; then
		echo "ok - fuzz: $t: ${#files[@]} regression inputs"
	else
		echo "not ok - fuzz: $t: a regression input breaks it again"
		show_log
		return 1
	fi
}

fuzz_c() { # target
	local t=$1 bin=build/fuzz/fuzz_$1 work=build/fuzz/corpus/$1 art=build/fuzz/artifacts/$1
	local dict=() runs done_line
	if [ ! -x "$bin" ]; then
		echo "not ok - fuzz: $t (no $bin: run make fuzz_build)"
		return 1
	fi
	replay "$t" "$bin" || return 1
	mkdir -p "$work" "$art"
	# A dictionary the build generated (make, tools/fuzz_words.py) first.
	if [ -f "build/fuzz/$t.dict" ]; then dict=(-dict="build/fuzz/$t.dict")
	elif [ -f "tests/fuzz/$t.dict" ]; then dict=(-dict="tests/fuzz/$t.dict")
	fi
	if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$art/" "${dict[@]}" "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
		echo "not ok - fuzz: $t (input saved as $(sed -n 's/.*Test unit written to //p' "$log" |
			tail -n1))"
		show_log
		return 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1)
	echo "# fuzz: $t: $(awk '{ for (i = 1; i < NF; i++) if ($i == "exec/s:") print $(i + 1) }' \
		<<<"$done_line") runs/s, cov $(awk '{ print $4 }' <<<"$done_line") edges, ft \
$(awk '{ print $6 }' <<<"$done_line"), corpus $(awk '{ print $8 }' <<<"$done_line")"
	echo "ok - fuzz: $t (${runs:-?} runs)"
}

fuzz_py() { # target
	local t=$1 runs
	replay "$t" python3 tests/fuzz/fuzz_tools.py "$t" --replay || return 1
	if ! python3 tests/fuzz/fuzz_tools.py "$t" --seconds "$seconds" \
		--artifacts build/fuzz/artifacts >"$log" 2>&1; then
		echo "not ok - fuzz: $t"
		show_log
		return 1
	fi
	runs=$(sed -n "s/^$t: \([0-9]*\) runs in .*/\1/p" "$log")
	echo "# fuzz: $(tail -n1 "$log")"
	echo "ok - fuzz: $t (${runs:-?} runs)"
}

for t in "${targets[@]}"; do
	case " ${c_targets[*]} " in
	*" $t "*) fuzz_c "$t" || failed=1 ;;
	*) fuzz_py "$t" || failed=1 ;;
	esac
done
exit $failed
