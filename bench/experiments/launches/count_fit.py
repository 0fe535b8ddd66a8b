"""Kernel launches and host reads of one default fit and sample on the GPU backend,
counted on a CPU: the CuPy backend with its kernels compiled by g++ and its arrays the
counting stand-in of tests/cuda_emu (docs/gpu.md, "Host reads and launches").  Per stage
(sweep, polish, GUM, shuffle, ...), as a JSON line.  The emulated kernels are slow
(minutes at 20,000 rows, mostly GUM's), and the times are not a GPU's.

    python bench/experiments/launches/count_fit.py [--rows 20000] [--epsilon 1] [--out F]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench" / "common")]
from results import emit  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20000)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--out")
    a = p.parse_args(argv)
    import pytest
    from conftest import FLIGHTS_SCHEMA, _flights
    from cuda_emu import counting, emulate
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn import synthesizer as api
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.generate import records, sample as sampling
    from gpu_dpsyn.measure import errors, privsyn, rounds
    so = emulate.build(Path(tempfile.mkdtemp()))
    mp = pytest.MonkeyPatch()
    be = counting.counting_backend(mp, so)
    mp.setattr(api, "get_backend", lambda name: be)
    count = counting.reset()
    for module, name, stage in [(records, "gibbs_sweep", "sweep"), (records, "polish", "polish"),
                                (records, "run_gum", "gum"),
                                (records, "neighbour_shuffle", "shuffle"),
                                (errors, "measure_errors", "errors"),
                                (privsyn, "measure", "measure"), (rounds, "measure", "measure"),
                                (sampling, "decode", "decode")]:
        counting.staged(mp, module, name, stage)
    df, schema = _flights(a.rows), load_schema(FLIGHTS_SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Synthesizer(a.epsilon, 1e-9, seed=0, progress=False, backend="gpu").fit(df, schema) \
            .sample()
    mp.undo()
    stages = sorted(set(count.launches) | set(count.syncs))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    emit({"table": "flights", "rows": a.rows, "columns": len(schema.synth_columns),
          "epsilon": a.epsilon, "commit": commit, "device": "counted on a CPU (cuda_emu)",
          "launches": sum(count.launches.values()), "reads": sum(count.syncs.values()),
          "per_stage": {s: {"launches": count.launches[s], "reads": count.syncs[s]}
                        for s in stages}}, a.out)


if __name__ == "__main__":
    main()
