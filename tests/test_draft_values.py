"""What infer-schema lists for a column of few values: answer words kept beside numbers,
counts listed over their whole range (a curator probe's findings)."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from conftest import drafted


_draft = drafted  # (conftest: the draft and its lines by column)


def _survey(n=3000, seed=1, words=("refused",), missing=True):
    """Answers 1..5 as CSV text, 2% a word per entry of `words`, 4% empty cells."""
    r = np.random.default_rng(seed)
    q = r.integers(1, 6, n).astype(str).astype(object)
    u = r.random(n)
    for i, w in enumerate(words):
        q[(u >= 0.02 * i) & (u < 0.02 * (i + 1))] = w
    if missing:
        q[(u >= 0.5) & (u < 0.54)] = None
    return pd.DataFrame({"q": q, "region": r.choice(["N", "S", "E"], n)})


def test_an_answer_word_among_few_numbers_stays_a_listed_value():
    # 'refused' on 3% of a 1..5 question was read as missing: every synthesized survey
    # lost the answer.  Listed, the word is one value more; "N/A" still reads as missing
    df = _survey(words=("refused", "N/A"))
    s, lines = _draft(df)
    assert s["q"].kind == "categorical"  # (words first: natural)
    assert s["q"].values == ["refused", 1, 2, 3, 4, 5] and s["q"].nullable
    assert "'refused'" in lines["q"] and "kept" in lines["q"]
    assert "'N/A'" in lines["q"] and "read as missing" in lines["q"]
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s).sample(3000)
    assert (out["q"] == "refused").mean() > 0.01


def test_an_answer_word_alone_keeps_the_column_not_nullable():
    s, lines = _draft(_survey(missing=False))
    assert s["q"].values == ["refused", 1, 2, 3, 4, 5] and not s["q"].nullable


def test_words_that_mean_missing_are_still_read_as_missing():
    s, lines = _draft(_survey(words=("N/A", "-", "?", "NULL"), missing=False))
    assert s["q"].values == [1, 2, 3, 4, 5] and s["q"].nullable
    assert "read as missing" in lines["q"]


def test_an_answer_word_among_binned_numbers_says_how_to_keep_it():
    # a binned column holds no word: read as missing as before, the line saying so plainly
    r = np.random.default_rng(3)
    v = [f"{x:.2f}" for x in r.lognormal(3, 1, 2000)]
    for i in range(0, 2000, 40):
        v[i] = "refused"
    s, lines = _draft(pd.DataFrame({"inc": v, "c": r.choice(["a", "b"], 2000)}))
    assert s["inc"].kind == "numeric" and s["inc"].nullable
    line = lines["inc"]
    assert "'refused'" in line and "read as missing" in line
    assert "column of its own" in line


def _counts(spec: dict, seed=0) -> np.ndarray:
    """Integers repeated as `spec` says (value -> rows), shuffled."""
    v = np.repeat(list(spec), list(spec.values()))
    return np.random.default_rng(seed).permutation(v)


def test_a_count_missing_one_value_inside_its_range_is_listed_whole():
    # quantities 1..17 seen without 15 were listed without it: 15 could never be
    # synthesized.  Between rare neighbours the gap is chance: the range is listed
    q = {k: max(1, int(3000 * 0.5 ** k)) for k in range(1, 18) if k != 15}
    s, lines = _draft(pd.DataFrame({"quantity": _counts(q), "c": "a"}))
    assert s["quantity"].values == list(range(1, 18))
    assert "15" in lines["quantity"] and "not seen" in lines["quantity"]
    assert "17 integer values (1..17)" in lines["quantity"]  # the values listed (said 16)


def test_ages_with_a_few_unseen_years_are_listed_whole():
    r = np.random.default_rng(4)
    age = r.integers(18, 91, 150)
    s, lines = _draft(pd.DataFrame({"age": age, "c": "a"}))
    if s["age"].kind == "categorical":  # (binned, no value is left out)
        assert s["age"].values == list(range(int(age.min()), int(age.max()) + 1))


def test_codes_with_gaps_are_not_filled_in():
    # 8 "not asked" beside 1..3, 7/8/9 beside a 1..5 scale, departments without a 14:
    # common values beside each gap, so the gap is no chance; codes with many gaps
    for spec in ({1: 500, 2: 400, 3: 300, 8: 50},
                 {1: 300, 2: 400, 3: 500, 4: 400, 5: 300, 7: 40, 8: 30, 9: 20},
                 {k: 200 for k in (10, 11, 12, 13, 15, 16, 17, 18)},
                 {1: 2, 2: 1, 3: 1, 8: 1},
                 # GSS's Hispanic origin: codes in groups, a rare 42 and 45 beside 43, 44
                 {k: 1 if k in (42, 45) else 40 for k in
                  [*range(1, 12), 15, 16, *range(20, 26), 30, 31, 35, 40, 41, 42, 45, 46,
                   47, 50]}):
        s, _ = _draft(pd.DataFrame({"x": _counts(spec), "c": "a"}))
        assert s["x"].values == list(spec), spec


def test_an_answer_word_among_numbers_is_drafted_as_text_for_parquet(tmp_path):
    """The values [1..5, "refused"] mix numbers and text, which Parquet cannot hold in one
    column: a release to Parquet was refused ('give it "dtype": "string"'; a probe's)."""
    from gpu_dpsyn.cli import main
    df = _survey()
    df.to_parquet(tmp_path / "s.parquet")  # (pandas 3: large_string, which a column
    # listing numbers refuses; the draft's "string" was dropped with it: a review's)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(tmp_path / "s.parquet"), "--out",
                     str(tmp_path / "s.json")]) == 0
        s = json.loads((tmp_path / "s.json").read_text())
        assert s["columns"]["q"].get("dtype") == "string", s["columns"]["q"]
        assert main(["synthesize", str(tmp_path / "s.parquet"), "--schema",
                     str(tmp_path / "s.json"), "--epsilon", "1", "--delta", "1e-9",
                     "--out", str(tmp_path / "o.parquet"), "--quiet"]) == 0
    out = pd.read_parquet(tmp_path / "o.parquet")
    assert set(out["q"].dropna()) <= {"1", "2", "3", "4", "5", "refused"}


