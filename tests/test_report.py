"""The HTML report: labels at any domain size, verdict, privacy section, the page."""
import re

import numpy as np
import pandas as pd
import pytest

from conftest import small_table, xyz_table
from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.evaluation.fidelity import evaluate_tables
from gpu_dpsyn.data.schema import load_schema

pytest.importorskip("matplotlib")
from gpu_dpsyn.evaluation.report import check_ledger, labels, privacy, verdict  # noqa: E402
from report_case import case, page  # noqa: E402


def _col(spec):
    return load_schema({"columns": {"c": spec}})["c"]


def test_bin_labels_say_what_each_bin_holds():
    clock = _col({"type": "numeric", "integer": True, "min": 0, "max": 2400, "support": "hhmm",
                  "edges": [0, 600, 1200, 1800, 2401], "nullable": True})
    assert labels.code_texts(clock) == ["00:00–05:59", "06:00–11:59", "12:00–17:59",
                                        "18:00–24:00", "missing"]
    assert labels.edge_texts(clock) == ["00:00", "06:00", "12:00", "18:00", "24:00"]
    delay = _col({"type": "numeric", "integer": True, "edges": [-60, -15, 0, 15]})
    assert labels.code_texts(delay) == ["-60 – -16", "-15 – -1", "0–14"]
    month = _col({"type": "datetime", "min": "2013-01-01", "max": "2013-12-31", "unit": "month"})
    assert labels.code_texts(month)[:2] == ["2013-01", "2013-02"]
    wide = _col({"type": "numeric", "min": 0, "max": 2e6, "bins": 2})
    assert labels.code_texts(wide) == ["[0, 1,000,000)", "[1,000,000, 2,000,000)"]


def test_bins_of_whole_units_are_labelled_by_their_first_and_last_unit():
    # [Jan 1, Jan 8) holds Jan 1 to Jan 7: "2013-01-01 – 2013-01-08" read as through the 8th
    week = _col({"type": "datetime", "min": "2013-01-01", "max": "2013-01-21T23:59:59",
                 "unit": "day", "bins": 3})
    assert labels.code_texts(week) == ["2013-01-01 – 2013-01-07", "2013-01-08 – 2013-01-14",
                                       "2013-01-15 – 2013-01-21"]
    day = _col({"type": "datetime", "min": "2013-01-01", "max": "2013-01-02T23:59:59",
                "unit": "day", "bins": 2})
    assert labels.code_texts(day) == ["2013-01-01", "2013-01-02"]  # a bin of one day
    # whole seconds: a bin ends at its last second, in the starts' format when that says it
    sec = _col({"type": "datetime", "min": "2013-01-01T10:00:00",
                "max": "2013-01-01T10:09:59", "unit": "second", "bins": 2})
    assert labels.code_texts(sec) == ["2013-01-01 10:00 – 2013-01-01 10:04",
                                      "2013-01-01 10:05 – 2013-01-01 10:09"]
    days = _col({"type": "datetime", "min": "2013-01-01", "max": "2013-04-10T23:59:59",
                 "unit": "day", "bins": 100})  # merged 3 to a bar on the plots
    assert labels.axis(days, np.ones(100)).labels[:2] == ["2013-01-01 – 2013-01-03",
                                                          "2013-01-04 – 2013-01-06"]


def test_a_wide_categorical_shows_its_commonest_values_and_other():
    col = _col({"type": "categorical", "values": [f"v{i}" for i in range(105)]})
    counts = np.zeros(105)
    counts[[7, 3, 50]] = [30, 20, 10]
    ax = labels.axis(col, counts)
    assert ax.size == labels.TOP_CATEGORIES + 1
    assert ax.labels[:3] == ["v7", "v3", "v50"]
    assert ax.labels[-1] == f"other ({105 - labels.TOP_CATEGORIES} values)"
    shares = np.arange(105, dtype=float)
    assert ax.sum(shares).sum() == shares.sum()  # nothing lost in the grouping
    long = _col({"type": "categorical", "values": ["x" * 60, "y"]})
    assert all(len(t) <= labels.LABEL_CHARS for t in labels.axis(long, np.ones(2)).labels)
    # column names sharing a long prefix stay apart
    assert labels.short_name("attribute_with_long_name_24", 20) == "attribute…ng_name_24"


