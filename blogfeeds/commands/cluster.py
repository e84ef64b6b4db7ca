"""``scrapy cluster ACTION``: the scrapyd nodes of ``scrapy.cfg`` operated as one cluster.

A thin layer over the scrapyd HTTP API (https://scrapyd.readthedocs.io/en/latest/api.html) and
scrapyd-client, for what their commands do one node at a time or not at all: ``deploy`` (build
the egg once, upload it to every target: ``addversion.json``), ``schedule SPIDER``
(``schedule.json``; a target where SPIDER is already pending or running is skipped unless
``--force``, so that scheduling twice does not start two workers), ``jobs`` (``listjobs.json``)
and ``cancel`` (``cancel.json``: SIGINT, Scrapy's graceful shutdown; ``--wait`` polls until the
jobs have ended; cancel once: a second SIGINT makes Scrapy stop at once).

Targets (``-t NAME``) are the ``[deploy:NAME]`` sections of the scrapy.cfg files scrapyd-client
reads; by default all of them, or the bare ``[deploy]`` target when there is no named one.
Options and output: docs/cluster.md.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from argparse import ArgumentParser, Namespace
from pathlib import Path
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.utils.conf import closest_scrapy_cfg

from blogfeeds.commands import clear_help

ACTIONS = ("deploy", "schedule", "jobs", "cancel", "targets")
ACTIVE = ("pending", "running")


def deploy_targets(names: list[str] | None = None) -> dict[str, dict[str, str]]:
    """The chosen targets, ``{name: {"url": ..., "project": ..., "username": ..., ...}}``.

    Raises UsageError for an unknown name or when scrapy.cfg defines no target.
    """
    # scrapyd-client's own reading (inheritance from [deploy], $VARS expanded), so that this
    # command and scrapyd-deploy always agree on the targets.
    from scrapyd_client.utils import _get_targets  # noqa: PLC0415 - optional until used

    every = _get_targets()
    if names:
        unknown = [n for n in names if n not in every]
        if unknown:
            raise UsageError(f"unknown target(s) {unknown}; scrapy.cfg has {sorted(every)}")
        return {n: every[n] for n in names}
    named = {n: t for n, t in every.items() if n != "default"}
    chosen = named or every
    if not chosen:
        raise UsageError("scrapy.cfg has no [deploy] or [deploy:NAME] target")
    return chosen


def client_for(target: dict[str, str]) -> Any:
    """A ``scrapyd_client.pyclient.ScrapydClient`` of one target (URL without trailing ``/``)."""
    from scrapyd_client.pyclient import ScrapydClient  # noqa: PLC0415

    url = target["url"].rstrip("/")
    return ScrapydClient(url, target.get("username"), password=target.get("password", ""))


def build_egg(directory: Path) -> Path:
    """``scrapyd-deploy --build-egg`` in the project ``directory``; returns the egg's path
    (in a fresh temporary directory). Raises RuntimeError with the build's output on failure."""
    out = Path(tempfile.mkdtemp(prefix="blogfeeds-egg-")) / "blogfeeds.egg"
    proc = subprocess.run(
        [sys.executable, "-m", "scrapyd_client.deploy", "--build-egg", str(out)],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"building the egg failed:\n{proc.stdout}{proc.stderr}")
    return out


