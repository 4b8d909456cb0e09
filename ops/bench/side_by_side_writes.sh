#!/usr/bin/env bash
# write→searchable and save→fresh, two trees side by side in one run, alternating.
#
#   ops/bench/side_by_side_writes.sh OLD_PYTHON NEW_PYTHON VAULT STATE WORK [ROUNDS] [WRITES]
#
# OLD_PYTHON / NEW_PYTHON: the venv pythons of the two trees (each imports its own
# vault_agent, e.g. /work/main/.venv/bin/python and .venv/bin/python). VAULT: an indexed
# vault, STATE: its state dir; both are copied (cp -a, never linked) into WORK for every run,
# so both trees start from the same index. Per round and tree: bench_write_phases.py with
# writes 1.2 s apart and back to back (--gap 0 --settle 0), then bench_index.py save→fresh
# with saves 1.2 s apart (closer saves are a sustained stream: the pacing sets their latency).
# Semantic search off (VAULT_AGENT_SEMANTIC=0): embedding the vault in the background would
# drown both. Prints one JSON line per run (label = tree, kind) and the load.
set -euo pipefail
OLD=$1 NEW=$2 VAULT=$3 STATE=$4 WORK=$5 ROUNDS=${6:-3} WRITES=${7:-12}
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
    cp -a "$VAULT" "$run/vault"; cp -a "$STATE" "$run/state"
    sync  # the copy's dirty pages would otherwise be written back under the first writes' fsyncs
    echo "# round $round $side $(uptime)"
    nice -n 5 "$py" "$HERE/bench_write_phases.py" --vault "$run/vault" --state "$run/state" \
      --writes "$WRITES" --gap 1.2 --seed "$round" --label "$side gap1.2" | sed -n '1,/^}/p' | tr -d '\n ' ; echo
    nice -n 5 "$py" "$HERE/bench_write_phases.py" --vault "$run/vault" --state "$run/state" \
      --writes "$WRITES" --gap 0 --settle 0 --seed "$((round + 10))" --label "$side b2b" | sed -n '1,/^}/p' | tr -d '\n ' ; echo
    nice -n 5 "$py" "$HERE/bench_index.py" --skip-full --vault "$run/vault" --index-dir "$run/state" \
      --edits "$((WRITES * 2))" --seed "$round" --gap 1.2 --workdir "$run"
  done
done
rm -rf "$WORK/old" "$WORK/new"
