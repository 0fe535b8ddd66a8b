"""`gpu-dpsyn evaluate --report`: one self-contained HTML page (PNG plots inline).

Order: the not-for-publication notice, a verdict, the run, privacy in plain language, the
scores and how to read them, then the details (columns, associations, worst marginals)."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from gpu_dpsyn.version import __version__
from gpu_dpsyn.evaluation import REPORT_TITLE
from gpu_dpsyn.core.checks import integer
from gpu_dpsyn.evaluation.evaluate import ml_utility
from gpu_dpsyn.evaluation.fidelity import Evaluation, evaluate_tables
from gpu_dpsyn.core.progress import bar
from gpu_dpsyn.data.schema import Schema, load_schema
from gpu_dpsyn.evaluation.report import groups, plots, privacy, summaries, verdict
from gpu_dpsyn.evaluation.report.html import esc, page, table
from gpu_dpsyn.evaluation.report.html import figures

# the page shows real row counts and histograms: it must not travel with the release
NOTICE = ("<div class='notice'><strong>Not for publication.</strong> This report contains "
          "statistics of the REAL (private) data: row counts, histograms and TVDs computed on "
          "it carry no privacy guarantee. Only the synthetic table and the privacy ledger are "
          "meant for release.</div>")
DRAWN = 3  # worst 2-way and 3-way marginals drawn


def build_report(real: pd.DataFrame, syn: pd.DataFrame, schema: Schema, run: dict | None = None,
                 *, ev: Evaluation | None = None, target: str | None = None,
                 ml: dict | None = None, meta: dict | None = None, top: int = 25,
                 max_sets: int | None = None, progress: bool = False) -> str:
    """The page.  run: the ledger (privacy_report() + gum_history).  ev: evaluate_tables'
    result for these tables, computed here (with max_sets) when not given: pass the one the
    terminal printed so that both show the same numbers.  target: a column for the ML-utility
    section (ml: its ml_utility result, when already computed).  meta: what the caller knows
    of the run: file names ("real", "synthetic", "schema", "ledger"), "schema_inferred" and
    "seconds" (the evaluation's runtime)."""
    plots.plt()  # no matplotlib: say so before any work
    schema = load_schema(schema)  # (a dict or a path, as fit() takes it)
    integer("top", top, 1)
    if run is not None:
        privacy.check_ledger(run)
    if target is not None and ml is None:
        ml = ml_utility(real, syn, schema, target)
    if ev is None:
        ev = evaluate_tables(real, syn, schema, max_sets=max_sets, progress=progress)
    meta = dict(meta or {})
    cols = schema.synth_columns
    worst = {k: ev.ways[k].worst(DRAWN) for k in (2, 3) if k in ev.ways}
    steps = len(cols) + (3 if 2 in ev.ways else 0) + sum(map(len, worst.values()))
    with bar(progress, steps, "report figures") as b:
        def tick(x):
            if b is not None:
                b.update(1)
            return x

        parts = [NOTICE, "<h1>gpu_dpsyn evaluation report</h1>",
                 verdict.verdict(ev, ev.names, ml, (run or {}).get("seeded")),
                 _run(real, syn, schema, run, meta)]
        parts += privacy.section(run, bool(meta.get("schema_inferred")))
        parts += ["<h2>Scores</h2>", verdict.scores(ev), verdict.GUIDE]
        if ml is not None:
            parts += summaries.ml_section(ml)
        parts += _columns(ev, cols, tick)
        parts.append(summaries.numeric_summary(real, syn, schema))
        parts += groups.section(ev, schema, groups.levels_of(run))
        if 2 in ev.ways:
            parts += _associations(ev, tick)
        for k in (2, 3):
            if k in ev.ways:
                parts += _worst(ev, k, top, cols, tick)
        if run and run.get("gum_history"):
            parts += ["<h2>GUM convergence</h2><p>How far the synthetic records were from the "
                      "noisy marginals at each iteration of GUM (computed from noisy data "
                      "only).</p>", plots.convergence(run["gum_history"])]
    return page(REPORT_TITLE, parts)


def _run(real, syn, schema, run, meta) -> str:
    def name(key, default):
        return meta.get(key) or default

    items = [("real table", f"{name('real', '(given as a DataFrame)')}: {len(real):,} rows"),
             ("synthetic table", f"{name('synthetic', '(given as a DataFrame)')}: "
                                 f"{len(syn):,} rows"),
             ("schema", "inferred from the tables (not private)" if meta.get(
                 "schema_inferred") else name("schema", "(given as an object)")),
             ("columns", ", ".join(
                 [f"{len(schema.synth_columns)} synthesized"]
                 + [f"{n} {k}" for k in ("derived", "id")
                    if (n := sum(c.kind == k for c in schema.columns))])),
             ("ledger", name("ledger", "none given"))]
    if run is not None:
        seeded = run.get("seeded")
        items += [("ε, δ", f"{run['epsilon']:g}, {run['delta']:g}"),
                  ("method", f"{run.get('method', '?')} (noise: {run.get('mechanism', '?')}"
                             + (f", conversion: {run['conversion']})" if "conversion" in run
                                else ")")),
                  ("seeded", "YES: do not publish this release" if seeded else
                   "no" if seeded is False else "not recorded")]
    items.append(("report made", f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC by "
                                 f"gpu_dpsyn {__version__}"))
    if meta.get("seconds") is not None:
        items.append(("evaluation runtime", f"{meta['seconds']:.1f} s (reading the tables, "
                                            "scores, ML utility; not drawing this page)"))
    items.append(("synthesis runtime", "not in the ledger, which is released and holds "
                                       "nothing that depends on the private data but noisy "
                                       "results; synthesize prints it"))
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items)
    return f"<h2>The run</h2><dl class='meta'>{rows}</dl>"


