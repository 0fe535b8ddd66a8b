"""The command line's files: inputs named as such, outputs checked before anything is
read (cannot be written, name an input or each other, hold a file of another kind), and the
ledger kept when what follows the fit fails (cli/commands.py)."""
from __future__ import annotations

import json
import os
import shlex
import shutil
from contextlib import contextmanager
from pathlib import Path

from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.data.files import (check_kind, check_name, check_output, file_id, target_of,
                                  write_text)
from gpu_dpsyn.data.ingest import CSV_SUFFIXES
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.evaluation import REPORT_TITLE


def command(*words) -> str:
    """A command line to paste into a shell: each word quoted where it must be (a name
    with a space split in two)."""
    return " ".join(shlex.quote(str(w)) for w in words)


def as_argument(path) -> str:
    """A file name as a command line takes it: one that starts with '-' as ./-in.csv
    (argparse read -in.csv as an option, and the pasted command failed)."""
    return f"./{path}" if str(path).startswith("-") else str(path)


def check_command(table, schema) -> str:
    """The check command line for a table and schema (names as as_argument writes them)."""
    return command("gpu-dpsyn", "check", as_argument(table), "--schema", as_argument(schema))


def check_inputs(*paths, parts: bool = False) -> None:
    """A directory given as a table is named as one (read_table would say 'no such file').
    parts: the first path may be a directory of parts on Dask (synthesize's input)."""
    for i, path in enumerate(paths):
        if path:
            check_name(path, f"cannot read {shown(str(path))}")
        if path and Path(path).is_dir():
            raise DPSynError(f"cannot read {path!r}: it is a directory; give a table file"
                             + ("; a directory of parts is read with --workers N or "
                                "--scheduler ADDRESS" if parts and i == 0 else ""))


def check_public(public, inputs) -> None:
    """A --public table is public input that costs none of the budget: the private table
    named again (by its name, a hard link or a symlink) would be used for free."""
    if not public:
        return
    clash = next((i for i in inputs if i and file_id(i) == file_id(public)), None)
    if clash is not None:
        raise DPSynError(f"--public {public!r} is the private input {str(clash)!r}: a public "
                         "table is used without spending budget, so it must hold no private "
                         "record")


# what those outputs hold: each replaces only an earlier output of its own kind, never
# another JSON document or page (a reviewed schema, an SVG named by mistake)
LEDGER = ("privacy ledger", (b"{",), b'"guarantee"')
EVALUATION = ("evaluate --json output", (b"{",), b'"not_for_publication"')
REPORT = ("gpu_dpsyn report", (b"<",), f"<title>{REPORT_TITLE}</title>".encode())
KINDS = {"--ledger": LEDGER, "--json": EVALUATION, "--report": REPORT}
_NOT_JSON = (".parquet", *CSV_SUFFIXES, ".html", ".htm")  # the names tables and pages take


def check_outputs(outputs: dict, inputs, kinds: dict = KINDS) -> None:
    """Refuse output paths that cannot be written before anything is read: a failure
    after fit() would come with the budget spent and the synthetic table lost.  Paths are
    compared as files (a hard link to the input is the input); each output is probed
    (files.check_output: its directory takes a new file, it is no device or FIFO), and
    one of the `kinds` (flag -> files.JSON, ...) replaces only a file of its kind."""
    seen = {}
    for flag, path in outputs.items():
        if path is not None and not str(path).strip():  # an unset variable, say
            raise DPSynError(f"{flag} names no file (an empty name)")
        if not path:
            continue
        check_output(path, flag)
        where = file_id(path)
        if where in seen:
            raise DPSynError(f"{seen[where]} and {flag} name the same file {path!r}")
        clash = next((i for i in inputs if i and file_id(i) == where), None)
        if clash is not None:
            raise DPSynError(f"{flag} {path!r} is the input file {str(clash)!r}; writing it "
                             "would destroy it")
        if flag in kinds:
            check_kind(path, kinds[flag], flag)
        if flag == "--ledger" and _failed_run(path):
            raise DPSynError(f"--ledger {path!r} records the spend of a run that failed; keep "
                             "it with your records: give another name")
        if flag == "--report" and not str(path).lower().endswith((".html", ".htm")):
            raise DPSynError(f"--report {path!r} is an HTML page: name it .html")
        if flag in kinds and b"{" in kinds[flag][1] and \
                str(path).lower().endswith(_NOT_JSON):  # (a later run would read it so)
            raise DPSynError(f"{flag} {path!r} is a JSON document, named as a table or a "
                             "page: name it .json")
        seen[where] = flag


def check_new_table(path, flag: str, overwrite: bool) -> None:
    """A table output replaces an existing file only when asked (--overwrite): nothing
    marks a CSV as an earlier release, and a table named by mistake (a copy of the private
    data, another release) would be lost.  An empty file holds nothing to lose."""
    if not path:
        return
    try:
        size = os.stat(path).st_size
    except OSError:  # nothing there yet, or check_output said what is wrong
        return
    if size and not overwrite:
        raise DPSynError(f"{flag} {str(path)!r} already holds a file ({size:,} bytes); give "
                         "another name, or --overwrite to replace it")


@contextmanager
def kept_aside(path):
    """An earlier file at `path` (the ledger) kept aside while the body runs, put back if
    it fails (a file the body made there removed): the table it goes with takes its name
    after the new ledger does, and a failure in between (a rename refused, Ctrl-C) left a
    ledger of a release that never happened beside the earlier table."""
    if not path:
        yield
        return
    p = target_of(path)  # a symlink's target: what the new ledger is written into
    aside = p.with_name(f".{p.name}.kept-{os.getpid()}")
    existed = p.is_file()
    if existed:
        try:
            os.link(p, aside)
        except OSError:
            shutil.copy2(p, aside)
    try:
        yield
    except BaseException:
        if existed:
            os.replace(aside, p)
        elif p.exists():
            os.remove(p)
        raise
    finally:
        if aside.exists():
            os.remove(aside)


