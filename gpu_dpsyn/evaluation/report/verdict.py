"""The report's verdict, its scores table and how to read them (GUIDE, shown in the report,
says why the thresholds in BANDS are where they are)."""
from __future__ import annotations

import html
import math

import numpy as np

from gpu_dpsyn.evaluation.fidelity import DENSITY_SETS
from gpu_dpsyn.evaluation.report.html import Markup, table

BANDS = {1: (0.02, 0.05), 2: (0.05, 0.10), 3: (0.10, 0.20)}
_ORDER = ("good", "fair", "poor")
MIN_KEPT = 0.5  # of the pairwise structure: below, the headline is at best "fair"
_WHAT = {1: "single columns", 2: "pairs of columns", 3: "triples of columns"}


def band(k: int, value: float) -> str:
    good, fair = BANDS[k]
    return "good" if value <= good else "fair" if value <= fair else "poor"


def excess(kw, scale: float = 1.0) -> float:
    """How far a k-way mean TVD is above what chance alone gives (the mean sampling level,
    two samples of one table): what the bands rate.  A fresh sample of the real table
    was rated poor where the sampling level itself passed the bands.  scale: chance_scale's
    (a small synthetic table is not excused by its own size)."""
    return max(0.0, kw.mean - scale * float(kw.sampling.mean()))


def chance_scale(ev) -> float:
    """The sampling level of two tables the real one's size over the level of these two
    (sqrt(2 / n_r) over sqrt(1 / n_r + 1 / n_s)), at most 1: releasing 100 rows would
    otherwise raise the level the bands forgive."""
    nr, ns = len(ev.real[0]), len(ev.syn[0])
    return min(1.0, math.sqrt(2 * ns / (nr + ns))) if nr and ns else 1.0


def _rated(k: int, value: float) -> Markup:
    b = band(k, value)
    return Markup(f"<span class='{b}'>{b}</span>")


def _linked(kw, scale: float) -> np.ndarray:
    """The column sets whose real columns clearly depend on each other: their departure
    from independence past twice the sampling level (and 0.01)."""
    return kw.independent > np.maximum(2 * scale * kw.sampling, 0.01)


def _structure(kw, scale: float = 1.0) -> tuple:
    """(text, share kept or None): how much of the real table's departure from independent
    columns the synthetic table keeps, over the sets where the real columns clearly depend
    on each other (an average over all sets would drown a few strong links among many
    independent columns)."""
    what = "pairwise" if kw.k == 2 else "three-way"
    linked = _linked(kw, scale)
    if not linked.any():
        return "; the real columns are nearly independent here, so there is little to keep", \
            None
    indep, tvd = float(kw.independent[linked].mean()), float(kw.tvd[linked].mean())
    kept = max(0.0, 1 - tvd / indep)
    n = int(linked.sum())
    where = ("" if linked.all() else f" on the {n:,} {kw.noun} that clearly depend" if n > 1
             else f" on the one {kw.noun[:-1]} that clearly depends")
    return (f"; independent columns would score {indep:.3f}{where}, against {tvd:.3f} for the "
            f"synthetic table, which keeps {kept:.0%} of the real {what} structure"), kept


