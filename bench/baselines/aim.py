"""AIM (McKenna, Mullins, Sheldon, Miklau 2022) written against the public API of mbi
2.0, for bench/suites/peers.py, following private-pgm's mechanisms/aim.py: 1-way marginals
first, then rounds that pick the worst-approximated candidate (the workload's downward
closure, within a model size that grows with the budget spent, capped at 80 MB) by
the exponential mechanism and measure it with Gaussian noise; sigma halves (and
epsilon doubles) when a measurement barely moves the model; the last round takes what
is left of rho.  `schedule` holds the budget arithmetic (tested without mbi).

A run may take hours (flights at eps 8): with `checkpoint=path` it writes its state after
every round (mbi.save's pytree of the model and measurements, the generator and budget)
and a later call with the same arguments goes on from the last round written, giving the
records an unbroken run gives."""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import itertools
import math
import os
import pickle
import time
from pathlib import Path

import numpy as np

from gpu_dpsyn.privacy import eps_delta_to_rho


def _mbi():
    import jax
    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi import junction_tree
    from mbi.estimation import MirrorDescent
    return mbi, junction_tree, MirrorDescent


class Schedule:
    """AIM's budget: 0.9 of each round's rho to the Gaussian measurement, 0.1 to the
    exponential mechanism; rounds = 16 d by default."""

    def __init__(self, rho: float, n_oneway: int, rounds: int):
        self.rho = rho
        self.sigma = math.sqrt(rounds / (2 * 0.9 * rho))
        self.epsilon = math.sqrt(8 * 0.1 * rho / rounds)
        self.used = n_oneway * 0.5 / self.sigma ** 2  # the 1-way marginals
        self.done = False

    def next_round(self) -> tuple[float, float]:
        """(epsilon, sigma) of the next round, charged; the last one takes the rest."""
        if self.rho - self.used < 2 * (0.5 / self.sigma ** 2 + self.epsilon ** 2 / 8):
            left = self.rho - self.used
            self.sigma = math.sqrt(1 / (2 * 0.9 * left))
            self.epsilon = math.sqrt(8 * 0.1 * left)
            self.done = True
        self.used += self.epsilon ** 2 / 8 + 0.5 / self.sigma ** 2
        return self.epsilon, self.sigma

    def anneal(self) -> None:
        self.sigma /= 2
        self.epsilon *= 2


def _mbi_version() -> str | None:
    try:
        return importlib.metadata.version("mbi")
    except importlib.metadata.PackageNotFoundError:
        return None


MBI_VERSION = _mbi_version()


class Checkpoint:
    """Where a run stands after a round: written whole (a temporary file, then renamed),
    so a run killed mid-write leaves the round before."""

    def __init__(self, path: Path, fingerprint: str):
        self.path = path
        self.fingerprint = fingerprint  # of the arguments, table and PYTHONHASHSEED

    def load(self, mbi):
        """(state, model, log) of the last round written, or None: no file yet."""
        if not self.path.exists():
            return None
        state = pickle.loads(self.path.read_bytes())
        if state["fingerprint"] != self.fingerprint:
            raise ValueError(f"{self.path} is another run's checkpoint (its arguments, "
                             "table or PYTHONHASHSEED differ)")
        if state.get("mbi", MBI_VERSION) != MBI_VERSION:  # mbi.save's format is mbi's own
            raise ValueError(f"{self.path} was written by mbi {state['mbi']}, "
                             f"not {MBI_VERSION}")
        tree = mbi.load(io.BytesIO(state.pop("tree")))
        return state, tree["model"], tree["log"]

    def save(self, mbi, model, log, **state) -> None:
        buf = io.BytesIO()
        mbi.save({"model": model, "log": log}, buf)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_bytes(pickle.dumps({**state, "fingerprint": self.fingerprint,
                                      "mbi": MBI_VERSION,
                                      "tree": buf.getvalue()}))
        os.replace(tmp, self.path)


def fingerprint(codes: dict, sizes: dict, *args) -> str:
    """What must match for a checkpoint to go on: the table, its domain, the arguments."""
    h = hashlib.sha256(repr((list(codes), [sizes[c] for c in codes], args,
                             os.environ.get("PYTHONHASHSEED"))).encode())
    for v in codes.values():
        h.update(np.ascontiguousarray(np.asarray(v, dtype=np.int64)).tobytes())
    return h.hexdigest()


def _closure(workload):
    """Candidates (every subset of a workload set) with AIM's weights."""
    out = {}
    for cl in sorted({s for w in workload for r in range(1, len(w) + 1)
                      for s in itertools.combinations(w, r)}, key=len):
        out[cl] = sum(len(set(cl) & set(w)) for w in workload)
    return out


def _exponential(scores: dict, eps: float, sensitivity: float, rng):
    keys = list(scores)
    q = np.array([scores[k] for k in keys])
    g = eps / (2 * sensitivity) * (q - q.max()) + rng.gumbel(size=q.size)
    return keys[int(np.argmax(g))]


