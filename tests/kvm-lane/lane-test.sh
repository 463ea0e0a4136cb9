#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kvm-lane group of tests/run (and `make check-kvm`): prepares the lane
# (a SKIP line with the reason when that is impossible here), then three
# passes of the lane, each judged like a boot test (judge.py):
#   suite    every lane preset, the correctness suite on every backend;
#   figures  the presets that offer the paravirtual paths, the suite and a
#            short send-cost on every backend: every offered backend must
#            produce figures (the flush calls are proven by the suite's
#            hv-flush checks; the flush benchmark is left out here because
#            its native shootdown, twice in ~20 lane runs, ended in a guest
#            reset under nested KVM that plain TCG never shows: see the
#            issue notes);
#   negative debug=corrupt-vpset must turn hv-xmm into a FAILURE naming the
#            Ex call: proof that the lane can fail.
# Nested KVM under TCG costs ~100k cycles an exit, so the loops are short.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

base=build/kvm-lane/out
prep=$(tests/kvm-lane/prepare.sh 2>&1)
case $? in
0) ;;
77) echo "ok - kvm-lane # SKIP cannot prepare: $(echo "$prep" | tail -n 3 | tr '\n' ' ')"
    exit 0 ;;
*) echo "not ok - kvm-lane: prepare failed"
   echo "$prep" | tail -n 10 | sed 's/^/#   /'
   exit 1 ;;
esac
make -s all >/dev/null || { echo "not ok - kvm-lane: build"; exit 1; }
read -r -a all <<<"$(sed -n 's/^readonly LANE_PRESETS=(\(.*\))$/\1/p' tests/kvm-lane/lane.sh)"

# pass NAME PRESETS APPEND [judge options...]
pass() {
	local name=$1 presets=$2 append=$3 out=$base/$1 start
	shift 3
	rm -rf "$out"
	mkdir -p "$out"
	start=$(date +%s)
	if ! tests/kvm-lane/lane.sh --image build/ipibench.elf32 --presets "$presets" \
		--append "$append" --inner-timeout 240 --out "$out" >"$out/lane.txt" 2>&1; then
		echo "not ok - kvm-lane: $name: the outer VM did not run every preset"
		tail -n 15 "$out/lane.txt" | sed 's/^/#   /'
		return 1
	fi
	echo "# kvm-lane: $name: $presets in $(($(date +%s) - start)) s"
	python3 tests/kvm-lane/judge.py --label "$name" "$@" "$out" ${presets//,/ }
}

rc=0
pass suite "$(IFS=,; echo "${all[*]}")" "plan=check" || rc=1
pass figures hv-xmm,hv-vapic,kvm-pv \
	"plan=default bench=send-cost iters=3 warmup=1 budget=1" || rc=1
pass negative hv-xmm "plan=check backends=hv-ipi-ex-xmm debug=corrupt-vpset" \
	--expect-failure "HvCallSendSyntheticClusterIpiEx \(XMM-fast\) returned INVALID_HYPERCALL_INPUT" ||
	rc=1
exit $rc
