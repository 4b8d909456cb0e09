"""What every benchmark under ops/bench shares: arguments with `--smoke`, a generated and
indexed vault, wall and CPU time of a call, the load line, timing spans.

How a script uses it (tests/ops/test_bench_smoke.py runs every `ops/bench/bench_*.py` with
`--smoke` and fails a script that does not accept it):

    import benchkit   # ops/bench is the script's own directory, so it is on sys.path

    def main() -> None:
        parser = benchkit.parser(__doc__)            # has --smoke
        parser.add_argument("--notes", type=int, default=10_000)
        parser.add_argument("--runs", type=int, default=3)
        args = benchkit.parse(parser, smoke={"notes": 30, "runs": 1})
        with benchkit.workdir("bench-x") as work:
            settings = benchkit.indexed_vault(work / "vault", args.notes)
            walls = [benchkit.timed(lambda: search(...))[0] for _ in range(args.runs)]
        benchkit.report({"notes": args.notes, "median_ms": statistics.median(walls)})  # + load

- `--smoke` must run the script's whole path (the same code, tiny sizes, one repetition) in
  a few seconds, with no input but the generated vault: it proves the script still runs
  against the current code, not a figure. `parse(..., smoke=...)` overrides the given
  options; a script that needs a real corpus, another checkout or an external program
  generates a stand-in (or measures this tree against itself) under --smoke.
- Print figures with `report` (JSON, with `uptime`) so every figure carries the load.
- Time phases inside the product with `Spans.wrap(owner, function, label)`: the function is
  named by reference (go-to-definition and mypy follow it), never by a string.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault_agent.config import Settings

# Importing this module imports no vault_agent code and changes no import path, so a
# script (or a child process it starts) runs whatever vault_agent its python finds first.
OPS = Path(__file__).resolve().parents[1]
REPO = OPS.parent
CLI = str(Path(sys.executable).parent / "vault-agent")  # the console script beside this python


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser described by the script's docstring, with `--smoke`."""
    text = (doc or "").strip()
    ap = argparse.ArgumentParser(
        description=text.split("\n\n")[0], epilog="\n\n".join(text.split("\n\n")[1:]) or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition: proves the script runs")
    return ap


def parse(
    ap: argparse.ArgumentParser, smoke: Mapping[str, Any], argv: list[str] | None = None
) -> argparse.Namespace:
    """Parse; under --smoke, the `smoke` values replace the options of the same name."""
    args = ap.parse_args(argv)
    if args.smoke:
        known = vars(args)
        for name, value in smoke.items():
            if name not in known:
                raise KeyError(f"smoke value for an unknown option: {name}")
            setattr(args, name, value)
    return args


@contextlib.contextmanager
def workdir(prefix: str, keep: Path | None = None) -> Iterator[Path]:
    """`keep` when given (made if absent, left in place), else a temporary dir removed after."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    path = Path(tempfile.mkdtemp(prefix=f"va-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def generated_vault(dest: Path, notes: int, seed: int = 1) -> Path:
    """ops/gen_vault.py's deterministic vault of `notes` notes at `dest` (kept when present)."""
    if not dest.is_dir() or not any(dest.iterdir()):
        if str(OPS) not in sys.path:
            sys.path.insert(0, str(OPS))
        import gen_vault

        with contextlib.redirect_stdout(sys.stderr):
            gen_vault.main([str(dest), "--notes", str(notes), "--seed", str(seed)])
    return dest


def settings_for(vault: Path, index_dir: Path | None = None, **flags: Any) -> Settings:
    """Settings of `vault` from these flags alone (the environment is ignored)."""
    from vault_agent.config import load_settings

    return load_settings({"vault": vault, "index_dir": index_dir, **flags}, env={})


def indexed_vault(dest: Path, notes: int, seed: int = 1, **flags: Any) -> Settings:
    """A generated vault with a committed index (built once; reused when already there)."""
    from vault_agent.freshness import read_current_manifest
    from vault_agent.indexer.build import build_index

    settings = settings_for(generated_vault(dest, notes, seed), **flags)
    if read_current_manifest(settings.index_dir) is None:
        build_index(settings, full=True)
    return settings


def inputs_or_smoke(
    ap: argparse.ArgumentParser, args: argparse.Namespace, work: Path,
    vault: str = "vault", state: str | None = None, notes: int = 20, indexed: bool = True,
) -> None:  # fmt: skip
    """A script that measures a given vault (and state dir): under --smoke, point those
    options at a generated vault of `notes` notes in `work` (indexed unless told not to);
    otherwise stop with a usage error when one is missing. Declare the options optional
    (`nargs="?"` for a positional) and call this right after `parse`."""
    if args.smoke:
        if indexed:
            made = indexed_vault(work / "vault", notes)
            made_vault, made_state = made.vault, made.index_dir
        else:
            made_vault, made_state = generated_vault(work / "vault", notes), work / "vault" / ".vault-agent"
        setattr(args, vault, made_vault)
        if state is not None:
            setattr(args, state, made_state)
        return
    missing = [name for name in (vault, state) if name is not None and getattr(args, name) is None]
    if missing:
        ap.error(f"required (or --smoke): {', '.join(missing)}")


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall ms, process CPU ms, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, out


def load_line() -> str:
    """`uptime`'s line: print it with every figure (the machine is shared)."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def report(figures: Mapping[str, Any]) -> None:
    """One JSON line of figures, with the load."""
    print(json.dumps({**figures, "uptime": load_line()}), flush=True)


def writer_phases() -> list[tuple[object, Callable[..., Any], str]]:
    """(owner, function, label) of the writer's path from an event to a published snapshot,
    for `Spans.wrap`; the phase benchmarks add their own around it."""
    from vault_agent.indexer import build, engine, search_index, segments, snapshot
    from vault_agent.indexer.eventlog import EventLog
    from vault_agent.server import context  # its writer's publish hook (build_context binds it by name)

    return [
        (EventLog, EventLog.append, "log append"),
        (engine.Writer, engine.Writer._record, "writer: record batch"),
        (engine.Writer, engine.Writer._commit, "writer: _commit (all)"),
        (engine.Writer, engine.Writer._maintain, "writer: maintain (compact/GC/semantic)"),
        (engine.Writer, engine.Writer._publish, "writer: writer.json"),
        (build.Indexer, build.Indexer.apply, "apply (all)"),
        (build, build.scan_vault, "apply: scan_vault"),
        (segments.SegmentWriter, segments.SegmentWriter.finish, "apply: segment finish (parquet+fsync)"),
        (search_index.SearchIndexWriter, search_index.SearchIndexWriter.add_tables, "apply: engine add"),
        (build.Indexer, build.Indexer.commit_snapshot, "commit_snapshot (all)"),
        (
            search_index.SearchIndexWriter,
            search_index.SearchIndexWriter.freeze,
            "commit: engine freeze (all)",
        ),
        (context, context.before_publish, "commit: before_publish (preload)"),
        (build, build.commit, "commit: manifest+CURRENT"),
        (snapshot.GarbageCollector, snapshot.GarbageCollector.collect, "gc collect (files)"),
    ]


class Spans:
    """Timing wrappers around product functions for one process (benchmarks only).

    `wrap(owner, function, label)` replaces `owner.<function's name>` by a wrapper that calls
    `sink` with one span per call (label, wall start/end on the perf_counter clock, which is
    CLOCK_MONOTONIC and so shared between processes on Linux, thread CPU ms, thread name).
    The function is passed by reference, so renaming it breaks the script at type-check
    time and go-to-definition lands on it.
    """

    def __init__(self, sink: Callable[[dict[str, Any]], None]) -> None:
        self.sink = sink

    def wrap(self, owner: object, function: Callable[..., Any], label: str) -> None:
        name = function.__name__
        if getattr(owner, name) is not function:
            raise ValueError(f"{label}: {owner!r} does not hold {name} as given")
        sink = self.sink

        @functools.wraps(function)
        def span(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                sink({"name": label, "s": start, "e": time.perf_counter(),
                      "cpu": (time.thread_time() - cpu) * 1000, "thread": threading.current_thread().name})  # fmt: skip

        setattr(owner, name, span)

    def wrap_iter(self, owner: object, function: Callable[..., Any], label: str) -> None:
        """As `wrap`, for a generator function: one span per step (the time spent inside it
        between yields, not the consumer's time)."""
        name = function.__name__
        if getattr(owner, name) is not function:
            raise ValueError(f"{label}: {owner!r} does not hold {name} as given")
        sink = self.sink

        def step_span(start: float, cpu: float) -> None:
            sink({"name": label, "s": start, "e": time.perf_counter(),
                  "cpu": (time.thread_time() - cpu) * 1000, "thread": threading.current_thread().name})  # fmt: skip

        @functools.wraps(function)
        def span(*args: Any, **kwargs: Any) -> Iterator[Any]:
            steps = function(*args, **kwargs)
            while True:
                start, cpu = time.perf_counter(), time.thread_time()
                try:
                    item = next(steps)
                except StopIteration:
                    step_span(start, cpu)
                    return
                step_span(start, cpu)
                yield item

        setattr(owner, name, span)
