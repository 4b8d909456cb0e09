"""Import boundaries (STYLE.md habit 5, ARCHITECTURE.md "Layout"), enforced by walking the ASTs.

Every module belongs to one layer: the kernel (the top-level modules), `semantic`, `indexer`,
`query`, `files`, `conversations`, `api`, `web`, `server` or `cli`, in that order from the
ground up (`LAYERS`). Each layer imports only the layers below it and itself (`ALLOWED`),
with one bridge: the write tools (`files`) reach the indexer only through its event-log
entry point `indexer.tool_events`. No arrow runs back up, and no modules import each other
in a circle, not even through a function-level import. Imports inside functions and
`TYPE_CHECKING` blocks count like any other. Dynamic imports of our own modules
(`importlib.import_module`, `__import__`) would be invisible here, so there are none.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "vault_agent"
# From the ground up; `indexer` and `query` stand side by side (neither imports the other).
LAYERS = ("semantic", "indexer", "query", "files", "conversations", "api", "web", "server", "cli")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            # `from vault_agent.api import ops` imports the module vault_agent.api.ops
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(f"<relative import of level {node.level}>")
    return names


def _modules() -> list[tuple[str, set[str]]]:
    return [(p.relative_to(PKG).as_posix(), _imports(p)) for p in sorted(PKG.rglob("*.py"))]


def _violations(pred_file: Callable[[str], bool], pred_import: Callable[[str], bool]) -> list[str]:
    return [
        f"{f}: {name}"
        for f, names in _modules()
        if pred_file(f)
        for name in sorted(names)
        if pred_import(name)
    ]


def _package(module: str) -> str | None:
    """The package a dotted `vault_agent…` name belongs to ('kernel' for top-level modules)."""
    parts = module.split(".")
    if parts[0] != "vault_agent":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "kernel"


def _layer(rel: str) -> str:
    if rel == "__main__.py":
        return "cli"  # `python -m vault_agent` runs the console script
    head = rel.split("/", 1)[0]
    return head if head in LAYERS else "kernel"


ALLOWED: dict[str, set[str]] = {
    "kernel": {"kernel"},
    # semantic: embeddings written by the indexer's embedder thread and read by queries; it
    # depends on the kernel only, so both sides may use it.
    "semantic": {"kernel", "semantic"},
    "indexer": {"kernel", "semantic", "indexer"},
    "query": {"kernel", "semantic", "query"},
    "files": {"kernel", "files"},  # + indexer.tool_events, below
    "conversations": {"kernel", "files", "conversations"},
    "api": {"kernel", "semantic", "indexer", "query", "files", "conversations", "api"},
    # web: the owner's page, a transport like api's HTTP routes (operations, core functions);
    # only the composition root `server/` mounts it, nothing else imports it.
    "web": {"kernel", "semantic", "query", "files", "conversations", "api", "web"},
    # server: the composition of a server process (context, catalog, HTTP + MCP + page).
    "server": {"kernel", "semantic", "indexer", "query", "files", "conversations", "api", "web", "server"},
    "cli": {"kernel", "semantic", "indexer", "query", "files", "conversations", "api", "server", "cli"},
}
BRIDGES = {("files", "vault_agent.indexer.tool_events")}


def _crosses_boundary(rel: str, name: str) -> bool:
    target = _package(name)
    if target is None:
        return False
    layer = _layer(rel)
    if any(layer == src and (name == mod or name.startswith(mod + ".")) for src, mod in BRIDGES):
        return False
    return target not in ALLOWED[layer]


def test_every_package_imports_only_what_it_may() -> None:
    assert sum(len(names) for _, names in _modules()) > 100  # the walk sees the imports
    bad = [f"{f}: {n}" for f, names in _modules() for n in sorted(names) if _crosses_boundary(f, n)]
    assert bad == []


def test_the_rules_cover_every_package() -> None:
    packages = {_layer(p.relative_to(PKG).as_posix()) for p in PKG.rglob("*.py")}
    assert packages == set(ALLOWED)


def test_the_rule_rejects_what_it_should() -> None:
    assert _crosses_boundary("query/search.py", "vault_agent.indexer.build")
    assert _crosses_boundary("indexer/build.py", "vault_agent.query.snapshot")
    assert _crosses_boundary("indexer/build.py", "vault_agent.files.atomic")
    assert _crosses_boundary("files/move.py", "vault_agent.indexer.engine")
    assert _crosses_boundary("files/move.py", "vault_agent.query.snapshot")
    assert _crosses_boundary("api/http.py", "vault_agent.cli.common")
    assert _crosses_boundary("paths.py", "vault_agent.files.atomic")
    assert not _crosses_boundary("files/events.py", "vault_agent.indexer.tool_events")
    assert not _crosses_boundary("files/events.py", "vault_agent.indexer.tool_events.record_changes")
    assert not _crosses_boundary("cli/serve.py", "vault_agent.server.context")
    assert _crosses_boundary("api/http.py", "vault_agent.web.mount")
    assert _crosses_boundary("api/http.py", "vault_agent.server.http_server")
    assert _crosses_boundary("cli/serve.py", "vault_agent.web.mount")
    assert _crosses_boundary("web/page.py", "vault_agent.indexer.engine")
    assert _crosses_boundary("web/mount.py", "vault_agent.server.http_server")
    assert not _crosses_boundary("server/http_server.py", "vault_agent.web.mount.mount_web_page")
    assert not _crosses_boundary("web/page.py", "vault_agent.api.operation")


def test_no_relative_imports() -> None:
    assert _violations(lambda f: True, lambda n: n.startswith("<relative")) == []


def test_only_api_imports_aiohttp_and_mcp() -> None:
    def outside_api(f: str) -> bool:
        return not f.startswith(("api/", "cli/"))

    def outside_transports(f: str) -> bool:  # the web page, and the server that runs them all
        return outside_api(f) and not f.startswith(("web/", "server/"))

    assert _violations(outside_api, lambda n: n.split(".")[0] == "mcp") == []
    assert _violations(outside_transports, lambda n: n.split(".")[0] in ("aiohttp", "multidict")) == []


def test_only_web_imports_jinja2() -> None:
    assert (
        _violations(lambda f: not f.startswith("web/"), lambda n: n.split(".")[0] in ("jinja2", "markupsafe"))
        == []
    )


def test_only_cli_imports_typer() -> None:
    assert _violations(lambda f: not f.startswith("cli/"), lambda n: n.split(".")[0] == "typer") == []


def test_only_the_watcher_imports_watchdog() -> None:
    assert _violations(lambda f: f != "indexer/watcher.py", lambda n: n.split(".")[0] == "watchdog") == []


# The vault path package (kernel): pure rules below descriptor-relative I/O and the walk,
# which do not know each other (resolution descends from the root's handle in descriptor_io,
# reads descend as resolution does); only the package's __init__ (the `Vault` handle) binds them.
PATH_PARTS: dict[str, set[str]] = {
    "paths/rules.py": set(),
    "paths/descriptor_io.py": set(),
    "paths/resolution.py": {"vault_agent.paths.rules", "vault_agent.paths.descriptor_io"},
    "paths/file_read.py": {
        "vault_agent.paths.rules",
        "vault_agent.paths.descriptor_io",
        "vault_agent.paths.resolution",
    },
    "paths/walk.py": {"vault_agent.paths.rules"},
}
# A module that may touch the file system imports one of these; the pure rules import none.
IO_MODULES = {"os", "stat", "errno", "io", "shutil", "pathlib", "tempfile", "glob", "fcntl", "mmap"}


def _imported_modules(path: Path) -> set[str]:
    """The modules a file imports from (not the names it takes from them)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    return found | {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }


