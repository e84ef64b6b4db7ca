"""The settings of the crawl-wide rule for theme defaults (:class:`ThemeDefaultSettings`, in the
configuration table of :mod:`blogfeeds.config`): read by :mod:`blogfeeds.storage.themedefaults`
through the storage pipeline; a module of its own so that loading the settings loads no store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from blogfeeds.option import SettingsGroup, option


@dataclass(frozen=True)
class ThemeDefaultSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.storage.themedefaults"

    blogs: int = option(
        "BLOGFEEDS_THEME_DEFAULT_BLOGS",
        5,
        "Blogs of one theme listing the same friend that their footer credits, at the same "
        "place of their list, before the crawl takes it for the theme's sample entry (dropped, "
        "reason theme-default); 0 = off.",
        low=0,
    )
    places: int = option(
        "BLOGFEEDS_THEME_DEFAULT_PLACES",
        8,
        "The first entries of a friend list where the crawl looks for a theme's sample entries.",
        low=1,
    )
