"""Command line: gpu-dpsyn synthesize | sample | evaluate | infer-schema | schema | check."""
from __future__ import annotations

import contextlib
import signal
import sys
import threading

from gpu_dpsyn.startup import interrupted_on_start

try:  # (Ctrl-C while the command imports: one line, not a traceback)
    from gpu_dpsyn.cli import checking, commands, drafting, editing, sampling
    from gpu_dpsyn.cli.parser import build_parser
    from gpu_dpsyn.data.text import short
    from gpu_dpsyn.errors import DPSynError
except KeyboardInterrupt:
    interrupted_on_start()
    raise

LINE_LIMIT = 2000  # characters of one error line

COMMANDS = {"synthesize": commands.synthesize, "evaluate": commands.evaluate,
            "infer-schema": drafting.infer, "schema": editing.edit_schema,
            "check": checking.check, "sample": sampling.sample}


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
    try:  # (parsing too: Ctrl-C there printed a traceback)
        a = build_parser().parse_args(argv)
        with commands.warnings_to_stderr(), stopped_by_signals():
            return COMMANDS[a.cmd](a)
    except DPSynError as err:
        # one line, however long the values it echoes (text.short; messages cap each value,
        # this caps the line)
        print(f"gpu-dpsyn: error: {short(err, LINE_LIMIT)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM / SIGHUP (stopped_by_signals)
        notes = "; ".join(getattr(stop, "__notes__", []))
        print(f"gpu-dpsyn: interrupted{'; ' + notes if notes else ''}", file=sys.stderr)
        return 128 + getattr(stop, "signum", signal.SIGINT)  # the shell's code for it


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as Ctrl-C's interrupt is: signum, for the exit code."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


@contextlib.contextmanager
def stopped_by_signals():
    """SIGTERM and SIGHUP raise Stopped, as Ctrl-C raises KeyboardInterrupt, so the cleanup
    runs: a half-written table's temporary file is removed and the spent budget recorded
    (by default they end the process at once, leaving both).  Only over the default
    action: a signal the caller ignores (nohup's SIGHUP) stays ignored; a second signal
    is ignored while the first one's cleanup runs; the handlers are restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield  # (signal handlers are the main thread's)
        return
    sigs = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])

    def interrupt(signum, frame):
        for sig in sigs:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)
    before = {sig: signal.getsignal(sig) for sig in sigs}
    for sig, handler in before.items():
        if handler is signal.SIG_DFL:
            signal.signal(sig, interrupt)
    try:
        yield
    finally:
        for sig, handler in before.items():
            if handler is not None:  # (None: set outside Python, not ours to restore)
                signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
