"""Friend layers and scorers are components: a project adds its own through settings, keeping
every default. The recipes are the ones in docs/scoring.md, run as written from a temporary user
package."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.extract.friends import (
    FRIEND_LAYERS_BASE,
    FRIEND_SCORERS_BASE,
    ORIGINAL_FRIEND_RULES,
    FriendConfig,
    extract_friends,
)
from blogfeeds.extract.page import parse_page
from blogfeeds.option import StartupError

DOCS = Path(__file__).resolve().parent.parent / "docs" / "scoring.md"
# The settings docs/scoring.md gives for its friend scorer and friend layer.
RECIPE_SETTINGS = {
    "BLOGFEEDS_FRIEND_SCORERS": {"myproject.rules.NoShopGrid": 450},
    "BLOGFEEDS_FRIEND_LAYERS": {"myproject.friendlayers.Webmentions": 350},
}


def recipes() -> dict[str, str]:
    """``{file name: code}`` of the Python blocks of docs/scoring.md that are files of
    ``myproject`` (``# myproject/rules.py`` on their first line)."""
    text = DOCS.read_text(encoding="utf-8")
    return dict(re.findall(r"```python\n# myproject/(\w+\.py)\n(.*?)```", text, re.DOTALL))


@pytest.fixture
def user_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """``myproject`` with the recipes' modules on ``sys.path``; the settings that use them."""
    package = tmp_path / "myproject"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, code in recipes().items():
        (package / name).write_text(code)
    for value in RECIPE_SETTINGS.values():
        assert json.dumps(value) in DOCS.read_text(encoding="utf-8"), value
    monkeypatch.syspath_prepend(str(tmp_path))
    yield RECIPE_SETTINGS
    for name in [m for m in sys.modules if m == "myproject" or m.startswith("myproject.")]:
        del sys.modules[name]


BODY = (
    '<ul id="friends">'
    + "".join(
        f'<li><a href="https://f{i}-example.com/"><img src="/a{i}.png">F{i}</a></li>'
        for i in range(3)
    )
    + '</ul><p><a rel="webmention" href="https://wm-example.com/">Webmentioner</a></p>'
)


def test_a_project_adds_a_scorer_and_a_layer_keeping_the_defaults(
    user_package: dict[str, Any],
) -> None:
    assert set(user_package) == {"BLOGFEEDS_FRIEND_SCORERS", "BLOGFEEDS_FRIEND_LAYERS"}
    config = FriendConfig.from_settings(user_package)
    assert len(config.scorers) == len(FRIEND_SCORERS_BASE) + 1
    assert [type(x).__name__ for x in config.layers] == [
        "DataSources",
        "ThemeCards",
        "XfnLinks",
        "Webmentions",
        "InlineRuns",
        "ScriptLists",
        "Containers",
    ]
    html = f"<html><head><title>Links</title></head><body>{BODY}</body></html>"
    page = parse_page("https://me-example.com/links/", html.encode(), {})
    result = extract_friends(page, config=config)
    assert [(f.url, f.how) for f in result.friends] == [
        *((f"https://f{i}-example.com/", "container") for i in range(3)),
        ("https://wm-example.com/", "webmention"),
    ]
    # the scorer runs with the defaults: a container whose description says shop is rejected
    shop = parse_page("https://me-example.com/links/", html.replace("friends", "shop").encode(), {})
    rejected = extract_friends(shop, config=config)
    assert [(f.url, f.how) for f in rejected.friends] == [("https://wm-example.com/", "webmention")]
    assert any(c.rejected and "rejected: shop links" in c.reasons for c in rejected.containers)
    # a -s value is a JSON string
    as_strings = {k: json.dumps(v) for k, v in user_package.items()}
    assert len(FriendConfig.from_settings(as_strings).layers) == len(config.layers)


def test_defaults_and_the_original_ruleset() -> None:
    config = FriendConfig.from_settings({})
    assert len(config.layers) == len(FRIEND_LAYERS_BASE)
    assert len(config.scorers) == len(FRIEND_SCORERS_BASE)
    original = FriendConfig.from_settings({"BLOGFEEDS_FRIEND_RULESET": "original"})
    assert len(original.scorers) == len(ORIGINAL_FRIEND_RULES)
    disabled = FriendConfig.from_settings(
        {"BLOGFEEDS_FRIEND_LAYERS": {"blogfeeds.extract.friends.XfnLinks": None}}
    )
    assert "XfnLinks" not in [type(x).__name__ for x in disabled.layers]
    with pytest.raises(StartupError, match="BLOGFEEDS_FRIEND_RULESET: 'newest' is not one of"):
        FriendConfig.from_settings({"BLOGFEEDS_FRIEND_RULESET": "newest"})


class Weighted:
    """A scorer built by ``from_settings``."""

    def __init__(self, factor: float) -> None:
        self.factor = factor

    @classmethod
    def from_settings(cls, settings: Any) -> Weighted:
        return cls(float(settings.get("MY_FACTOR", 1.0)))

    def __call__(self, c: Any, score: float, page: Any) -> None:
        return None


def test_a_scorer_reads_its_weight_from_settings() -> None:
    path = f"{__name__}.Weighted"
    config = FriendConfig.from_settings({"BLOGFEEDS_FRIEND_SCORERS": {path: 950}, "MY_FACTOR": 2})
    assert isinstance(config.scorers[-1], Weighted)
    assert config.scorers[-1].factor == 2.0
