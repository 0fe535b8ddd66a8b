"""Command line: gpu-dpsyn synthesize | evaluate | infer-schema."""
from __future__ import annotations

import sys

from gpu_dpsyn.cli import commands
from gpu_dpsyn.cli.parser import build_parser
from gpu_dpsyn.errors import DPSynError

COMMANDS = {"synthesize": commands.synthesize, "evaluate": commands.evaluate,
            "infer-schema": commands.infer, "schema": commands.edit_schema}


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    try:
        with commands.warnings_to_stderr():
            return COMMANDS[a.cmd](a)
    except DPSynError as err:
        print(f"gpu-dpsyn: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