def aim(codes: dict, sizes: dict, epsilon: float, delta: float, seed: int = 0,
        degree: int = 3, max_cells: int = 10000, max_model_size: float = 80,
        max_iters: int = 1000, rounds: int | None = None, progress=None,
        scorer: str = "numpy", checkpoint=None, stats: dict | None = None) -> dict:
    """codes: {column: int array}; workload: all degree-way sets of <= max_cells cells.
    progress: a callable given one line per round (its pick, times and budget), or None.
    checkpoint: a file to go on from and write after each round (module docstring), or
    None.  stats: a dict given "seconds_before" (the wall time of the processes before
    this one, counted to their last round written) and "segments" (processes in all).
    scorer: "numpy" (bench/baselines/elimination.py) or "mbi" (mbi's project, op by op: the
    reference, 20x slower a round).  The same seed gives the same output either way,
    and again on a rerun only with PYTHONHASHSEED fixed (mbi orders sets of names)."""
    if scorer not in ("numpy", "mbi"):
        raise ValueError(f"scorer must be 'numpy' or 'mbi', not {scorer!r}")
    if checkpoint is not None and os.environ.get("PYTHONHASHSEED", "random") == "random":
        # mbi orders sets of names by their hashes: another process, another order
        raise ValueError("an AIM checkpoint needs PYTHONHASHSEED fixed (e.g. 0) in every "
                         "process of the run: mbi orders sets of names by their hashes")
    t_call = time.perf_counter()
    from elimination import marginal  # bench/baselines/: on the path as peers.py runs it
    mbi, jt, MirrorDescent = _mbi()
    import jax
    rng = np.random.default_rng(seed)
    names = list(codes)
    dom = mbi.Domain(names, [sizes[c] for c in names])
    data = mbi.Dataset({c: np.asarray(v, dtype=np.int64) for c, v in codes.items()}, dom)
    workload = [cl for cl in itertools.combinations(names, min(degree, len(names)))
                if dom.size(cl) <= max_cells]
    candidates = _closure(workload)
    answers = {cl: np.asarray(data.project(cl).datavector()) for cl in candidates}
    oneway = [cl for cl in candidates if len(cl) == 1]
    rho = eps_delta_to_rho(epsilon, delta)
    budget = Schedule(rho, len(oneway), rounds or 16 * len(names))
    est = MirrorDescent()
    ck = None if checkpoint is None else Checkpoint(Path(checkpoint), fingerprint(
        codes, sizes, epsilon, delta, seed, degree, max_cells, max_model_size, max_iters,
        rounds, scorer))
    resumed = ck.load(mbi) if ck is not None else None
    if resumed is None:
        log = [mbi.LinearMeasurement(answers[cl] + rng.normal(0, budget.sigma,
                                                              answers[cl].size),
                                     cl, stddev=budget.sigma) for cl in oneway]
        model = est.estimate(dom, log, iters=max_iters)
        n_round, before, segments = 0, 0.0, 1
    else:
        state, model, log = resumed
        rng.bit_generator.state = state["rng"]
        budget.__dict__.update(state["budget"])
        n_round, before, segments = state["round"], state["seconds"], state["segments"] + 1
    t_start = time.perf_counter()
    while not budget.done:
        eps, sigma = budget.next_round()
        t0, n_round = time.perf_counter(), n_round + 1
        limit = max_model_size * budget.used / rho
        free = {s for cl in model.cliques for r in range(1, len(cl) + 1)
                for s in itertools.combinations(cl, r)}
        small = {cl: w for cl, w in candidates.items()
                 if cl in free or jt.hypothetical_model_size(dom, list(model.cliques) + [cl])
                 <= limit}
        errors = {}
        # In NumPy (bench/baselines/elimination.py): mbi's project, jitted or op by op, took
        # 20-45 ms a candidate, most of AIM's time; the same marginals to rounding.
        if scorer == "numpy":
            pots = [(tuple(c), np.asarray(model.potentials[c].values))
                    for c in model.potentials.cliques]
            total = float(model.total)

            def project(cl):
                return marginal(pots, sizes, cl, total).reshape(-1)
        else:
            def project(cl):
                return np.asarray(model.project(cl).datavector())
        with jax.disable_jit(scorer == "mbi"):  # op by op: jitted compiles per candidate
            for cl, w in small.items():
                bias = math.sqrt(2 / math.pi) * sigma * dom.size(cl)
                errors[cl] = w * (np.abs(answers[cl] - project(cl)).sum() - bias)
        cl = _exponential(errors, eps, max(small.values()), rng)
        x = answers[cl]
        log.append(mbi.LinearMeasurement(x + rng.normal(0, sigma, x.size), cl, stddev=sigma))
        z = np.asarray(model.project(cl).datavector())
        t1 = time.perf_counter()
        model = est.estimate(dom, log, iters=max_iters, warm_start=model)
        w = np.asarray(model.project(cl).datavector())
        annealed = np.abs(w - z).sum() <= sigma * math.sqrt(2 / math.pi) * x.size
        if annealed:
            budget.anneal()
        if ck is not None:
            ck.save(mbi, model, log, rng=rng.bit_generator.state, budget=vars(budget),
                    round=n_round, seconds=before + time.perf_counter() - t_call,
                    segments=segments)
        if progress is not None:
            t2 = time.perf_counter()
            size = jt.hypothetical_model_size(dom, list(model.cliques))
            progress(f"round {n_round}: {cl} of {len(small)} candidates, sigma {sigma:.3g}, "
                     f"score {t1 - t0:.1f} s, estimate {t2 - t1:.1f} s, "
                     f"total {t2 - t_start:.0f} s, rho used {budget.used / rho:.3f}, "
                     f"model {size:.2f} MB" + (", annealed" if annealed else ""))
    assert math.isclose(budget.used, rho, rel_tol=1e-9)  # the last round took the rest
    if stats is not None:
        stats.update(seconds_before=before, segments=segments, rho_used=budget.used)
    np.random.seed(seed)  # mbi's synthetic_data draws from NumPy's global generator
    syn = model.synthetic_data()
    return {c: np.asarray(syn.data[c]) for c in names}
