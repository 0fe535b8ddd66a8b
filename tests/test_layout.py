"""The package's shape, read from its imports: the privacy boundary (nothing after the
measurements imports the code that reads private records), the layers, no import circles,
and no module past ~400 lines."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "gpu_dpsyn"
# what each package may import besides itself (None: anything).  Post-processing
# (selection, estimate, generate) never imports measure/, the only code that reads
# private records; the lower layers import no stage.
ALLOWED = {
    "core": {"errors"},
    "data": {"errors", "core"},
    "privacy": {"errors", "core"},
    "backends": {"errors", "core", "privacy"},
    "selection": {"errors", "core", "data"},
    "estimate": {"errors", "core", "data"},
    "generate": {"errors", "core", "data", "backends", "estimate"},
    "measure": None,
    "evaluation": {"errors", "core", "data", "generate", "version"},
    # the top-level modules
    "errors": set(), "version": set(),
    "config": {"errors", "core", "backends", "privacy", "selection", "generate"},
    "model": {"errors", "config", "data", "estimate"},
    "saving": {"errors", "data", "version"},
}
# what reads private records or the noise key (measure/ calls these on its behalf)
PRIVATE_READERS = ("gpu_dpsyn.measure", "gpu_dpsyn.distributed.counting",
                   "gpu_dpsyn.privacy.bounding", "gpu_dpsyn.privacy.keys")
# what runs after fit() on what it produced: sampling, here and on Dask workers
AFTER_FIT = ("gpu_dpsyn.model", "gpu_dpsyn.saving", "gpu_dpsyn.generate",
             "gpu_dpsyn.estimate", "gpu_dpsyn.selection", "gpu_dpsyn.distributed.sampling",
             "gpu_dpsyn.distributed.splitting", "gpu_dpsyn.distributed.workers")
POST_PROCESSING = ("selection", "estimate", "generate")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set:
    """Every gpu_dpsyn module path imported anywhere in the file (functions included)."""
    mod, out = _module(path), set()
    pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("gpu_dpsyn")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(pkg[:len(pkg) - node.level + 1] + ([base] if base else []))
            if base.startswith("gpu_dpsyn"):
                out |= {f"{base}.{a.name}" for a in node.names}  # trimmed to a module
    return out


def _graph() -> dict:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        deps = set()
        for name in _imports(path):
            while name not in files and "." in name:  # an imported name, not a module
                name = name.rsplit(".", 1)[0]
            if name in files and name != mod:
                deps.add(name)
        graph[mod] = deps
    return graph


def _package(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_reader_finds_imports_of_every_form():
    graph = _graph()
    assert "gpu_dpsyn.generate.gum" in graph["gpu_dpsyn.generate.records"]  # from m import n
    assert "gpu_dpsyn.measure.fit" in graph["gpu_dpsyn.synthesizer"]  # from pkg import m
    # inside a function
    assert "gpu_dpsyn.distributed.counting" in graph["gpu_dpsyn.measure.fit"]


@pytest.mark.parametrize("pkg", POST_PROCESSING)
def test_post_processing_never_imports_the_measuring_code(pkg):
    graph = _graph()
    bad = sorted((m, d) for m, deps in graph.items() if _package(m) == pkg
                 for d in deps if _package(d) == "measure")
    assert not bad, f"{pkg}/ imports measure/: {bad}"


def test_nothing_that_samples_imports_what_reads_private_records():
    graph = _graph()
    bad = sorted((m, d) for m, deps in graph.items() if m.startswith(AFTER_FIT)
                 for d in deps if d.startswith(PRIVATE_READERS))
    assert not bad, f"post-processing imports a private reader: {bad}"


def test_imports_are_all_written_out():
    """No import the reader cannot see (importlib, __import__)."""
    hidden = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
              if "importlib" in p.read_text() or "__import__(" in p.read_text()]
    assert not hidden, hidden


def test_each_package_imports_only_the_layers_below_it():
    graph = _graph()
    bad = []
    for m, deps in graph.items():
        allowed = ALLOWED.get(_package(m))
        if allowed is None:
            continue
        bad += [(m, d) for d in deps if _package(d) not in allowed | {_package(m)}]
    assert not bad, bad


def test_no_import_circles():
    graph, state, cycles = _graph(), {}, []

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                cycles.append(path[path.index(d):] + [d] if d in path else [m, d])
            elif d not in state:
                visit(d, path + [d])
        state[m] = "done"
    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, cycles


def test_no_module_is_past_400_lines():
    long = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


def test_a_measure_import_in_post_processing_is_caught(tmp_path, monkeypatch):
    """The boundary test fails when generate/ imports measure/ (a copy of the package
    with one such import added)."""
    import shutil
    copy = tmp_path / "gpu_dpsyn"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.cu*", "*.cpp"))
    f = copy / "generate" / "decode.py"
    f.write_text(f.read_text() + "\n\ndef _late():\n    from ..measure import marginals\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", copy)
    with pytest.raises(AssertionError, match="generate/ imports measure/"):
        test_post_processing_never_imports_the_measuring_code("generate")


def test_a_private_reader_imported_by_sampling_code_is_caught(tmp_path, monkeypatch):
    import shutil
    copy = tmp_path / "gpu_dpsyn"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.cu*", "*.cpp"))
    f = copy / "distributed" / "sampling.py"
    f.write_text(f.read_text() + "\n\ndef _late():\n    from . import counting\n")
    m = copy / "model.py"
    m.write_text(m.read_text() + "\n\ndef _late():\n    from gpu_dpsyn.measure import fit\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", copy)
    with pytest.raises(AssertionError, match="distributed.sampling.*distributed.counting"):
        test_nothing_that_samples_imports_what_reads_private_records()
    with pytest.raises(AssertionError, match="gpu_dpsyn.model.*gpu_dpsyn.measure.fit"):
        test_each_package_imports_only_the_layers_below_it()
