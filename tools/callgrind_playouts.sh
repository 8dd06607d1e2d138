#!/usr/bin/env bash
# Instruction counts of N playouts on SIZExSIZE (load-independent; needs valgrind).
# Usage: tools/callgrind_playouts.sh [SIZE] [N] [light|gamma] [LIGHT_AFTER] [GAMMAPOLICY_ARGS]
#   e.g. tools/callgrind_playouts.sh 9 1000          (light playouts)
#        tools/callgrind_playouts.sh 19 30 gamma     (gamma playouts, the shipped gammas)
#        tools/callgrind_playouts.sh 9 300 gamma 30  (gamma for 30 moves, then the light tail)
#        tools/callgrind_playouts.sh 9 300 gamma 5 tail=7   (shapes, the lone-stone and seki rules)
# Only the playout loop is counted (--toggle-collect on playout_run: loading the gammas and
# Python start-up are left out). Prints the functions of the board, playout, features and
# rollout modules with their instruction counts, then the total and the moves played.
set -euo pipefail
size=${1:-9}
n=${2:-1000}
kind=${3:-light}
light_after=${4:-0}
policy_args=${5:-}                                    # more GammaPolicy keywords, e.g. tail=7 (gammago.rollout.tail.RULES)
py=$(python3 -c 'import sys; print(sys.executable)')   # the real binary, not a pyenv shim
out=$(mktemp /tmp/callgrind.XXXXXX)
movesf=$(mktemp /tmp/callgrind-moves.XXXXXX)
if [ "$kind" = gamma ]; then
    code="from gammago import rollout; g = rollout.GammaPolicy(light_after=$light_after${policy_args:+, $policy_args}); t, m = rollout.bench_gamma($size, $n, 1, g); open('$movesf', 'w').write(str(m))"
else
    code="from gammago.rollout.playout import bench_light; t, m = bench_light($size, $n); open('$movesf', 'w').write(str(m))"
fi
valgrind --tool=callgrind --callgrind-out-file="$out" \
    --toggle-collect=__pyx_f_7gammago_7playout_playout_run "$py" -c "$code" >/dev/null 2>&1
callgrind_annotate --inclusive=no "$out" | grep -E "(board|playout|features|rollout|tail|tactics)\.c" \
    | grep -v "=>" | head -25
total=$(callgrind_annotate "$out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
moves=$(cat "$movesf")
echo "total $total instructions over $n $kind playouts on ${size}x${size}, $moves moves:" \
     "$((total / n)) per playout, $((total / moves)) per move"
rm -f "$out" "$movesf"
