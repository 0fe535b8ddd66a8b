import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.evaluation.evaluate import (density_score, per_marginal_tvd, range_query_score,
    tvd_codes)


def _cols(seed, n=5000):
    r = np.random.default_rng(seed)
    return [r.integers(0, 4, n).astype(np.uint8) for _ in range(4)]


def test_tvd_closed_form():
    a = [np.array([0, 0, 1, 1], np.uint8)]
    b = [np.array([0, 0, 0, 1], np.uint8)]
    assert tvd_codes(a, b, (2,), 1)[0] == pytest.approx(0.25)
    assert tvd_codes(a, a, (2,), 1)[0] == 0


def test_scores_identical_and_different_tables():
    real = _cols(0)
    assert density_score(real, real, (4,) * 4) == pytest.approx(1e6)
    assert range_query_score(real, real, (4,) * 4) == 0
    other = [np.zeros(5000, np.uint8)] * 4
    assert density_score(real, other, (4,) * 4) < 0.2e6
    # all-zero table: queries that exclude code 0 see p_syn = 0 -> floored at 1e-6
    assert range_query_score(real, other, (4,) * 4) > 1.0


def test_per_marginal_tvd_is_sorted_and_named():
    real, syn = _cols(0), _cols(1)
    syn[1] = real[0].copy()
    rows = per_marginal_tvd(real, syn, (4,) * 4, list("abcd"), 2)
    assert len(rows) == 6 and rows == sorted(rows, key=lambda x: -x[1])
    assert rows[0][0] in {("a", "b"), ("b", "c"), ("b", "d")}


def test_html_report(tmp_path, flights, flights_schema, no_raster):
    pytest.importorskip("matplotlib")
    from gpu_dpsyn.cli import main
    real = tmp_path / "real.csv"
    cols = ["month", "carrier", "origin", "dep_delay"]
    flights[cols].iloc[:4000].to_csv(real, index=False)
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"columns": {c: flights_schema[c].to_dict() for c in cols}}))
    syn, ledger, rep = tmp_path / "syn.csv", tmp_path / "l.json", tmp_path / "r.html"
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "2", "--delta",
                 "1e-9", "--out", str(syn), "--iterations", "4", "--ledger", str(ledger),
                 "--quiet", "--seed", "0"]) == 0
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema), "--report", str(rep),
                 "--ledger", str(ledger)]) == 0
    page = rep.read_text()
    for part in ("NIST density score", "NIST range-query score", "Single columns",
                 "GUM convergence", "Privacy", "pair dependence scores (InDif)",
                 "carrier, origin", "Cramér's V", "2-way marginals: all 6 column pairs"):
        assert part in page, part
    # 4 histograms, one figure of association panels, 3 pairs and 3 triples drawn, GUM
    # (drawn to PNG in test_report and test_report_browser)
    assert page.count("<img alt=") == 12
    assert main(["evaluate", str(real), str(syn), "--report", str(rep), "--ledger",
                 str(tmp_path / "none.json")]) == 2


def test_report_opens_with_a_not_for_publication_notice(flights, flights_schema, no_raster):
    pytest.importorskip("matplotlib")
    from gpu_dpsyn.evaluation.report import build_report
    from gpu_dpsyn.data.schema import Schema
    schema = Schema([flights_schema["carrier"], flights_schema["origin"]])
    real = flights[["carrier", "origin"]].iloc[:500]
    page = build_report(real, real.sample(frac=1, random_state=0), schema)
    body = page[page.index("<body>") + len("<body>"):]
    first = body[:body.index("</div>")]  # the first element of the page
    assert "REAL" in first and "not for publication" in first.lower()
    assert "500 rows" in body  # ...because the page does show real statistics


@pytest.mark.parametrize("bad", [0, -3, 2.5])
def test_max_sets_must_be_a_positive_integer(bad):
    from gpu_dpsyn.errors import ParameterError
    with pytest.raises(ParameterError, match="max_sets must be an integer >= 1"):
        tvd_codes(_cols(0), _cols(1), (4,) * 4, 2, max_sets=bad)


