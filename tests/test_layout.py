"""The project's skeleton promises, checked so they cannot silently rot."""

import ast
import fnmatch
import re
import subprocess
import sys
import tokenize
import tomllib
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_engine_uses_only_the_standard_library():
    """engine/ is a pure rules library: no Django, Celery or any third-party import."""
    allowed = set(sys.stdlib_module_names) | {"engine"}
    for path in (ROOT / "engine").rglob("*.py"):
        for name in absolute_imports(path):
            assert name.split(".")[0] in allowed, f"{path.relative_to(ROOT)} imports {name}"


def absolute_imports(path: Path) -> list[str]:
    """The modules a file imports by absolute name, anywhere in it."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./dev test" in readme
    assert "./dev test" in ci


def test_code_is_lint_clean_and_formatted():
    """ruff's lint rules and formatter (pyproject.toml) hold for the whole tree."""
    for args in (["check", "."], ["format", "--check", "."]):
        run = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_plain_python_libraries_type_check_strictly() -> None:
    """mypy --strict on the rules library, the referee and the statistics: plain Python, typed
    all through."""
    # A cache of its own: its options differ from the project's, and sharing one cache, each
    # run would check again what the other had just checked.
    run = mypy(
        "--strict", "--cache-dir", ".mypy_cache/strict", "engine", "arena/referee", "arena/stats"
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


def test_project_type_checks() -> None:
    """mypy as pyproject.toml configures it: engine and arena (apps with django-stubs and
    djangorestframework-stubs), every function annotated, strict where plain Python allows."""
    run = mypy()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]


#: ``# type: ignore[code]  # why``: which error is silenced, and the reason beside it.
IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<codes>\[[^\]]*\])?(?P<rest>.*)")


def unexplained_ignores(paths: Iterable[Path]) -> list[tuple[Path, int, str]]:
    """Each ``type: ignore`` comment that names no error code or gives no reason: its file,
    line and text."""
    found = []
    for path in paths:
        with path.open("rb") as f:
            comments = [t for t in tokenize.tokenize(f.readline) if t.type == tokenize.COMMENT]
        for token in comments:
            m = IGNORE.search(token.string)
            if m is None:
                continue
            reason = m["rest"].strip()
            if not m["codes"] or not reason.startswith("#") or not reason.lstrip("#").strip():
                found.append((path, token.start[0], token.string.strip()))
    return found


def python_files(*folders: str, skip: tuple[str, ...] = ()) -> list[Path]:
    return sorted(
        path
        for folder in folders
        for path in (ROOT / folder).rglob("*.py")
        if not path.relative_to(ROOT).as_posix().startswith(skip)
    )


@pytest.mark.parametrize(
    ("folders", "skip"),
    [(("arena",), ("arena/referee/",)), (("engine", "arena/referee"), ()), (("tools",), ())],
    ids=["apps", "engine-and-referee", "tools"],
)
def test_every_type_ignore_names_its_error_and_says_why(
    folders: tuple[str, ...], skip: tuple[str, ...]
) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path, line, text in unexplained_ignores(python_files(*folders, skip=skip))
    ]
    assert not offenders, "write `# type: ignore[code]  # why`:\n" + "\n".join(offenders)


def test_the_ignore_check_wants_a_code_and_a_reason(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "a = f()  # type: ignore\n"
        "b = f()  # type: ignore[misc]\n"
        "c = f()  # type: ignore[misc]  #\n"
        "d = f()  # type: ignore[misc]  # the stubs lack f\n"
        "e = f()  # noqa: E501  # type: ignore[misc]  # the stubs lack f\n"
        "f = '# type: ignore'\n"
    )
    assert [line for _, line, _ in unexplained_ignores([source])] == [1, 2, 3]


# ----------------------------------------------------------------------------- dependencies

#: The layers of arena/, bottom first: a module may import from its own layer and the ones
#: below it, never from one above. Leaf modules (no app imports) sit with the referee.
LAYERS: list[tuple[str, ...]] = [
    (
        "arena.referee",
        "arena.core",
        "arena.env",
        "arena.stats",
    ),
    ("arena.jobs",),
    ("arena.notifications",),
    ("arena.bots",),
    ("arena.ratings",),
    ("arena.games",),
    ("arena.admission", "arena.analysis"),
    ("arena.tournaments", "arena.duels"),
    (
        "arena.web",
        "arena.api",
        "arena.local",
        "arena.checks",
        "arena.metrics",
        "arena.urls",
        "arena.wsgi",
    ),
]
#: The Django project's own wiring, which names every app by design.
WIRING = ("arena", "arena.settings", "arena.celery", "arena.broker")


