"""requirements.txt installs every distribution the product's code imports (tests and benchmarks aside),
itself or as a requirement of what it lists:
the demo's environment is built from it alone, where a module the development requirements happen to
pull in (fontTools, through fpdf2) would be missing and its feature silently off."""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN = {path.name for path in ROOT.iterdir() if (path / "__init__.py").exists()} | {"manage"}
SKIPPED = {"tests", "benchmarks", ".venv", "node_modules"}


def imported_modules() -> set[str]:
    modules: set[str] = set()
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in SKIPPED or "migrations" in relative.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m not in OWN and m != "__future__"}


def required_distributions() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if match and not line.lstrip().startswith("#"):
            names.add(normalised(match.group(1)))
    return names


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_with(names: set[str]) -> set[str]:
    """*names* and every distribution they require, recursively (extras and markers not applying left out)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requirements:
            if "extra ==" in requirement:
                continue
            marker = requirement.split(";", 1)[1] if ";" in requirement else ""
            if "sys_platform" in marker and sys.platform not in marker:
                continue
            match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if match:
                todo.append(normalised(match.group(1)))
    return seen


def test_every_distribution_the_product_imports_is_installed_by_requirements_txt():
    distributions = importlib.metadata.packages_distributions()
    required = installed_with(required_distributions())
    missing = {}
    for module in sorted(imported_modules()):
        owners = {normalised(name) for name in distributions.get(module, [])}
        if owners and not owners & required:
            missing[module] = sorted(owners)
    assert missing == {}, f"imported, but neither in requirements.txt nor required by what it lists: {missing}"
