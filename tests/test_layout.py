"""The package's shape: extraction stays pure, no import cycle, no module grows past a screenful
of concepts. Read from the source with ``ast``: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "blogfeeds"
# Extraction is a function of (url, bytes, headers) and a fetch function: it must not know the
# crawler, the items it becomes or where they are stored.
EXTRACTION_MAY_NOT_IMPORT = (
    "scrapy",
    "scrapy_redis",
    "twisted",
    "blogfeeds.items",
    "blogfeeds.storage",
    "blogfeeds.revisit",
    "blogfeeds.spiders",
    "blogfeeds.pipelines",
    "blogfeeds.frontier",
    "blogfeeds.middlewares",
    "blogfeeds.extensions",
    "blogfeeds.commands",
)
MAX_LINES = 650


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Modules ``path`` imports anywhere: at module level and inside functions (an import in a
    function runs when it is called, so it closes a cycle as surely), but not under
    ``if TYPE_CHECKING:``, which never runs."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = (
        _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    )
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            # `from blogfeeds.extract import page` imports the module blogfeeds.extract.page
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.parametrize(
    "name", [n for n in MODULES if n == "blogfeeds.extract" or n.startswith("blogfeeds.extract.")]
)
def test_extraction_is_pure(name: str) -> None:
    bad = sorted(
        imported
        for imported in _imports(MODULES[name])
        for banned in EXTRACTION_MAY_NOT_IMPORT
        if imported == banned or imported.startswith(banned + ".")
    )
    assert not bad, f"{name} imports {bad}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_package_never_imports_the_tests(name: str) -> None:
    # what the product needs of the tests' tools (the loopback web) lives in the package
    bad = sorted(m for m in _imports(MODULES[name]) if m.split(".")[0] == "tests")
    assert not bad, f"{name} imports {bad}"


def test_no_import_cycle() -> None:
    graph = {
        # an edge to one's own package is Python's import order, not a cycle
        name: {
            m for m in _imports(path) if m in MODULES and m != name and not name.startswith(m + ".")
        }
        for name, path in MODULES.items()
    }
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if dep.startswith(node + "."):  # a package importing its own submodule
                continue
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        path.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by concept"


def test_the_blogs_spider_routes() -> None:
    """The blogs spider routes: admission (blogfeeds.crawl), reading and storage live elsewhere,
    so it needs few of our modules (Scrapy's busiest module imports fewer than 20)."""
    name = "blogfeeds.spiders.blogs"
    ours = {m for m in _imports(MODULES[name]) if m in MODULES and m != name}
    assert len(ours) <= 12, f"{name} imports {len(ours)} of our modules: {sorted(ours)}"


MAX_DOCSTRING_LINES = 15
# {qualified name: why it needs more than MAX_DOCSTRING_LINES}; keep it empty if you can
LONG_DOCSTRINGS: dict[str, str] = {}


def _docstrings(name: str, path: Path) -> list[tuple[str, str]]:
    """(qualified name, docstring) of the module and of every class and function in it."""
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, qualname: str) -> None:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                found.append((qualname, doc))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{qualname}.{child.name}")
            else:
                visit(child, qualname)

    visit(ast.parse(path.read_text(encoding="utf-8")), name)
    return found


@pytest.mark.parametrize("name", sorted(MODULES))
def test_docstrings_are_short(name: str) -> None:
    """A docstring says what the thing is and why it is so; reference material belongs in docs/
    and measurements in bench/README.md."""
    long = [
        f"{qualname} ({lines} lines)"
        for qualname, doc in _docstrings(name, MODULES[name])
        if (lines := len(doc.strip("\n").splitlines())) > MAX_DOCSTRING_LINES
        and qualname not in LONG_DOCSTRINGS
    ]
    assert not long, f"docstrings over {MAX_DOCSTRING_LINES} lines: {long}"


def test_every_package_can_be_packaged() -> None:
    """scrapyd deploys an egg built by setuptools' package finder, which leaves out a folder
    without ``__init__.py``: the deployed project would fail to import it."""
    folders = {p.parent for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(
        str(f.relative_to(PACKAGE.parent)) for f in folders if not (f / "__init__.py").is_file()
    )
    assert not missing, f"no __init__.py in {missing}"