def arena_modules() -> dict[str, Path]:
    modules = {}
    for path in (ROOT / "arena").rglob("*.py"):
        if "migrations" in path.parts:
            continue
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """Every arena module ``path`` imports, at the top or inside a function alike."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # "from arena.games import services" names a module; "from x import name" does not.
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
            targets = submodules or [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target:
                found.add(target)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = arena_modules()
    known = set(modules)
    return {name: imports_of(path, name, known) for name, path in modules.items()}


def layer_of(module: str) -> int | None:
    for i, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return i
    return None


def test_arena_imports_form_no_cycle() -> None:
    """No module of arena/ reaches itself through imports (those inside functions count)."""
    graph = import_graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_apps_import_only_downwards() -> None:
    """referee <- bots <- games <- tournaments <- the site: a lower layer never imports a
    higher one; the shared worker pieces import no app."""
    wrong = []
    for module, targets in import_graph().items():
        mine = layer_of(module)
        if mine is None:
            assert module in WIRING, f"{module} is in no layer: add it to LAYERS"
            continue
        for target in sorted(targets):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_dependency_checks_see_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "def f():\n"
        "    from arena.games import services, recount\n"
        "    import arena.bots.models\n"
        "    from arena.bots.models import Bot\n"
    )
    known = {"arena.games.services", "arena.games.recount", "arena.bots.models", "arena.games"}
    assert imports_of(source, "arena.x.m", known) == {
        "arena.games.services",
        "arena.games.recount",
        "arena.bots.models",
    }


def test_the_product_never_imports_the_tools() -> None:
    """tools/ (benchmarks, the chaos run) measures the product from beside it: the tools import
    the engine, the arena and the bots, never the other way round."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in python_files("engine", "arena", "bots")
        for name in absolute_imports(path)
        if name == "tools" or name.startswith("tools.")
    ]
    assert not wrong, "\n".join(wrong)


def test_the_tools_are_not_shipped() -> None:
    """The arena's package (pyproject.toml's packages.find) leaves tools/ out."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        find = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]
    for name in ("tools", "tools.bench", "tools.chaos", "tools.hosts"):
        assert not any(fnmatch.fnmatchcase(name, pattern) for pattern in find["include"]), name
    assert any(fnmatch.fnmatchcase("arena.games", pattern) for pattern in find["include"])


def test_no_module_of_arena_or_the_engine_is_over_900_lines():
    """Big modules are split along their seams (docs/referee.md, docs/sandbox.md)."""
    for folder in (ROOT / "arena", ROOT / "engine"):
        for path in folder.rglob("*.py"):
            lines = len(path.read_text().splitlines())
            assert lines <= 900, f"{path.relative_to(ROOT)} has {lines} lines"


def test_the_referee_imports_no_django():
    """arena/referee/ is plain Python that the Django apps call, never the other way round."""
    for path in (ROOT / "arena" / "referee").rglob("*.py"):
        for name in absolute_imports(path):
            where = f"{path.relative_to(ROOT)} imports {name}"
            assert name.split(".")[0] not in ("django", "celery", "rest_framework"), where
            if name.startswith("arena.") and not name.startswith("arena.referee"):
                assert name == "arena.stats" or name.startswith("arena.stats."), where


def test_the_referee_and_the_statistics_load_without_django_or_celery():
    """``arena.referee`` and ``arena.stats`` load with Django, Celery, kombu and DRF missing
    altogether (the project package's own ``__init__`` loads none of them): the command line,
    the benchmarks and any other program can use them."""
    code = (
        "import sys\n"
        "for name in ('django', 'celery', 'kombu', 'rest_framework'):\n"
        "    sys.modules[name] = None  # an import of it fails\n"
        "import arena.referee, arena.referee.redaction, arena.stats\n"
        "assert arena.stats.trinomial_estimate(3, 0, 1).los > 0.87\n"
        "assert arena.referee.TimeControl.parse('10+0.1').increment_ms == 100\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_statistics_import_only_numpy_and_scipy():
    """arena/stats/ is plain Python on NumPy and SciPy, which every page and the command line
    share: no Django, no Celery, nothing else of the arena."""
    allowed = set(sys.stdlib_module_names) | {"numpy", "scipy"}
    for path in (ROOT / "arena" / "stats").rglob("*.py"):
        for name in absolute_imports(path):
            where = f"{path.relative_to(ROOT)} imports {name}"
            if name.startswith("arena."):
                assert name.startswith("arena.stats."), where
            else:
                assert name.split(".")[0] in allowed, where


#: The libraries of arena/ without Django: their tests sit beside the engine's (tests/referee,
#: tests/stats), where no database is set up for them (the VM runs the referee's).
LIBRARIES = {"referee", "stats"}


def test_the_tests_mirror_the_apps() -> None:
    """Each folder of tests/arena/ is named after a package of arena/ (the pages' browser tests
    in web/browser), and each library of arena/ has its tests in tests/<name>/: the tests of
    ``arena/duels`` are in ``tests/arena/duels``."""
    packages = {p.parent.name for p in (ROOT / "arena").glob("*/__init__.py")}
    folders = {p.name for p in (ROOT / "tests" / "arena").iterdir() if (p / "__init__.py").exists()}
    assert folders <= packages - LIBRARIES, f"named after no app: {folders - packages}"
    for name in LIBRARIES:
        assert not (ROOT / "arena" / name / "apps.py").exists(), f"arena/{name} is an app"
        assert any((ROOT / "tests" / name).glob("test_*.py")), f"no tests/{name}/"
    nested = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests" / "arena").glob("*/*/")
        if p.name != "__pycache__"
    ]
    assert nested == ["tests/arena/web/browser"]