@contextmanager
def spent(a, syn):
    """The fit and what follows it: once a charge is made, should anything fail (the
    fit's later steps, sampling, writing) the ledger of what was spent is written all the
    same, and a ledger that cannot be written either is named in the same one-line
    error."""
    try:
        yield
    except BaseException as e:
        if not syn.ledger:  # nothing spent: nothing to record
            raise
        try:
            where = failed_ledger(a.ledger)
            write_ledger(a, syn, [], where, failed=True)
        except DPSynError as lost:
            if isinstance(e, DPSynError):
                raise type(e)(f"{e}; the run spent budget, and no ledger records it: "
                              f"{lost}") from None
            note(e, f"the run spent budget, and no ledger records it: {lost}")
            raise e from None
        said = f"the budget it spent is recorded in {where}" if where is not None else \
            "it spent budget, which no --ledger records"
        if isinstance(e, DPSynError):
            raise type(e)(f"{e}; {said}") from None
        note(e, said)  # (an interrupt: said in main's one line)
        raise


def note(e: BaseException, text: str) -> None:
    """e.add_note(text), which Python 3.10 lacks (the notes as 3.11 keeps them)."""
    e.__notes__ = [*getattr(e, "__notes__", []), text]


FAILED = "this run failed after its charges: nothing was released, the budget was spent"


def json_file(path) -> tuple[str, object]:
    """What path holds, for the guards that keep a user's work: ("missing", None),
    ("unreadable", None) (no file we can read as UTF-8: a directory, no permission),
    ("empty", None) (only white space: no work), ("invalid", None) (text that does not
    parse), or ("json", the document)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return "missing", None
    except (OSError, ValueError):  # (UnicodeDecodeError is a ValueError)
        return "unreadable", None
    if not text.strip():
        return "empty", None
    try:
        return "json", json.loads(text)
    except (ValueError, RecursionError):
        return "invalid", None


def _failed_run(path) -> bool:
    """Whether path holds the ledger of a run that failed: its own "failed_run" key."""
    _, doc = json_file(path)
    return isinstance(doc, dict) and "failed_run" in doc


def failed_ledger(path):
    """Where a run that failed after its charges records them: --ledger, unless it holds
    an earlier run's ledger, whose table is on disk beside it (replaced, the pair would no
    longer match): then NAME.failed.json, NAME.failed-2.json, ... beside it."""
    if not path or not os.path.lexists(path):
        return path or None
    p = Path(path)
    for k in range(1, 10_000):
        there = p.with_name(f"{p.stem}.failed{'' if k == 1 else f'-{k}'}{p.suffix}")
        if not os.path.lexists(there):
            return str(there)
    raise DPSynError(f"no free name beside {path} for the failed run's ledger")


def write_ledger(a, syn, history, path=None, failed: bool = False, table=None) -> dict:
    """The privacy report, written to --ledger (or path) with the GUM curve for the
    report (noisy data only: no timings, they grow with the true row count); failed: a
    run's that failed after its charges, which says so first (never replaced).  table:
    (path, rows) of the release it goes with, named in it (a pair that no longer
    matches can be told)."""
    rep = {"failed_run": FAILED, **syn.privacy_report()} if failed else \
        syn.privacy_report()
    if table is not None:
        rep["table"] = {"file": Path(table[0]).name, "rows": int(table[1])}
    path = a.ledger if path is None else path
    if path:
        rep["gum_history"] = history
        write_text(path, json.dumps(rep, indent=2) + "\n", "--ledger")
    return rep


def check_schema_out(path) -> None:
    """The schema command's --out replaces a schema, not a ledger, an evaluation or
    other JSON, nor a document that does not parse (a schema being written): that work
    would be lost."""
    kind, doc = json_file(path)
    if kind in ("missing", "empty"):  # nothing there yet, or no work
        return
    if not (isinstance(doc, dict) and isinstance(doc.get("columns"), dict)):
        raise DPSynError(f"--out {path!r} is no schema (a ledger, an evaluation, other "
                         "JSON, or a document that does not parse): the schema command "
                         "replaces only a schema; give another name, or remove it first")


def check_not_reviewed(path) -> None:
    """infer-schema replaces an earlier draft, not a schema whose drafted values were all
    reviewed (or one written by hand): that work would be lost."""
    kind, doc = json_file(path)
    if kind in ("missing", "empty"):  # nothing there yet, or no work
        return
    if kind == "unreadable":  # (a schema written in Latin-1 is still someone's work)
        raise DPSynError(f"--out {path!r} holds a file that is no UTF-8 text (a schema "
                         "written in another encoding?); infer-schema would replace it: "
                         "give another name, or remove it first")
    if kind == "invalid":  # a schema with a typo is still someone's work
        raise DPSynError(f"--out {path!r} holds JSON that does not parse (a schema being "
                         "written?); infer-schema would replace it: give another name, or "
                         "remove it first")
    if not isinstance(doc, dict) or not isinstance(doc.get("columns", doc.get("schema")),
                                                   (dict, list)):
        raise DPSynError(f"--out {path!r} holds JSON that is no schema (a ledger, an "
                         "evaluation?); infer-schema would replace it: give another name, or "
                         "remove it first")
    if not doc.get("_drafted_from_data"):
        raise DPSynError(f"--out {path!r} is a schema with nothing left to review (reviewed, "
                         "or written by hand); infer-schema would replace it with a fresh "
                         "draft: give another name, or remove it first")
