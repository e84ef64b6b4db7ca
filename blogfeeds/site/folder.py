"""The folder ``scrapy export site DIR`` writes into, and what of it the site owns.

A site lists the files it wrote in ``DIR/.blogfeeds-site`` (:data:`MANIFEST`, one relative
path a line). A new build deletes only the files the previous build listed and this one does
not write (the page of a blog no longer selected, river pages past the last): a file the site
did not write (``data/thesis.csv``, ``blogs/draft.md``, ``river-notes.html``) is never deleted.
A folder that is not empty and holds no manifest is refused (:class:`FolderRefused`), as
static-site generators refuse one, unless ``force``: then the site is written into it and
every other file is kept.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

MANIFEST = ".blogfeeds-site"


class FolderRefused(ValueError):
    """The folder holds files the site did not write, and no manifest of a previous site."""


class SiteFolder:
    """``out``, checked (:class:`FolderRefused`); :meth:`path` names each file the build
    writes, :meth:`finish` deletes what the previous build wrote and this one did not, and
    writes the manifest."""

    def __init__(self, out: Path, *, force: bool = False) -> None:
        self.out = out
        self.written: dict[str, None] = {}
        manifest = out / MANIFEST
        self.previous: list[str] = []
        if manifest.is_file():
            self.previous = manifest.read_text("utf-8", "replace").splitlines()
        elif out.is_dir() and any(out.iterdir()) and not force:
            raise FolderRefused(
                f"{out} is not empty and holds no site written by scrapy export site "
                f"(no {MANIFEST}): give a new or empty folder, or --force to write the site "
                "into this one (its other files are kept)"
            )
        out.mkdir(parents=True, exist_ok=True)

    def path(self, relative: str) -> Path:
        """The path of ``relative`` (``/``-separated), owned by the site from now on."""
        self.written[relative] = None
        target = self.out.joinpath(*relative.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def finish(self) -> None:
        for relative in self.previous:
            parts = PurePosixPath(relative).parts
            # A manifest is a file anyone can edit: only plain paths inside the folder count.
            if relative in self.written or not parts or ".." in parts or parts[0] == "/":
                continue
            stale = self.out.joinpath(*parts)
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()
        text = "".join(f"{relative}\n" for relative in self.written)
        (self.out / MANIFEST).write_text(text, "utf-8")
