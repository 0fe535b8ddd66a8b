"""Command line: gpu-dpsyn synthesize | evaluate | infer-schema."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from gpu_dpsyn.selection.triples import ROUNDS
from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.data.ingest import (check_writable, choose_engine, read_table, table_format,
    write_table)

# evaluate's numbers are statistics of the real table (its ML rows' count gives 30% of n)
NOT_FOR_PUBLICATION = ("statistics of the REAL (private) table, with no privacy guarantee: "
                       "not for publication (release only the synthetic table and the ledger)")


def _check_inputs(*paths) -> None:
    """A directory given as a table is named as one (read_table would say 'no such file')."""
    for path in paths:
        if path and Path(path).is_dir():
            raise DPSynError(f"cannot read {path!r}: it is a directory; give a table file")


@contextmanager
def _warnings_to_stderr():
    """Each warning as one 'gpu-dpsyn: warning:' line when it is raised (Python's format
    adds the source line, which says nothing to a command-line user)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *_, **__: print(
            f"gpu-dpsyn: warning: {message}", file=sys.stderr)
        yield


def _check_outputs(outputs: dict, inputs) -> None:
    """Refuse output paths that cannot be written before anything is read: a failure
    after fit() would come with the budget spent and the synthetic table lost."""
    seen = {}
    for flag, path in outputs.items():
        if not path:
            continue
        p = Path(path)
        where = p.resolve()
        if where in seen:
            raise DPSynError(f"{seen[where]} and {flag} name the same file {path!r}")
        if any(i and Path(i).resolve() == where for i in inputs):
            raise DPSynError(f"{flag} {path!r} is an input file; writing it would destroy it")
        seen[where] = flag
        if p.is_dir():
            raise DPSynError(f"{flag} {path!r} is a directory; give a file name")
        if not p.parent.is_dir():
            raise DPSynError(f"{flag} {path!r}: {str(p.parent)!r} is not an existing directory")
        if not os.access(p.parent, os.W_OK | os.X_OK) or (p.exists() and
                                                          not os.access(p, os.W_OK)):
            raise DPSynError(f"{flag} {path!r} is not writable")


def _synthesize(a) -> int:
    if a.workers is not None or a.scheduler is not None:
        return _synthesize_on_dask(a)
    if a.batch_rows is not None:
        raise DPSynError("--batch-rows is for --workers / --scheduler runs")
    from gpu_dpsyn.backends import gpu_available
    from gpu_dpsyn.data.schema import load_schema
    # every check that can fail runs before the private table is read
    _check_inputs(a.input, a.public)
    _check_outputs({"--out": a.out, "--ledger": a.ledger}, [a.input, a.schema, a.public])
    table_format(a.out, "--out")
    schema = load_schema(a.schema)
    check_writable(schema, a.out)
    syn = _synthesizer(a)
    if a.selection == "public" and not a.public:
        raise DPSynError("--selection public needs a --public table")
    syn.check_plan(schema)  # workload and --group-by columns
    if a.rows is not None:
        syn.check_sample(a.rows, schema)
    gpu = a.backend == "gpu" or (a.backend == "auto" and gpu_available())
    df = read_table(a.input, choose_engine(a.reader, a.input, gpu), schema)
    public = read_table(a.public, schema=schema) if a.public else None
    t0 = time.perf_counter()
    syn.fit(df, schema, public=public)  # a SeededNoiseWarning prints as one line
    out = syn.sample(a.rows)
    elapsed = time.perf_counter() - t0
    write_table(out, a.out)
    rep = _write_ledger(a, syn, syn.history)
    print(f"wrote {len(out):,} synthetic rows to {a.out} in {elapsed:.1f} s "
          f"({syn.backend.name} backend); privacy: {rep['guarantee']}", file=sys.stderr)
    return 0