def test_the_path_package_is_layered() -> None:
    assert {p.relative_to(PKG).as_posix() for p in (PKG / "paths").glob("*.py")} == {
        *PATH_PARTS,
        "paths/__init__.py",
    }
    for rel, allowed in PATH_PARTS.items():
        own = {
            n
            for n in _imported_modules(PKG / rel)
            if n == "vault_agent.paths" or n.startswith("vault_agent.paths.")
        }
        assert own == allowed, rel


def test_the_pure_path_rules_do_no_io() -> None:
    tree = ast.parse((PKG / "paths" / "rules.py").read_text())
    roots = {n.split(".")[0] for n in _imports(PKG / "paths" / "rules.py")}
    assert roots & IO_MODULES == set()
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert "open" not in calls


def _dynamic_imports(path: Path) -> list[str]:
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in ("import_module", "__import__", "spec_from_file_location", "find_spec"):
            out.append(f"{path.relative_to(PKG).as_posix()}:{node.lineno}: {name}")
    return out


def test_no_dynamic_imports_of_our_own_modules() -> None:
    # Operations import their cores by name too (api/ops/*): the CLI stays light by loading
    # only the generated command table (tests/cli/test_thin_cli.py), not by deferring imports.
    hits = [hit for p in sorted(PKG.rglob("*.py")) for hit in _dynamic_imports(p)]
    assert hits == []


