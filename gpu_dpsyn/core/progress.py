"""Progress on stderr for the long steps (tqdm; switched off by progress=False / --quiet).

Each step's line stays when it is done, with its time, so a run reads as a list of what it
did; a bar that stops early (GUM converged) is closed at the count it reached.
"""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def bar(enabled: bool, total: int, desc: str):
    if not enabled:
        yield None
        return
    from tqdm.auto import tqdm
    with tqdm(total=total, desc=desc, leave=True, dynamic_ncols=True) as b:
        yield b
        if b.n < b.total:  # stopped early: done at the count it reached
            b.total = b.n
            b.refresh()


@contextlib.contextmanager
def step(enabled: bool, desc: str):
    """A step with no count of its own (decoding, writing, a model's training): one line
    that shows it is running and stays with its time."""
    with bar(enabled, 1, desc) as b:
        yield
        if b is not None:
            b.update(1)


def labelled(label: str | None, desc: str) -> str:
    """A bar's text under a label naming where in the run it is ("adaptive round 2/3")."""
    return f"{label}: {desc}" if label else desc
