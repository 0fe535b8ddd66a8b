"""The report's figures, each an inline PNG <img>: histograms, association heatmaps, the
worst marginals drawn, GUM convergence."""
from __future__ import annotations

import base64
import html
import io

import numpy as np

from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.evaluation.evaluate import joint_counts
from gpu_dpsyn.evaluation.report.labels import axis, code_texts, short, short_name

REAL, SYN = "#1f77b4", "#ff7f0e"  # matplotlib's first two colours, real first everywhere
DPI = 100
PAIR_CATEGORIES, PAIR_BINS = 12, 24  # per axis of a drawn 2-way marginal
TRIPLE_CELLS = 12  # cells drawn of a 3-way marginal: those that differ most


def plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        raise DPSynError("the HTML report needs matplotlib: pip install 'gpu_dpsyn[report]'") \
            from None
    return pyplot


def png(fig, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt().close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _percent(axis_):
    from matplotlib.ticker import PercentFormatter
    axis_.set_major_formatter(PercentFormatter(1.0, decimals=None))


TITLE_BESIDE_LEGEND = 20  # characters of a histogram's title that fit left of its legend


def _legend(ax):
    # above the plot, right-aligned: never over the bars
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, frameon=False, fontsize=8,
              borderaxespad=0.1)


def _ticks(ax, ax_, which: str, rotate: bool):
    pos, text = zip(*ax_.ticks) if ax_.ticks else ((), ())
    if which == "x":
        ax.set_xticks(pos, text, fontsize=8, rotation=45 if rotate else 0,
                      ha="right" if rotate else "center", rotation_mode="anchor")
    else:
        ax.set_yticks(pos, text, fontsize=8)


def histogram(col, real: np.ndarray, syn: np.ndarray) -> str:
    """One column, real vs synthetic share per value or bin (commonest categories plus
    "other"; binned columns with ticks at the bin edges)."""
    cr = np.bincount(real, minlength=col.size)
    ax_ = axis(col, cr)
    pr, ps = ax_.sum(cr / len(real)), ax_.sum(np.bincount(syn, minlength=col.size) / len(syn))
    pos = ax_.pos
    if ax_.ordered:
        fig, ax = plt().subplots(figsize=(5.6, 3.0))
        ax.bar(pos - 0.2, pr, 0.4, color=REAL, label="real")
        ax.bar(pos + 0.2, ps, 0.4, color=SYN, label="synthetic")
        _ticks(ax, ax_, "x", rotate=True)
        ax.set_xlim(-0.8, pos[-1] + 0.8)
        _percent(ax.yaxis)
    else:
        fig, ax = plt().subplots(figsize=(5.6, 0.9 + 0.24 * ax_.size))
        ax.barh(pos - 0.2, pr, 0.4, color=REAL, label="real")
        ax.barh(pos + 0.2, ps, 0.4, color=SYN, label="synthetic")
        _ticks(ax, ax_, "y", rotate=False)
        ax.set_ylim(ax_.size - 0.4, -0.6)  # commonest on top
        _percent(ax.xaxis)
        _clip_other(ax, ax_, pr, ps, len(ax_.labels) < col.size)
    title = short_name(col.name, 34)
    # a long name would run into the legend on the right: it gets a line of its own
    ax.set_title(title, loc="left", fontsize=10, pad=20 if len(title) > TITLE_BESIDE_LEGEND
                 else 6)
    ax.grid(axis="y" if ax_.ordered else "x", alpha=0.3)
    ax.set_axisbelow(True)
    _legend(ax)
    return png(fig, f"{col.name}: share of rows per value, real vs synthetic")


def _clip_other(ax, ax_, pr, ps, grouped: bool):
    """An "other" bar far longer than the rest would squash them: cut it at the axis end
    and write its shares there."""
    if not grouped:
        return
    top = max(pr[:-1].max(), ps[:-1].max())
    other = max(pr[-1], ps[-1])
    if top == 0 or other <= 1.6 * top:
        return
    ax.set_xlim(0, 1.6 * top)
    ax.text(1.58 * top, ax_.size - 1, f"real {pr[-1]:.1%}, synthetic {ps[-1]:.1%} ▸",
            ha="right", va="center", fontsize=7, color="white", fontweight="bold")


def _matrix(n: int, sets, values) -> np.ndarray:
    m = np.full((n, n), np.nan)
    for (a, b), v in zip(sets, values):
        m[a, b] = m[b, a] = v
    return m


def associations(names, sets, v_real, v_syn) -> list:
    """Cramér's V of every evaluated pair, real and synthetic, and their difference: one
    figure of three panels for a few columns, three full-width figures for many."""
    pyplot = plt()
    d = len(names)
    real, syn = _matrix(d, sets, v_real), _matrix(d, sets, v_syn)
    diff = syn - real
    lim = max(0.05, float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 0.05)
    panels = (("real", real, "viridis", 0, 1), ("synthetic", syn, "viridis", 0, 1),
              ("synthetic − real", diff, "RdBu_r", -lim, lim))
    labels = [short_name(n, 20) for n in names]
    font = float(np.clip(10 - d / 8, 5, 8))
    if d <= 16:
        side = float(np.clip(0.22 * d + 0.9, 3.0, 4.2))
        fig, axes = pyplot.subplots(1, 3, figsize=(3 * side + 2.6, side + 0.4))
        for i, (ax, panel) in enumerate(zip(axes, panels)):
            _v_panel(fig, ax, panel, labels, font, ylabels=i == 0)
        return [png(fig, "Cramér's V between every two columns: real, synthetic, difference")]
    side = min(0.22 * d + 1.5, 11.0)
    out = []
    for panel in panels:
        fig, ax = pyplot.subplots(figsize=(side + 1.2, side))
        _v_panel(fig, ax, panel, labels, font, ylabels=True)
        out.append(png(fig, f"Cramér's V between every two columns, {panel[0]}"))
    return out