def test_many_bins_are_merged_with_few_ticks_at_their_edges():
    col = _col({"type": "numeric", "min": 0, "max": 1, "bins": 100, "nullable": True})
    ax = labels.axis(col, np.ones(101))
    assert ax.size == 34 + 1  # 100 bins in groups of 3, and missing
    assert 6 <= len(ax.ticks) <= labels.MAX_TICKS + 1
    assert ax.ticks[0] == (-0.5, "0") and ax.ticks[-2] == (33.5, "1")
    assert ax.ticks[-1] == (35.0, "missing")  # one place apart from the bins
    grid = labels.axis(col, np.ones(101), gap=False)
    assert grid.ticks[-1] == (34.0, "missing") and (33.5, "1") not in grid.ticks
    unit = labels.axis(_col({"type": "numeric", "integer": True, "min": 1, "max": 12}),
                       np.ones(12))
    assert unit.ticks == [(g, str(g + 1)) for g in range(12)]  # values under the bars


def _ev(real, syn, spec):
    return evaluate_tables(real, syn, load_schema(spec))


def test_verdict_good_for_a_copy_poor_for_independent_columns():
    df, spec = xyz_table(n=4000, values=8)
    ev = _ev(df, df.sample(frac=1, random_state=0), spec)
    text = verdict.verdict(ev, ev.names)
    assert "Overall fidelity: <span class='good'>good</span>" in text
    assert "keeps 100% of the real pairwise structure" in text
    r = np.random.default_rng(1)
    shuffled = pd.DataFrame({c: r.permutation(df[c].to_numpy()) for c in df.columns})
    ev = _ev(df, shuffled, spec)
    text = verdict.verdict(ev, ev.names, seeded=True)
    assert "Overall fidelity: <span class='poor'>poor</span>" in text
    assert re.search(r"keeps [0-2]% of the real pairwise", text)
    # the distances are not small here: no "though they look small" (it said so)
    assert "lost" in text and "look small" not in text
    assert "do not publish" in text
    assert verdict.band(2, 0.05) == "good" and verdict.band(2, 0.0501) == "fair"
    assert verdict.band(3, 0.21) == "poor"


def test_verdict_small_distances_but_the_one_link_lost_is_no_better_than_fair():
    # 12 independent columns, save that b copies a; the synthetic table cuts that link:
    # its mean 2-way TVD is in the good band, but it keeps none of the real structure
    r = np.random.default_rng(0)
    cols = "abcdefghijkl"
    real = pd.DataFrame({c: r.integers(0, 4, 20000) for c in cols}).assign(b=lambda d: d.a)
    syn = real.assign(b=r.permutation(real.b.to_numpy()))
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 3}
    ev = _ev(real, syn, {"columns": {c: spec for c in cols}})
    assert verdict.band(2, ev.ways[2].mean) == "good"
    text = verdict.verdict(ev, ev.names)
    assert "Overall fidelity: <span class='fair'>fair</span>" in text
    assert "Most of the relationships between columns are lost" in text
    assert "though the mean distances look small" in text
    assert "on the one column pair that clearly depends" in text and "keeps 0%" in text


def test_verdict_warns_when_the_tables_are_too_small_to_judge():
    df, spec = small_table(n=60)
    ev = _ev(df, small_table(n=60, seed=1)[0], spec)
    assert "The tables are small for this domain" in verdict.verdict(ev, ev.names)


def test_ml_sentence_compares_with_the_commonest_class():
    ml = {"target": "y", "task": "classification", "majority_accuracy": 0.5,
          "real": {"accuracy": 0.9}, "synthetic": {"accuracy": 0.8}}
    assert "keeps 75% of what the real rows teach" in verdict.ml_sentence(ml)


