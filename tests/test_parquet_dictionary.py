"""A Parquet dictionary column's index width kept: a release wrote pandas' own (int8 up to
127 categories), so a column Arrow's writers stored with int32 indices (or uint32,
or a cast int16) came back as int8. infer-schema now drafts such a column's "dtype" by
Arrow's name of its type where it is not pandas' own, and a release writes that type."""
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.schema import Schema, load_schema
from gpu_dpsyn.errors import SchemaError

N = 300


def _file(path, index):
    rng = np.random.default_rng(0)
    k = pa.array(rng.choice(list("abcde"), N)).dictionary_encode()
    k = k.cast(pa.dictionary(index, pa.string()))
    pq.write_table(pa.table({"k": k, "x": pa.array(rng.integers(0, 9, N))}), path)


def _release(tmp_path, data, fmt="parquet"):
    schema, out = tmp_path / "s.json", tmp_path / f"o.{fmt}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--rows", "50", "--iterations", "1",
                 "--backend", "cpu", "--quiet"]) == 0
    return json.loads(schema.read_text())["columns"]["k"]["dtype"], out


@pytest.mark.parametrize("index", ["int8", "int16", "int32", "uint32", "int64"])
def test_a_release_keeps_the_inputs_dictionary_index(tmp_path, index):
    data = tmp_path / "d.parquet"
    _file(data, getattr(pa, index)())
    dtype, out = _release(tmp_path, data)
    # pandas' own width for 5 categories (int8) stays "category", as pandas writes it
    assert dtype == ("category" if index == "int8" else str(pq.read_schema(data).field("k").type))
    assert pq.read_schema(out).field("k").type == pq.read_schema(data).field("k").type
    assert set(pd.read_parquet(out)["k"]) <= set("abcde")


def test_a_pandas_category_stays_category(tmp_path):
    data = tmp_path / "d.parquet"
    pd.DataFrame({"k": pd.Categorical(list("abc") * 100), "x": np.arange(N) % 7}).to_parquet(
        data)
    dtype, out = _release(tmp_path, data)
    assert dtype == "category"
    assert pq.read_schema(out).field("k").type == pq.read_schema(data).field("k").type


def test_a_csv_release_of_such_a_schema_writes_the_values(tmp_path):
    data = tmp_path / "d.parquet"
    _file(data, pa.int32())
    _, out = _release(tmp_path, data, "csv")
    assert set(pd.read_csv(out)["k"]) <= set("abcde")


def _spec(dtype, values):
    return {"columns": {"k": {"type": "categorical", "values": values, "dtype": dtype}}}


@pytest.mark.parametrize("dtype, values, match", [
    ("dictionary<values=string, indices=int8, ordered=0>", [f"v{i}" for i in range(200)],
     r"'k'.*int8.*200"),
    ("dictionary<values=string, indices=int32, ordered=0>", [1, 2], r"'k'.*text"),
    ("dictionary<values=int64, indices=int32, ordered=0>", ["a"], r"'k'.*dtype"),
    ("dictionary<values=large_string, indices=int32, ordered=0>", ["a"], r"'k'.*dtype"),
])
def test_a_dictionary_the_values_do_not_fit_is_refused_at_load(tmp_path, dtype, values,
                                                                match):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_spec(dtype, values)))
    with pytest.raises(SchemaError, match=match):
        load_schema(path)


def test_a_dictionary_dtype_samples_as_pandas_categories(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_spec("dictionary<values=string, indices=int32, ordered=0>",
                                     ["a", "b"])))
    schema = load_schema(path)
    assert isinstance(schema, Schema)
    assert schema.columns[0].dtype == "dictionary<values=string, indices=int32, ordered=0>"


@pytest.mark.parametrize("ordered", [0, 1])
def test_parts_written_by_workers_keep_it_too(tmp_path, ordered):
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.distributed import sampling
    name = f"dictionary<values=string, indices=uint32, ordered={ordered}>"
    path = tmp_path / "s.json"
    spec = _spec(name, list("abc"))
    spec["columns"]["x"] = {"type": "categorical", "values": [0, 1]}
    path.write_text(json.dumps(spec))
    df = pd.DataFrame({"k": list("abc") * 40, "x": [0, 1] * 60})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        syn = Synthesizer(1.0, 1e-9, seed=0, progress=False, iterations=1).fit(
            df, load_schema(path))
    arrow = sampling.arrow_schema(syn.model)
    sampling.write_batch(syn.model, "cpu", str(tmp_path), arrow, "part-0.parquet", 10,
                         syn.model.targets(10), 1, 1)
    assert str(pq.read_schema(tmp_path / "part-0.parquet").field("k").type) == name
    assert isinstance(syn.sample(5)["k"].dtype, pd.CategoricalDtype)


@pytest.mark.parametrize("dtype", ["dictionary<values=string, indices=int33, ordered=0>",
                                   "Dictionary<values=string,indices=int32,ordered=0>"])
def test_a_misspelt_dictionary_type_is_shown_its_form(dtype):
    # it was refused as "not a pandas dtype name" with no word of the dictionary form
    with pytest.raises(SchemaError, match=r"'dictionary<values=string, indices=int32, "
                                          r"ordered=0>'"):
        load_schema({"columns": {"c": {"type": "categorical", "values": ["a", "b"],
                                       "dtype": dtype}}})
