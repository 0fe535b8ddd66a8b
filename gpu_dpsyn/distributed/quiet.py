"""Worker logs a command-line run keeps off the terminal: the client reports a failed
task's error itself, in one line, so a local worker's own copy of it (its exception and
traceback, once per retry) is a duplicate; so are the warnings about tasks the client
cancelled."""
from __future__ import annotations

import logging

from distributed import WorkerPlugin

# the records' format strings (distributed.worker, distributed.worker.state_machine)
_DUPLICATES = ("Compute Failed", "Async instruction for <Task cancelled")
_LOGGERS = ("distributed.worker", "distributed.worker.state_machine")


class _ReportedByClient(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_DUPLICATES)


class QuietTaskErrors(WorkerPlugin):
    """Worker plugin: drops the worker's log records of failed and cancelled tasks."""

    name = "gpu-dpsyn-quiet-task-errors"

    def setup(self, worker) -> None:
        for name in _LOGGERS:
            log = logging.getLogger(name)
            if not any(isinstance(f, _ReportedByClient) for f in log.filters):
                log.addFilter(_ReportedByClient())