def _columns(ev, cols, tick) -> list:
    one = ev.ways[1]
    order = np.argsort(-one.tvd, kind="stable")
    rows = [(ev.names[one.sets[i][0]], f"{one.tvd[i]:.4f}", f"{one.sampling[i]:.4f}")
            for i in order]
    images = [tick(plots.histogram(c, ev.real[i], ev.syn[i])) for i, c in enumerate(cols)]
    return ["<h2>Single columns</h2><p>TVD per column, worst first, beside the sampling level "
            "(what chance alone gives at these sizes). Categorical columns show their "
            "commonest values and the rest as <em>other</em>; binned columns show the bins, "
            "ticks at their edges.</p>",
            table(rows, ["column", "TVD", "sampling level"]), figures(images)]


def _associations(ev, tick) -> list:
    two = ev.ways[2]
    images = [tick(img) for img in plots.associations(ev.names, two.sets, two.v_real,
                                                      two.v_syn)]
    change = np.abs(two.v_syn - two.v_real)
    order = np.argsort(-change, kind="stable")[:10]
    rows = [(" × ".join(ev.names[a] for a in two.sets[i]), f"{two.v_real[i]:.3f}",
             f"{two.v_syn[i]:.3f}", f"{two.v_syn[i] - two.v_real[i]:+.3f}") for i in order]
    sampled = (f" Only the {len(two.sets):,} pairs evaluated are shown (grey: not evaluated)."
               if two.sampled else "")
    return ["<h2>Associations between columns</h2><p>Cramér's V of every two columns on the "
            "schema's codes (bins for numeric and date columns), from 0 (independent) to 1 "
            "(one determines the other), in the real and the synthetic table." + sampled
            + "</p>", figures(images),
            f"<h3>The {len(order)} pairs whose association changed most</h3>",
            table(rows, ["columns", "V real", "V synthetic", "change"])]


def _worst(ev, k, top, cols, tick) -> list:
    kw = ev.ways[k]
    n = len(kw.sets)
    if kw.sampled:
        which = (f"{'the' if n <= top else f'worst {top} of the'} {n:,} evaluated, "
                 f"a random {n:,} of the {kw.total:,} {kw.noun}")
    else:
        which = (f"{kw.describe()}, worst first" if n <= top
                 else f"worst {top} of {kw.describe()}")
    rows = [(", ".join(ev.names[a] for a in kw.sets[i]), f"{kw.tvd[i]:.4f}",
             f"{kw.independent[i]:.4f}", f"{kw.sampling[i]:.4f}")
            for i in np.argsort(-kw.tvd, kind="stable")[:top]]
    draw = plots.pair if k == 2 else plots.triple
    drawn = [tick(draw([cols[a] for a in s], [ev.real[a] for a in s], [ev.syn[a] for a in s], v))
             for s, v in kw.worst(DRAWN)]
    what = ("real share, synthetic share and their difference per cell (commonest values "
            "and merged bins per axis)" if k == 2 else
            "the cells whose share differs most, real beside synthetic")
    return [f"<h2>{k}-way marginals: {which}</h2>",
            table(rows, ["columns", "TVD", "independent columns", "sampling level"]),
            f"<h3>The {len(drawn)} worst, drawn</h3><p>{what}.</p>", figures(drawn)]
