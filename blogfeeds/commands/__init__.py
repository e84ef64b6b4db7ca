"""The project's ``scrapy`` commands (``COMMANDS_MODULE``), and what they share."""

from __future__ import annotations

import os
import sys
from argparse import ArgumentParser
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from scrapy.commands import ScrapyHelpFormatter

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


class HelpFormatter(ScrapyHelpFormatter):
    """Scrapy's help layout, without its mistake: Scrapy underlines every part of the help
    that ends in a colon as a section heading, the lines of an option's wrapped help included,
    so a help text with a colon at a line break (``(TOML; default:`` / ``BLOGFEEDS_RULES_FILE)``)
    came out as a heading with ``====`` under it. Here an option's own lines are never
    headings."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_action = 0

    def _format_action(self, action: Any) -> str:
        self._in_action += 1
        try:
            return super()._format_action(action)
        finally:
            self._in_action -= 1

    def format_part_strings(self, part_strings: list[str]) -> list[str]:
        if self._in_action:
            return part_strings
        return super().format_part_strings(part_strings)


def clear_help(parser: ArgumentParser) -> None:
    """Give ``parser`` (a command's, in ``add_options``) the :class:`HelpFormatter`."""
    parser.formatter_class = HelpFormatter
