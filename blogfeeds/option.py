"""One setting of the configuration table (:mod:`blogfeeds.config`) and the base of the groups
that hold a component's settings.

An :class:`Option` is a setting's name, default, type, allowed values, one-line doc and the
environment variable it comes from; :func:`option` makes it a field of a frozen
:class:`SettingsGroup` dataclass, whose ``from_settings`` reads every option once from any
object with ``.get(name, default)`` (Scrapy's ``Settings``, a dict), with Scrapy's reading rules
(``getbool``, ``getint``, ``getfloat``, ``getdict``), and raises :class:`StartupError` naming the
first value that cannot work. A setting that is not set reads as its default.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, Self


class StartupError(Exception):
    """A setting that stops the crawl at start-up: ``setting`` (its name) and ``problem``
    (what is wrong with it); ``str()`` is ``"SETTING: problem"``."""

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"{setting}: {problem}")
        self.setting = setting
        self.problem = problem


class SettingsLike(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...


# --- reading one value ---------------------------------------------------------------------------

_KIND_NAMES: dict[type, str] = {
    bool: "a boolean (True/False, true/false, 1/0)",
    int: "an integer",
    float: "a number",
    dict: "a dict (a JSON object)",
}
_TYPE_NAMES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    dict: "dict",
}


def _to_bool(raw: Any) -> bool:
    """Scrapy's ``getbool``: 1/0 (or their strings), True/False, "true"/"false"."""
    try:
        return bool(int(raw))
    except ValueError:
        if raw in {"True", "true"}:
            return True
        if raw in {"False", "false"}:
            return False
        raise


def _to_dict(raw: Any) -> dict[Any, Any]:
    """Scrapy's ``getdict``: a mapping, or a string holding a JSON object."""
    value = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(value, Mapping):
        raise TypeError(f"not a mapping: {value!r}")
    return dict(value)


_CONVERT: dict[type, Callable[[Any], Any]] = {
    bool: _to_bool,
    int: int,
    float: float,
    str: str,
    dict: _to_dict,
}


@dataclass(frozen=True)
class Option:
    """One setting: what it is called, its default, how it is read and what values it takes."""

    name: str
    default: Any
    """The value when the setting is not set (and, without :attr:`env`, in the settings)."""
    doc: str
    """One line for the settings reference."""
    type: type = str
    """``bool``, ``int``, ``float``, ``str`` or ``dict``, read with Scrapy's rules; ignored
    when :attr:`parse` is given."""
    low: float | None = None
    """Smallest allowed number (``> low`` when :attr:`low_open`)."""
    high: float | None = None
    low_open: bool = False
    unit: str = ""
    """Said after a from-to range in the message, e.g. ``minutes``."""
    choices: tuple[str, ...] = ()
    env: str | None = None
    """Environment variable that sets the project's value (read when the settings load)."""
    parse: Callable[[Any], Any] | None = None
    """Reads a set value; ``ValueError(problem)`` when it cannot work."""
    allowed: str = ""
    """Allowed values in words, for the reference (else from the range or the choices)."""
    kind: str = ""
    """Type in words, for the reference (else from :attr:`type`)."""

    def project_default(self) -> Any:
        """The value :mod:`blogfeeds.settings` holds: the environment variable when set."""
        raw = os.environ.get(self.env) if self.env else None
        if raw is None:
            return self._fresh_default()
        if self.type is bool:
            word = raw.strip().lower()
            if word in ("1", "true", "yes", "on"):
                return True
            if word in ("", "0", "false", "no", "off"):
                return False
        return raw  # the start-up check reads it like a -s value: a bad one is an error

    def _fresh_default(self) -> Any:
        return dict(self.default) if isinstance(self.default, dict) else self.default

    def read(self, settings: SettingsLike) -> Any:
        """The value of this option in ``settings`` (its default when not set);
        :class:`StartupError` when the set value cannot work."""
        raw = settings.get(self.name)
        if raw is None:
            return self._fresh_default()
        if self.parse is not None:
            try:
                return self.parse(raw)
            except ValueError as exc:
                raise StartupError(self.name, str(exc)) from None
        try:
            value = _CONVERT[self.type](raw)
        except (TypeError, ValueError):
            raise StartupError(self.name, f"{raw!r} is not {_KIND_NAMES[self.type]}") from None
        if self.type is float and not math.isfinite(value):
            raise StartupError(self.name, f"{raw!r} is not a finite number")
        if not self._in_range(value):
            raise StartupError(self.name, f"{self.range_rule()}, got {raw!r}")
        if self.choices and value not in self.choices:
            raise StartupError(self.name, f"{raw!r} is not one of {', '.join(self.choices)}")
        return value

    def _in_range(self, value: Any) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high

    def range_rule(self) -> str:
        """``must be ≥ 0``, ``must be > 0``, ``must be from 20 to 10000 (minutes)``; ``""``."""
        if self.high is not None:
            unit = f" ({self.unit})" if self.unit else ""
            return f"must be from {self.low:g} to {self.high:g}{unit}"
        if self.low is not None:
            return f"must be {'>' if self.low_open else '≥'} {self.low:g}"
        return ""

    def allowed_text(self) -> str:
        """Allowed values in words (the reference's column)."""
        if self.allowed:
            return self.allowed
        if self.choices:
            return ", ".join(self.choices)
        return self.range_rule().removeprefix("must be ")

    def kind_text(self) -> str:
        return self.kind or _TYPE_NAMES[self.type]


def option(name: str, default: Any, doc: str, **kw: Any) -> Any:
    """A dataclass field holding :class:`Option` ``name`` (``type`` defaults to the type of
    ``default``; ``str`` for ``None``)."""
    kw.setdefault("type", str if default is None else type(default))
    opt = Option(name, default, doc, **kw)
    if isinstance(default, dict):
        return field(default_factory=opt._fresh_default, metadata={"option": opt})
    return field(default=default, metadata={"option": opt})


@dataclass(frozen=True)
class SettingsGroup:
    """A component's options: subclasses are frozen dataclasses whose fields are
    :func:`option` s; ``from_settings`` reads them all."""

    component: ClassVar[str] = ""
    """Who reads this config (the reference names it)."""

    @classmethod
    def options(cls) -> tuple[Option, ...]:
        return tuple(f.metadata["option"] for f in fields(cls) if "option" in f.metadata)

    @classmethod
    def from_settings(cls, settings: SettingsLike) -> Self:
        """Every option read from ``settings``; :class:`StartupError` on the first bad one."""
        values = {
            f.name: f.metadata["option"].read(settings)
            for f in fields(cls)
            if "option" in f.metadata
        }
        return cls(**values)
