#!/usr/bin/env bash
# One call on a lent GPU machine: environment, GPU tests, the full suite (where
# backend="auto" now means the GPU), compute-sanitizer on the kernel tests, the
# per-operation profile and the GPU-vs-CPU benchmark.  Logs and JSON go to $OUT (or out/device).  Each stage has its own
# time limit so one hang does not cost the others.
#   STAGES="env gpu suite profile bench" ROWS=1e5,1e6,1e7 bash bench/suites/device_session.sh
# DEMO_BACKENDS="gpu" runs the demo on the GPU alone: compare its sha256 with a CPU run's
# made elsewhere (same seed, same bytes).  BENCH_ARGS are passed to gpu_vs_cpu.py (e.g.
# "--backends gpu --no-polish"); stage bench_polish runs it again on ROWS_POLISH with the
# defaults (the polish after GUM), whose host time the stages show.
set -u
OUT=${OUT:-out/device}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PY=${PY:-python3}
STAGES=${STAGES:-"env gpu suite sanitize profile bench"}
ROWS=${ROWS:-1e5,1e6,1e7}
for st in $STAGES; do
  echo "=== $st $(date +%T)"
  case $st in
    env) { nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
           $PY -c "import cupy, numpy, pandas, sys; print(sys.version); print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'pandas', pandas.__version__); print(cupy.cuda.runtime.getDeviceProperties(0)['name'].decode(), cupy.is_available())"
         } 2>&1 | tee "$OUT/env.log" ;;
    gpu) timeout ${GPU_TIMEOUT:-240} $PY -m pytest -q -m gpu -rs --tb=short -p no:cacheprovider 2>&1 \
           | tee "$OUT/pytest_gpu.log" | tail -40 ;;
    suite) timeout 300 $PY -m pytest -q -n 8 --tb=short -p no:cacheprovider 2>&1 \
           | tee "$OUT/pytest_all.log" | tail -40 ;;
    sanitize)  # shared-memory races (the block-cooperative plan) and out-of-bounds access
      for tool in ${SANITIZE_TOOLS:-racecheck memcheck}; do
        timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 \
          $PY -m pytest -q -m gpu -p no:cacheprovider tests/test_gpu.py \
          -k "${SANITIZE_K:-fused or init_and_gum or pipeline or noise or chacha}" 2>&1 \
          | tee "$OUT/sanitize_$tool.log" | tail -8
        echo "compute-sanitizer $tool: exit ${PIPESTATUS[0]}"
      done ;;
    profile) timeout 120 $PY bench/suites/gpu_profile.py --rows 1e6 --out "$OUT/gpu_profile.json" 2>&1 \
           | tee "$OUT/profile.log" ;;
    demo)  # the README's demo through the CLI on each backend: same seed, same table?
      for b in ${DEMO_BACKENDS:-gpu cpu}; do
        s0=$(date +%s%N)
        timeout ${DEMO_TIMEOUT:-200} $PY -m gpu_dpsyn synthesize \
          data/flights.csv.xz --schema data/flights_schema.json --epsilon 1 --delta 1e-9 \
          --seed 0 --backend $b --quiet --out /tmp/flights_$b.csv --ledger "$OUT/ledger_$b.json"
        echo "synthesize on $b: exit $?, $(( ($(date +%s%N) - s0) / 1000000 )) ms"
        sha256sum /tmp/flights_$b.csv
      done 2>&1 | tee "$OUT/demo.log"
      [ -f /tmp/flights_cpu.csv ] && cmp /tmp/flights_gpu.csv /tmp/flights_cpu.csv \
        && echo "identical CSV on GPU and CPU" | tee -a "$OUT/demo.log"
      # the NumPy backend's bytes for this command (2-core x86_64, Python 3.11 and 3.12)
      want=$(cut -d' ' -f1 bench/results/demo_sha256.txt)
      [ -f /tmp/flights_gpu.csv ] && { [ "$(sha256sum < /tmp/flights_gpu.csv | cut -d' ' -f1)" = "$want" ] \
        && echo "GPU CSV identical to the NumPy backend's (bench/results/demo_sha256.txt)" \
        || echo "GPU CSV DIFFERS from the NumPy backend's (bench/results/demo_sha256.txt)"; } \
        | tee -a "$OUT/demo.log"
      timeout 200 $PY -m gpu_dpsyn evaluate data/flights.csv.xz /tmp/flights_gpu.csv \
        --schema data/flights_schema.json --max-sets 300 2>&1 | tee -a "$OUT/demo.log" ;;
    bench) timeout ${BENCH_TIMEOUT:-400} $PY bench/suites/gpu_vs_cpu.py --rows "$ROWS" \
           ${BENCH_ARGS:-} --out "$OUT/gpu_vs_cpu.json" 2>&1 | tee "$OUT/bench.log" ;;
    bench_polish) timeout ${BENCH_POLISH_TIMEOUT:-200} $PY bench/suites/gpu_vs_cpu.py \
           --rows "${ROWS_POLISH:-1e5}" --backends gpu --out "$OUT/gpu_vs_cpu_polish.json" 2>&1 \
           | tee "$OUT/bench_polish.log" ;;
  esac
done
echo "=== done $(date +%T)"
