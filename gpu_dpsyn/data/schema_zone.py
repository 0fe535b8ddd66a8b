"""Edits of a datetime column's range and zone (schema_edit.edit): drafted ends rewritten
as a newly named zone's wall times, bins of whole units kept as wide over a new range, and
bins a zone refuses (whole hours or days, counted in UTC) drafted again for it."""
from __future__ import annotations

from gpu_dpsyn.data.text import settings, shown  # noqa: F401 (capped values in messages)

from gpu_dpsyn.data.schema import _TYPE_ALIASES
from gpu_dpsyn.data.schema_rules import MAX_BINS
from gpu_dpsyn.errors import SchemaError


def datetime_edits(cols: dict, ranges: dict, first: set, given: set, drafted: list) -> list:
    """The edit's datetime columns after their keys were set (cols, in place): ranges,
    each as it was; first, the keys drafted before the edit; given, the (column, key)
    pairs it sets.  Returns the drafted list after them."""
    for name, was in ranges.items():  # a zone named: drafted ends as its local times
        spec = cols.get(name)
        if isinstance(spec, dict) and spec.get("timezone") != was.get("timezone"):
            local = _in_zone(was, spec.get("timezone"))  # (a user's own ends: never)
            spec.update({k: local[k] for k in ("min", "max") if k in local and
                         f"{name}.{k}" in first and (name, k) not in given})
    for name, was in ranges.items():  # bins of whole units keep their width over a new
        spec = cols.get(name)  # range (from the range before and after every edit)
        if isinstance(spec, dict) and "unit" in spec and isinstance(spec.get("bins"), int) \
                and (name, "bins") not in given and \
                (spec.get("min"), spec.get("max")) != (was.get("min"), was.get("max")):
            spec["bins"] = _same_width(was, spec, name)
    for name, was in ranges.items():  # drafted bins of whole hours or days, counted in UTC,
        spec = cols.get(name)  # which a zone refuses: drafted again as for the zone
        if isinstance(spec, dict) and spec.get("timezone") not in (None, "UTC") and \
                spec.get("timezone") != was.get("timezone") and \
                spec.get("unit") in ("hour", "day") and isinstance(spec.get("bins"), int) \
                and f"{name}.bins" in first and \
                not given & {(name, "unit"), (name, "bins"), (name, "time_of_day")}:
            new = _for_zone(name, spec)
            for k in ("unit", "bins", "time_of_day"):
                spec.pop(k, None)
            spec.update(new)
            drafted = [d for d in drafted if d not in {f"{name}.{k}" for k in (
                "unit", "bins", "time_of_day")} - {f"{name}.{k}" for k in new}]
            drafted += [f"{name}.{k}" for k in new if f"{name}.{k}" not in drafted]
    return drafted


_WHOLE = {"D": "days", "h": "hours", "min": "minutes", "s": "seconds"}  # coarsest first


def _in_zone(was: dict, zone) -> dict:
    """A datetime column's min and max written with UTC offsets (a draft's, read off text
    with offsets: "timezone": "UTC" until the real zone is named) as local wall times in
    `zone` at whole units covering the same instants: the start of the local day (hour,
    minute, second: the coarsest both ends are whole in) holding min, the end of the one
    holding max.  The same instants alone would start a Berlin column's range at 01:00
    local time; the same wall times would leave out values near its ends.  {} where
    either has no offset (a local time already) or does not read."""
    import pandas as pd
    try:
        lo, hi = (pd.Timestamp(was[k]) for k in ("min", "max"))
        if lo.tz is None or hi.tz is None or not isinstance(zone, str):
            return {}
        end = hi + pd.Timedelta(seconds=1)
        # the coarsest unit both ends are whole in, but with "unit" alone (a bin a unit)
        # none coarser than it (an hourly column's UTC days became local days: a day of
        # bins more to fill); bins of whole units start where a local day does
        finest = {"day": "D", "hour": "h", "minute": "min", "second": "s"}.get(
            was.get("unit"), "D") if "bins" not in was else "D"
        units = list(_WHOLE)[list(_WHOLE).index(finest):]
        unit = next((u for u in units if lo == lo.floor(u) and end == end.floor(u)), "s")
        # the earlier of a doubled local time for the start, the later for the end (the
        # end's last second then taken as an instant): a max in the hour a zone repeats
        # kept its wall time and lost that hour
        start = lo.tz_convert(zone).tz_localize(None).floor(unit).tz_localize(
            zone, ambiguous=True, nonexistent="shift_forward")
        stop = end.tz_convert(zone).tz_localize(None).ceil(unit).tz_localize(
            zone, ambiguous=False, nonexistent="shift_forward") - pd.Timedelta(seconds=1)
        return {"min": start.isoformat(), "max": stop.isoformat(), "whole": _WHOLE[unit]}
    except (KeyError, TypeError, ValueError, OverflowError):  # refused when it loads
        return {}