def pairs(values: list[str], option: str) -> list[tuple[str, str]]:
    """``["NAME=VALUE", ...]`` as pairs; UsageError for an item without ``=``."""
    out = []
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise UsageError(f"{option} expects NAME=VALUE, got {value!r}")
        out.append((name, rest))
    return out


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy reads it as a class attribute

    def syntax(self) -> str:
        return "deploy|schedule SPIDER|jobs|cancel [SPIDER|JOB ...]|targets [options]"

    def short_desc(self) -> str:
        return "Deploy, start, list and stop crawls on every scrapyd node of scrapy.cfg"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        parser.add_argument(
            "-t", "--target", action="append", default=[], help="a [deploy:NAME] (repeatable)"
        )
        parser.add_argument("-p", "--project", default=None, help="default: the target's")
        parser.add_argument("-v", "--version", default=None, help="deploy: default a timestamp")
        parser.add_argument(
            "-a", dest="spargs", action="append", default=[], help="schedule: NAME=VALUE"
        )
        parser.add_argument(
            "--force", action="store_true", help="schedule: even where SPIDER already runs"
        )
        parser.add_argument(
            "--wait", type=float, default=0.0, help="cancel: seconds to wait for the jobs to end"
        )

    def run(self, args: list[str], opts: Namespace) -> None:
        if not args or args[0] not in ACTIONS:
            raise UsageError(f"give an action: {', '.join(ACTIONS)}")
        action, rest = args[0], args[1:]
        targets = deploy_targets(opts.target)
        failed = getattr(self, f"_{action}")(targets, rest, opts)
        if failed:
            self.exitcode = 1

    def _project(self, target: dict[str, str], opts: Namespace) -> str:
        project = opts.project or target.get("project")
        if not project:
            raise UsageError("no project: give -p or set project in scrapy.cfg [deploy]")
        return project

    def _targets(self, targets: dict[str, dict[str, str]], rest: list[str], opts: Namespace) -> int:
        for name, target in targets.items():
            print(f"{name:<16} {target.get('url', '')}")
        return 0

    def _deploy(self, targets: dict[str, dict[str, str]], rest: list[str], opts: Namespace) -> int:
        import requests  # noqa: PLC0415 - a dependency of scrapyd-client

        if rest:
            raise UsageError("deploy takes no arguments")
        cfg = closest_scrapy_cfg()
        version = opts.version or str(int(time.time()))
        egg = build_egg(Path(cfg).parent)
        failed = 0
        try:
            for name, target in targets.items():
                client = client_for(target)
                try:
                    with egg.open("rb") as handle:
                        response = requests.post(
                            f"{client.url}/addversion.json",
                            data={"project": self._project(target, opts), "version": version},
                            files=[("egg", ("project.egg", handle))],
                            auth=client.auth,
                            timeout=120,
                        )
                    answer = response.json()
                except (requests.RequestException, ValueError) as exc:
                    answer = {"status": "error", "message": str(exc)}
                if answer.get("status") == "ok":
                    project, spiders = answer["project"], answer["spiders"]
                    print(f"{name}: {project} {answer['version']}, {spiders} spiders")
                else:
                    failed += 1
                    print(
                        f"{name}: deploy failed: {answer.get('message', answer)}", file=sys.stderr
                    )
        finally:
            shutil.rmtree(egg.parent, ignore_errors=True)
        return failed

    def _schedule(
        self, targets: dict[str, dict[str, str]], rest: list[str], opts: Namespace
    ) -> int:
        if len(rest) != 1:
            raise UsageError("schedule takes one SPIDER")
        spider = rest[0]
        job_args = [*pairs(opts.spargs, "-a"), *(("setting", s) for s in (opts.set or []))]
        failed = 0
        for name, target in targets.items():
            client, project = client_for(target), self._project(target, opts)
            try:
                if not opts.force:
                    jobs = client.jobs(project)
                    active = [j["id"] for s in ACTIVE for j in jobs[s] if j["spider"] == spider]
                    if active:
                        print(f"{name}: {spider} already {', '.join(active)} (--force adds one)")
                        continue
                print(f"{name}: {spider} {client.schedule(project, spider, job_args)}")
            except Exception as exc:  # one node down must not stop the others
                failed += 1
                print(f"{name}: schedule failed: {exc}", file=sys.stderr)
        return failed

    def _listing(
        self, targets: dict[str, dict[str, str]], opts: Namespace
    ) -> tuple[list[tuple[str, dict[str, str], str, dict[str, Any]]], int]:
        """Every job of every target as ``(target name, target, state, job)``."""
        rows: list[tuple[str, dict[str, str], str, dict[str, Any]]] = []
        failed = 0
        for name, target in targets.items():
            try:
                jobs = client_for(target).jobs(self._project(target, opts))
            except Exception as exc:
                failed += 1
                print(f"{name}: listjobs failed: {exc}", file=sys.stderr)
                continue
            for state in (*ACTIVE, "finished"):
                rows.extend((name, target, state, job) for job in jobs.get(state, []))
        return rows, failed

    def _jobs(self, targets: dict[str, dict[str, str]], rest: list[str], opts: Namespace) -> int:
        if rest:
            raise UsageError("jobs takes no arguments")
        rows, failed = self._listing(targets, opts)
        for name, _, state, job in rows:
            when = " ".join(job.get(k) or "" for k in ("start_time", "end_time")).strip()
            print(f"{name:<16} {state:<9} {job['spider']:<10} {job['id']} {when}".rstrip())
        return failed

    def _cancel(self, targets: dict[str, dict[str, str]], rest: list[str], opts: Namespace) -> int:
        rows, failed = self._listing(targets, opts)
        chosen = [
            (name, target, job)
            for name, target, state, job in rows
            if state in ACTIVE and (not rest or job["spider"] in rest or job["id"] in rest)
        ]
        for name, target, job in chosen:
            try:
                answer = client_for(target).cancel(self._project(target, opts), job["id"])
                print(f"{name}: {job['spider']} {job['id']} cancelled ({answer['prevstate']})")
            except Exception as exc:
                failed += 1
                print(f"{name}: cancel {job['id']} failed: {exc}", file=sys.stderr)
        deadline = time.monotonic() + opts.wait
        waiting = {job["id"] for _, _, job in chosen}
        while waiting and time.monotonic() < deadline:
            time.sleep(1.0)
            rows, _ = self._listing({n: t for n, t, _ in chosen}, opts)
            waiting = {job["id"] for _, _, state, job in rows if state in ACTIVE} & waiting
        if opts.wait and waiting:
            failed += 1
            print(
                f"still running after {opts.wait:g} s: {', '.join(sorted(waiting))}",
                file=sys.stderr,
            )
        return failed
