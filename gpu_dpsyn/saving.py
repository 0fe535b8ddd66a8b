"""Saving a fitted synthesizer and loading it back, to sample more rows later.

Sampling is post-processing: a loaded model samples any number of times and spends no
budget.  The file holds the FittedModel (noisy, post-processed values and public inputs;
no private record, no noise key), the accountant's ledger of what the fit spent, and the
post-processing RNG's next call word, in a pickle behind a format header and version.
A seeded fit's file holds what its noise key was derived from (saving it warns).
Like any pickle it runs code when loaded: load only files you made or trust.
"""
from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path

from gpu_dpsyn.data.files import check_kind, check_output, replacing
from gpu_dpsyn.errors import DPSynError, SeededNoiseWarning
from gpu_dpsyn.version import __version__

FORMAT = "gpu_dpsyn fitted model"
VERSION = 1  # raised whenever what the file holds changes shape
# a model file for files.check_kind: a pickle whose dict names its format first (so
# another pickle is not taken for one)
MODEL = ("gpu_dpsyn model file", (b"\x80",), FORMAT.encode())


class ModelFileError(DPSynError):
    """A model file that is not one, is of another format version, or cannot be read."""


def save(path, model, accountant, next_call: int) -> Path:
    """Write the fitted state to `path`, whole or not at all (data.files.replacing: a
    temporary file beside it, then a rename; an earlier file survives a failure)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ModelFileError(f"a model file's path must be a string or path, got "
                             f"{type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"cannot save the model to {str(path)!r}: it is a directory")
    check_output(path, "the model file")
    try:  # an earlier model is replaced, a table named by mistake is not
        check_kind(path, MODEL, "the model file")
    except DPSynError as e:
        raise ModelFileError(str(e)) from None
    if model.seeded:  # its seed, settings and schema are what the noise key came from
        warnings.warn("this model was fitted with a seed: anyone holding the file can "
                      "re-derive its noise and so undo it; keep it private, and release "
                      "only unseeded fits", SeededNoiseWarning, stacklevel=3)
    state = {"format": FORMAT, "version": VERSION, "package": __version__,
             "model": model, "accountant": accountant, "next_call": int(next_call)}
    with replacing(path, "the model file") as tmp:
        with open(tmp, "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def load(path, parts: dict) -> dict:
    """The state save() wrote: {"model", "accountant", "next_call", ...}; a clear error
    for a file of another kind or version, or whose parts are not of the types `parts`
    names (key -> type: the caller's, this layer imports neither)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ModelFileError(f"a model file's path must be a string or path, got "
                             f"{type(path).__name__}")
    if "\0" in str(Path(path)):  # open() raises ValueError for it
        raise ModelFileError(f"cannot read model file {str(path)!r}: it holds a NUL byte")
    try:
        with open(path, "rb") as f:
            state = pickle.load(f)
    except OSError as e:
        raise ModelFileError(f"cannot read model file {str(path)!r}: {e.strerror or e}") \
            from None
    except Exception:  # noqa: BLE001 - any unpickling failure: not our file
        raise ModelFileError(f"{str(path)!r} is not a gpu_dpsyn model file") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ModelFileError(f"{str(path)!r} is not a gpu_dpsyn model file")
    if state.get("version") != VERSION:
        raise ModelFileError(
            f"{str(path)!r} holds a model of format version {state.get('version')!r} "
            f"(written by gpu_dpsyn {state.get('package', '?')}); this gpu_dpsyn "
            f"({__version__}) reads version {VERSION}: fit again, or load it with the "
            "version that wrote it")
    nc = state.get("next_call")
    # a file of the format whose parts are not what save() writes (edited, or damaged):
    # one line naming the part, not an error from deep inside sampling
    for key, ok in [(k, isinstance(state.get(k), t)) for k, t in parts.items()] + [
            ("next_call", isinstance(nc, int) and not isinstance(nc, bool) and nc >= 0)]:
        if not ok:
            raise ModelFileError(f"{str(path)!r} is a damaged gpu_dpsyn model file: its "
                                 f"{key} is not what save() writes; fit again, or load the "
                                 "file as it was saved")
    return state
