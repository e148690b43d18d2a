"""The house rule on imports: a core module imports only its own layer or lower.

Layers, lowest first (equal numbers are one layer):

    annotagent (0) < papers (1) < projects (2) < indexing (3) < chat (4) = notes (4) < mcp_server (5)

`notes` shares the top layer with `chat`: the per-paper chat offers note suggestions
(`chat.paper_chat` -> `notes.copilot`, `notes.suggestions`) and the copilots answer with chat's prompts,
citations and paper text (`notes` -> `chat`), and both read passages through `indexing.retrieval`.
`mcp_server` is an edge app on top (tools for agents over the Model Context Protocol), like the APIs
it reuses.

Core modules are all but the edges, which translate between the outside and the core and may import
any layer: views, APIs, URL confs (`urls`, `*_urls`, the WebSocket `routing`), consumers, admin, the
ASGI/WSGI entry points, and the `templatetags`, `management`, `migrations` and `tests` packages. Every
import counts, including those inside functions and under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from django.apps import apps

ROOT = Path(__file__).resolve().parent.parent

LAYERS = {"annotagent": 0, "papers": 1, "projects": 2, "indexing": 3, "chat": 4, "notes": 4, "mcp_server": 5}
EDGE_MODULES = {"views", "api", "urls", "routing", "consumers", "admin", "asgi", "wsgi"}
EDGE_PACKAGES = {"templatetags", "management", "migrations", "tests"}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    imported: str

    def __str__(self) -> str:
        layer = self.path.split("/")[0]
        allowed = ", ".join(name for name, rank in LAYERS.items() if rank <= LAYERS[layer])
        target = self.imported.split(".")[0]
        return (
            f"{self.path}:{self.line} imports {self.imported}: a core module of {layer} (layer "
            f"{LAYERS[layer]}) may import only {allowed}; {target} is layer {LAYERS[target]}"
        )


def is_core(relative: Path) -> bool:
    """Whether the module at *relative* (e.g. papers/services.py) is a core module."""
    parts = relative.with_suffix("").parts
    name = parts[-1]
    return not (
        any(part in EDGE_PACKAGES for part in parts[:-1])
        or name in EDGE_MODULES
        or name.endswith("_urls")
        or name in EDGE_PACKAGES
    )


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in *source*; relative imports are left out
    (they stay inside their own package)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def violations_in(relative: str, source: str) -> list[Violation]:
    """The imports of the module *relative* (path from the repository root) that reach a higher layer."""
    layer = LAYERS[relative.split("/")[0]]
    return [
        Violation(relative, line, module)
        for line, module in imported_modules(source)
        if LAYERS.get(module.split(".")[0], -1) > layer
    ]


def core_modules() -> list[Path]:
    return [
        path.relative_to(ROOT)
        for package in LAYERS
        for path in sorted((ROOT / package).rglob("*.py"))
        if is_core(path.relative_to(ROOT))
    ]


def test_core_modules_import_only_their_own_layer_or_lower():
    found = [
        violation
        for path in core_modules()
        for violation in violations_in(path.as_posix(), (ROOT / path).read_text(encoding="utf-8"))
    ]

    assert not found, "Imports against the layers:\n" + "\n".join(str(violation) for violation in found)


def test_the_check_names_the_offending_import():
    source = "from annotagent.errors import AnnotagentError\n\ndef f():\n    from indexing.tasks import index_paper\n"

    (violation,) = violations_in("papers/services.py", source)

    assert str(violation) == (
        "papers/services.py:4 imports indexing.tasks: a core module of papers (layer 1) may import "
        "only annotagent, papers; indexing is layer 3"
    )


def test_plain_imports_and_type_checking_imports_count_too():
    source = "\n".join(
        [
            "from typing import TYPE_CHECKING",
            "import chat.llm",
            "if TYPE_CHECKING:",
            "    from projects.models import Project",
        ]
    )

    assert [(v.line, v.imported) for v in violations_in("papers/models.py", source)] == [
        (2, "chat.llm"),
        (4, "projects.models"),
    ]


def test_views_apis_commands_and_migrations_are_edges_and_the_rest_is_core():
    edges = [
        "projects/views.py",
        "papers/api.py",
        "annotagent/api_urls.py",
        "chat/routing.py",
        "chat/consumers.py",
        "papers/admin.py",
        "annotagent/asgi.py",
        "notes/templatetags/notes_tags.py",
        "chat/management/commands/ask.py",
        "papers/migrations/0001_initial.py",
    ]
    core = ["papers/models.py", "projects/services.py", "indexing/blurbs.py", "annotagent/llm.py", "projects/forms.py"]

    assert [path for path in edges if is_core(Path(path))] == []
    assert all(is_core(Path(path)) for path in core)
    assert {path.as_posix() for path in core_modules()} >= set(core)


def test_every_app_of_ours_has_a_layer():
    ours = {config.name for config in apps.get_app_configs() if Path(config.path).parent == ROOT}

    assert ours and ours <= set(LAYERS), f"give {sorted(ours - set(LAYERS))} a place in LAYERS"