def _for_zone(name: str, spec: dict) -> dict:
    """The min, max and binning the draft gives values in whole units of spec's "unit"
    over its range in its zone, at most its bins many (draft_stamps.datetime_column: a
    zone's local days, the time of day beside them); spec's own where that fails."""
    import pandas as pd
    from gpu_dpsyn.data.draft_stamps import datetime_column
    zone = spec["timezone"]
    try:
        lo, hi = (pd.Timestamp(spec[k]) for k in ("min", "max"))
        lo, hi = (t.tz_convert(zone).tz_localize(None) if t.tz is not None else t
                  for t in (lo, hi))
        unit = spec["unit"]  # whole UTC hours fall at :30 in a +05:30 zone: its minutes
        if unit == "hour" and any(pd.Timestamp(spec[k]).tz_convert(zone).utcoffset()
                                  .total_seconds() % 3600 for k in ("min", "max")):
            unit = "minute"
        col, _ = datetime_column(name, lo, hi, unit, zone,
                                 bool(spec.get("nullable", False)), False, spec["bins"],
                                 spec["bins"], (spec.get("format"), ()))
    except (KeyError, TypeError, ValueError, OverflowError, SchemaError):
        return {k: spec[k] for k in ("unit", "bins") if k in spec}  # refused as it loads
    d = col.to_dict()
    return {k: d[k] for k in ("min", "max", "unit", "bins", "time_of_day") if k in d}


def rezoned(before: dict, after: dict) -> list:
    """A line for each datetime column whose zone an edit changed: its drafted ends
    rewritten as local times (_in_zone), or, kept as written with offsets (the user's
    own, never shifted), how the new zone's clock reads them where not at a whole unit."""
    import pandas as pd
    notes = []
    for name, was in (before.get("columns") or {}).items():
        now = (after.get("columns") or {}).get(name)
        if not (isinstance(was, dict) and isinstance(now, dict) and _kind(now) ==
                "datetime" and now.get("timezone") != was.get("timezone")):
            continue
        local = _in_zone(was, now.get("timezone"))
        ends = [k for k in ("min", "max") if k in local]
        moved = [k for k in ends if now.get(k) == local[k] != was.get(k)]
        kept = [k for k in ends if now.get(k) == was.get(k) and
                pd.Timestamp(local[k]) != pd.Timestamp(was[k])]
        if moved:
            notes.append(f"column {shown(name)}: its drafted {' and '.join(moved)}, written "
                         f"with UTC offsets, are now {now['timezone']} wall times at whole "
                         f"{local['whole']} holding the same instants: " + ", ".join(
                             f"{k} {now[k]}" for k in moved) + " (review them: the first "
                         "and last units may hold none of the data)")
        if was.get("unit") in ("hour", "day") and "bins" in was and "bins" not in now:
            tod = now.get("time_of_day")
            notes.append(f"column {shown(name)}: its bins of whole {was['unit']}s, counted "
                         f"in UTC, do not fit {now['timezone']}'s; drafted again for it: "
                         + (f"{now['bins']} bins of whole {now['unit']}s" if "unit" in now
                            and "bins" in now else f"unit {now['unit']}" if "unit" in now
                            else f"{now.get('bins')} equal bins")
                         + (f", its time of day beside it in {tod.get('bins')} bins"
                            if isinstance(tod, dict) else "") + " (review them)")
        if kept:
            notes.append(f"column {shown(name)}: its {' and '.join(kept)} keep their UTC "
                         f"offsets, the same instants, which {now['timezone']} reads as "
                         + ", ".join(f"{k} {_local(now[k], now['timezone'])}" for k in kept)
                         + ": set them as local times if meant so")
    return notes


def _local(text: str, zone: str) -> str:
    """An instant written with an offset, as the zone's clock reads it."""
    import pandas as pd
    return pd.Timestamp(text).tz_convert(zone).isoformat()


def _same_width(was: dict, spec: dict, name: str) -> int:
    """A datetime column's bin count over its new range (spec) that keeps the width its
    bins had over the old one (was): 365 bins of a day over a year, 456 over 15 months,
    not 365 of 1.25 days each; as it was where a date does not read."""
    import pandas as pd
    try:
        old = pd.Timestamp(was["max"]) - pd.Timestamp(was["min"])
        span = pd.Timestamp(spec["max"]) - pd.Timestamp(spec["min"])
        bins = max(1, round(was["bins"] * span / old))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return spec["bins"]
    if bins > MAX_BINS:
        raise SchemaError(f"column {shown(name)}: its {was['bins']} bins kept as wide over the "
                          f"new range would be {bins:,}, past {MAX_BINS:,}: give fewer in the "
                          f"same command ({settings(name, ['bins=N'])})")
    return bins


def _kind(spec) -> str | None:
    """A column's type as the schema reads it ("type", else "kind"; aliases such as
    "identifier" for id), or None."""
    kind = spec.get("type") or spec.get("kind") if isinstance(spec, dict) else None
    return _TYPE_ALIASES.get(kind) if isinstance(kind, str) else None