def _iterations(text: str):
    """argparse type for --iterations: 'auto' or an integer (validated by GUMConfig)."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be 'auto' or an integer, got {text!r}") \
            from None


def _synthesizer(a, client=None):
    from gpu_dpsyn.synthesizer import Synthesizer
    return Synthesizer(a.epsilon, a.delta, method=a.method, iterations=a.iterations, seed=a.seed,
                       backend=a.backend, sensitivity=a.sensitivity, progress=not a.quiet,
                       workload=_parse_workload(a.workload), conversion=a.conversion,
                       selection=a.selection, group_by=_parse_group_by(a.group_by),
                       prior_tolerance=a.prior_tolerance, adaptive_rounds=a.adaptive_rounds,
                       neighbour_shuffle=not a.no_neighbour_shuffle,
                       gibbs_sweep=not a.no_gibbs_sweep, polish=not a.no_polish,
                       denoise=not a.no_denoise, client=client)


def _parse_group_by(items):
    """["state", "puma,year"] -> [["state"], ["puma", "year"]]: a level per flag."""
    levels = []
    for item in items or []:
        cols = [c.strip() for c in item.split(",") if c.strip()]
        if not cols:
            raise DPSynError(f"--group-by {item!r} names no column")
        levels.append(cols)
    return levels or None


def _write_ledger(a, syn, history) -> dict:
    """The privacy report, written to --ledger with the GUM curve for the report (noisy
    data only: no timings, they grow with the true row count)."""
    rep = syn.privacy_report()
    if a.ledger:
        rep["gum_history"] = history
        Path(a.ledger).write_text(json.dumps(rep, indent=2) + "\n")
    return rep


def _synthesize_on_dask(a) -> int:
    """INPUT (a file, directory or glob) read and counted on Dask workers; --out a
    directory of Parquet parts, one per batch."""
    from gpu_dpsyn.backends import gpu_available
    from gpu_dpsyn.distributed.cluster import dask_client
    from gpu_dpsyn.distributed.reading import table_files
    from gpu_dpsyn.distributed.sampling import check_output_dir
    from gpu_dpsyn.data.schema import load_schema
    if a.workers is not None and a.scheduler is not None:
        raise DPSynError("give --workers (a local cluster) or --scheduler, not both")
    if a.workers is not None:
        integer("--workers", a.workers, 1)
    if a.batch_rows is not None:
        integer("--batch-rows", a.batch_rows, 1)
    if a.reader == "cudf":
        raise DPSynError("--reader cudf is for single-process runs; Dask workers read with "
                         "pandas")
    if a.group_by:
        raise DPSynError("--group-by runs in memory: leave out --workers / --scheduler")
    # every check that can fail runs before the private table is read
    table_files(a.input)  # files there, one format (before a cluster starts)
    _check_inputs(a.public)
    check_output_dir(a.out)
    if a.ledger and Path(a.ledger).resolve().parent == Path(a.out).resolve():
        raise DPSynError(f"--ledger {a.ledger!r} is inside --out: the parts' directory holds "
                         "only parts")
    _check_outputs({"--ledger": a.ledger}, [a.schema, a.public])
    schema = load_schema(a.schema)
    check_writable(schema, Path(a.out) / "part.parquet")
    syn = _synthesizer(a)  # parameters checked before a cluster starts
    if a.rows is not None:
        from gpu_dpsyn.synthesizer import _row_count
        _row_count(a.rows)
    public = read_table(a.public, schema=schema) if a.public else None
    gpu = a.backend == "gpu" or (a.backend == "auto" and gpu_available())
    with dask_client(a.workers, a.scheduler, gpu) as client:
        syn.client = client
        t0 = time.perf_counter()
        syn.fit(a.input, schema, public=public)
        res = syn.sample_to(a.out, a.rows, batch_rows=a.batch_rows)
        elapsed = time.perf_counter() - t0
    rep = _write_ledger(a, syn, res["gum_history"])  # the first batch's
    parts = f"{res['batches']} Parquet part" + ("s" if res["batches"] > 1 else "")
    print(f"wrote {res['rows']:,} synthetic rows to {a.out} ({parts}) in {elapsed:.1f} s; "
          f"privacy: {rep['guarantee']}", file=sys.stderr)
    return 0


def _parse_workload(items):
    """["a,b:3", "c"] -> [(("a", "b"), 3.0), (("c",), 1.0)]"""
    out = []
    for item in items or []:
        cols, _, w = item.partition(":")
        try:
            weight = float(w) if w else 1.0
        except ValueError:
            raise DPSynError(f"--workload {item!r}: the weight after ':' must be a number") from None
        out.append((tuple(c.strip() for c in cols.split(",") if c.strip()), weight))
    return out


def _evaluate(a) -> int:
    from gpu_dpsyn.evaluation.evaluate import check_sklearn, check_target, ml_rows, ml_utility
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables
    from gpu_dpsyn.data.inference import infer_schema
    from gpu_dpsyn.data.schema import load_schema
    t0 = time.perf_counter()
    _check_inputs(a.real, a.synthetic)
    _check_outputs({"--json": a.json, "--report": a.report},
                   [a.real, a.synthetic, a.schema, a.ledger])
    if a.max_sets is not None:
        integer("--max-sets", a.max_sets, 1)
    if a.ledger and not a.report:
        raise DPSynError("--ledger is read only for the HTML report: add --report FILE")
    run = None
    if a.report:
        from gpu_dpsyn.evaluation.report import check_ledger
        from gpu_dpsyn.evaluation.report.plots import plt
        plt()  # without matplotlib, say so before the tables are read
        if a.ledger:
            try:
                run = json.loads(Path(a.ledger).read_text())
            except (OSError, ValueError) as e:
                raise DPSynError(f"cannot read ledger {a.ledger!r}: {e}") from None
            check_ledger(run, f"ledger {a.ledger!r}")
    schema = load_schema(a.schema) if a.schema else None
    if a.target:  # refuse an unusable target before the tables are read
        check_sklearn()
        if schema is not None:
            check_target(schema, a.target)
    if schema is not None and run and isinstance(run.get("private_bins"), dict):
        schema = _chosen_bins(schema, run["private_bins"])
    real, syn = (read_table(p, schema=schema, as_text=schema is None)
                 for p in (a.real, a.synthetic))
    inferred = schema is None
    if inferred:  # evaluation is not a release; the data's own domain is fine here, both
        with warnings.catch_warnings():  # tables' (synthetic values the real one lacks)
            warnings.simplefilter("ignore")
            schema = infer_schema(pd.concat([real, syn], ignore_index=True))
    # the report shows these very numbers: one computation, one choice of sets
    ev = evaluate_tables(real, syn, schema, max_sets=a.max_sets, progress=not a.quiet)
    print(f"note: {NOT_FOR_PUBLICATION}")
    for k, kw in ev.ways.items():
        print(f"mean {k}-way TVD: {kw.mean:.4f} ({kw.describe()})")
    ml = ml_utility(real, syn, schema, a.target) if a.target else None
    if ml is not None:
        print(f"ML utility, target {a.target!r} ({ml['task']}; both models tested on "
              f"{ml['test_rows']:,} held-out real rows):")
        for metric, r, s, gap in ml_rows(ml):
            print(f"  {metric}: train on real {r}, train on synthetic {s}, gap {gap}")
    if a.json:
        out = {"not_for_publication": True, "note": NOT_FOR_PUBLICATION}
        out.update({f"tvd_{k}way": kw.mean for k, kw in ev.ways.items()})
        out["sets"] = {f"{k}way": {"evaluated": len(kw.sets), "of": kw.total}
                       for k, kw in ev.ways.items()}
        if ml is not None:
            out["ml_utility"] = ml
        Path(a.json).write_text(json.dumps(out) + "\n")
    if a.report:
        from gpu_dpsyn.evaluation.report import build_report
        meta = {"real": a.real, "synthetic": a.synthetic, "schema": a.schema,
                "ledger": a.ledger, "schema_inferred": inferred,
                "seconds": time.perf_counter() - t0}
        Path(a.report).write_text(build_report(real, syn, schema, run, ev=ev, target=a.target,
                                               ml=ml, meta=meta, progress=not a.quiet))
        print(f"wrote report to {a.report}", file=sys.stderr)
    return 0


def _chosen_bins(schema, chosen: dict):
    """The schema with the private quantile bins the run chose (the ledger's private_bins):
    evaluate on the bins the synthesizer measured, not the placeholder."""
    pending = {c.name for c in schema.columns if c.private is not None}
    return schema.with_edges({k: v for k, v in chosen.items() if k in pending})


def _infer(a) -> int:
    from gpu_dpsyn.data.inference import infer_schema_with_summary
    _check_inputs(a.input)
    _check_outputs({"--out": a.out}, [a.input])
    df = read_table(a.input, as_text=True)  # "02134" and "NA" as written; types guessed
    for c in a.id or ():
        if c not in df.columns:
            raise DPSynError(f"--id {c!r} is not a column of {a.input}; columns are "
                             f"{list(df.columns)}")
    schema, summary = infer_schema_with_summary(df, bins=a.bins, id_columns=a.id or ())
    schema.save(a.out)
    print(f"wrote schema for {len(schema.columns)} columns to {a.out}. Guessed from the data "
          "(NOT private): review every line and replace what you can with public facts:",
          file=sys.stderr)
    print("\n".join(summary), file=sys.stderr)
    return 0


BUDGET_HELP = """choosing epsilon and delta:
  epsilon bounds how much one individual can change the probability of any output: by at most
  a factor e^epsilon. Smaller is stronger and noisier: 0.3-1 is strong, 1-3 moderate, up to 10
  weak; epsilon = 1 is a common starting point.
  delta is the probability that the epsilon bound may fail. Choose it well below 1/n for n
  individuals, typically 1e-9 to 1e-6 (1e-9 costs little accuracy)."""


def build_parser() -> argparse.ArgumentParser:
    from gpu_dpsyn import __version__
    p = argparse.ArgumentParser(prog="gpu-dpsyn", description=__doc__)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("synthesize", help="fit on a private table and write a synthetic one",
                       epilog=BUDGET_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("input", help="the private table (.csv, .csv.gz/.bz2/.xz/.zip, .parquet)")
    s.add_argument("--schema", required=True,
                   help="public schema JSON (ours or NIST); draft one with infer-schema, then "
                        "review it")
    s.add_argument("--epsilon", type=float, required=True,
                   help="privacy budget epsilon > 0: smaller is more private and noisier "
                        "(0.3-1 strong, 1-3 moderate, up to 10 weak; see below)")
    s.add_argument("--delta", type=float, required=True,
                   help="privacy parameter delta in (0, 1): well below 1/n for n "
                        "individuals, typically 1e-9 to 1e-6")
    s.add_argument("--out", required=True,
                   help="the synthetic table to write; its suffix picks the format")
    s.add_argument("--rows", type=int, default=None,
                   help="rows to write (default: the differentially private estimate of the "
                        "real row count)")
    s.add_argument("--seed", type=int, default=None,
                   help="make the run reproducible, for tests only: a seeded release must "
                        "not be published")
    s.add_argument("--iterations", type=_iterations, default="auto",
                   help="GUM iterations: a number, or auto (default: until the fit to the "
                        "noisy marginals stops improving, at most 200; post-processing, "
                        "costs no budget)")
    s.add_argument("--method", default="privsyn", choices=["privsyn", "dpsyn"],
                   help="privsyn: private marginal selection (default); dpsyn: all 2-way")
    s.add_argument("--workload", action="append", metavar="COLS[:WEIGHT]",
                   help="column set that matters more, e.g. carrier,dest:3 (repeatable)")
    s.add_argument("--public", help="a public table of the same schema: GUM starts from its "
                                    "records and (with --selection auto) the marginals are "
                                    "chosen from it at no privacy cost")
    s.add_argument("--selection", default="auto", choices=["auto", "public", "private"],
                   help="how the marginals are chosen: from the --public table (free), from "
                        "noisy private scores (10%% of the budget; better when the public "
                        "table differs much), or auto: public when --public is given")
    s.add_argument("--prior-tolerance", type=float, default=0.0, metavar="K",
                   help="GUM leaves a cell within K noise standard deviations of its target "
                        "as the prior has it (default 0: K = 1 helped a close --public table "
                        "a little and hurt a distant one much)")
    s.add_argument("--adaptive-rounds", type=int, default=ROUNDS, metavar="N",
                   help="privsyn: rounds that add the 3-way marginals a first fit misses "
                        "most (35%% of the marginals' budget; what they do not use measures "
                        "the chosen marginals again); 0: pairs and their triangles only")
    s.add_argument("--no-neighbour-shuffle", action="store_true",
                   help="keep GUM's records as they are: by default each column is permuted "
                        "among the records that agree on the columns it shares a marginal "
                        "with, which keeps every marginal and undoes GUM's copies")
    s.add_argument("--no-gibbs-sweep", action="store_true",
                   help="skip the Gibbs sweep after GUM: by default each column is redrawn "
                        "from the maximum-entropy model given the columns it shares a "
                        "marginal with, then the polish (or, with --no-polish, one GUM "
                        "iteration) repairs the marginals")
    s.add_argument("--no-polish", action="store_true",
                   help="skip the polish after GUM: by default each column's values are "
                        "moved, record by record, wherever that brings the marginals "
                        "closer to their targets")
    s.add_argument("--no-denoise", action="store_true",
                   help="keep the measured marginals as they are: by default each multi-way "
                        "marginal's cells become their posterior means under a prior on its "
                        "counts estimated from the noisy counts (empirical Bayes)")
    s.add_argument("--group-by", action="append", metavar="COLS",
                   help="synthesize per group of these categorical columns (comma-separated); "
                        "each flag adds a level, e.g. --group-by state --group-by puma,year; "
                        "every group gets its own noisy count and marginals")
    s.add_argument("--conversion", default="cks", choices=["cks", "bun-steinke"],
                   help="(epsilon, delta) -> zCDP: tight CKS (default) or Bun-Steinke")
    s.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                   help="cpu (NumPy), gpu (CuPy) or auto: the GPU when one is usable")
    s.add_argument("--reader", default="auto", choices=["auto", "pandas", "cudf"],
                   help="table reader: cudf parses .csv/.parquet on the GPU (auto: when "
                        "installed and the run is on the GPU)")
    s.add_argument("--sensitivity", type=int, default=None,
                   help="max records per individual (default: schema's, else 1)")
    s.add_argument("--ledger",
                   help="write the privacy ledger as JSON here (released with the table; "
                        "evaluate --ledger reads it for the report)")
    s.add_argument("--quiet", action="store_true", help="no progress bars")
    s.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run on a local Dask cluster of N workers: INPUT may be a directory "
                        "or a glob ('in/*.parquet'), --out is a directory of Parquet parts")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask cluster at ADDRESS (tcp://host:8786), as --workers")
    s.add_argument("--batch-rows", type=int, default=None, metavar="N",
                   help="rows per sampling batch on Dask (default: from worker memory)")
    s.set_defaults(fn=_synthesize)
    e = sub.add_parser("evaluate", help="compare a synthetic table with the real one: TVD of "
                                        "1/2/3-way marginals, optional HTML report")
    e.add_argument("real", help="the real (private) table")
    e.add_argument("synthetic", help="the synthetic table")
    e.add_argument("--schema", help="schema JSON (default: inferred from both tables)")
    e.add_argument("--max-sets", type=int, default=None,
                   help="evaluate at most this many random column sets per k (default: all); "
                        "the terminal and the report use the same ones")
    e.add_argument("--json", help="also write the numbers as JSON here (statistics of the "
                                  "real table: not for publication)")
    e.add_argument("--report", help="write an HTML report here (needs matplotlib); it shows "
                                    "real statistics: not for publication")
    e.add_argument("--ledger", help="the --ledger JSON of the run, for the report's privacy "
                                    "section and GUM curve")
    e.add_argument("--target", help="a column to predict: train on synthetic vs train on "
                                    "real, both tested on held-out real rows (needs "
                                    "scikit-learn, the 'ml' extra)")
    e.add_argument("--quiet", action="store_true", help="no progress bars")
    e.set_defaults(fn=_evaluate)
    i = sub.add_parser("infer-schema", help="draft a schema from data (NOT private)")
    i.add_argument("input", help="the table to read the draft from")
    i.add_argument("--out", required=True, help="the schema JSON to write")
    i.add_argument("--bins", type=int, default=32,
                   help="bins for numeric columns that are not read as categories (default "
                        "32)")
    i.add_argument("--id", action="append",
                   help="an id column (repeatable): never synthesized, identifies individuals")
    i.set_defaults(fn=_infer)
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    try:
        with _warnings_to_stderr():
            return a.fn(a)
    except DPSynError as err:
        print(f"gpu-dpsyn: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
