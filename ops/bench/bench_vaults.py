"""Vaults the retrieval benches run on: the shared corpora, repo fixtures, inline vaults, and
public repositories pinned by commit (never copied into this repo).

A set file names its vault with one of:
- `shared:<corpus>`: ../shared/corpora/<corpus>/vault
- `fixture:<dir>` / `repo:<dir>`: a folder of this repository
- `inline:<name>`: the set's own `notes` ({path: text}), written into the work dir
- `path:<folder>`: a folder a loader wrote (public_sets.py: the public benchmarks)
- `git:<owner>/<name>@<commit>` with `"paths": [folders]`: the `.md` files under those
  folders at that commit, written into the work dir. The git objects come from a local
  mirror (`--mirrors`, default /work/.mirror/<owner>+<name>/repo, what the `fetch` tool
  makes), else from `git clone --filter=blob:none https://github.com/<owner>/<name>` into
  the work dir. Only `.md` blobs are read (large binaries may be absent from a snapshot).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
MIRRORS = Path("/work/.mirror")

__all__ = ["MIRRORS", "Row", "by_note", "chunk_rows", "vault_key", "vault_path"]
Row = tuple[str, int, "list[str] | None", str]  # path, chunk ordinal, heading path, text


def vault_key(s: dict[str, Any]) -> str:
    """A file-system-safe name for a set's vault (state dirs are keyed by it)."""
    spec = s["vault"]
    kind, rel = spec.split(":", 1)
    if kind == "path":
        return "path-" + "+".join(Path(rel).parts[-2:])
    if kind == "git":
        repo, commit = rel.split("@", 1)
        tail = hashlib.sha256(",".join(s.get("paths", [])).encode()).hexdigest()[:6]
        return f"git-{repo.replace('/', '+')}-{commit[:8]}-{tail}"
    return rel.replace("/", "_")


def _git_dir(repo: str, work: Path, mirrors: Path) -> Path:
    mirror = mirrors / repo.replace("/", "+") / "repo"
    if mirror.exists():
        return mirror
    clone = work / "clones" / repo.replace("/", "+")
    if not clone.exists():
        clone.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "git",
                "clone",
                "--quiet",
                "--bare",
                "--filter=blob:none",
                f"https://github.com/{repo}",
                str(clone),
            ],
            check=True,
        )
    return clone


def _materialize_git(repo: str, commit: str, paths: list[str], dest: Path, work: Path, mirrors: Path) -> None:
    git = _git_dir(repo, work, mirrors)
    listing = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "-z", commit, "--", *paths], capture_output=True, check=True
    ).stdout
    blobs: list[tuple[str, str]] = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, raw_path = rec.split(b"\t", 1)
        _, kind, sha = meta.split()
        if kind == b"blob" and raw_path.endswith(b".md"):
            blobs.append((sha.decode(), raw_path.decode("utf-8", "surrogateescape")))
    tmp = dest.with_name(dest.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    proc = subprocess.Popen(
        ["git", "-C", str(git), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    for blob_sha, blob_path in blobs:
        proc.stdin.write(blob_sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            raise RuntimeError(f"{repo}@{commit[:8]}: object {blob_sha} missing (fetch the repository again)")
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        out = tmp / blob_path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    proc.stdin.close()
    proc.wait()
    tmp.rename(dest)


def vault_path(s: dict[str, Any], work: Path, mirrors: Path = MIRRORS) -> Path:
    """The folder holding the set's vault (written into `work` when it is not in a repo)."""
    kind, rel = s["vault"].split(":", 1)
    if kind == "shared":
        return SHARED / "corpora" / rel / "vault"
    if kind in ("fixture", "repo"):
        return REPO / rel
    if kind == "path":
        return Path(rel)
    if kind == "inline":
        root = work / f"inline-{rel}-vault"
        if root.exists():
            shutil.rmtree(root)
        for path, text in s["notes"].items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
        return root
    if kind == "git":
        repo, commit = rel.split("@", 1)
        dest = work / "vaults" / vault_key(s)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            _materialize_git(repo, commit, list(s.get("paths", [])), dest, work, mirrors)
        return dest
    raise ValueError(f"unknown vault kind: {s['vault']}")


def chunk_rows(index_dir: Path) -> tuple[list[Row], dict[str, str | None]]:
    """The live chunk rows of a state dir's current snapshot, sorted, and each note's title
    (a segment's tombstones and the paths a newer segment holds are dead)."""
    from vault_agent.freshness import read_current_manifest

    manifest = read_current_manifest(index_dir)
    assert manifest is not None
    rows: list[Row] = []
    titles: dict[str, str | None] = {}
    newer: set[str] = set()
    for seg in sorted(manifest.segments, key=lambda s: s.segment_id, reverse=True):
        base = index_dir / "segments"
        notes = pq.read_table(base / seg.files["notes"], columns=["path", "title"]).to_pylist()
        dead = set(seg.deleted) | newer
        titles.update({r["path"]: r["title"] for r in notes if r["path"] not in dead})
        t = pq.read_table(base / seg.files["chunks"], columns=["path", "ordinal", "heading_path", "text"])
        rows += [
            (r["path"], r["ordinal"], r["heading_path"], r["text"] or "")
            for r in t.to_pylist()
            if r["path"] not in dead
        ]
        newer |= {r["path"] for r in notes}
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows, titles


def by_note(rows: list[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(r)
    return out