def test_privacy_section_in_plain_language():
    run = case()[3]
    text = "".join(privacy.section(run))
    assert run["unit_of_privacy"] in text and run["neighbouring"] in text
    assert run["guarantee"] in text and "e<sup>ε</sup> = 7.39 (ε = 2)" in text
    assert "The schema is public" in text and "<em>not</em> private" in text
    assert "do not publish it" in text  # case() is seeded
    m = run["measurements"][0]
    assert m["noise"]["sigma2"] in text and "ρ (zCDP)" in text
    assert f"{m['rho']:.4g}" in text
    assert "<details>" not in text  # few measurements: the table is open
    text = "".join(privacy.section({**run, "seeded": False}, schema_inferred=True))
    assert "Not seeded" in text and "do not publish" not in text
    assert "inferred its schema from the tables" in text
    assert "No privacy ledger was given" in "".join(privacy.section(None))
    assert "drafted from the private data" not in text
    note = "k.values: read off the private data by infer-schema"
    text = "".join(privacy.section({**run, "schema_drafted_from_data": note}))
    assert "drafted from the private data:</strong> " + note in text


def test_privacy_section_of_a_laplace_run():
    from gpu_dpsyn import Synthesizer
    df, spec = small_table()
    syn = Synthesizer(1.0, 1e-9, method="dpsyn", mechanism="laplace", iterations=1, seed=0,
                      progress=False).fit(df, spec)
    text = "".join(privacy.section(syn.privacy_report()))
    assert "ε (pure DP)" in text and "discrete Laplace" in text and "δ = 0" in text


@pytest.mark.parametrize("bad,match", [([], "expected a JSON object, got list"),
                                       ({"epsilon": 1}, "it lacks"),
                                       ({"epsilon": 1, "delta": 1e-9, "guarantee": "",
                                         "measurements": [3]}, "is not of type 'object'")])
def test_a_file_that_is_no_ledger_is_named(bad, match):
    with pytest.raises(DPSynError, match=match):
        check_ledger(bad)


def test_the_page_opens_with_the_verdict_then_the_run_then_privacy():
    html = page()
    body = html[html.index("<body>"):]
    order = [body.index(s) for s in ("class='notice'", "class='verdict'", "<h2>The run",
                                     "<h2>Privacy", "<h2>Scores", "How to read",
                                     "<h2>Single columns", "Associations", "2-way marginals",
                                     "3-way marginals", "GUM convergence")]
    assert order == sorted(order)
    assert "real.csv: 1,500 rows" in body and "evaluation runtime</dt><dd>1.2 s" in body
    assert "gpu_dpsyn 0.1.0" in body and "YES: do not publish" in body
    # 6 columns: all 15 pairs and all 20 triples fit in one table; never "worst 25 of 15"
    assert "2-way marginals: all 15 column pairs, worst first" in body
    assert "3-way marginals: all 20 column triples, worst first" in body
    assert "worst 25" not in body
    images = re.findall(r"<img alt=\"([^\"]+)\" src=\"data:image/png;base64,", body)
    # 6 histograms, the association panels, 3 pairs, 3 triples, GUM
    assert len(images) == body.count("<img") == 14
    assert "clock</td><td>real</td><td>" in body and re.search(r"\d\d:\d\d</td>", body)


def test_a_wider_table_lists_the_worst_of_its_pairs(no_raster):
    from gpu_dpsyn.evaluation.report import page as page_module
    df, spec = xyz_table(n=500, values=4)
    spec = {"columns": {c: spec["columns"]["x"] for c in "abcdefgh"}}
    df = pd.DataFrame({c: df["x"] for c in "abcdefgh"})
    html = page_module.build_report(df, df, load_schema(spec), top=5, max_sets=10)
    assert "2-way marginals: worst 5 of the 10 evaluated, a random 10 of the 28 column pairs" \
        in html
    assert "No privacy ledger was given" in html


