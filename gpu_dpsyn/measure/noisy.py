"""What a fit says of the columns the noise swamps (measure/fit.py): from noise levels,
noisy totals and merges of noisy counts only, post-processing."""
from __future__ import annotations

import json
import math
import warnings

from gpu_dpsyn.data.text import pasted
from gpu_dpsyn.estimate.targets import noise_per_value

TAIL_SHARE = 0.1  # merged values holding at most this share of the records: a tail


def warn_noisy(model) -> None:
    """Name the columns the noise swamps: their values merged to half or fewer by the
    low-count filtering (what it merges comes out spread evenly), or the noise of their
    counts above the records a value (estimate.targets.noise_per_value).  Noise levels,
    noisy totals and merges of noisy counts only: post-processing."""
    lv = model.levels[0]
    if lv.group:
        return
    said, names, rare, tails = [], [], [], []
    one = {m.attrs[0]: m.values for m in lv.marginals if len(m.attrs) == 1}
    for a, sd, mean in noise_per_value(lv):
        if a >= len(model.names):
            continue
        r = model.recodes.get(a)
        was, now = (len(r.lut), r.size) if r is not None else (None, None)
        share = None  # of the records, that the merged value holds (its last code)
        if now is not None and a in one:  # (host or device values: reduced to floats)
            v = one[a].clip(0.0, None)
            share = float(v[-1]) / float(v.sum()) if float(v.sum()) > 0 else None
        if now is not None and now <= was / 2 and share is not None and share <= TAIL_SHARE:
            # a public range's empty bins, a rare tail: the rest stands clear of the noise
            tails.append(f"{model.names[a]!r} ({was - now + 1:,} of its {was:,} values, about "
                         f"{100 * share:.2g}% of the records)")
            continue
        if now is not None and now <= was / 2:  # (one new value stands for the merged)
            said.append(f"{model.names[a]!r} ({was - now + 1:,} of its {was:,} values below "
                        "the noise, merged: their rows come out spread evenly over them: "
                        "the rarer more often than they are)")
        elif sd > mean:
            said.append(f"{model.names[a]!r} (noise sd {sd:,.0f} against {mean:,.0f} "
                        "records a value)")
        else:  # clear on average; one rare value, never merged alone, may be lost in it
            low = float(one[a].min()) if r is None and a in one and \
                model.settings.filter_low_counts else math.inf
            if low < 2.0 * sd:
                rare.append(f"{model.names[a]!r} (about {max(low, 0.0):,.0f} records, noise "
                            f"sd {sd:,.0f})")
            continue
        names.append(repr(model.names[a]))
    if said:  # five said in full, the rest named (a lab panel's 'ldl' and 'dx' had not been)
        more = names[5:25] + (["..."] if len(names) > 25 else [])
        rest = f", and {len(names) - 5} more: {', '.join(more)}" if more else ""
        warnings.warn(f"the noise swamps column(s) {', '.join(said[:5])}{rest}: their "
                      "distribution will be mostly noise. Fewer values or bins, a larger "
                      "epsilon or a lower max_records_per_individual would help"
                      + _hog(model, lv, names), UserWarning, stacklevel=4)
    if tails:
        warnings.warn(f"the noise swamps the rarest values of column(s) {', '.join(tails[:5])}"
                      f"{f' and {len(tails) - 5} more' if len(tails) > 5 else ''}: merged, "
                      "their rows come out spread evenly over them, the rarer more often "
                      "than they are; the column's other values stand clear of the noise",
                      UserWarning, stacklevel=4)
    if rare:  # (a 0.3% fraud flag came out 2.2% at 30 records a customer, unsaid)
        warnings.warn(f"the noise swamps the rarest value of column(s) {', '.join(rare[:5])}"
                      f"{f' and {len(rare) - 5} more' if len(rare) > 5 else ''}: it may come "
                      "out several times as often as it is, or not at all. A larger epsilon "
                      "or a lower max_records_per_individual would help", UserWarning,
                      stacklevel=4)


HOG_SHARE = 0.5  # of the 1-way budget, taken by one column: named beside the swamped,
HOG_RATIO = 10.0  # where that is this many times the middle column's (not 30 bins beside 8)


def _hog(model, lv, swamped: list) -> str:
    """A note naming the column whose 1-way marginal took over half the 1-way budget
    (split by values^(2/3): a 17,000-code list took 91% of it, and the other columns came
    out merged to a value or two), where others are swamped; else "".  Shares from the
    noise levels (rho ~ 1/sigma^2): public."""
    one = [(m.attrs[0], m.sigma, m.values.size) for m in lv.marginals
           if len(m.attrs) == 1 and m.sigma > 0 and m.attrs[0] < len(model.names)]
    if len(one) < 3:
        return ""
    inv = [s ** -2 for _, s, _ in one]
    top = max(range(len(one)), key=inv.__getitem__)
    share, a = inv[top] / sum(inv), one[top][0]
    name = model.names[a]
    if share <= HOG_SHARE or inv[top] < HOG_RATIO * sorted(inv)[len(inv) // 2] or \
            not set(swamped) - {repr(name)}:
        return ""
    r = model.recodes.get(a)
    k = len(r.lut) if r is not None else one[top][2]
    cols = json.dumps([name]) if "," in name or ":" in name else name  # (read as one)
    return (f". {name!r} ({k:,} values) took {share:.0%} of the 1-way budget, split by "
            "each column's values^(2/3): a shorter public list of its values, its values "
            f"grouped, or {pasted('--workload', f'{cols}:0.1')} (a tenth of its weight) "
            "leaves the others more")
