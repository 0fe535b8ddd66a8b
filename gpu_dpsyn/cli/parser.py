"""gpu-dpsyn's arguments: one sub-parser per command."""
from __future__ import annotations

import argparse
import re
import sys
import textwrap

from gpu_dpsyn.data.text import pasted
from gpu_dpsyn.errors import DPSynError, ParameterError
from gpu_dpsyn.selection.triples import ROUNDS

DESCRIPTION = ("Differentially private synthetic tables. Draft a schema from a table "
               "(infer-schema), review it, synthesize under a privacy budget, then evaluate "
               "the synthetic table against the real one.")


BUDGET_HELP = """choosing epsilon and delta:
  epsilon bounds how much one individual can change the probability of any output: by at most
  a factor e^epsilon. Smaller is stronger and noisier: 0.3-1 is strong, 1-3 moderate, up to 10
  weak; epsilon = 1 is a common starting point.
  delta is the probability that the epsilon bound may fail. Choose it well below 1/n for n
  individuals, typically 1e-9 to 1e-6 (1e-9 costs little accuracy)."""


# a command line to start from, shown under each subcommand's --help
EXAMPLES = {
    "synthesize": "gpu-dpsyn synthesize mydata.csv --schema myschema.json --epsilon 1 "
                  "--delta 1e-9 --out synthetic.csv --ledger ledger.json",
    "evaluate": "gpu-dpsyn evaluate mydata.csv synthetic.csv --schema myschema.json "
                "--ledger ledger.json --report report.html",
    "infer-schema": "gpu-dpsyn infer-schema mydata.csv --out myschema.json --id person_id",
    "check": "gpu-dpsyn check mydata.csv --schema myschema.json",
    "sample": "gpu-dpsyn sample synthetic.csv.fit --out synthetic.csv --ledger ledger.json",
    "schema": "gpu-dpsyn schema myschema.json --set age.min=0 --set age.max=120 "
              "--reviewed age",
}


def _command(sub, name: str, summary: str, more: str = "", epilog: str = ""):
    """A subcommand whose --help opens with what it does (its line in the command list,
    which alone said so) and ends with an example (EXAMPLES) above any epilog."""
    text = textwrap.fill(f"{summary[0].upper()}{summary[1:]}.{' ' + more if more else ''}",
                         79)
    tail = f"example:\n  {EXAMPLES[name]}" + (f"\n\n{epilog}" if epilog else "")
    return sub.add_parser(name, help=summary, description=text, epilog=tail,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors in one line, as every other refusal: its usage block
    came before the line that said what was wrong."""

    given: list = []

    def parse_known_args(self, args=None, namespace=None):
        # (a subcommand's parser: its own part)
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        message = message.replace("\n", "\\n").replace("\r", "\\r")  # one line, whatever
        message += self._joined(message)
        self.exit(2, f"{self.prog}: error: {message} ({self.prog} --help lists the "  # given
                     "options)\n")

    def _joined(self, message: str) -> str:
        """argparse takes a value that starts with '-' (--set -neg.min=0) for an option, and
        says the flag 'expected one argument': the flag's own form that takes it."""
        m = re.fullmatch(r"argument (\S+): expected one argument", message)
        flags = m[1].split("/") if m else ()
        at = next((i for i, w in enumerate(self.given[:-1]) if w in flags
                   and self.given[i + 1].startswith("-")), None)
        if at is None:
            return ""
        return ("; a value that starts with '-' goes joined to its flag ("
                f"{pasted(self.given[at], self.given[at + 1])})")


class _Once(argparse._StoreAction):
    """A single-valued option: refused when given again with another value (argparse
    keeps the last: --epsilon 1 ... --epsilon 10 ran at 10, said only in the run's last
    line, where a script's default met an override)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", set())
        if self.dest in given and getattr(namespace, self.dest) != values:
            raise ParameterError(f"{self.option_strings[0]} is given twice "
                                 f"({getattr(namespace, self.dest)!r} and {values!r}): "
                                 "give it once")
        given.add(self.dest)
        setattr(namespace, self.dest, values)


def _once(parser: argparse.ArgumentParser) -> None:
    """Every plain single-valued option of parser's subcommands as a _Once."""
    for sub in parser._subparsers._group_actions[0].choices.values():
        for action in sub._actions:
            if type(action) is argparse._StoreAction and action.option_strings:
                action.__class__ = _Once


# a number as people write one: Python's float() also reads "0_5" (as 5) and "1_000"
_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*|\s*[+-]?(?:inf|nan)\s*",
                     re.IGNORECASE | re.ASCII)  # (ASCII: float() reads other scripts' digits)