def verdict(ev, names, ml: dict | None = None, seeded=None) -> str:
    """One paragraph: how close the tables are, against stated thresholds and yardsticks.
    The headline is the worst of every signal the report shows (the k-way TVDs, the real
    structure kept, column sets scoring worse than independent columns would, ML utility),
    and a headline below good names the signals that hold it down."""
    ways, scale = ev.ways, chance_scale(ev)
    signals = [(band(k, excess(ways[k], scale)), f"mean {k}-way TVD {ways[k].mean:.3f}, "
                f"{excess(ways[k], scale):.3f} above chance") for k in (1, 2, 3) if k in ways]
    structure = {k: _structure(ways[k], scale) for k in ways if k > 1}
    kept = structure.get(2, ("", None))[1]
    lost = kept is not None and kept < MIN_KEPT
    if lost:  # close on average, yet most real relationships gone: not good for analysis
        signals.append(("fair", f"{kept:.0%} of the real pairwise structure kept"))
    for k in sorted(structure):
        worse = _worse_than_independent(ways[k], scale)
        if worse:
            signals.append(worse)
    if ml is not None:
        signals.append(ml_rating(ml))
    head = max((r for r, _ in signals), key=_ORDER.index)
    out = [f"<strong>Overall fidelity: <span class='{head}'>{head}</span>.</strong>"]
    if head != "good":
        held = [why for r, why in signals if r == head]
        out.append("What holds it down: " + "; ".join(held) + ".")
    if lost:  # "though" only where the distances themselves are good
        small = all(band(k, excess(ways[k], scale)) == "good" for k in ways)
        out.append(f"Most of the relationships between columns are lost (under {MIN_KEPT:.0%} "
                   "kept, below)" + (", though the mean distances look small." if small
                                     else "."))
    for k in sorted(ways):
        kw = ways[k]
        good, fair = BANDS[k]
        chance = scale * kw.sampling.mean()
        above = (f"{excess(kw, scale):.3f} above chance" if kw.mean > chance else
                 "within chance")
        s = (f"{_WHAT[k].capitalize()}: {band(k, excess(kw, scale))}, {above} (good ≤ "
             f"{good}, fair ≤ {fair}): mean {k}-way TVD {kw.mean:.3f} over {kw.describe()}, "
             f"where two samples of the real table's size differ by {chance:.3f}")
        out.append(s + (structure[k][0] if k > 1 else "") + ".")
    sampling = ways[2].sampling.mean() if 2 in ways else ways[1].sampling.mean()
    if sampling > 0.5 * BANDS[2 if 2 in ways else 1][0]:
        out.append(f"The tables are small for this domain: two random samples of these sizes "
                   f"from one population would already differ by about {sampling:.3f}, so "
                   "distances of that order say little.")
    if 2 in ways:
        (a, b), v = ways[2].worst(1, beyond_chance=True)[0]
        out.append(f"The worst pair is {html.escape(names[a])} × {html.escape(names[b])} "
                   f"(TVD {v:.3f}, the most above what chance alone gives); check the worst "
                   "marginals below before relying on it.")
    if ml is not None:
        out.append(ml_sentence(ml))
    if seeded:
        out.append("<span class='poor'>This run was seeded: do not publish it</span> "
                   "(see Privacy).")
    return "<p class='verdict'>" + " ".join(out) + "</p>"


WORSE_SHARE = 0.1  # of the column sets that clearly depend: worse than independent there
# on this many is poor, on fewer fair


def _worse_than_independent(kw, scale: float = 1.0):
    """(rating, reason) when column sets whose real columns clearly depend on each other
    score worse than independent columns would there, beyond the sampling level (None
    otherwise): the synthetic table then misleads about them more than one that knew
    nothing of their relationship."""
    linked = _linked(kw, scale)
    # beyond the sampling level: a smaller gap is what two samples of one table show
    worse = linked & (kw.tvd > kw.independent + scale * kw.sampling)
    if not worse.any():
        return None
    i = int(np.argmax(np.where(worse, kw.tvd - kw.independent, -np.inf)))
    n, of = int(worse.sum()), int(linked.sum())
    rating = "poor" if n >= WORSE_SHARE * of else "fair"
    return rating, (f"{n:,} of the {of:,} {kw.noun} that clearly depend score worse than "
                    f"independent columns would (up to {kw.tvd[i]:.3f} against "
                    f"{kw.independent[i]:.3f})")


ML_BANDS = (0.8, 0.5)  # share of what the real rows teach kept: good, fair


def ml_rating(ml: dict) -> tuple:
    """(rating, reason) for train-on-synthetic: the share kept of what the real rows teach
    above the floor (the commonest class's accuracy, or R² 0), and for a classifier of its
    macro F1; the worse of the two decides."""
    metric = "accuracy" if ml["task"] == "classification" else "r2"
    real, syn = ml["real"][metric], ml["synthetic"][metric]
    floor = ml.get("majority_accuracy", 0.0)
    shares = []
    if real - floor > 0.02:
        shares.append((max(0.0, (syn - floor) / (real - floor)),
                       "accuracy above the commonest class" if metric == "accuracy" else "R²"))
    f1_real, f1_syn = ml["real"].get("macro_f1"), ml["synthetic"].get("macro_f1")
    if f1_real is not None and f1_syn is not None and f1_real > 0.02:
        shares.append((max(0.0, f1_syn / f1_real), "macro F1"))
    if not shares:
        return "good", "ML utility: the real rows teach little here"
    kept, what = min(shares)
    rating = "good" if kept >= ML_BANDS[0] else "fair" if kept >= ML_BANDS[1] else "poor"
    return rating, (f"ML utility keeps {kept:.0%} of {what} "
                    f"(predicting {html.escape(str(ml['target']))}): {rating}")