def _v_panel(fig, ax, panel, labels, font, ylabels: bool):
    title, m, cmap, lo, hi = panel
    # grey: the diagonal, and pairs not evaluated
    cm = plt().get_cmap(cmap).with_extremes(bad="#eeeeee")
    im = ax.imshow(m, cmap=cm, vmin=lo, vmax=hi)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=font)
    ax.set_yticks(range(len(labels)), labels if ylabels else [], fontsize=font)
    ax.set_title(title, loc="left", fontsize=9)
    bar_ = fig.colorbar(im, ax=ax, shrink=0.8, pad=0.03)
    bar_.ax.tick_params(labelsize=7)


def pair(cols, real: list, syn: list, tvd: float) -> str:
    """A 2-way marginal as three heatmaps: real share, synthetic share, difference."""
    pyplot = plt()
    # a panel is about 3 in wide: 8 rotated tick labels fit along x
    axes = [axis(c, np.bincount(r, minlength=c.size), PAIR_CATEGORIES, PAIR_BINS, gap=False,
                 max_ticks=m) for c, r, m in zip(cols, real, (16, 8))]
    na, nb = axes[0].size, axes[1].size

    def shares(codes):
        cell = axes[0].group[codes[0]] * nb + axes[1].group[codes[1]]
        return (np.bincount(cell, minlength=na * nb) / len(cell)).reshape(na, nb)

    pr, ps = shares(real), shares(syn)
    lim = max(float(np.abs(ps - pr).max()), 1e-9)
    vmax = max(float(pr.max()), float(ps.max()), 1e-9)
    # drawn at the page's width (11.5 in at 100 dpi): scaled down, the labels would shrink
    height = float(np.clip(1.6 + 0.17 * na, 2.6, 6.0))
    fig, panels = pyplot.subplots(1, 3, figsize=(11.5, height), sharey=True)
    for ax, (title, m, cmap, lo, hi) in zip(panels, (
            ("real", pr, "Blues", 0, vmax), ("synthetic", ps, "Blues", 0, vmax),
            ("synthetic − real", ps - pr, "RdBu_r", -lim, lim))):
        im = ax.imshow(m, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        _ticks(ax, axes[1], "x", rotate=True)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(short_name(cols[1].name, 30), fontsize=9)
        bar_ = fig.colorbar(im, ax=ax, shrink=0.85, pad=0.02)
        _percent(bar_.ax.yaxis)
        bar_.ax.tick_params(labelsize=7)
    _ticks(panels[0], axes[0], "y", rotate=False)
    panels[0].set_ylabel(short_name(cols[0].name, 30), fontsize=9)
    # above the figure's top edge (the saved image takes it in): on a short figure the
    # default height put it on the panels' titles
    fig.suptitle(f"{cols[0].name} × {cols[1].name}: TVD {tvd:.3f}", x=0.01, y=1.0,
                 ha="left", va="bottom", fontsize=10)
    return png(fig, f"2-way marginal {cols[0].name} × {cols[1].name}, real vs synthetic")


def triple(cols, real: list, syn: list, tvd: float, n: int = TRIPLE_CELLS) -> str:
    """A 3-way marginal's cells that differ most, real vs synthetic share."""
    dims = [c.size for c in cols]
    cr, cs, cells = joint_counts(real, syn, (0, 1, 2), dims)
    p, q = cr / len(real[0]), cs / len(syn[0])
    top = np.argsort(-np.abs(p - q), kind="stable")[:n]
    codes = np.unravel_index(top if cells is None else cells[top], dims)
    texts = [code_texts(c) for c in cols]
    labels = [", ".join(f"{short_name(c.name, 16)}={short(t[v], 18)}"
                        for c, t, v in zip(cols, texts, vs)) for vs in zip(*codes)]
    fig, ax = plt().subplots(figsize=(7.0, 1.0 + 0.3 * len(top)))
    pos = np.arange(len(top))
    ax.barh(pos - 0.2, p[top], 0.4, color=REAL, label="real")
    ax.barh(pos + 0.2, q[top], 0.4, color=SYN, label="synthetic")
    ax.set_yticks(pos, labels, fontsize=8)
    ax.set_ylim(len(top) - 0.4, -0.6)
    _percent(ax.xaxis)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    # the title on a line of its own, above the legend
    ax.set_title(f"{' × '.join(c.name for c in cols)}: TVD {tvd:.3f}; the {len(top)} cells "
                 "that differ most", loc="left", fontsize=9, pad=20)
    _legend(ax)
    return png(fig, f"3-way marginal {', '.join(c.name for c in cols)}: cells that differ most")


def convergence(history) -> str:
    fig, ax = plt().subplots(figsize=(6, 3))
    ax.plot(range(len(history)), history, marker=".")
    ax.set_xlabel("GUM iteration")
    ax.set_ylabel("mean TVD to the noisy targets")
    if min(history) > 0:  # zero when every target was appended rather than fitted
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    return png(fig, "GUM convergence: mean TVD to the noisy marginals per iteration")
