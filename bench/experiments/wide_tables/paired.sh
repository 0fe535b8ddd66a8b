#!/bin/sh
# Paired fits, old tree then new tree, for each shape: sha256 of the sampled table and
# seconds (fit + sample, NumPy backend, eps 1, seed 0).  Usage, from the repository root:
#   git archive OLD gpu_dpsyn | tar -x -C /tmp/old; git archive NEW gpu_dpsyn | ...
#   sh bench/experiments/wide_tables/paired.sh /tmp/old /tmp/new "300:1000 100:1000"
old=$1; new=$2; shapes=$3
for s in $shapes; do
  for tree in "$old" "$new"; do
    printf "%s " "$tree"
    PYTHONPATH=$tree .venv/bin/python bench/experiments/wide_tables/wide.py make \
      "${s%%:*}" "${s##*:}"
  done
done