def _number(text: str) -> float:
    """argparse type for --epsilon and the like: decimal or scientific notation (infinity
    and NaN reach the parameters' own checks, which say what is wrong with them)."""
    if not _NUMBER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"must be a number such as 0.5 or 1e-9, got {text!r}")
    return float(text)


def _integer(text: str) -> int:
    """argparse type for a count: digits alone (int() reads "1_0" as 10, too)."""
    if not re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):
        raise argparse.ArgumentTypeError(f"must be a whole number such as 10, got {text!r}")
    return int(text)


def _iterations(text: str):
    """argparse type for --iterations: 'auto' or an integer (validated by GUMConfig)."""
    if text == "auto":
        return text
    try:
        return _integer(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be 'auto' or an integer, got {text!r}") \
            from None


def build_parser() -> argparse.ArgumentParser:
    from gpu_dpsyn.version import __version__
    p = _Parser(prog="gpu-dpsyn", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                   help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = _command(sub, "synthesize", "fit on a private table and write a synthetic one",
                 epilog=BUDGET_HELP)
    s.add_argument("input", help="the private table (.csv, .csv.gz/.bz2/.xz/.zip, .parquet)")
    s.add_argument("--schema", required=True,
                   help="public schema JSON (ours or NIST); draft one with infer-schema, then "
                        "review it")
    s.add_argument("--epsilon", type=_number, required=True,
                   help="privacy budget epsilon > 0: smaller is more private and noisier "
                        "(0.3-1 strong, 1-3 moderate, up to 10 weak; see below)")
    s.add_argument("--delta", type=_number, required=True,
                   help="privacy parameter delta in (0, 1): well below 1/n for n "
                        "individuals, typically 1e-9 to 1e-6")
    s.add_argument("--out", required=True,
                   help="the synthetic table to write; its suffix picks the format")
    s.add_argument("--overwrite", action="store_true",
                   help="replace files already at --out and --ledger (without it, they are "
                        "refused: another table, another run's ledger); --workers runs need "
                        "a new or empty directory; files another run is writing are refused "
                        "either way")
    s.add_argument("--rows", type=_integer, default=None,
                   help="rows to write (default: the differentially private estimate of the "
                        "real row count)")
    s.add_argument("--seed", type=_integer, default=None,
                   help="make the run reproducible, for tests only: a seeded release must "
                        "not be published")
    s.add_argument("--iterations", type=_iterations, default="auto",
                   help="GUM iterations: a number, or auto (default: until the fit to the "
                        "noisy marginals stops improving, at most 200; post-processing, "
                        "costs no budget)")
    s.add_argument("--method", default="privsyn", choices=["privsyn", "dpsyn"],
                   help="privsyn: private marginal selection (default); dpsyn: all 2-way")
    s.add_argument("--workload", action="append", metavar="COLS[:WEIGHT]",
                   help="column set that matters more, e.g. carrier,dest:3 (repeatable); "
                        "names holding ',' or ':' are read as the schema has them, or in "
                        "JSON: '[\"a,b\", \"c\"]:3'")
    s.add_argument("--public", help="a public table of the same schema: GUM starts from its "
                                    "records and (with --selection auto) the marginals are "
                                    "chosen from it at no privacy cost")
    s.add_argument("--selection", default="auto", choices=["auto", "public", "private"],
                   help="how the marginals are chosen: from the --public table (free), from "
                        "noisy private scores (10%% of the budget; better when the public "
                        "table differs much), or auto: public when --public is given")
    s.add_argument("--prior-tolerance", type=_number, default=0.0, metavar="K",
                   help="GUM leaves a cell within K noise standard deviations of its target "
                        "as the prior has it (default 0: K = 1 helped a close --public table "
                        "a little and hurt a distant one much)")
    s.add_argument("--adaptive-rounds", type=_integer, default=ROUNDS, metavar="N",
                   help="privsyn: rounds that add the 3-way marginals a first fit misses "
                        "most (35%% of the marginals' budget; what they do not use measures "
                        "the chosen marginals again); 0: pairs and their triangles only")
    s.add_argument("--no-neighbour-shuffle", action="store_true",
                   help="keep GUM's records as they are: by default each column is permuted "
                        "among the records that agree on the columns it shares a marginal "
                        "with, which keeps every marginal and undoes GUM's copies")
    s.add_argument("--no-gibbs-sweep", action="store_true",
                   help="skip the Gibbs sweep after GUM: by default each column is redrawn "
                        "from the maximum-entropy model given the columns it shares a "
                        "marginal with, then the polish (or, with --no-polish, one GUM "
                        "iteration) repairs the marginals")
    s.add_argument("--no-polish", action="store_true",
                   help="skip the polish after GUM: by default each column's values are "
                        "moved, record by record, wherever that brings the marginals "
                        "closer to their targets")
    s.add_argument("--no-denoise", action="store_true",
                   help="keep the measured marginals as they are: by default each multi-way "
                        "marginal is smoothed along its binned numbers and dates where that "
                        "lowers its estimated error, and its cells become their posterior "
                        "means under a prior on its counts estimated from the noisy counts "
                        "(empirical Bayes)")
    s.add_argument("--group-by", action="append", metavar="COLS",
                   help="synthesize per group of these categorical columns (comma-separated); "
                        "each flag adds a level, e.g. --group-by state --group-by puma,year; "
                        "every group gets its own noisy count and marginals (a name holding "
                        "',': as --workload)")
    s.add_argument("--conversion", default="cks", choices=["cks", "bun-steinke"],
                   help="(epsilon, delta) -> zCDP: tight CKS (default) or Bun-Steinke")
    s.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"],
                   help="cpu (NumPy), gpu (CuPy) or auto: the GPU when one is usable")
    s.add_argument("--reader", default="auto", choices=["auto", "pandas", "cudf"],
                   help="table reader: cudf parses .parquet on the GPU (auto: so when cuDF "
                        "is installed and the run is on the GPU); CSV: pandas")
    s.add_argument("--sensitivity", type=_integer, default=None,
                   help="max records per individual (default: schema's, else 1)")
    s.add_argument("--ledger",
                   help="write the privacy ledger as JSON here (released with the table; "
                        "evaluate --ledger reads it for the report)")
    s.add_argument("--on-invalid", default="repair", choices=["repair", "error"],
                   help="values the schema does not allow: repair them by a public "
                        "row-local rule (default: clamp numbers to the range; unlisted "
                        "values and missing ones become missing, the column's fallback, or "
                        "drop the row), or refuse the table (error: NOT private, since the "
                        "refusal depends on single records; see 'gpu-dpsyn check')")
    s.add_argument("--quiet", action="store_true", help="no progress bars")
    s.add_argument("--workers", type=_integer, default=None, metavar="N",
                   help="run on a local Dask cluster of N workers: INPUT may be a directory "
                        "or a glob ('in/*.parquet'), --out is a directory of Parquet parts")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on the Dask cluster at ADDRESS (tcp://host:8786), as --workers")
    s.add_argument("--batch-rows", type=_integer, default=None, metavar="N",
                   help="rows per sampling batch on Dask (default: from worker memory)")
    m = _command(sub, "sample", "write the table of a fit that synthesize kept, spending no "
                                "budget",
                 "synthesize keeps its fit as OUT.fit when sampling or writing the table "
                 "fails after the budget is spent, and its error line gives this command; "
                 "it writes the table that run would have written. Load only fits you made "
                 "or trust (a model file runs code when read).")
    m.add_argument("fit", help="the model file synthesize kept (OUT.fit)")
    m.add_argument("--out", required=True,
                   help="the synthetic table to write; its suffix picks the format")
    m.add_argument("--rows", type=_integer, default=None,
                   help="rows to write (default: the fit's differentially private estimate "
                        "of the real row count)")
    m.add_argument("--overwrite", action="store_true",
                   help="replace files already at --out and --ledger")
    m.add_argument("--backend", default=None, choices=["auto", "cpu", "gpu"],
                   help="where to sample (default: the fit's; every backend writes the "
                        "same rows)")
    m.add_argument("--ledger", help="write the fit's privacy ledger as JSON here (released "
                                    "with the table)")
    m.add_argument("--quiet", action="store_true", help="no progress bars")
    e = _command(sub, "evaluate", "compare a synthetic table with the real one: TVD of "
                                  "1/2/3-way marginals, optional HTML report")
    e.add_argument("real", help="the real (private) table")
    e.add_argument("synthetic", help="the synthetic table")
    e.add_argument("--schema", help="schema JSON (default: inferred from both tables)")
    e.add_argument("--max-sets", type=_integer, default=None,
                   help="evaluate at most this many random column sets per k (default: all "
                        "pairs, at most 2,000 triples); "
                        "the terminal and the report use the same ones")
    e.add_argument("--json", help="also write the numbers as JSON here (statistics of the "
                                  "real table: not for publication)")
    e.add_argument("--report", help="write an HTML report here (needs matplotlib); it shows "
                                    "real statistics: not for publication")
    e.add_argument("--ledger", help="the --ledger JSON of the run: its private bins for the "
                                    "scores; the report's privacy section and GUM curve")
    e.add_argument("--target", help="a column to predict: train on synthetic vs train on "
                                    "real, both tested on held-out real rows (needs "
                                    "scikit-learn, the 'ml' extra)")
    e.add_argument("--quiet", action="store_true", help="no progress bars")
    i = _command(sub, "infer-schema", "draft a schema from data (NOT private)",
                 "Review the draft before synthesizing: it reads its values off the table.")
    i.add_argument("input", help="the table to read the draft from")
    i.add_argument("--out", required=True, help="the schema JSON to write")
    i.add_argument("--bins", type=_integer, default=32,
                   help="bins for numeric columns that are not read as categories (default "
                        "32)")
    i.add_argument("--id", action="append",
                   help="an id column (repeatable): never synthesized, identifies individuals")
    i.add_argument("--ignore", action="append",
                   help="a column to leave out (repeatable): not read for the draft, not "
                        "synthesized, not in the output (names, free text)")
    for flag, what in (("--separator", "the field separator (default: ',', or what the "
                                       "header shows: ';', a tab, '|')"),
                       ("--decimal", "the decimal mark: '.' or ',' (default: what the "
                                     "numbers show)"),
                       ("--thousands", "the digit grouping mark in numbers (2 399,80: ' ')"),
                       ("--encoding", "the text encoding (default: utf-8, or cp1252 for a "
                                      "file that is no UTF-8)")):
        i.add_argument(flag, help=f"CSV: {what}; kept in the schema's \"csv\"")
    c = _command(sub, "check", "list the values of a table the schema does not allow, and "
                               "what synthesize would do with them (NOT private)",
                 "Exit status 0 when synthesize would read every value as it is, 1 when "
                 "it lists something, 2 on an error.")
    c.add_argument("input", help="the table to check: a file, or a directory or glob of "
                                 "CSV or Parquet parts (as synthesize --workers reads them)")
    c.add_argument("--schema", required=True, help="schema JSON")
    k = _command(sub, "schema", "edit a schema file: set a column's range or type, drop "
                                "or ignore a column, mark drafted values reviewed")
    k.add_argument("file", help="the schema JSON (edited in place unless --out)")
    k.add_argument("--set", action="append", default=[], metavar="[COLUMN.]KEY=VALUE",
                   help="set a key (repeatable): age.min=0, age.max=120, age.bins=12, "
                        "colour.type=categorical, colour.values='[\"red\", \"blue\"]'; "
                        "a numeric range replaces drafted edges; VALUE null removes the key; "
                        "max_records_per_individual=5 (also max_rows, individual_id) sets the "
                        "schema's own; csv.separator=';' (also decimal, thousands, encoding) "
                        "the CSV file's dialect")
    k.add_argument("--set-file", action="append", dest="set", type=lambda t: ("file", t),
                   metavar="[COLUMN.]KEY=FILE",
                   help="as --set, the value read from a JSON file: a list too long for the "
                        "command line (icd.values=codes.json)")
    k.add_argument("--drop", action="append", default=[], metavar="COLUMN",
                   help="remove a column from the schema (repeatable)")
    k.add_argument("--ignore", action="append", default=[], metavar="COLUMN",
                   help="a column of the table to leave out: never measured nor written, "
                        "listed in \"ignored_columns\" (repeatable; --drop takes it back)")
    k.add_argument("--reviewed", action="append", default=[], metavar="COLUMN",
                   help="its drafted values are now public facts (repeatable; 'all')")
    k.add_argument("--out", help="write here instead of in place")
    _once(p)
    return p
