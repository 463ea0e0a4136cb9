#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kvm-lane group of tests/run (and `make check-kvm`): prepares the lane
# (a SKIP line with the reason when that is impossible here), runs every lane
# preset with the plan in LANE_APPEND (default: the whole default plan),
# and judges each preset like a boot test (judge.py).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

out=build/kvm-lane/out
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
read -r -a presets <<<"$(sed -n 's/^readonly LANE_PRESETS=(\(.*\))$/\1/p' tests/kvm-lane/lane.sh)"
rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)
if ! tests/kvm-lane/lane.sh --image build/ipibench.elf32 \
	--append "${LANE_APPEND:-plan=default}" --out "$out" >"$out/lane.txt" 2>&1; then
	echo "not ok - kvm-lane: the outer VM did not run every preset"
	tail -n 15 "$out/lane.txt" | sed 's/^/#   /'
	exit 1
fi
echo "# kvm-lane: ${#presets[@]} presets in $(($(date +%s) - start)) s"
python3 tests/kvm-lane/judge.py "$out" "${presets[@]}"
