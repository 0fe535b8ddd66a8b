"""Progress bars on stderr for the long steps (tqdm, switched off by progress=False)."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def bar(enabled: bool, total: int, desc: str):
    if not enabled:
        yield None
        return
    from tqdm.auto import tqdm
    with tqdm(total=total, desc=desc, leave=False, dynamic_ncols=True) as b:
        yield b
