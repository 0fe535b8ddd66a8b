"""Reading tables: pandas on the host, or cuDF straight into GPU memory.

With cuDF (the optional `cudf` extra) a CSV or Parquet file is parsed on the GPU and
encode() bins its columns there, so the private table never round-trips through the
host.  cuDF reads plain .csv and .parquet; anything else (.csv.xz, say) goes to pandas.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .errors import DPSynError

ENGINES = ("auto", "pandas", "cudf")
CUDF_SUFFIXES = (".csv", ".parquet")


def cudf_available() -> bool:
    try:
        import cudf  # noqa: F401
    except Exception:  # not installed, or no usable device
        return False
    return True


def choose_engine(engine: str, path: str, gpu: bool) -> str:
    """'auto': cuDF when it is installed, the run is on the GPU and cuDF reads the format."""
    if engine not in ENGINES:
        raise DPSynError(f"unknown reader {engine!r}; choose one of {ENGINES}")
    if engine == "auto":
        ok = gpu and Path(path).suffix in CUDF_SUFFIXES and cudf_available()
        return "cudf" if ok else "pandas"
    if engine == "cudf" and not cudf_available():
        raise DPSynError("reader 'cudf' needs cuDF (pip install 'gpu_dpsyn[cudf]') and a CUDA "
                         "device; use --reader pandas")
    if engine == "cudf" and Path(path).suffix not in CUDF_SUFFIXES:
        raise DPSynError(f"reader 'cudf' reads {CUDF_SUFFIXES} files, not {path!r}; "
                         "use --reader pandas")
    return engine


def read_table(path: str, engine: str = "pandas"):
    """A pandas DataFrame (engine 'pandas') or a cuDF one (engine 'cudf')."""
    p = Path(path)
    if not p.is_file():
        raise DPSynError(f"cannot read {path!r}: no such file")
    if engine not in ("pandas", "cudf"):
        raise DPSynError(f"unknown reader {engine!r}; use choose_engine() for 'auto'")
    try:
        if engine == "cudf":
            import cudf
            return cudf.read_parquet(p) if p.suffix == ".parquet" else cudf.read_csv(p)
        if p.suffix == ".parquet":
            return pd.read_parquet(p)
        return pd.read_csv(p)
    except ImportError as e:  # Parquet without pyarrow, say
        raise DPSynError(f"cannot read {path!r}: {e}") from None
    except (OSError, ValueError, UnicodeDecodeError, RuntimeError) as e:
        raise DPSynError(f"cannot read {path!r} as a table: {e}") from None
