"""Command line: gpu-dpsyn synthesize | evaluate | infer-schema | schema | check."""
from __future__ import annotations

import sys

from gpu_dpsyn.cli import commands
from gpu_dpsyn.cli.parser import build_parser
from gpu_dpsyn.data.text import short
from gpu_dpsyn.errors import DPSynError

LINE_LIMIT = 2000  # characters of one error line

COMMANDS = {"synthesize": commands.synthesize, "evaluate": commands.evaluate,
            "infer-schema": commands.infer, "schema": commands.edit_schema,
            "check": commands.check}


def join_negative_numbers(argv: list) -> list:
    """"--delta -1e-9" as "--delta=-1e-9": argparse takes a value that starts with '-' for
    a flag unless it looks like "-1" or "-.5", so "-1e-9" or "-inf" was refused as
    "expected one argument" instead of by the range check that names the problem."""
    out, i = [], 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if isinstance(tok, str) and tok.startswith("--") and "=" not in tok and \
                isinstance(nxt, str) and nxt.startswith("-") and _number(nxt):
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def main(argv=None) -> int:
    argv = join_negative_numbers(list(sys.argv[1:] if argv is None else argv))
    a = build_parser().parse_args(argv)
    try:
        with commands.warnings_to_stderr():
            return COMMANDS[a.cmd](a)
    except DPSynError as err:
        # one line, however long the values it echoes (text.short; messages cap each value,
        # this caps the line)
        print(f"gpu-dpsyn: error: {short(err, LINE_LIMIT)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
