"""The report's privacy section, in plain language, from the run's ledger (privacy_report()
plus the GUM curve, as `synthesize --ledger` writes it)."""
from __future__ import annotations

import html
import math

from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.evaluation.report.html import Markup, esc, table

_KINDS = {"indif": "pair dependence scores (InDif), to choose the marginals",
          "quantiles": "histogram for private quantile bins",
          "3-way errors": "errors of a first fit on column triples, to choose which to measure"}
OPEN_ROWS = 20  # a longer measurement table starts folded


def check_ledger(run, source: str = "ledger") -> dict:
    """The ledger, if it is one (DPSynError naming what is wrong otherwise)."""
    if not isinstance(run, dict):
        raise DPSynError(f"{source} is not a gpu_dpsyn privacy ledger: expected a JSON object, "
                         f"got {type(run).__name__}")
    if "failed_run" in run:  # its spend is real, but it released no table to report on
        raise DPSynError(f"{source} records a run that failed after its charges: nothing was "
                         "released; give the ledger of the run that wrote the table")
    missing = [k for k in ("guarantee", "measurements", "epsilon", "delta") if k not in run]
    if missing:
        raise DPSynError(f"{source} is not a gpu_dpsyn privacy ledger: it lacks {missing}; "
                         "give the file that synthesize --ledger wrote")
    for key, types in (("epsilon", (int, float)), ("delta", (int, float)),
                       ("guarantee", (str,))):
        if isinstance(run[key], bool) or not isinstance(run[key], types):
            raise DPSynError(f"{source}: {key!r} must be a "
                             f"{'number' if str not in types else 'text'}, got "
                             f"{type(run[key]).__name__}")
    from jsonschema import Draft202012Validator
    err = next(iter(sorted(Draft202012Validator(_READ).iter_errors(run),
                           key=lambda e: list(e.path))), None)
    if err is not None:  # what the report and evaluate read, each of its type
        where = "".join(f"[{p!r}]" for p in err.path)
        raise DPSynError(f"{source}: {where or 'the ledger'} {err.message}: give the file "
                         "that synthesize --ledger wrote")
    eps, delta = run["epsilon"], run["delta"]
    if not (math.isfinite(eps) and eps > 0 and math.isfinite(delta) and 0 <= delta < 1):
        raise DPSynError(f"{source}: epsilon {eps} and delta {delta} are no privacy "
                         "parameters (epsilon > 0, 0 <= delta < 1): give the file that "
                         "synthesize --ledger wrote")
    if not all(math.isfinite(x) for x in run.get("gum_history", [])):
        raise DPSynError(f"{source}: its gum_history holds numbers that are not finite: give "
                         "the file that synthesize --ledger wrote")
    for col, edges in run.get("private_bins", {}).items():  # evaluate bins by them
        if not all(math.isfinite(e) for e in edges) or \
                any(b <= a for a, b in zip(edges, edges[1:])):
            raise DPSynError(f"{source}: the private bins of {col!r} are not increasing "
                             "finite numbers: give the file that synthesize --ledger wrote")
    return run


def check_ledger_columns(run, names, source: str = "ledger") -> None:
    """DPSynError where the ledger's marginals measured a column the scored table lacks:
    another run's ledger, whose epsilon, delta and measurements the report would give as
    this table's privacy.  names: the synthetic table's columns (a datetime column's
    hidden time of day is measured under its own label; a group_by level's group, one
    column "s x p x y", under its columns' names joined: measure/privsyn.py)."""
    from gpu_dpsyn.data.types.time_of_day import label
    known = {str(n) for n in names} | {label(str(n)) for n in names}
    other = sorted(c for c in {str(c) for m in run["measurements"]
                               if m.get("label") == "marginal" for c in m.get("columns", [])}
                   if c not in known and not set(c.split(" x ")) <= known)
    if other:
        raise DPSynError(f"{source} records a run that measured column(s) "
                         f"{', '.join(map(repr, other[:5]))}, which the synthetic table "
                         "lacks: give the ledger of the run that wrote it")


_NUMBER = {"type": "number"}
_MAYBE = {"type": ["number", "null"]}  # (a Laplace run has no rho, a Gaussian no scale)
_READ = {  # the keys of a ledger the report and evaluate read (JSON Schema)
    "type": "object",
    "properties": {
        "measurements": {"type": "array", "items": {"type": "object", "properties": {
            "columns": {"type": "array"}, "cells": {"type": ["integer", "null"]},
            "fraction": {"type": ["number", "null"]}, "label": {"type": "string"},
            "rho": _MAYBE, "sigma": _MAYBE, "scale": _MAYBE,
            "noise": {"type": ["object", "null"]}}}},
        "gum_history": {"type": "array", "items": _NUMBER},
        "spent_fraction": _NUMBER,
        "private_bins": {"type": "object", "additionalProperties": {
            "type": "array", "items": _NUMBER, "minItems": 2}}}}


def kind(m: dict) -> str:
    if m.get("label") == "marginal":
        return f"{len(m.get('columns', []))}-way marginal"
    return _KINDS.get(m.get("label"), str(m.get("label", "?")))


def _noise(m: dict) -> Markup:
    n = m.get("noise") or {}
    sigma = n.get("sigma", m.get("sigma"))
    if n.get("distribution") == "discrete_laplace":
        text, exact = f"discrete Laplace, scale {m.get('scale', float('nan')):.4g}", \
            f"scale = {n.get('scale')}"
    else:
        text, exact = "discrete Gaussian", f"σ² = {n.get('sigma2')}" if "sigma2" in n else ""
    text += f", σ = {sigma:.4g}" if isinstance(sigma, (int, float)) else ""
    extra = f"<br><span class='exact'>{html.escape(exact)} exactly</span>" if exact else ""
    return Markup(html.escape(text) + extra)


