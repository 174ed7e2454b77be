#!/usr/bin/env bash
# fabemu sweep --slurm through a real Slurm: a one-node cluster on this machine
# (scripts/slurm-local: munge, slurmctld, slurmd), stopped again whatever happens.
# Usage: sweep-slurm-test.sh FABEMU SOURCE_DIR
set -euo pipefail
fabemu=$1
top=$2
skip() {
  echo "FABEMU-SKIP: $*"
  exit 0
}
((EUID == 0)) || skip "needs root: slurmd starts the jobs (CI runs it as root)"

work=$(mktemp -d /tmp/fabemu-slurm-XXXXXX)
cleanup() {
  "$top/scripts/slurm-local" stop "$work/cluster" || true
  rm -rf "$work"
}
trap cleanup EXIT
# If this script is killed outright (a ctest timeout), no trap runs: a watchdog in a
# session of its own stops the daemons when it sees the script gone.
WATCH=$$ WORK=$work TOP=$top setsid bash -c \
  'while kill -0 "$WATCH" 2>/dev/null; do sleep 2; done
   "$TOP/scripts/slurm-local" stop "$WORK/cluster"; rm -rf "$WORK"' </dev/null >/dev/null 2>&1 &
rc=0
"$top/scripts/slurm-local" start "$work/cluster" || rc=$?
((rc != 77)) || skip "Slurm or munge is not installed (scripts/install-deps installs them)"
((rc == 0)) || exit "$rc"
export SLURM_CONF=$work/cluster/slurm.conf

cat >"$work/incast.yaml" <<'YAML'
name: slurm-incast
duration: 5ms
fabric: {type: roce, mtu: 1024, pfc: true, cc: none}
topology: {builder: star, hosts: 9, link: {rate: 100Gbps}}
workloads:
  - {type: incast, dst: h0, srcs: all, bytes: 2MB, start: 10us}
YAML
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A sweep through Slurm, waited for: one array task per run, every run in the table.
out=$("$fabemu" sweep "$work/incast.yaml" --grid fabric.pfc=true,false --seeds 2 --slurm \
  --out "$work/s")
echo "$out"
grep -q "submitted Slurm job [0-9]* (4 array task(s))" <<<"$out" || fail "no job array submitted"
[[ $(ls "$work/s"/slurm-*.out | wc -l) == 4 ]] || fail "not 4 array tasks' outputs"
csv=$work/s/sweep.csv
[[ $(tail -n +2 "$csv" | wc -l) == 4 ]] || fail "sweep.csv has not 4 rows"
python3 - "$csv" <<'PY' || fail "sweep.csv's rows are not their combinations"
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    pauses, drops = int(row["pfc_pause_frames"]), int(row["drops"])
    assert row["exit"] == "0", row
    # 2MB from 8 senders fills the port: PFC pauses it, without PFC the switch drops.
    if row["fabric.pfc"] == "true":
        assert pauses > 0 and drops == 0, row
    else:
        assert drops > 0 and pauses == 0, row
PY

# The same command again: every run finished, nothing is submitted.
out=$("$fabemu" sweep "$work/incast.yaml" --grid fabric.pfc=true,false --seeds 2 --slurm \
  --out "$work/s")
grep -q "resumed: 4 finished before" <<<"$out" || fail "not resumed: $out"
! grep -q submitted <<<"$out" || fail "resubmitted finished runs"

# Two runs lost (indexes 1 and 3): resubmitted as an array of two, each task mapped to
# its run through the task list.
rm -rf "$work/s/001-"* "$work/s/003-"*
out=$("$fabemu" sweep "$work/incast.yaml" --grid fabric.pfc=true,false --seeds 2 --slurm \
  --out "$work/s")
echo "$out"
grep -q "resumed: 2 finished before" <<<"$out" || fail "not resumed: $out"
grep -q "(2 array task(s))" <<<"$out" || fail "not 2 tasks resubmitted"
[[ $(cat "$work/s/slurm-tasks-0.txt" | tr '\n' ' ') == "1 3 " ]] || fail "task list $(cat "$work/s/slurm-tasks-0.txt")"
[[ -f "$work/s/001-pfc=true,seed=2.done" && -f "$work/s/003-pfc=false,seed=2.done" ]] ||
  fail "runs 1 and 3 did not run again"

# --no-wait: submitted, then collected when Slurm is done.
out=$("$fabemu" sweep "$work/incast.yaml" --grid fabric.pfc=true,false --slurm --no-wait \
  --out "$work/n")
echo "$out"
grep -q "fabemu sweep --collect" <<<"$out" || fail "--no-wait does not say how to collect"
job=$(sed -n 's/.*submitted Slurm job \([0-9]*\).*/\1/p' <<<"$out")
for _ in $(seq 120); do
  [[ -z $(squeue -h -j "$job" 2>/dev/null) ]] && break
  sleep 0.5
done
"$fabemu" sweep --collect "$work/n" || fail "--collect exited $?"
[[ $(tail -n +2 "$work/n/sweep.csv" | wc -l) == 2 ]] || fail "--collect: not 2 rows"
# Shell metacharacters in the sweep's folder reach sbatch, the job script and the
# task's fabemu as data, never as shell syntax: quotes, ;, $(...), backquotes, &, |.
# (No %: Slurm itself expands it in --output.) A shell would make the canary.
canary=$work/pwned
odd="$work/o 'a\"b;touch $canary;\$(touch $canary)\`touch $canary\` & |"
out=$("$fabemu" sweep "$work/incast.yaml" --grid fabric.pfc=true,false --slurm --out "$odd")
echo "$out"
[[ $(tail -n +2 "$odd/sweep.csv" | wc -l) == 2 ]] || fail "odd folder: not 2 rows"
[[ ! -e $canary ]] || fail "a shell ran part of the folder's name"
echo "PASS: fabemu sweep --slurm on a one-node Slurm cluster"
