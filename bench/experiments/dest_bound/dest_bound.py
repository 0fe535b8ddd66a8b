"""Does the demo gain from fitting `dest` in the sweep and polish? One fit, sample and
evaluation (as `make demo` evaluates: --max-sets 300) per (gibbs.MAX_CONTEXT_CELLS, seed),
each in a fresh process, the two bounds interleaved per seed.

Run from the repository root:  python bench/experiments/dest_bound/dest_bound.py OUT.jsonl
(GPU_DPSYN_THREADS=2 on the 2-core machine of the committed result)."""
import itertools, json, os, resource, subprocess, sys, tempfile, time, warnings

CELLS = (1 << 24, 1 << 26)
SEEDS = (0, 1, 2)


def one(cells: int, seed: int, out_json: str) -> None:
    import numpy as np
    import pandas as pd
    import gpu_dpsyn.generate.gibbs as gibbs
    default_cells = gibbs.MAX_CONTEXT_CELLS
    gibbs.MAX_CONTEXT_CELLS = cells
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.ingest import read_table, write_table
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables, _set_stats

    SCHEMA = "data/flights_schema.json"
    REAL = "data/flights.csv.xz"
    df = pd.read_csv(REAL)
    rss_read = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        syn = Synthesizer(1.0, 1e-9, seed=seed, backend="cpu", progress=False)
        load0 = os.getloadavg()
        c0 = time.process_time(); t0 = time.perf_counter()
        syn.fit(df, SCHEMA)
        c1 = time.process_time(); t1 = time.perf_counter()
        out = syn.sample()
        c2 = time.process_time(); t2 = time.perf_counter()
        load1 = os.getloadavg()
    rss_peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # before evaluation
    msgs = [str(w.message) for w in caught]
    for m in msgs:
        print("WARNING:", m[:300], file=sys.stderr)
    left = [m for m in msgs if "left columns" in m]
    dest_left = [m for m in left if "'dest'" in m]

    # evaluation exactly as `gpu-dpsyn evaluate ... --schema ... --max-sets 300` (make demo):
    # both tables read with read_table(schema=...), synthetic written as CSV first
    schema = load_schema(SCHEMA)
    syn_csv = os.path.join(tempfile.gettempdir(), f"dest_bound_{cells}_{seed}.csv")
    write_table(out, syn_csv)
    real = read_table(REAL, schema=schema)
    synt = read_table(syn_csv, schema=schema)
    t3 = time.perf_counter()
    ev = evaluate_tables(real, synt, schema, max_sets=300, progress=False)
    names = list(ev.names)
    d = names.index("dest")
    res = {"cells": cells, "default_cells": default_cells, "seed": seed,
           "fit_s": t1 - t0, "sample_s": t2 - t1, "fit_cpu_s": c1 - c0, "sample_cpu_s": c2 - c1,
           "loadavg_start": load0, "loadavg_end": load1,
           "peak_rss_mib": rss_peak_kib / 1024, "rss_after_read_csv_mib": rss_read / 1024,
           "fit_timings": dict(syn.fit_timings),
           "sample_timings": dict(getattr(syn.last_run, "timings", {}) or {}),
           "warnings_left": left, "dest_left": bool(dest_left),
           "rows": len(out), "names": names, "eval_s": None}
    for k, kw in ev.ways.items():
        res[f"tvd_{k}way"] = kw.mean
        res[f"n_{k}way"] = len(kw.sets)
        mask = np.array([d in s for s in kw.sets])
        res[f"tvd_{k}way_dest"] = float(kw.tvd[mask].mean())
        res[f"n_{k}way_dest"] = int(mask.sum())
        res[f"tvd_{k}way_nodest"] = float(kw.tvd[~mask].mean())
    # extra: every triple containing dest (not only those among the 300 random ones)
    one_way = [np.bincount(c, minlength=m) / len(c) for c, m in zip(ev.real, ev.domain)]
    others = [i for i in range(len(names)) if i != d]
    tr = [tuple(sorted((d,) + p)) for p in itertools.combinations(others, 2)]
    res["tvd_3way_dest_all"] = float(np.mean([_set_stats(ev.real, ev.syn, s, ev.domain, one_way)[0] for s in tr]))
    res["n_3way_dest_all"] = len(tr)
    # per-pair TVDs with dest
    res["tvd_pairs_dest"] = {names[[x for x in s if x != d][0]]: float(t)
                             for s, t in zip(ev.ways[2].sets, ev.ways[2].tvd) if d in s}
    res["eval_s"] = time.perf_counter() - t3
    os.remove(syn_csv)
    with open(out_json, "a") as f:
        f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "one":
        one(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        for seed in SEEDS:
            for cells in CELLS:
                subprocess.run([sys.executable, __file__, "one", str(cells), str(seed),
                                sys.argv[1]], check=True)
