"""``scrapy websub``: the WebSub callback endpoint and subscription upkeep, one long-lived
process beside the feeds workers (:mod:`blogfeeds.websub.service`; docs/websub.md).

Off unless ``BLOGFEEDS_WEBSUB_ENABLED`` and ``BLOGFEEDS_WEBSUB_PUBLIC_URL`` are set: the command
then says why and exits with status 2, like a bad setting. Stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import logging
from argparse import Namespace
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import NotConfigured
from scrapy.utils.log import configure_logging
from scrapy.utils.ossignal import install_shutdown_handlers
from scrapy.utils.reactor import install_reactor

from blogfeeds.extensions.startup import check_settings
from blogfeeds.option import StartupError

logger = logging.getLogger(__name__)


class Command(ScrapyCommand):
    requires_project = True

    def syntax(self) -> str:
        return ""

    def short_desc(self) -> str:
        return "Run the WebSub callback endpoint: subscribe to hubs, store what they push"

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        settings = self.settings
        configure_logging(settings)
        from blogfeeds.websub.service import WebSubService  # noqa: PLC0415 - after the reactor

        try:
            check_settings(settings)
            service = WebSubService.from_settings(settings)
        except (NotConfigured, StartupError) as exc:
            logger.error("scrapy websub: %s", exc)
            self.exitcode = 2
            return
        install_reactor(settings["TWISTED_REACTOR"], settings.get("ASYNCIO_EVENT_LOOP"))
        from twisted.internet import reactor as installed  # noqa: PLC0415 - just installed

        reactor: Any = installed

        def stop(signum: int, _frame: object) -> None:
            logger.info("scrapy websub: signal %d, stopping", signum)
            reactor.callFromThread(reactor.stop)

        install_shutdown_handlers(stop)
        reactor.callWhenRunning(service.start)
        reactor.run(installSignalHandlers=False)
