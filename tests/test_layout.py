"""The project's skeleton promises, checked so they cannot silently rot."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_engine_uses_only_the_standard_library():
    """engine/ is a pure rules library: no Django, Celery or any third-party import."""
    import sys

    allowed = set(sys.stdlib_module_names) | {"engine"}
    for path in (ROOT / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in allowed, f"{path.relative_to(ROOT)} imports {name}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "./dev test" in readme
    assert "./dev test" in ci
