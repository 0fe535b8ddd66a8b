"""The commands behind gpu-dpsyn synthesize | evaluate (cli/parser.py
has their arguments)."""
from __future__ import annotations

import json
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.core.progress import step
from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.cli.column_sets import parse_group_by, parse_workload
from gpu_dpsyn.cli.sampling import keeping_fit, write_release
from gpu_dpsyn.cli.paths import (check_inputs, check_new_table, check_outputs, check_public,
                                 check_command, spent,
                                 write_ledger)
from gpu_dpsyn.data.files import claiming, file_id, read_small, write_text
from gpu_dpsyn.data.ingest import (check_writable, choose_engine, csv_as_text, read_table,
                                   table_format)

# evaluate's numbers are statistics of the real table (its ML rows' count gives 30% of n)
NOT_FOR_PUBLICATION = ("statistics of the REAL (private) table, with no privacy guarantee: "
                       "not for publication (release only the synthetic table and the ledger)")


@contextmanager
def warnings_to_stderr():
    """Each warning as one 'gpu-dpsyn: warning:' line when it is raised (Python's format
    adds the source line, which says nothing to a command-line user)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        seen = set()  # each text once: a schema read, then fitted, warns twice

        def show(message, *_, **__):
            if str(message) not in seen:
                seen.add(str(message))
                print(f"gpu-dpsyn: warning: {message}", file=sys.stderr)
        warnings.showwarning = show
        yield


def synthesize(a) -> int:
    if a.workers is not None or a.scheduler is not None:
        return _synthesize_on_dask(a)
    if a.batch_rows is not None:
        raise DPSynError("--batch-rows is for --workers / --scheduler runs")
    # every check that can fail runs before the private table is read
    check_inputs(a.input, a.public, parts=True)
    check_public(a.public, [a.input])
    check_outputs({"--out": a.out, "--ledger": a.ledger}, [a.input, a.schema, a.public])
    table_format(a.out, "--out")
    with claiming({"--out": a.out, "--ledger": a.ledger}):  # till they are written
        return _synthesize(a)


def _synthesize(a) -> int:
    """synthesize, its outputs claimed: the checks that a run started since could fail,
    the fit, the release."""
    from gpu_dpsyn.backends import gpu_available
    from gpu_dpsyn.data.schema import load_schema
    check_new_table(a.out, "--out", a.overwrite)
    check_new_table(a.ledger, "--ledger", a.overwrite)
    schema = load_schema(a.schema)
    check_writable(schema, a.out)
    syn = _synthesizer(a, schema)
    _check_public_use(a)
    syn.check_plan(schema)  # workload and --group-by columns
    if a.rows is not None:
        syn.check_sample(a.rows, schema)
    else:
        _check_row_cap(syn, schema)
    gpu = a.backend == "gpu" or (a.backend == "auto" and gpu_available())
    df = read_table(a.input, choose_engine(a.reader, a.input, gpu), schema,
                    lenient=a.on_invalid == "repair")
    public = read_table(a.public, schema=schema, lenient=a.on_invalid == "repair") \
        if a.public else None
    with spent(a, syn):  # from the first charge on, the ledger is written come what may
        syn.fit(df, schema, public=public)  # a SeededNoiseWarning prints as one line
        del df, public  # the release gets the memory checked before the table was read
        with keeping_fit(a, syn):  # should the release fail, the fit paid for is kept
            out = syn.sample(a.rows)
            rep = write_release(a, syn, out, schema)
    # no time here: it grows with the true row count (docs/privacy.md, what is released)
    print(f"wrote {len(out):,} synthetic rows to {a.out} ({syn.backend.name} backend); "
          f"privacy: {rep['guarantee']}", file=sys.stderr)
    if schema.unit_id is not None:  # from the schema alone
        d = a.sensitivity or schema.max_records_per_individual or 1
        print(f"{schema.unit_id!r} is numbered 1..n: each synthetic row is an individual of "
              f"its own (records are not linked by it); "
              f"{'totals' if a.rows else 'rows and totals'} are those of the table with at "
              f"most {d} record{'s' * (d > 1)} per individual (the rest left out before "
              "measuring)", file=sys.stderr)
    if a.on_invalid == "repair":  # said on every run: it tells nothing of the table
        print(f"any value the schema does not allow was repaired first, or its row "
              f"dropped (said on every run, whether or not there were any: "
              f"{check_command(a.input, a.schema)} lists them)",
              file=sys.stderr)
    return 0


def _check_public_use(a) -> None:
    if a.selection == "public" and not a.public:
        raise DPSynError("--selection public needs a --public table")
    if a.prior_tolerance and not a.public:
        raise DPSynError("--prior-tolerance needs a --public table")


def _check_row_cap(syn, schema) -> None:
    """Without --rows the release has the noisy row count, clamped to the schema's public
    maximum: sampling that many rows must fit before the fit spends anything."""
    cap = schema.row_cap
    whose = "the schema's \"max_rows\"" if schema.max_rows else "the default maximum"
    syn.check_sample(cap, schema,
                     what=f"without --rows, the release may have up to {cap:,} rows "
                          f"({whose}), which",
                     instead="give --rows N, or a smaller \"max_rows\" in the schema")


def _synthesizer(a, schema):
    """The Synthesizer of the arguments; the schema's names read --workload and --group-by
    (a name may hold ',' or ':')."""
    from gpu_dpsyn.synthesizer import Synthesizer
    names = [c.name for c in schema.columns]
    return Synthesizer(a.epsilon, a.delta, method=a.method, iterations=a.iterations, seed=a.seed,
                       backend=a.backend, sensitivity=a.sensitivity, progress=not a.quiet,
                       workload=parse_workload(a.workload, names), conversion=a.conversion,
                       selection=a.selection, group_by=parse_group_by(a.group_by, names),
                       prior_tolerance=a.prior_tolerance, adaptive_rounds=a.adaptive_rounds,
                       neighbour_shuffle=not a.no_neighbour_shuffle,
                       gibbs_sweep=not a.no_gibbs_sweep, polish=not a.no_polish,
                       denoise=not a.no_denoise, on_invalid=a.on_invalid)


def _synthesize_on_dask(a) -> int:
    """INPUT (a file, directory or glob) read and counted on Dask workers; --out a
    directory of Parquet parts, one per batch."""
    from gpu_dpsyn.distributed.reading import table_files
    from gpu_dpsyn.distributed.sampling import check_output_dir
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
    inputs = table_files(a.input)  # files there, one format (before a cluster starts)
    check_inputs(a.public)
    check_public(a.public, inputs)
    check_output_dir(a.out)
    if a.ledger and file_id(Path(a.ledger).absolute().parent) == file_id(a.out):
        raise DPSynError(f"--ledger {a.ledger!r} is inside --out: the parts' directory holds "
                         "only parts")
    check_outputs({"--ledger": a.ledger}, [*inputs, a.schema, a.public])
    with claiming({"--out": a.out, "--ledger": a.ledger}):  # till the parts are written
        return _dask_run(a, inputs)


def _dask_run(a, inputs) -> int:
    """synthesize on Dask, its outputs claimed: the checks a run started since could fail
    (its parts in the directory, its ledger), the fit, the parts."""
    from gpu_dpsyn.backends import gpu_available
    from gpu_dpsyn.distributed.cluster import dask_client
    from gpu_dpsyn.distributed.counting import check_countable
    from gpu_dpsyn.distributed.sampling import check_output_dir
    from gpu_dpsyn.data.schema import load_schema
    check_output_dir(a.out)
    check_new_table(a.ledger, "--ledger", a.overwrite)
    schema = load_schema(a.schema)
    check_writable(schema, Path(a.out) / "part.parquet")
    check_countable(schema)  # (an id column) all before a cluster starts
    syn = _synthesizer(a, schema)  # parameters checked before a cluster starts
    _check_public_use(a)
    syn.check_plan(schema)  # workload columns
    if a.rows is not None:
        from gpu_dpsyn.generate.sample import row_count
        row_count(a.rows)
    public = read_table(a.public, schema=schema) if a.public else None
    gpu = a.backend == "gpu" or (a.backend == "auto" and gpu_available())
    try:  # no release without its ledger, nor a part of one: the parts go (the directory
        with dask_client(a.workers, a.scheduler, gpu) as client:  # held none before), once
            syn.client = client  # the cluster is closed: a batch in flight lands before
            with spent(a, syn):  # (a ledger that cannot be written: the spend is said)
                syn.fit(a.input, schema, public=public)
                res = syn.sample_to(a.out, a.rows, batch_rows=a.batch_rows)
                rep = write_ledger(a, syn, res["gum_history"],  # (the first batch's)
                                   table=(a.out, res["rows"]))
    except BaseException:
        for part in Path(a.out).glob("part-*.parquet"):
            part.unlink()
        raise
    parts = f"{res['batches']} Parquet part" + ("s" if res["batches"] > 1 else "")
    print(f"wrote {res['rows']:,} synthetic rows to {a.out} ({parts}); "
          f"privacy: {rep['guarantee']}", file=sys.stderr)
    return 0


def evaluate(a) -> int:
    t0 = time.perf_counter()
    check_inputs(a.real, a.synthetic)
    check_outputs({"--json": a.json, "--report": a.report},
                   [a.real, a.synthetic, a.schema, a.ledger])
    with claiming({"--json": a.json, "--report": a.report}):  # till they are written
        return _evaluate(a, t0)


def _evaluate(a, t0: float) -> int:
    from gpu_dpsyn.evaluation.evaluate import (check_ml_tables, check_sklearn, check_target,
                                               ml_rows, ml_utility)
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables
    from gpu_dpsyn.data.inference import comparison_schema
    from gpu_dpsyn.data.schema import load_schema
    if a.max_sets is not None:
        integer("--max-sets", a.max_sets, 1)
    run = None
    if a.report:
        from gpu_dpsyn.evaluation.report.plots import plt
        plt()  # without matplotlib, say so before the tables are read
    if a.ledger:  # its private bins are what the scores count on; the report reads more
        from gpu_dpsyn.evaluation.report import check_ledger
        text = read_small(a.ledger, "ledger")  # a regular file, not too large
        try:
            run = json.loads(text)
        except ValueError as e:
            raise DPSynError(f"cannot read ledger {a.ledger!r}: {e}") from None
        except RecursionError:
            raise DPSynError(f"cannot read ledger {a.ledger!r}: it is nested deeper than "
                             "Python's JSON reader goes; no ledger is") from None
        check_ledger(run, f"ledger {a.ledger!r}")
    schema = load_schema(a.schema) if a.schema else None
    if a.target:  # refuse an unusable target before the tables are read
        check_sklearn()
        if schema is not None:
            check_target(schema, a.target)
    if schema is not None and run:  # (check_ledger checked private_bins' JSON types)
        schema = _chosen_bins(schema, run.get("private_bins") or {}, a.ledger)
    real, syn = (read_table(p, schema=schema, as_text=schema is None)
                 for p in (a.real, a.synthetic))
    if schema is None and table_format(a.real) != table_format(a.synthetic):
        # one Parquet, one CSV: the Parquet one as the CSV text of it, both text alike
        real, syn = (csv_as_text(x) if table_format(p) == "parquet" else x
                     for x, p in ((real, a.real), (syn, a.synthetic)))
    _check_table_columns(real, syn, schema, a.real, a.synthetic)
    if run:
        from gpu_dpsyn.evaluation.report.privacy import check_ledger_columns
        check_ledger_columns(run, syn.columns, f"ledger {a.ledger!r}")
    if schema is not None:  # the real table as the fit read it: repaired by the rule
        from gpu_dpsyn.data.repair import repair
        read, real = len(real), repair(real, schema)
        if read and not len(real):  # (evaluation is for the curator: not private)
            raise DPSynError(f"no row of the real table is left once the schema's rule "
                             f"repairs it ({read:,} rows read, every one dropped): see what "
                             f"it drops with "
                             f"{check_command(a.real, a.schema)}")
    inferred = schema is None
    if inferred:  # evaluation is not a release; the data's own domain is fine here
        schema = comparison_schema(real, syn)
    if a.target:  # before the TVDs: an unknown target (no --schema) or too few rows
        check_ml_tables(real, syn, schema, a.target)
    # said once every check has passed (before, it came ahead of a refusal's one line)
    if file_id(a.real) == file_id(a.synthetic):  # (a link to it too)
        warnings.warn(f"{a.real!r} and {a.synthetic!r} are one file: the real table is "
                      "compared with itself", UserWarning)
    # the report shows these very numbers: one computation, one choice of sets
    ev = evaluate_tables(real, syn, schema, max_sets=a.max_sets, progress=not a.quiet)
    print(f"note: {NOT_FOR_PUBLICATION}")
    for k, kw in ev.ways.items():
        print(f"mean {k}-way TVD: {kw.mean:.4f} ({kw.describe()})")
    ml = None
    if a.target:
        with step(not a.quiet, f"ML utility: train on real and on synthetic, predict "
                                f"{a.target}"):
            ml = ml_utility(real, syn, schema, a.target)
    if ml is not None:
        print(f"ML utility, target {a.target!r} ({ml['task']}; both models tested on "
              f"{ml['test_rows']:,} real rows held out from the real-trained model):")
        for metric, r, s, gap in ml_rows(ml):
            print(f"  {metric}: train on real {r}, train on synthetic {s}, gap {gap}")
    if a.json:
        out = {"not_for_publication": True, "note": NOT_FOR_PUBLICATION}
        out.update({f"tvd_{k}way": kw.mean for k, kw in ev.ways.items()})
        out["sets"] = {f"{k}way": {"evaluated": len(kw.sets), "of": kw.total}
                       for k, kw in ev.ways.items()}
        if ml is not None:
            out["ml_utility"] = ml
        write_text(a.json, json.dumps(out) + "\n", "--json")
    if a.report:
        from gpu_dpsyn.evaluation.report import build_report
        meta = {"real": a.real, "synthetic": a.synthetic, "schema": a.schema,
                "ledger": a.ledger, "schema_inferred": inferred,
                "seconds": time.perf_counter() - t0}
        write_text(a.report, build_report(real, syn, schema, run, ev=ev, target=a.target,
                                          ml=ml, meta=meta, progress=not a.quiet), "--report")
        print(f"wrote report to {a.report}", file=sys.stderr)
    return 0


def _check_table_columns(real, syn, schema, real_path, syn_path) -> None:
    """DPSynError naming the table (real or synthetic) that lacks a column or has one too
    many: against the schema, or without one, against the other table."""
    from gpu_dpsyn.data.encoding import check_columns
    from gpu_dpsyn.data.text import shown
    if schema is not None:
        for what, df, path in (("real", real, real_path), ("synthetic", syn, syn_path)):
            try:  # (an empty table is refused by the evaluation, in its own words)
                check_columns(df, schema, allow_empty=True)
            except DPSynError as e:
                raise type(e)(f"the {what} table {shown(str(path))}: {e}") from None
        return
    r, s = [str(c) for c in real.columns], [str(c) for c in syn.columns]
    for what, path, have, other in (("synthetic", syn_path, s, r), ("real", real_path, r, s)):
        lacks = [c for c in other if c not in have]
        if lacks:
            names = ", ".join(shown(c) for c in lacks[:20]) + \
                (f" (and {len(lacks) - 20} more)" if len(lacks) > 20 else "")
            raise DPSynError(f"the {what} table {shown(str(path))} lacks column(s) {names} "
                             f"that the {'real' if what == 'synthetic' else 'synthetic'} "
                             "table has; give tables with the same columns, or --schema")


def _chosen_bins(schema, chosen: dict, ledger: str):
    """The schema with the private quantile bins the run chose (the ledger's private_bins):
    evaluate on the bins the synthesizer measured, not the placeholder nor another run's."""
    from gpu_dpsyn.data.types.quantile_bins import check_chosen
    check_chosen(schema.columns, chosen, f"ledger {ledger!r}")
    pending = {c.name for c in schema.columns if c.private is not None}
    return schema.with_edges({k: v for k, v in chosen.items() if k in pending})
