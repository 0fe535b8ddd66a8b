"""Table readers, and encode() on cuDF frames.

cuDF is not installed here (nor on the lent GPU machines), so the cuDF frame below is a
stand-in built on pandas that offers exactly the cuDF calls encode() makes
(isna().to_cupy, factorize, astype().to_cupy, to_pandas; cuDF's documented API): it
checks the cuDF branch's logic, not cuDF itself.
"""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import ingest
from gpu_dpsyn.encoding import encode
from gpu_dpsyn.errors import DataError, DPSynError


class _Index:
    def __init__(self, idx):
        self.idx = idx

    def to_pandas(self):
        return self.idx


class FakeCudfSeries:
    __module__ = "cudf.core.series"

    def __init__(self, s: pd.Series):
        self.s = s

    def isna(self):
        return FakeCudfSeries(self.s.isna())

    def to_cupy(self, na_value=None):  # a NumPy array stands in for the device array
        if na_value is None:
            return self.s.to_numpy()
        return self.s.to_numpy(dtype=np.float64, na_value=na_value)

    def factorize(self, use_na_sentinel=True):
        codes, uniques = pd.factorize(self.s, use_na_sentinel=use_na_sentinel)
        return codes, _Index(pd.Index(uniques))

    def astype(self, dtype):
        return FakeCudfSeries(self.s.astype(dtype))

    def to_pandas(self):
        return self.s

    def __len__(self):
        return len(self.s)


class FakeCudfFrame:
    __module__ = "cudf.core.dataframe"

    def __init__(self, df: pd.DataFrame):
        self.df = df
        self.columns = df.columns

    def __getitem__(self, name):
        return FakeCudfSeries(self.df[name])

    def __len__(self):
        return len(self.df)


def test_encode_reads_cudf_frames_through_their_api(backend, flights, flights_schema):
    host = encode(flights, flights_schema)
    fake = encode(FakeCudfFrame(flights), flights_schema, backend.xp)
    assert all(np.array_equal(a, backend.to_numpy(b)) and a.dtype == b.dtype
               for a, b in zip(host, fake))


def test_cudf_frame_errors_name_the_problem(flights, flights_schema):
    bad = flights.copy()
    bad.loc[3, "carrier"] = "ZZ"
    with pytest.raises(DataError, match="carrier.*outside the schema.*'ZZ'"):
        encode(FakeCudfFrame(bad), flights_schema)
    bad = flights.copy().astype({"day": object})
    bad.loc[0, "day"] = "Monday"
    with pytest.raises(DataError, match="day.*non-numeric.*'Monday'"):
        encode(FakeCudfFrame(bad), flights_schema)


def test_reader_choice(tmp_path, monkeypatch):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(csv, index=False)
    monkeypatch.setattr(ingest, "cudf_available", lambda: False)
    assert ingest.choose_engine("auto", str(csv), gpu=True) == "pandas"
    with pytest.raises(DPSynError, match="needs cuDF"):
        ingest.choose_engine("cudf", str(csv), gpu=True)
    with pytest.raises(DPSynError, match="unknown reader"):
        ingest.choose_engine("polars", str(csv), gpu=True)
    monkeypatch.setattr(ingest, "cudf_available", lambda: True)
    assert ingest.choose_engine("auto", str(csv), gpu=True) == "cudf"
    assert ingest.choose_engine("auto", str(csv), gpu=False) == "pandas"
    assert ingest.choose_engine("auto", str(csv) + ".xz", gpu=True) == "pandas"
    with pytest.raises(DPSynError, match="reads .* files"):
        ingest.choose_engine("cudf", str(csv) + ".xz", gpu=True)
    assert ingest.read_table(str(csv)).equals(pd.DataFrame({"a": [1, 2]}))
    with pytest.raises(DPSynError, match="no such file"):
        ingest.read_table(str(tmp_path / "missing.csv"))