def test_top_must_be_a_positive_integer():
    from gpu_dpsyn.evaluation.report import build_report
    real, syn, schema, _ = case()
    with pytest.raises(DPSynError, match="top must be an integer >= 1, got 0"):
        build_report(real, syn, schema, top=0)


def test_a_grouped_run_shows_each_levels_groups(no_raster):
    from conftest import small_table
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.evaluation.report import build_report
    real, spec = small_table(1500)
    syn = Synthesizer(2.0, 1e-9, iterations=3, seed=0, progress=False, group_by=["color"])
    out = syn.fit(real, spec).sample()
    run = syn.privacy_report()
    html = build_report(real, out, load_schema(spec), run)
    assert "<h2>Per group</h2>" in html and "Groups of color: 3 in the real table" in html
    for c in ("red", "green", "blue"):
        assert f"color={c}" in html
    assert "<strong>Groups:</strong> group_by: each level" in html
    assert "in all groups together" in html  # the assumption parallel composition needs
    # a ledger without groups shows no such section
    run.pop("group_by")
    assert "Per group" not in build_report(real, out, load_schema(spec), run)


def test_a_bin_of_one_value_is_labelled_and_ticked_once():
    col = _col({"type": "numeric", "edges": [0, 0, 0.5, 2, 7.5, 7.5]})
    assert labels.code_texts(col) == ["0", "(0, 0.5)", "[0.5, 2)", "[2, 7.5)", "7.5"]
    texts = [t for _, t in labels.axis(col, np.ones(5)).ticks]
    assert texts == ["0", "0.5", "2", "7.5"]


def test_verdict_poor_when_marginals_are_good_but_ml_utility_is_lost():
    df, spec = xyz_table(n=4000, values=8)
    ev = _ev(df, df.sample(frac=1, random_state=0), spec)  # marginals as good as a copy
    ml = {"target": "x", "task": "classification", "majority_accuracy": 0.13,
          "real": {"accuracy": 0.74, "macro_f1": 0.74},
          "synthetic": {"accuracy": 0.27, "macro_f1": 0.37}}
    text = verdict.verdict(ev, ev.names, ml)
    assert "Overall fidelity: <span class='poor'>poor</span>" in text
    assert "What holds it down: ML utility keeps 23% of accuracy above the commonest class" \
        in text
    ml["synthetic"] = {"accuracy": 0.72, "macro_f1": 0.71}  # nearly all kept: good again
    assert "Overall fidelity: <span class='good'>good</span>" in \
        verdict.verdict(ev, ev.names, ml)
    ml["synthetic"] = {"accuracy": 0.72, "macro_f1": 0.45}  # macro F1 lost: fair
    text = verdict.verdict(ev, ev.names, ml)
    assert "<span class='fair'>fair</span>" in text and "61% of macro F1" in text


def test_verdict_names_sets_that_score_worse_than_independent_columns():
    # b copies a in the real table; the synthetic table ties b to a the wrong way
    r = np.random.default_rng(0)
    real = pd.DataFrame({"a": r.integers(0, 4, 20000), "c": r.integers(0, 4, 20000)})
    real["b"] = real.a
    syn = real.assign(b=(real.a + 1) % 4)
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 3}
    ev = _ev(real, syn, {"columns": {c: spec for c in "abc"}})
    text = verdict.verdict(ev, ev.names)
    assert "Overall fidelity: <span class='poor'>poor</span>" in text
    assert re.search(r"1 of the 1 column pairs that clearly depend score worse than "
                     r"independent columns would \(up to 1\.000 against 0\.750\)", text)


