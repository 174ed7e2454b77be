#!/usr/bin/env bash
# `fabemu run FILE --ranks N` (issue 21): the same scenario on 1 rank (`--ranks 1`: one
# process, ties between events broken as the ranks break them) and
# split among 2 and 4 ranks of ns-3's distributed simulator (granted time window), on 2
# with null messages, and under `mpirun -np 2 fabemu run` directly, must give the same
# results folder: summary.json (wall time and the partition line aside), every CSV the
# ranks write in part, and the pcaps, byte for byte. Bad input is refused before
# anything runs.
#   fabemu-ranks-test.sh FABEMU FILE KEYS [--determinism-only]
# KEYS: the summary totals (comma-separated) that must be above 0 for the check to be
# worth something (RoCEv2: PFC pauses and CNPs; InfiniBand: credit stalls and BECNs).
# --determinism-only: the comparison alone, without the RoCEv2 file's further cases.
set -euo pipefail
fabemu=$1
file=$2
keys=$3
only=${4:-}
if ! command -v mpirun >/dev/null; then
  echo "FABEMU-SKIP: no mpirun (openmpi-bin; scripts/install-deps installs it)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The ranks other than 0 work in TMPDIR: here, so that a folder left behind shows.
export TMPDIR=$tmp/ranks
mkdir "$TMPDIR"
if [[ "$("$fabemu" run "$file" --ranks 2 --out "$tmp/probe" --set duration=1ns 2>&1 || true)" == \
  *"no ns-3 mpi module"* ]]; then
  echo "FABEMU-SKIP: this build has no ns-3 mpi module (scripts/install-deps, then rebuild)"
  exit 0
fi
status=0
fail() { echo "FAIL: $*"; status=1; }

# The parts of summary.json that must agree: all but the wall time and the partition.
summary() {
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); s.pop("wall_time_s"); s.pop("partition", None); print(json.dumps(s, indent=1, sort_keys=True))' "$1/summary.json"
}

if ! "$fabemu" run "$file" --quiet --ranks 1 --out "$tmp/one"; then
  echo "FAIL: the one-rank run failed"
  exit 1