def test_the_python_helpers_take_a_schema_as_fit_does(flights, flights_schema, no_raster,
                                                      tmp_path):
    """A schema's path or dict, as fit() and ml_utility take it: mean_tvd, evaluate_tables
    and build_report raised AttributeError ('str' object has no attribute 'names')."""
    from gpu_dpsyn.evaluation.evaluate import mean_tvd
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables
    from gpu_dpsyn.evaluation.report import build_report
    cols = ["carrier", "origin", "month"]
    as_dict = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(as_dict))
    real = flights[cols].iloc[:600]
    syn = real.sample(frac=1, random_state=1).iloc[:400]
    want = mean_tvd(real, syn, flights_schema.__class__([flights_schema[c] for c in cols]))
    for schema in (as_dict, str(path), path):
        assert mean_tvd(real, syn, schema) == want
        assert evaluate_tables(real, syn, schema, ways=(1,)).ways[1].mean == want[1]
    pytest.importorskip("matplotlib")
    assert "carrier" in build_report(real, syn, str(path))


def test_mean_tvd_of_an_empty_table_says_what_is_empty(flights, flights_schema):
    """Not "the table is empty: nothing to synthesize" (the fit's words)."""
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.evaluation.evaluate import mean_tvd
    real = flights[[c.name for c in flights_schema.columns]].iloc[:300]
    with pytest.raises(DPSynError, match="the synthetic table has no rows"):
        mean_tvd(real, real.iloc[:0], flights_schema)


def test_a_real_table_the_fit_repaired_is_refused_saying_how_to_score_it(flights,
                                                                         flights_schema):
    """fit() repairs a value the schema does not allow (a carrier not listed) by its rule;
    evaluate_tables refused the same table without a word of that (the CLI repairs it)."""
    from gpu_dpsyn.data.repair import repair
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables
    real = flights[[c.name for c in flights_schema.columns]].iloc[:300].copy()
    real.loc[real.index[0], "carrier"] = "ZZ"
    with pytest.raises(DPSynError, match=r"the real table: .*repair\(real, schema\)"):
        evaluate_tables(real, real.iloc[1:], flights_schema, ways=(1,))
    fixed = repair(real, flights_schema)
    assert evaluate_tables(fixed, fixed, flights_schema, ways=(1,)).ways[1].mean == 0


def test_the_repair_the_refusal_names_takes_the_schema_evaluate_tables_took(flights,
                                                                            flights_schema,
                                                                            tmp_path):
    """evaluate_tables takes a schema's dict or path; the repair(real, schema) its refusal
    names raised AttributeError ('dict' object has no attribute 'synth_columns')."""
    from gpu_dpsyn.data.repair import repair
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.evaluation.fidelity import evaluate_tables
    real = flights[[c.name for c in flights_schema.columns]].iloc[:300].copy()
    real.loc[real.index[0], "carrier"] = "ZZ"
    as_dict = flights_schema.to_dict()
    path = tmp_path / "s.json"
    path.write_text(json.dumps(as_dict))
    for schema in (as_dict, str(path)):
        with pytest.raises(DPSynError, match=r"repair\(real, schema\)"):
            evaluate_tables(real, real.iloc[1:], schema, ways=(1,))
        fixed = repair(real, schema)
        assert evaluate_tables(fixed, fixed, schema, ways=(1,)).ways[1].mean == 0