def test_a_set_worse_than_independent_only_by_chance_does_not_lower_the_verdict():
    """20 of 24,123 dependent triples scoring 0.018 against 0.014 for independent
    columns made a release whose every rating was good "fair": a gap within the
    sampling level of two samples of one table is chance."""
    from types import SimpleNamespace
    kw = SimpleNamespace(independent=np.array([0.30, 0.014, 0.20]),
                         sampling=np.array([0.005, 0.006, 0.004]),
                         tvd=np.array([0.02, 0.018, 0.01]), noun="column triples")
    assert verdict._worse_than_independent(kw) is None  # 0.004 above: within 0.006
    kw.tvd = np.array([0.02, 0.03, 0.01])  # 0.016 above: beyond it
    assert verdict._worse_than_independent(kw)[0] == "poor"  # 1 of the 2 clearly linked


def test_a_fresh_sample_of_the_real_table_is_rated_good():
    """A second sample of one population was rated poor (2-way TVD 0.122 against a good
    band of 0.05), its sampling level alone (0.109) past the fair band: the bands now
    rate what a table is above that level."""
    r = np.random.default_rng(0)

    def sample(n):
        a = r.integers(0, 60, n)
        return pd.DataFrame({"a": a, "b": (a + r.integers(0, 3, n)) % 60,
                             "c": r.integers(0, 40, n)})
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 59}
    ev = _ev(sample(3000), sample(3000), {"columns": {c: spec for c in "abc"}})
    assert ev.ways[2].sampling.mean() > 0.05  # chance alone is past the good band
    text = verdict.verdict(ev, ev.names)
    assert "Overall fidelity: <span class='good'>good</span>" in text
    assert "above chance (good ≤ 0.05" in text  # the rated number first, then the TVD
    assert "where two samples of the real table's size differ by" in text
    copy = sample(3000)
    same = _ev(copy, copy, {"columns": {c: spec for c in "abc"}})
    assert "within chance" in verdict.verdict(same, same.names)  # (not "0.000 above")
    few = _ev(sample(3000), sample(60), {"columns": {c: spec for c in "abc"}})
    assert "Overall fidelity: <span class='good'>" not in verdict.verdict(few, few.names)

    def loose(n):  # b is a in 30% of the rows: a dependence a 60-row level would hide
        a = r.integers(0, 10, n)
        return pd.DataFrame({"a": a, "b": np.where(r.random(n) < 0.3, a,
                                                   r.integers(0, 10, n)),
                             "c": r.integers(0, 10, n)})
    tens = {"type": "numeric", "integer": True, "min": 0, "max": 9}
    few = _ev(loose(3000), loose(60), {"columns": {c: tens for c in "abc"}})
    assert "column pairs that clearly depend" in verdict.verdict(few, few.names)


def _figures(monkeypatch, draw):
    """The matplotlib figures `draw()` builds (plots.png captured, not rasterised)."""
    from gpu_dpsyn.evaluation.report import plots
    figs = []
    monkeypatch.setattr(plots, "png", lambda fig, alt: figs.append(fig) or "")
    draw(plots)
    for fig in figs:
        fig.canvas.draw()
    return figs


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_titles_clear_the_legend_and_the_panels_however_long_the_names(monkeypatch):
    # seen in a browser: a long column name ran into the legend, and a pair figure's title
    # sat on its panels' titles
    long = "very_long_column_name_of_the_respondent"
    schema = load_schema({"columns": {
        long: {"type": "categorical", "values": [0, 1, 2, 3, 4]},
        "x": {"type": "numeric", "min": 0, "max": 1000, "bins": 20}}})
    r = np.random.default_rng(0)
    real = [r.integers(0, 5, 500).astype(np.uint8), r.integers(0, 20, 500).astype(np.uint8)]
    syn = [r.integers(0, 5, 500).astype(np.uint8), r.integers(0, 20, 500).astype(np.uint8)]
    cols = list(schema.columns)
    figs = _figures(monkeypatch, lambda p: (p.histogram(cols[0], real[0], syn[0]),
                                            p.histogram(cols[1], real[1], syn[1]),
                                            p.pair(cols, real, syn, 0.041)))
    for fig in figs[:2]:
        ax = fig.axes[0]
        r_ = fig.canvas.get_renderer()
        title = ax.title if ax.title.get_text() else ax._left_title
        assert not _overlap(title.get_window_extent(r_),
                            ax.get_legend().get_window_extent(r_)), title.get_text()
    fig = figs[2]
    r_ = fig.canvas.get_renderer()
    top = fig._suptitle.get_window_extent(r_)
    for ax in fig.axes[:3]:  # the three panels (their colour bars come after)
        assert not _overlap(top, ax.title.get_window_extent(r_)), ax.title.get_text()