def _declares_operations(path: Path) -> bool:
    tree = ast.parse(path.read_text(), filename=str(path))
    targets = [
        t
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]
    return any(isinstance(t, ast.Name) and t.id == "OPERATIONS" for t in targets)


def test_every_operation_module_is_in_the_catalog_by_name() -> None:
    """api/ops/__init__ imports each module that declares `OPERATIONS` by name (the catalog is
    their concatenation: tests/api/test_catalog.py), and nothing else imports them wholesale."""
    ops = PKG / "api" / "ops"
    declaring = {p.stem for p in ops.glob("*.py") if p.stem != "__init__" and _declares_operations(p)}
    imported = {
        n.rsplit(".", 1)[1] for n in _imports(ops / "__init__.py") if n.startswith("vault_agent.api.ops.")
    }
    assert len(declaring) >= 10
    assert imported == declaring


# ----------------------------------------------------------------------------- the graph
def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _graph(root: Path = PKG) -> dict[str, set[str]]:
    """Module → the modules of the package it imports (each import statement, wherever it
    stands). `from X import n` is an arrow to the module X.n when there is one, else to X;
    `import a.b` one to the longest name that is a module."""
    files = {_module_name(p): p for p in sorted(root.rglob("*.py"))}

    def resolve(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        arrows: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                arrows.update(filter(None, (resolve(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    arrows.add(target if target in files else resolve(node.module) or "")
        graph[module] = {a for a in arrows if a and a != module}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other in a loop (Tarjan's strongly connected
    components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _floor(module: str) -> int:
    """The layer's height: 0 for the kernel, then LAYERS from the ground up."""
    layer = _package(module)
    return 0 if layer == "kernel" else LAYERS.index(layer or "") + 1


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = _graph()
    assert sum(len(arrows) for arrows in graph.values()) > 300  # the walk sees the arrows
    assert _circles(graph) == []


def test_no_arrow_runs_back_up_the_layers() -> None:
    upward = [
        f"{module} -> {target}"
        for module, arrows in _graph().items()
        for target in sorted(arrows)
        if _floor(target) > _floor(module) and module != "vault_agent.__main__"  # `python -m`: the CLI
    ]
    assert upward == []


def test_each_layer_may_import_only_layers_below_it() -> None:
    order = {"kernel": 0, **{layer: i + 1 for i, layer in enumerate(LAYERS)}}
    assert {layer: [t for t in allowed if order[t] > order[layer]] for layer, allowed in ALLOWED.items()} == {
        layer: [] for layer in ALLOWED
    }


def test_the_graph_checks_find_what_they_should() -> None:
    loop = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(loop) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
    assert (
        _floor("vault_agent.api.http")
        < _floor("vault_agent.web.mount")
        < _floor("vault_agent.server.context")
    )
    assert _floor("vault_agent.errors") == 0
    graph = _graph()
    assert "vault_agent.api.ops" in graph["vault_agent.server.http_server"]  # `from api.ops import CATALOG`
    assert "vault_agent.api.ops.retrieval" in graph["vault_agent.api.ops"]  # `from api.ops import retrieval`