def test_a_column_of_numbers_beside_one_of_text_is_said_when_inferring():
    """evaluate without --schema: a synthetic month written "M1".."M12" beside the real
    1..12 scored TVD 1 and nothing said why (a probe's find)."""
    import pandas as pd
    import warnings
    from gpu_dpsyn.data.inference import comparison_schema
    real = pd.DataFrame({"month": np.arange(600) % 12 + 1, "kind": ["a", "b", "c"] * 200})
    syn = real.assign(month=[f"M{m}" for m in real["month"]])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        comparison_schema(real, syn)
    said = [str(w.message) for w in seen if "month" in str(w.message)]
    assert said and "numbers in one table and text in the other" in said[0]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        comparison_schema(real, real.assign(month=real["month"].astype(float)))
        comparison_schema(real, real.assign(month=np.nan))  # no value: nothing to say
    assert not [w for w in seen if "numbers in one table" in str(w.message)]


def test_a_ledger_of_a_run_on_other_columns_is_refused(tmp_path, capsys):
    # evaluate took any valid ledger: the report then gave another run's epsilon, delta
    # and measurements as the privacy of the table it scored
    from gpu_dpsyn.cli import main
    from conftest import one_line_error
    r = np.random.default_rng(0)
    for name, cols in (("a", ["x", "y"]), ("b", ["x", "z"])):
        pd.DataFrame({c: r.choice(["p", "q"], 300) for c in cols}).to_csv(
            tmp_path / f"{name}.csv", index=False)
        (tmp_path / f"{name}.json").write_text(json.dumps({"columns": {
            c: {"type": "categorical", "values": ["p", "q"]} for c in cols}}))
        assert main(["synthesize", str(tmp_path / f"{name}.csv"), "--schema",
                     str(tmp_path / f"{name}.json"), "--epsilon", "1", "--delta", "1e-9",
                     "--out", str(tmp_path / f"{name}_syn.csv"), "--seed", "0", "--quiet",
                     "--ledger", str(tmp_path / f"{name}_l.json")]) == 0
    capsys.readouterr()
    for schema in ([], ["--schema", str(tmp_path / "b.json")]):
        assert main(["evaluate", str(tmp_path / "b.csv"), str(tmp_path / "b_syn.csv"),
                     *schema, "--ledger", str(tmp_path / "a_l.json"), "--quiet"]) == 2
        one_line_error(capsys, "a_l.json", "'y'")
        assert main(["evaluate", str(tmp_path / "b.csv"), str(tmp_path / "b_syn.csv"),
                     *schema, "--ledger", str(tmp_path / "b_l.json"), "--quiet"]) == 0
        capsys.readouterr()


def test_a_grouped_runs_own_ledger_is_not_refused(tmp_path, capsys):
    # a level's marginals are measured with its group as one column, labelled
    # "s x p x y" in the ledger: the ledger check took that label for another run's column
    from gpu_dpsyn.cli import main
    r = np.random.default_rng(0)
    cols = ["s", "p", "y", "x"]
    pd.DataFrame({c: r.choice(["a", "b"], 600) for c in cols}).to_csv(
        tmp_path / "a.csv", index=False)
    (tmp_path / "a.json").write_text(json.dumps({"columns": {
        c: {"type": "categorical", "values": ["a", "b"]} for c in cols}}))
    assert main(["synthesize", str(tmp_path / "a.csv"), "--schema", str(tmp_path / "a.json"),
                 "--epsilon", "2", "--delta", "1e-9", "--out", str(tmp_path / "s.csv"),
                 "--seed", "0", "--quiet", "--ledger", str(tmp_path / "l.json"),
                 "--group-by", "s", "--group-by", "p,y"]) == 0
    run = json.loads((tmp_path / "l.json").read_text())
    assert "s x p x y" in {c for m in run["measurements"] for c in m.get("columns", [])}
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "a.csv"), str(tmp_path / "s.csv"), "--ledger",
                 str(tmp_path / "l.json"), "--quiet"]) == 0, capsys.readouterr().err
    # a group label naming a column the table lacks is still another run's
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.evaluation.report.privacy import check_ledger_columns
    with pytest.raises(DPSynError, match="'s x p x y'"):
        check_ledger_columns(run, ["s", "p", "x"])
