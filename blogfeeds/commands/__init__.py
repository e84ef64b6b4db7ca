"""The project's ``scrapy`` commands (``COMMANDS_MODULE``), and what they share."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGPIPE_EXIT = 141
"""Exit status after the reader of standard output went away: 128 + SIGPIPE, what a shell
reports for ``yes | head -1`` under ``set -o pipefail``."""


@contextmanager
def quiet_broken_pipe(command: Any) -> Iterator[None]:
    """Run the body, then flush standard output; when its reader has gone (``| head``), end
    quietly like a Unix tool: no traceback, ``command.exitcode`` set to :data:`SIGPIPE_EXIT`.

    Standard output is pointed at ``/dev/null`` afterwards, so that Python's final flush at exit
    does not fail again (the recipe of the ``signal`` module's documentation).
    """
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        command.exitcode = SIGPIPE_EXIT