def _ledger(**change):
    run = {"guarantee": "0.01-zCDP, hence (1, 1e-09)-DP", "epsilon": 1.0, "delta": 1e-9,
           "measurements": [{"label": "marginal", "columns": ["a", "b"], "cells": 4,
                             "fraction": 0.5, "rho": 0.005, "sigma": 3.0}],
           "gum_history": [0.1, 0.05], "spent_fraction": 1.0,
           "private_bins": {"inc": [0, 10, 100, 1000]}}
    run.update(change)
    return run


@pytest.mark.parametrize("change", [
    {"private_bins": {"inc": None}}, {"private_bins": {"inc": "abc"}},
    {"private_bins": {"inc": [0, 10, 5, 2000]}}, {"private_bins": {"inc": [1]}},
    {"private_bins": {"inc": [0, 300, float("inf")]}},
    {"private_bins": {"inc": [0, float("nan"), 600]}},
    {"private_bins": [0, 1]}, {"spent_fraction": [1]}, {"spent_fraction": "all"},
    {"measurements": [{"label": "marginal", "cells": "many"}]},
    {"measurements": [{"label": "marginal", "fraction": None, "columns": "ab"}]},
    {"gum_history": [{"a": 1}]}, {"gum_history": ["0.1"]},
    # values no run writes: the report printed "ε, δ -5, 2" and "nan"
    {"epsilon": -5}, {"epsilon": float("nan")}, {"epsilon": float("inf")}, {"delta": 2},
    {"delta": -1e-9}, {"gum_history": [0.1, float("nan")]}])
def test_a_ledger_the_report_cannot_read_is_refused_in_one_line(change):
    """A ledger edited by hand failed with TypeErrors deep in the report, or (edges out
    of order) changed the printed scores silently."""
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.evaluation.report.privacy import check_ledger
    assert check_ledger(_ledger()) is not None
    with pytest.raises(DPSynError) as e:
        check_ledger(_ledger(**change), "ledger 'l.json'")
    assert "\n" not in str(e.value) and "ledger 'l.json'" in str(e.value)


def test_the_verdict_names_the_pair_worst_beyond_chance():
    """The verdict named device_id x ts (TVD 0.83), most of it the sampling level of a
    144,000-cell pair (0.53), over a pair whose dependence was lost (battery x status)."""
    rng = np.random.default_rng(0)
    n = 3000
    a = rng.integers(0, 400, n)
    b = rng.integers(0, 400, n)  # a x b: 160,000 cells, all chance
    c = rng.integers(0, 3, n)
    d = np.where(rng.random(n) < 0.9, c, rng.integers(0, 3, n))  # c x d: strongly linked
    real = pd.DataFrame({"a": a, "b": b, "c": c, "d": d})
    syn = real.assign(a=rng.integers(0, 400, n), b=rng.integers(0, 400, n),
                      d=rng.integers(0, 3, n))  # the link lost
    spec = {"columns": {"a": {"type": "categorical", "values": list(range(400))},
                        "b": {"type": "categorical", "values": list(range(400))},
                        "c": {"type": "categorical", "values": [0, 1, 2]},
                        "d": {"type": "categorical", "values": [0, 1, 2]}}}
    ev = _ev(real, syn, spec)
    assert ev.ways[2].worst(1)[0][0] != (2, 3)  # the largest TVD is chance's
    assert "The worst pair is c × d" in verdict.verdict(ev, ev.names)
