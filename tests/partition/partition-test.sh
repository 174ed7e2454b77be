#!/usr/bin/env bash
# Partitioned runs give the one-process run's results (issue 21): a RoCEv2 k=4 fat tree
# with a permutation and an incast (PFC pauses, DCQCN's CNPs), run by partition-run alone
# and under `mpirun -np N` on ns-3's distributed simulator, for N = 1, 2 and 4 ranks with
# the granted-time-window engine and N = 2 with null messages. The flows' FCTs (to the
# picosecond) and the PFC and CNP totals summed over the ranks must equal the alone run's.
set -euo pipefail
run=$1
if ! command -v mpirun >/dev/null; then
  echo "FABEMU-SKIP: no mpirun (openmpi-bin; scripts/install-deps installs it)"
  exit 0
fi
if [[ "$("$run" --engine gtw --probe 2>&1 || true)" == *"no ns-3 mpi module"* ]]; then
  echo "FABEMU-SKIP: this build has no ns-3 mpi module (scripts/install-deps, then rebuild)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpi=(mpirun --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
((EUID == 0)) && mpi+=(--allow-run-as-root)

# FLOWS FILE: the sorted flow lines; TOTAL FILE COLUMN: a counter summed over the ranks.
flows() { grep '^flow ' "$1" | sort || true; }
total() { grep '^rank ' "$1" | sed -E "s/.* ([0-9]+) $2,.*/\1/" | awk '{s += $1} END {print s + 0}'; }

"$run" --engine none >"$tmp/alone"
flows "$tmp/alone" >"$tmp/alone.flows"
n=$(wc -l <"$tmp/alone.flows")
pfc=$(total "$tmp/alone" "pfc frames")
cnps=$(total "$tmp/alone" cnps)
echo "alone: $n flows, $pfc PFC frames, $cnps CNPs"
# The check is worth something only if the run pauses, marks and completes its flows.
[[ $n -eq 24 ]] || { echo "FAIL: alone: $n flows, not 24"; exit 1; }
grep -q ' pending \| failed ' "$tmp/alone.flows" && { echo "FAIL: a flow did not complete"; exit 1; }
((pfc > 0 && cnps > 0)) || { echo "FAIL: alone: no PFC frame or no CNP"; exit 1; }

status=0
for case in "1 gtw" "2 gtw" "4 gtw" "2 null"; do
  read -r np engine <<<"$case"
  out="$tmp/np$np-$engine"
  start=$(date +%s.%N)
  "${mpi[@]}" -np "$np" "$run" --engine "$engine" >"$out" 2>"$out.err" || {
    echo "FAIL: -np $np $engine exited $?"; cat "$out.err"; status=1; continue; }
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
  flows "$out" >"$out.flows"
  ranks=$(grep -c '^rank ' "$out" || true)
  echo "-np $np $engine: $(wc -l <"$out.flows") flows, $(total "$out" "pfc frames") PFC frames," \
    "$(total "$out" cnps) CNPs, $(grep -m1 -o '[0-9]* links cross' "$out"), ${took}s"
  if ! diff "$tmp/alone.flows" "$out.flows" >"$out.diff"; then
    echo "FAIL: -np $np $engine: the flows differ from the one-process run's:"
    head -20 "$out.diff"
    status=1
  fi
  [[ $ranks -eq $np ]] || { echo "FAIL: $ranks ranks reported, not $np"; status=1; }
  [[ $(total "$out" "pfc frames") -eq $pfc ]] || { echo "FAIL: PFC frames differ"; status=1; }
  [[ $(total "$out" cnps) -eq $cnps ]] || { echo "FAIL: CNPs differ"; status=1; }
  if ((np > 1)); then
    # Every rank sent flows of its own, and links crossed between them.
    if grep '^rank ' "$out" | grep -q ': 0 flows sent'; then
      echo "FAIL: a rank sent no flow"; status=1
    fi
    grep -q ' 0 links cross' "$out" && { echo "FAIL: no link crosses ranks"; status=1; }
  fi
done
exit $status
