#!/usr/bin/env bash
# The device check: one command on a lent GPU machine; its caps add up to 585 s (run 12 on
# an H200 took about 6 minutes for these stages).  Each stage runs under its own cap and
# appends a JSON line to $OUT/device_check.jsonl when it finishes (a stage cut off at its
# cap appends {"timeout": true}), so a cap hit keeps the rest.  Logs go beside it.
#   bash bench/suites/device_check.sh                      # every stage, GPU
#   STAGES="env demo" BACKEND=cpu SCALE_ROWS=2e4 bash bench/suites/device_check.sh   # dry run
# Stages (cap, seconds): env 45 (versions, every kernel compiled), gpu 80 (pytest -m gpu:
# 56 tests; run 12's 30 took 39 s), demo 60 (the README demo on the GPU, sha256 against
# the NumPy backend's), scale_1e6 110 and scale_1e7 90 (the full default method, per
# stage, ms per GUM update), largest 200 (sample_to of 1e7 and 1e8 rows as Parquet from a
# 1e5-row fit: the largest that fits; SIZES=3e8 LARGEST_CAP=400 for a larger count).
# Optional: scale_1e5 (60); scale_1e6_1thread (110: the host's share on one thread,
# GPU_DPSYN_THREADS=1, against scale_1e6 on the same machine); sanitize (90:
# compute-sanitizer memcheck on the kernel tests, small sizes); profile_1e6, profile_1e7
# (120: the scale stage under cProfile, its top functions in $OUT/profile_<rows>.txt);
# gum_profile (90: bench/suites/gpu_profile.py at 10^6 and 10^7 rows, host and device
# milliseconds of each part of a GUM update, in $OUT/gum_profile_<rows>.json).
set -u
OUT=${OUT:-out/device}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1  # keeps carried wheels
PY=${PY:-python3}
BACKEND=${BACKEND:-gpu}
STAGES=${STAGES:-"env gpu demo scale_1e6 scale_1e7 largest"}
JSON="$OUT/device_check.jsonl"
SCRATCH=${SCRATCH:-/tmp/device_check}
mkdir -p "$SCRATCH"
capped() {  # name cap command...: run it, and note a cap hit or a failure as a JSON line
  local name=$1 cap=$2; shift 2
  echo "=== $name (cap ${cap}s) $(date +%T)"
  DUMP_AFTER=$((cap - 4)) timeout "$cap" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  tail -5 "$OUT/$name.log"
  if [ $rc -eq 124 ]; then
    echo "{\"stage\": \"$name\", \"ok\": false, \"timeout\": true, \"cap_seconds\": $cap}" >> "$JSON"
  elif [ $rc -ne 0 ] && ! grep -q "\"stage\": \"$name\"" "$JSON" 2>/dev/null; then
    echo "{\"stage\": \"$name\", \"ok\": false, \"exit\": $rc}" >> "$JSON"
  fi
}
for st in $STAGES; do
  case $st in
    env) capped env 45 $PY bench/suites/device_check.py env --backend "$BACKEND" --out "$JSON" ;;
    gpu) capped gpu 80 bash -c "$PY -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py \
           2>&1 | tee /dev/stderr | tail -1 | $PY -c 'import json, sys; print(json.dumps({\"stage\": \"gpu\", \"summary\": sys.stdin.read().strip()}))' >> $JSON" ;;
    demo) capped demo 60 $PY bench/suites/device_check.py demo --backend "$BACKEND" --out "$JSON" ;;
    scale_*_1thread) r=${st#scale_}; GPU_DPSYN_THREADS=1 capped "$st" 110 \
           $PY bench/suites/device_check.py scale --backend "$BACKEND" --rows "${r%_1thread}" \
           --out "$JSON" ;;
    profile_*) capped "$st" 120 $PY bench/suites/device_check.py scale --backend "$BACKEND" \
           --rows "${st#profile_}" --profile "$OUT/$st.txt" --out "$JSON" ;;
    scale_*) capped "$st" "$(case $st in scale_1e5) echo 60;; scale_1e6) echo 110;; *) echo 90;; esac)" \
           $PY bench/suites/device_check.py scale --backend "$BACKEND" \
           --rows "${SCALE_ROWS:-${st#scale_}}" --out "$JSON" ;;
    largest) capped largest "${LARGEST_CAP:-200}" $PY bench/suites/device_check.py largest --backend "$BACKEND" \
           --rows "${LARGEST_FIT_ROWS:-1e5}" --sizes "${SIZES:-1e7,1e8}" \
           --scratch "$SCRATCH" --out "$JSON" ;;
    gum_profile) capped gum_profile 90 bash -c "for r in 1e6 1e7; do $PY bench/suites/gpu_profile.py \
           --backend $BACKEND --rows \$r --repeat 30 --out $OUT/gum_profile_\$r.json || exit; done" ;;
    sanitize) capped sanitize 90 compute-sanitizer --tool memcheck --error-exitcode 9 \
           $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py \
           -k "${SANITIZE_K:-fused or init_and_gum or noise or chacha}" ;;
    *) echo "unknown stage $st" ;;
  esac
done
rm -rf "$SCRATCH"
echo "=== done $(date +%T)"
cat "$JSON"