def _budget(m: dict) -> str:
    v = m.get("rho") if m.get("rho") is not None else m.get("epsilon")
    return "" if v is None else f"{v:.4g}"


def _words(run: dict) -> str:
    eps, delta = run["epsilon"], run["delta"]
    laplace = run.get("mechanism") == "laplace"
    except_ = ("with no exception (δ = 0: the Laplace mechanism and basic composition)"
               if laplace else f"except with probability at most δ = {delta:g}")
    return (f"Whether or not any one individual's records are in the real table, the "
            f"probability of any outcome of this release (the synthetic table and its ledger, "
            f"and anything computed from them) changes by at most a factor of "
            f"e<sup>ε</sup> = {math.exp(min(eps, 700)):.3g} (ε = {eps:g}), {except_}. "
            f"Smaller ε is stronger: up to 1 is strong, 1–3 moderate, up to 10 weak.")


def section(run: dict | None, schema_inferred: bool = False) -> list:
    parts = ["<h2>Privacy</h2>"]
    if run is None:
        parts.append("<p class='warn'>No privacy ledger was given, so this report cannot state "
                     "the run's guarantee: pass the JSON that <code>synthesize --ledger</code> "
                     "wrote with <code>evaluate --ledger</code>.</p>")
    else:
        parts += [f"<p><strong>Unit of privacy:</strong> "
                  f"{esc(run.get('unit_of_privacy', 'not recorded in this ledger'))}. Two tables "
                  f"are neighbours when one is the other with this change: "
                  f"{esc(run.get('neighbouring', 'not recorded in this ledger'))}.</p>",
                  f"<p><strong>The guarantee:</strong> {esc(run['guarantee'])}. In words: "
                  f"{_words(run)}</p>"]
        for key, what in (("selection", "How the marginals were chosen"),
                          ("prior", "Public prior"), ("grouping", "Groups")):
            if isinstance(run.get(key), str):
                parts.append(f"<p><strong>{what}:</strong> {esc(run[key])}</p>")
    parts.append(
        "<p><strong>The schema is public.</strong> Column names, the values each column may "
        "take, numeric ranges and bin edges are inputs taken as public knowledge: the "
        "guarantee does not cover them. A schema drafted by <code>infer-schema</code> from the "
        "private table is <em>not</em> private (it shows which values occur and each column's "
        "range): replace what it read off the data with public facts before a release.</p>")
    if schema_inferred:
        parts.append("<p class='warn'>This evaluation inferred its schema from the tables "
                     "(no <code>--schema</code>): fine for an evaluation, which is not "
                     "published, but that schema must not be used for a release.</p>")
    if run is None:
        return parts
    if isinstance(run.get("schema_drafted_from_data"), str):
        parts.append("<p class='danger'><strong>The schema was drafted from the private "
                     f"data:</strong> {esc(run['schema_drafted_from_data'])}. Review it "
                     "before a release.</p>")
    seeded = run.get("seeded")
    if seeded:
        parts.append("<p class='danger'><strong>This run was seeded (<code>--seed</code>): do "
                     "not publish it.</strong> Its noise can be regenerated from the seed and "
                     "the public parameters, and two releases made with one seed from the same "
                     "or neighbouring tables can be compared to reveal individual records. Run "
                     "<code>synthesize</code> again without <code>--seed</code> for a "
                     "release.</p>")
    elif seeded is False:
        parts.append("<p>Not seeded: the noise key came from the operating system's random "
                     "source, as a release needs.</p>")
    else:
        parts.append("<p class='warn'>This ledger does not say whether the run was seeded.</p>")
    return parts + _measurements(run)


def _measurements(run: dict) -> list:
    ms = run["measurements"]
    unit = "ε (pure DP)" if run.get("mechanism") == "laplace" else "ρ (zCDP)"
    kinds: dict = {}
    for m in ms:
        k = kinds.setdefault(kind(m), [0, 0.0, 0])
        k[0] += 1
        k[1] += float(m.get("fraction") or 0)
        k[2] += int(m.get("cells") or 0)
    summary = table([(k, n, f"{share:.1%}", f"{cells:,}") for k, (n, share, cells)
                     in kinds.items()], ["what was measured", "how many", "share of the budget",
                                         "cells"])
    rows = [(i + 1, kind(m), ", ".join(map(str, m.get("columns", []))),
             f"{int(m.get('cells') or 0):,}", f"{float(m.get('fraction') or 0):.2%}",
             _budget(m), _noise(m)) for i, m in enumerate(ms)]
    detail = table(rows, ["#", "what", "columns", "cells", "share of the budget", unit,
                          "noise added to each cell"])
    parts = [f"<h3>What the budget paid for ({len(ms)} measurements, "
             f"{float(run.get('spent_fraction', 1)):.1%} of the budget spent)</h3>",
             "<p>Each measurement is a table of counts from the real data with random noise "
             "added to every cell; everything else (the synthetic rows, the bins) is computed "
             "from these noisy counts only.</p>", summary]
    if len(ms) <= OPEN_ROWS:
        parts.append(detail)
    else:
        parts.append(f"<details><summary>All {len(ms)} measurements</summary>{detail}</details>")
    if run.get("private_bins"):  # DP outputs of the "quantiles" measurements
        parts += ["<h3>Private quantile bins (edges chosen by the run)</h3>",
                  table([(c, ", ".join(f"{e:g}" for e in edges))
                         for c, edges in run["private_bins"].items()], ["column", "edges"])]
    return parts
