"""gpu-dpsyn sample: the table of a saved fit, written as synthesize writes it, spending
nothing; and synthesize's fit kept when what follows it fails (keeping_fit): the budget is
spent by then, and the table it paid for must not cost it twice."""
from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from gpu_dpsyn.core.progress import step
from gpu_dpsyn.errors import DPSynError, SeededNoiseWarning
from gpu_dpsyn.cli.paths import (as_argument, check_new_table, check_outputs, command,
                                 failed_ledger, kept_aside, note, write_ledger)
from gpu_dpsyn.data.dtypes import dictionary_types
from gpu_dpsyn.data.files import claiming
from gpu_dpsyn.data.ingest import check_writable, table_format, write_table

FIT = ".fit"  # the kept fit: OUT.fit beside --out (OUT.fit-2, ... where that is taken)


def sample(a) -> int:
    # every check that can fail runs before the model is read (it may be large)
    check_outputs({"--out": a.out, "--ledger": a.ledger}, [a.fit])
    table_format(a.out, "--out")
    with claiming({"--out": a.out, "--ledger": a.ledger}):  # till they are written
        return _sample(a)


def _sample(a) -> int:
    """sample, its outputs claimed: the model loaded, its rows drawn and written with the
    schema it was fitted on (its CSV dialect, its columns' types), the ledger beside."""
    from gpu_dpsyn.synthesizer import Synthesizer
    check_new_table(a.out, "--out", a.overwrite)
    check_new_table(a.ledger, "--ledger", a.overwrite)
    syn = Synthesizer.load(a.fit, backend=a.backend)
    # progress is this command's to choose; it draws nothing, the rows stay the same
    syn.model = dataclasses.replace(syn.model, settings=dataclasses.replace(
        syn.model.settings, progress=not a.quiet))
    syn.settings = syn.model.settings
    schema = syn.model.schema
    check_writable(schema, a.out)
    out = syn.sample(a.rows)
    said = write_release(a, syn, out, schema)
    print(f"wrote {len(out):,} synthetic rows to {a.out} ({syn.backend.name} backend) from "
          f"the fit in {a.fit}; no budget was spent (sampling a fit is post-processing); "
          f"privacy: {said['guarantee']}", file=sys.stderr)
    return 0


def write_release(a, syn, out, schema) -> dict:
    """The table to --out and the ledger to --ledger (synthesize's and sample's): the
    ledger first, before the table takes its name, so a ledger that cannot be written
    leaves an earlier table (and its ledger) as they were; what write_ledger said."""
    said = {}
    with step(not a.quiet, f"write {a.out}"), kept_aside(a.ledger):
        write_table(out, a.out, "--out", schema.csv, then=lambda: said.update(
            write_ledger(a, syn, syn.last_run.history, table=(a.out, len(out)))),
            dictionaries=dictionary_types(schema))
    return said


@contextmanager
def keeping_fit(a, syn):
    """synthesize's release, after its fit: should sampling or writing fail (a full disk,
    memory, Ctrl-C), the fit is saved beside --out (else beside --ledger) with the RNG
    call the failed sample drew with, so that the sample command writes the very table
    the run would have; the one error line names the file and that command, or says the
    fit could not be kept."""
    call = syn._calls  # (sample() takes the next calls before it can fail)
    try:
        yield
    except (Exception, KeyboardInterrupt) as e:
        said = _kept(a, syn, call)
        if isinstance(e, KeyboardInterrupt):  # main's one line says it, with its exit code
            note(e, said)
            raise
        if isinstance(e, DPSynError):
            raise type(e)(f"{e}; {said}") from None
        what = "out of memory" if isinstance(e, MemoryError) else \
            f"{type(e).__name__}: {' '.join(str(e).split())}"
        raise DPSynError(f"sampling or writing the table failed after the fit ({what}); "
                         f"{said}") from None


def _kept(a, syn, call: int) -> str:
    """The fit saved, and what to say of it."""
    failures = []
    for beside in dict.fromkeys(p for p in (a.out, a.ledger) if p):
        try:
            path = _save(beside, syn, call)
        except Exception as e:  # (MemoryError pickling it too: the run's error is said)
            failures.append(f"beside {beside}: " + (
                "out of memory" if isinstance(e, MemoryError) else
                f"{getattr(e, 'strerror', None) or str(e) or type(e).__name__}"))
            continue
        private = " (keep it private: it was fitted with a seed, and anyone holding it " \
                  "can re-derive the noise)" if syn.model.seeded else ""
        return (f"the fit the budget paid for is kept in {path}{private}; to write the "
                f"table without spending budget again: {_command(a, path)}")
    return f"the fit could not be kept either ({'; '.join(failures)})"


def _save(beside, syn, call: int) -> str:
    """The fit in a new file named after `beside`: its name taken first (O_EXCL: a file
    there, a user's or another run's, is never replaced), readable by its owner alone."""
    from gpu_dpsyn import saving
    for k in range(1, 1000):
        path = f"{beside}{FIT}" + (f"-{k}" if k > 1 else "")
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        try:
            with warnings.catch_warnings():  # said in the error line instead
                warnings.simplefilter("ignore", SeededNoiseWarning)
                saving.save(path, syn.model, syn.accountant, call)  # (keeps the mode)
        except BaseException:
            os.remove(path)
            raise
        return path
    raise DPSynError(f"no free name {beside}{FIT}-N")


def _command(a, path) -> str:
    """The sample command that writes the table the run would have written."""
    words = ["--out", as_argument(a.out)]
    if a.rows is not None:
        words += ["--rows", a.rows]
    ledger = _release_ledger(a.ledger)
    if ledger:
        words += ["--ledger", as_argument(ledger)]
    if a.overwrite:
        words.append("--overwrite")
    return command("gpu-dpsyn", "sample", as_argument(path), *words)


def _release_ledger(path):
    """--ledger, unless the failed run's ledger is about to take its name (nothing was
    there: cli.paths.failed_ledger), which is kept: then NAME.release.json beside it."""
    if not path:
        return None
    try:
        if failed_ledger(path) != path:
            return path
    except DPSynError:
        return path
    p = Path(path)
    for k in range(1, 1000):
        there = p.with_name(f"{p.stem}.release{'' if k == 1 else f'-{k}'}{p.suffix}")
        if not os.path.lexists(there):
            return str(there)
    return None
