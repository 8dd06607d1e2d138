#!/usr/bin/env bash
# Instruction counts of N light playouts on SIZExSIZE (load-independent; needs valgrind).
# Usage: tools/callgrind_playouts.sh [SIZE] [N]    e.g. tools/callgrind_playouts.sh 9 1000
# Prints the functions of the board and playout modules with their instruction counts.
set -euo pipefail
size=${1:-9}
n=${2:-1000}
py=$(python3 -c 'import sys; print(sys.executable)')   # the real binary, not a pyenv shim
out=$(mktemp /tmp/callgrind.XXXXXX)
valgrind --tool=callgrind --callgrind-out-file="$out" "$py" -c \
    "from gammago.playout import bench_light; bench_light($size, $n)" >/dev/null 2>&1
callgrind_annotate "$out" | grep -E "board\.c|playout\.c" | grep -v "=>" | head -20
echo "(instructions over $n playouts on ${size}x${size}; divide by $n for one playout)"
rm -f "$out"
