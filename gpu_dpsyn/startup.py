"""Ctrl-C while the gpu-dpsyn command is still importing (numpy and pandas take about
half a second): main()'s handler is not running yet, so Python printed its traceback."""
from __future__ import annotations

import os
import re
import signal
import sys

# the console script's names, as pip's wrapper strips them (gpu-dpsyn-script.py: Windows)
SCRIPT = re.compile(r"gpu-dpsyn(-script\.pyw?|\.exe)?")


def is_the_command() -> bool:
    """This process is `gpu-dpsyn ...` or `python -m gpu_dpsyn ...`, not a program that
    imports gpu_dpsyn (whose interrupt stays its own)."""
    if SCRIPT.fullmatch(os.path.basename(sys.argv[0] if sys.argv else "")):
        return True
    if sys.argv[:1] != ["-m"]:  # (argv[0] is "-m" only while -m's module is found)
        return False
    # the interpreter's own arguments end with the module: "-m gpu_dpsyn", "-mgpu_dpsyn"
    orig = getattr(sys, "orig_argv", [])
    ours = orig[1:len(orig) - len(sys.argv) + 1]
    last = ours[-1] if ours else ""
    return (last.split("m", 1)[-1] if last.startswith("-") else last) == "gpu_dpsyn"


def interrupted() -> None:
    """End the command as main() ends an interrupt: one line, the shell's code for
    SIGINT; nothing has read any data yet."""
    print("gpu-dpsyn: interrupted", file=sys.stderr)
    raise SystemExit(128 + signal.SIGINT)


def interrupted_on_start() -> None:
    """Called on a KeyboardInterrupt while importing: the command ends (interrupted);
    a program that imports gpu_dpsyn gets it back, for the caller to re-raise."""
    if is_the_command():
        interrupted()
