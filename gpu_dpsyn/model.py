"""FittedModel: everything fit() produces and sample() needs.

It holds noisy, post-processed values only (consistent marginals, value merges, private
bin edges, the noisy row count) plus public inputs (the schema, a public prior's codes)
and the post-processing seed; never a private record or the noise key.  It is a plain
picklable data class: Dask workers receive it to sample their batches.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gpu_dpsyn.config import Settings
from gpu_dpsyn.data.schema import Schema
from gpu_dpsyn.estimate.targets import scaled_targets


@dataclass
class FittedModel:
    settings: Settings
    seed: int  # the post-processing RNG's seed (GUM, decoding)
    seeded: bool  # the user gave the seed: the release's noise repeats too
    schema: Schema  # carries the private quantile bins once they are chosen
    names: list  # the synthesized columns
    domain: tuple = ()  # codes per column after low-count filtering
    levels: list = field(default_factory=list)  # core.types.Level per level (one, ungrouped)
    recodes: dict = field(default_factory=dict)  # column -> core.types.Recode (filtering)
    bins: object = None  # measure.quantiles.Binning: the private quantile bins, if any
    public: list | None = None  # a public prior's codes in the fitted domain
    public_selection: bool = False  # the pairs were chosen from the public table
    selected: list | None = None  # privsyn: the measured column sets, by name
    unused: list = field(default_factory=list)  # charged triples GUM could not realise
    n_estimate: int = 0  # the DP row count: sample()'s default size
    n_standard_error: float = 0.0
    fit_calls: int = 0  # post-processing RNG calls fit() used: samples take the next ones

    @property
    def marginals(self) -> list:
        return [m for lv in self.levels for m in lv.marginals]

    @property
    def grouped(self) -> bool:
        return bool(self.levels[0].group) or len(self.levels) > 1

    def targets(self, n: int, level=None) -> list:
        """GUM's targets: the level's (default: the last) top marginals scaled to n."""
        return scaled_targets(level or self.levels[-1], n)