def test_numbers_beside_a_detection_limit_are_said_to_be_numbers():
    """A trial's C-reactive protein: '<0.5' (below the detection limit) on 14% of 7,526
    visits made the column text, drafted as '119 text values' and nothing more.  Listed,
    the numbers lost their order: at eps 1 the synthetic median was 4.0 mg/L (real 1.2);
    written as a number beside a flag column of its own, 0.8."""
    r = np.random.default_rng(5)
    crp = np.exp(r.normal(0.3, 0.8, 3000))
    text = np.where(crp < 0.5, "<0.5", np.char.mod("%.1f", crp))
    df = pd.DataFrame({"crp": text, "arm": r.choice(["placebo", "high"], 3000)})
    s, lines = _draft(df)
    assert s["crp"].kind == "categorical"
    assert "'<0.5'" in lines["crp"] and "detection limit" in lines["crp"], lines["crp"]
    assert "'<0.5'" not in lines["arm"] and "detection" not in lines["arm"]


@pytest.mark.parametrize("limit", ["<.5", "<-5", "< 0,5"])
def test_a_limit_written_otherwise_or_only_after_the_first_values_is_said(limit):
    # '<.5' and '<-5' were missed, and so were limits past the first 1,000 values (a
    # review): sorted by value, a column's limits come last
    r = np.random.default_rng(6)
    x = np.sort(np.exp(r.normal(0.3, 0.8, 3000)))[::-1]
    text = np.where(np.arange(3000) >= 2500, limit, np.char.mod("%.1f", x))
    s, lines = _draft(pd.DataFrame({"crp": text, "arm": r.choice(["a", "b"], 3000)}))
    assert "detection limit" in lines["crp"] and repr(limit) in lines["crp"], lines["crp"]


@pytest.mark.parametrize("k_share", [0.02, 2 / 14])
def test_school_grades_are_drafted_in_their_order(k_share):
    """Grades K, 1..12 were listed with K after 12 (a rare K: an answer word beside the
    numbers) or as text with "10" before "2": codes that are no number come first, the
    numbers by value."""
    r = np.random.default_rng(0)
    grades = ["PK", "K"] + [str(i) for i in range(1, 13)]
    p = np.array([k_share / 2, k_share / 2] + [(1 - k_share) / 12] * 12)
    s, _ = _draft(pd.DataFrame({"grade": r.choice(grades, 3000, p=p),
                                "k": r.choice(["a", "b"], 3000)}))
    got = [str(v) for v in s["grade"].values]
    assert got == grades[:2][::-1] + grades[2:], got  # (K before PK: as text)
