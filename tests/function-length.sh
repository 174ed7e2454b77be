#!/usr/bin/env bash
# No function in emulator/ or scenarios/src longer than 150 lines (issue 15), and
# the check itself finds one that is: a planted 151-line function must fail it.
set -euo pipefail
top=$1
check="$top/scripts/check-function-length"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo 'int'
  echo 'Long(int x)'
  echo '{'
  for i in $(seq 151); do echo "    x += $i;"; done
  echo '}'
  echo 'class A'
  echo '{'
  echo '    int Member() const'
  echo '    {'
  for i in $(seq 151); do echo "        x += $i;"; done
  echo '    }'
  echo '};'
} > "$tmp/planted.cc"
if out=$("$check" "$tmp" 2>&1); then
  echo "FAIL: the planted functions passed: $out"; exit 1
fi
grep -q "planted.cc:3: Long: 151 lines" <<<"$out" || { echo "FAIL: $out"; exit 1; }
grep -q "Member: 151 lines" <<<"$out" || { echo "FAIL: $out"; exit 1; }
"$check" "$top/emulator" "$top/scenarios/src"
