#!/usr/bin/env bash
# save→fresh per edit with the writer's phases, two trees side by side in one run, alternating.
#
#   ops/bench/side_by_side_savefresh.sh OLD_PYTHON NEW_PYTHON VAULT STATE WORK [ROUNDS] [EDITS]
#
# OLD_PYTHON / NEW_PYTHON: the venv pythons of the two trees (each imports its own
# vault_agent). VAULT: an indexed vault, STATE: its state dir; both are copied (cp -a, never
# linked) into WORK for every run, so both trees start from the same index. Per round and
# tree: bench_savefresh_phases.py, saves 1.2 s apart (EDITS of them: >= 64 reach the periodic
# reconcile scan, every 60 s), semantic search off. Prints each run's summary line, its
# slowest edits' phases, and the load.
set -euo pipefail
OLD=$1 NEW=$2 VAULT=$3 STATE=$4 WORK=$5 ROUNDS=${6:-2} EDITS=${7:-64}
HERE=$(cd "$(dirname "$0")" && pwd)
export VAULT_AGENT_SEMANTIC=0
mkdir -p "$WORK"
# Run from WORK: a bench's `python -c` child puts the working directory first on sys.path,
# so started inside a checkout both sides would import that checkout's vault_agent.
VAULT=$(cd "$VAULT" && pwd); STATE=$(cd "$STATE" && pwd); WORK=$(cd "$WORK" && pwd)
cd "$WORK"
for round in $(seq "$ROUNDS"); do
  for side in old new; do
    py=$OLD; [ "$side" = new ] && py=$NEW
    run=$WORK/$side
    rm -rf "$run"; mkdir -p "$run"
    cp -a "$VAULT" "$run/vault"; cp -a "$STATE" "$run/state"; rm -f "$run/state/writer.lock"
    sync  # the copy's dirty pages would otherwise be written back under the first saves' fsyncs
    echo "# round $round $side $(uptime)"
    nice -n 5 "$py" "$HERE/bench_savefresh_phases.py" --vault "$run/vault" --index-dir "$run/state" \
      --edits "$EDITS" --seed "$round" --gap 1.2 --top 3 --label "$side r$round"
  done
done
rm -rf "$WORK/old" "$WORK/new"