def ml_sentence(ml: dict) -> str:
    """Train-on-synthetic against train-on-real, with the floor a model must beat."""
    metric = "accuracy" if ml["task"] == "classification" else "r2"
    real, syn = ml["real"][metric], ml["synthetic"][metric]
    floor = ml.get("majority_accuracy", 0.0)  # R^2 of predicting the mean is 0
    name = "accuracy" if metric == "accuracy" else "R²"
    s = (f"A model predicting {html.escape(ml['target'])} trained on the synthetic table "
         f"scores {name} {syn:.3f} on held-out real rows, against {real:.3f} when trained on "
         f"real rows and {floor:.3f} for "
         f"{'always the commonest class' if metric == 'accuracy' else 'the mean'}")
    if real - floor > 0.02:
        kept = max(0.0, (syn - floor) / (real - floor))
        s += f": it keeps {kept:.0%} of what the real rows teach"
    return s + "."


def scores(ev) -> str:
    """The numbers behind the verdict, each with the sets it averages and its yardsticks."""
    rows = []
    for k, kw in sorted(ev.ways.items()):
        rows.append((f"mean {k}-way TVD", f"{kw.mean:.4f}", kw.describe(),
                     "" if kw.independent is None else f"{kw.independent.mean():.4f}",
                     f"{kw.sampling.mean():.4f}", _rated(k, excess(kw, chance_scale(ev)))))
    if len(ev.domain) >= 3:
        n3 = math.comb(len(ev.domain), 3)
        sets = f"all {n3:,}" if n3 <= DENSITY_SETS else f"{DENSITY_SETS} random of {n3:,}"
        rows.append(("NIST density score", f"{ev.density_score():,.0f}",
                     f"{sets} column triples (1,000,000 is perfect)", "", "", ""))
    rows.append(("NIST range-query score", f"{ev.range_query_score():.4f}",
                 "300 random queries on 3 columns (0 is perfect)", "", "", ""))
    return table(rows, ["metric", "value", "averaged over", "independent columns would score",
                        "sampling level", "rating"])


GUIDE = """
<h2>How to read these numbers</h2>
<p><strong>TVD</strong> (total variation distance) compares the real and the synthetic share of
rows in every cell of a marginal, the table of counts of one set of columns: half the sum of
|real share − synthetic share| over its cells. It equals the largest difference, over every
event those columns can describe ("carrier is UA and origin is JFK or LGA"), between the share
of real and of synthetic rows in that event: 0 means identical, 1 means nothing in common.
Numeric and datetime columns are compared by the schema's bins.</p>
<p><strong>Thresholds.</strong> A mean TVD, less the sampling level below (what chance alone
gives), is called good up to 0.02 for single columns, 0.05 for pairs and 0.10 for triples,
and fair up to twice that. At 0.05, no event on a pair of
columns is off by more than 5 percentage points on average over pairs, small next to most
analyses' other errors; the bar rises with the number of columns because a bigger marginal
spreads the same rows and noise over more cells. For scale, this package's benchmarks at
ε = 1 measured mean 2-way TVD 0.002 (AER Fertility), 0.017 (diamonds) and 0.034 (flights),
and MST, a widely used DP synthesizer, 0.005–0.067 on the same tables.</p>
<p><strong>Yardsticks from this data.</strong> <em>Independent columns</em>: the TVD of a
table that keeps every column's own distribution but draws the columns independently, which
is what keeping no relationship scores; the synthetic table should be far below it. The
verdict compares the two over the column sets where the real columns clearly depend on each
other (independent columns would score more than twice the sampling level there) and rates
the fidelity at best fair when the synthetic table keeps under half of that structure.
<em>Sampling level</em>: about the TVD that two independent random samples of these sizes from
one population show by chance. A synthetic table near or below it is as close to the real one
as a fresh sample of the same population would be (it can go below: it is fitted to the real
table itself, through noise).</p>
<p><strong>NIST scores</strong> (the 2018 NIST Differential Privacy Synthetic Data Challenge).
The <em>density score</em> is 10⁶ × (1 − mean 3-way TVD) over 300 random column triples:
1,000,000 is perfect and 900,000 means a mean 3-way TVD of 0.10. The <em>range-query
score</em> is the mean |ln(real share / synthetic share)| over 300 random queries, each
restricting 3 random columns to a random range of codes: 0 is perfect, 0.1 means a typical
query's share is off by about 10% (a factor e<sup>0.1</sup>), 0.69 by a factor of 2. Shares
below 10⁻⁶ count as 10⁻⁶, so queries that the synthetic table leaves empty weigh
heavily.</p>
"""
