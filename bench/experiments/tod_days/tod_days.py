"""A timeline over a week or more, finer than its drafted bins: sub-day bins (the draft
before the week rule) against days with the time of day beside them (data/draft_stamps.py
WEEK), on three generated event tables (8-31 days, 30k-50k rows), eps 1, seeds 1-3: TVD of
hour-of-day and of the day alone, of day x hour, and beside each other column (numbers in
10 bins of the real quantiles), and of the other columns' pairs.  One JSON line a fit.

    python bench/experiments/tod_days/tod_days.py OUT.jsonl [DEVICES]

DEVICES: the sensor log alone, of that many devices (1500: 195,000 rows), seed 1.
"""
import json
import sys
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn import Synthesizer, infer_schema
from gpu_dpsyn.data import draft_stamps
from gpu_dpsyn.data.schema import load_schema

warnings.simplefilter("ignore")  # seeded runs on drafted schemas, on purpose


def sensor(devices=300):
    """devices x 130 readings 5 minutes apart (with gaps) over 8 days: temperature
    follows the hour of day and the device, humidity the temperature, rare status codes."""
    rng = np.random.default_rng(3)
    dev = np.repeat(np.arange(1, devices + 1), 130)
    n = len(dev)
    k = np.zeros(n, int)
    for d in range(devices):
        s = slice(d * 130, (d + 1) * 130)
        gaps = np.where(rng.random(130) < 0.05, rng.integers(2, 40, 130), 1)
        k[s] = np.cumsum(gaps) + rng.integers(0, 2000)
    ts = pd.Timestamp("2024-06-01") + pd.to_timedelta(k * 5, "min")
    hour = np.asarray(ts.hour)
    temp = np.round(20 + 5 * np.sin((hour - 9) / 24 * 2 * np.pi) + rng.normal(0, 1.5, n)
                    + (dev % 10) * 0.5, 2)
    hum = np.clip(np.round(60 - (temp - 20) * 2 + rng.normal(0, 8, n)), 0, 100).astype(int)
    status = rng.choice([0, 101, 203], n, p=[0.985, 0.011, 0.004])
    return pd.DataFrame({"ts": ts.strftime("%Y-%m-%d %H:%M:%S"), "temp": temp, "hum": hum,
                         "status": status})


def trips(n=30000):
    """A month of trips to the minute: the kind follows weekends, the hour the kind
    (commutes at 8 and 17:30), the fare the kind and the night."""
    rng = np.random.default_rng(5)
    day = rng.integers(0, 31, n)
    wkend = (pd.Timestamp("2024-03-01") + pd.to_timedelta(day, "D")).dayofweek >= 5
    kind = np.where(wkend, rng.choice(["commute", "leisure", "airport"], n, p=[.1, .7, .2]),
                    rng.choice(["commute", "leisure", "airport"], n, p=[.6, .25, .15]))
    hour = np.where(kind == "commute", np.where(rng.random(n) < .5, rng.normal(8, 1, n),
                                                rng.normal(17.5, 1.2, n)),
                    np.where(kind == "leisure", rng.normal(20, 3, n), rng.uniform(0, 24, n)))
    hour = np.mod(np.round(hour * 60), 1440)
    ts = pd.Timestamp("2024-03-01") + pd.to_timedelta(day, "D") + pd.to_timedelta(hour, "min")
    fare = np.round(np.where(kind == "airport", 45, 12) * rng.lognormal(0, .3, n)
                    * np.where((hour > 1380) | (hour < 360), 1.3, 1.0), 2)
    return pd.DataFrame({"ts": ts.strftime("%Y-%m-%d %H:%M:%S"), "kind": kind, "fare": fare,
                         "riders": rng.choice([1, 2, 3, 4], n, p=[.6, .25, .1, .05])})


def clicks(n=50000):
    """Two weeks of events to the second: the hour follows the device, a promotion's two
    days bring more events and more purchases."""
    rng = np.random.default_rng(7)
    w = np.ones(14)
    w[[5, 6]] = 3  # a promotion's two days
    w /= w.sum()
    day = rng.choice(14, n, p=w)
    dev = rng.choice(["mobile", "desktop", "tablet"], n, p=[.55, .35, .1])
    hour = np.where(dev == "desktop", rng.normal(13, 3, n), rng.normal(21, 2.5, n))
    sec = np.mod(np.round(hour * 3600 + rng.uniform(0, 3600, n)), 86400)
    ts = pd.Timestamp("2024-11-20") + pd.to_timedelta(day, "D") + pd.to_timedelta(sec, "s")
    promo = np.isin(day, [5, 6])
    buy = rng.random(n) < np.where(promo, .12, .04) * np.where(dev == "desktop", 1.5, 1)
    return pd.DataFrame({"ts": ts.strftime("%Y-%m-%d %H:%M:%S"), "device": dev,
                         "bought": buy.astype(int), "pages": rng.integers(1, 30, n)})


def tvd(a, b):
    p, q = a.value_counts(normalize=True), b.value_counts(normalize=True)
    return 0.5 * p.sub(q, fill_value=0).abs().sum()


def features(df, real):
    """hour of day, day, and the other columns as text (numbers of many values in 10 bins
    of the real table's quantiles)."""
    t = pd.to_datetime(df["ts"])
    f = pd.DataFrame({"hour": t.dt.hour, "day": t.dt.strftime("%m-%d")})
    for c in real.columns.drop("ts"):
        v = df[c]
        if real[c].dtype.kind == "f" or real[c].nunique() > 12:
            edges = np.unique(np.quantile(real[c], np.linspace(0, 1, 11)))
            v = np.searchsorted(edges[1:-1], pd.to_numeric(v), side="right")
        f[c] = np.asarray(v).astype(str)
    return f


def score(real, syn) -> dict:
    r, s = features(real, real), features(syn, real)

    def pair(cols):
        return tvd(*(f[cols].astype(str).agg("|".join, axis=1) for f in (r, s)))
    others = [c for c in r.columns if c not in ("hour", "day")]
    out = dict(hour=tvd(r["hour"], s["hour"]), day=tvd(r["day"], s["day"]),
               day_hour=pair(["day", "hour"]),
               hour_x=np.mean([pair(["hour", c]) for c in others]),
               day_x=np.mean([pair(["day", c]) for c in others]),
               other_pairs=np.mean([pair([a, b]) for i, a in enumerate(others)
                                    for b in others[i + 1:]]))
    return {k: round(float(v), 4) for k, v in out.items()}


def drafts(df) -> dict:
    """The two drafts of df: without the week rule (its sub-day bins) and with it."""
    week = draft_stamps.WEEK
    try:
        draft_stamps.WEEK = pd.Timedelta.max
        subday = infer_schema(df).to_dict()
    finally:
        draft_stamps.WEEK = week
    return {"subday": subday, "days": infer_schema(df).to_dict()}


def main(out, seeds=(1, 2, 3), tables=None):
    tables = tables or (("sensor", sensor), ("trips", trips), ("clicks", clicks))
    for tname, make in tables:
        df = make()
        for seed in seeds:
            for v, spec in drafts(df).items():
                syn = Synthesizer(1.0, 1e-9, seed=seed, progress=False).fit(
                    df, load_schema(spec)).sample()
                row = dict(table=tname, variant=v, seed=seed, ts=spec["columns"]["ts"],
                           **score(df, syn))
                print(json.dumps(row), flush=True)
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 2:  # the sensor log alone, of DEVICES devices, seed 1
        k = int(sys.argv[2])
        main(sys.argv[1], (1,), [(f"sensor{k * 130 // 1000}k", lambda: sensor(k))])
    else:
        main(sys.argv[1])
