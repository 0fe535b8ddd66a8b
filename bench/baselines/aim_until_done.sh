#!/bin/sh
# One AIM cell of bench/suites/peers.py, rerun from its checkpoint until it has written its row:
# a JAX process that compiles mbi's programs round after round runs out of memory maps
# (vm.max_map_count) after some 55 rounds and dies (LLVM "Cannot allocate memory", then a
# segmentation fault), so a long run at eps 8 takes several processes.
#   bench/baselines/aim_until_done.sh DATASET EPS SEED CORE DIR [TRIES]
# pins to CORE, checkpoints in DIR, appends its log to DIR/DATASET_epsEPS_seedSEED.log and
# writes the row to DIR/DATASET_epsEPS_seedSEED.json (merge it into peers.json after).
set -u
ds=$1 eps=$2 seed=$3 core=$4 dir=$5 tries=${6:-20}
name="$dir/${ds}_eps${eps}_seed${seed}"
mkdir -p "$dir"
i=0
while [ "$i" -lt "$tries" ]; do
  i=$((i + 1))
  echo "== process $i: $(date -u +%FT%TZ)" >> "$name.log"
  if PYTHONHASHSEED=0 taskset -c "$core" "$(dirname "$0")/../../.venv/bin/python" \
      "$(dirname "$0")/../suites/peers.py" --datasets "$ds" --eps "$eps" --seeds "$seed" \
      --peers aim --aim-log --batch aim-numpy-scorer --aim-checkpoint "$dir" --out "$name.json" \
      >> "$name.log" 2>&1; then
    echo "== done: $(date -u +%FT%TZ)" >> "$name.log"
    exit 0
  fi
done
exit 1