fi
summary "$tmp/one" >"$tmp/one.summary"
completed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["flow_stats"]["completed"])' "$tmp/one/summary.json")
counts=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print(" ".join(f"{k} {t[k]}," for k in sys.argv[2].split(",")))' "$tmp/one/summary.json" "$keys")
echo "one rank: $completed flows completed, ${counts%,}"
# Worth something only if the run completes its flows and the fabric reacts (pauses,
# marks, stalls).
[[ $completed -eq 24 ]] || fail "one rank: $completed flows completed, not 24"
for k in ${keys//,/ }; do
  [[ $counts == *"$k 0,"* ]] && fail "one rank: $k is 0"
done

mpi=(mpirun --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none)
((EUID == 0)) && mpi+=(--allow-run-as-root)
for case in "2 gtw" "4 gtw" "2 null" "2 direct" "2 direct-null"; do
  read -r n engine <<<"$case"
  out="$tmp/r$n-$engine"
  start=$(date +%s.%N)
  if [[ $engine == direct* ]]; then
    own=gtw
    [[ $engine == direct-null ]] && own=null
    "${mpi[@]}" -np "$n" "$fabemu" run "$file" --quiet --engine "$own" --out "$out" \
      >"$out.log" 2>&1 || { fail "mpirun -np $n fabemu run exited $?"; cat "$out.log"; continue; }
    grep -q "\"engine\": \"$own\"" "$out/summary.json" ||
      fail "mpirun -np $n fabemu run --engine $own: summary.json names another engine"
  else
    "$fabemu" run "$file" --quiet --ranks "$n" --engine "$engine" --out "$out" >"$out.log" 2>&1 ||
      { fail "--ranks $n --engine $engine exited $?"; cat "$out.log"; continue; }
  fi
  took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
  summary "$out" >"$out.summary"
  same=ok
  if ! diff "$tmp/one.summary" "$out.summary" >"$out.diff"; then
    fail "$n ranks ($engine): summary.json differs from one rank's:"; head -30 "$out.diff"; same=
  fi
  for f in fct.csv fct.txt throughput.csv pfc.csv pfc.txt queue.csv rate.csv credit-stalls.csv \
    h0.pcap h15.pcap; do
    [[ -e $tmp/one/$f || -e $out/$f ]] || continue # not this fabric's
    if ! cmp -s "$tmp/one/$f" "$out/$f"; then
      fail "$n ranks ($engine): $f differs from one rank's"
      diff <(cat "$tmp/one/$f") <(cat "$out/$f") | head -10 || true
      same=
    fi
  done
  grep -q "\"ranks\": $n" "$out/summary.json" || fail "$n ranks: summary.json does not say so"
  [[ -z $(ls "$TMPDIR") ]] || fail "a rank left its folder in TMPDIR: $(ls "$TMPDIR")"
  echo "$n ranks ($engine): ${same:-DIFFERENT}, ${took}s"
done

[[ $only == --determinism-only ]] && exit $status

# Every flow's source on rank 0: rank 0 sees all its flows end, rank 1 none; both must
# stop together, on either engine, with the one-rank results.
few=${file%/*}/one-sender-rank.yaml
"$fabemu" run "$few" --quiet --ranks 1 --out "$tmp/few1" || fail "one-sender-rank: --ranks 1 failed"
for engine in gtw null; do
  if timeout 120 "$fabemu" run "$few" --quiet --ranks 2 --engine "$engine" --out "$tmp/few-$engine" \
    >"$tmp/few.log" 2>&1; then
    diff <(summary "$tmp/few1") <(summary "$tmp/few-$engine") >/dev/null ||
      fail "one-sender-rank, 2 ranks ($engine): summary.json differs from one rank's"
    echo "one-sender-rank, 2 ranks ($engine): ok"
  else
    fail "one-sender-rank, 2 ranks ($engine): exited $? (124: hung)"; cat "$tmp/few.log"
  fi
done

# A rank killed mid-run (as a fatal MPI error ends them): the launch fails, says so, and
# leaves no folder of its ranks behind.
"$fabemu" run "$file" --quiet --ranks 2 --set 'workloads=[{type: permutation, hosts: all, bytes: 20MB}]' \
  --out "$tmp/killed" >"$tmp/killed.log" 2>&1 &
launcher=$!
rank=
for _ in $(seq 100); do
  rank=$(pgrep -f -- "--engine gtw --out $tmp/killed" | head -1 || true)
  [[ -n $rank && -n $(ls "$TMPDIR") ]] && break
  sleep 0.1
done
if [[ -z $rank ]]; then
  fail "a rank of the run to kill never started"
else
  sleep 0.5
  kill -9 "$rank"
  code=0
  wait "$launcher" || code=$?
  ((code != 0)) || fail "a run with a rank killed exited 0"
  left=$(ls "$TMPDIR")
  [[ -z $left ]] || fail "a killed rank's run left in TMPDIR: $left"
  echo "a rank killed: exit $code, left in TMPDIR: ${left:-nothing}"
fi

# A plain run (ns-3's map scheduler) breaks ties by the order events were scheduled in:
# said, not required.
"$fabemu" run "$file" --quiet --out "$tmp/plain" || fail "the plain run exited $?"
summary "$tmp/plain" >"$tmp/plain.summary"
if diff -q "$tmp/one.summary" "$tmp/plain.summary" >/dev/null; then
  echo "a plain run (map scheduler) gives the same summary.json"
else
  echo "a plain run (map scheduler) gives another summary.json: ties broken otherwise"
fi

# Bad input: a clear error and exit 2, before anything runs.
expect_refusal() {
  local why=$1; shift
  local code=0
  "$fabemu" run "$file" --quiet --out "$tmp/bad" "$@" >"$tmp/bad.log" 2>&1 || code=$?
  if [[ $code -ne 2 ]] || ! grep -q -- "$why" "$tmp/bad.log"; then
    fail "$* gave exit $code, not 2 with '$why':"; cat "$tmp/bad.log"
  fi
  [[ ! -e $tmp/bad ]] || fail "$* left a results folder"
}
expect_refusal "8 partitionable switches" --ranks 9
expect_refusal "cross between ranks with no delay" --ranks 2 --set topology.uplink.delay=0ns
code=0
"$fabemu" run "${file%/tests/*}/scenarios/iwarp-vs-roce.yaml" --set fabric.type=iwarp --ranks 2 \
  --out "$tmp/bad" \
  >"$tmp/bad.log" 2>&1 || code=$?
[[ $code -eq 2 ]] && grep -q "InfiniBand (infiniband) only" "$tmp/bad.log" ||
  { fail "iWARP on 2 ranks gave exit $code:"; cat "$tmp/bad.log"; }
expect_refusal "did you mean 's1'" --ranks 2 --set 'topology.partition={s1x: 1}'
expect_refusal "pinned to rank 3 of a run with 2 ranks" --ranks 2 --set 'topology.partition={s0: 3}'
# An earlier run's folder that is not a results folder: refused before mpirun starts.
mkdir -p "$tmp/taken" && touch "$tmp/taken/mine.txt"
code=0
"$fabemu" run "$file" --quiet --ranks 2 --out "$tmp/taken" >"$tmp/bad.log" 2>&1 || code=$?
[[ $code -eq 2 && -e $tmp/taken/mine.txt ]] || { fail "--out over another folder gave exit $code"; cat "$tmp/bad.log"; }
grep -q "mpirun\|MPI" "$tmp/bad.log" && fail "--out over another folder reached mpirun"
[[ -z $(ls "$TMPDIR") ]] || fail "a refused run left a folder in TMPDIR: $(ls "$TMPDIR")"
exit $status
