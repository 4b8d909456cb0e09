"""The vault walk: every indexable regular file under the root, in sorted order.

Symlinks are skipped (never followed, so loops cannot hang), names that are not valid
Unicode are skipped and counted, two names equal after NFC are a collision (the one
already in NFC, else the first in sorted order, is kept), case twins are both kept and
reported, and files with several hard links are skipped (the other name may lie outside
the vault). What was passed over is counted in a `WalkReport` (`status --verbose`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from vault_agent.errors import VaultUnavailable
from vault_agent.paths.rules import PathRules, has_surrogates
from vault_agent.text import nfc


@dataclass(frozen=True)
class WalkEntry:
    rel: str
    mtime_ns: int
    size: int


MAX_NAMED_SKIPS = 10_000  # names kept in `WalkReport.passed_over`; the counts stay exact


@dataclass
class WalkReport:
    """What a walk passed over, by documented rule (counted in `status --verbose`)."""

    undecodable_names: int = 0
    normalization_collisions: list[str] = field(default_factory=list)
    case_twins: list[str] = field(default_factory=list)  # both indexed; reported (RELIABILITY (21))
    symlinks_skipped: int = 0
    special_files_skipped: int = 0
    hardlinks_skipped: int = 0  # st_nlink > 1: the other name may lie outside the vault
    # Permissions deny us: files by their mode bits, folders by a failed listing. Skipped
    # (not indexed), counted, and looked at again by every scan.
    unreadable_files: list[str] = field(default_factory=list)
    unreadable_folders: list[str] = field(default_factory=list)
    # (rule, vault-relative name) of what the symlink, special-file, hardlink and
    # undecodable-name rules passed over (for a name that is not Unicode, its folder): the
    # owner's page names them ("why is my note missing"). Bounded by MAX_NAMED_SKIPS.
    passed_over: list[tuple[str, str]] = field(default_factory=list)

    def pass_over(self, rule: str, rel: str) -> None:
        if len(self.passed_over) < MAX_NAMED_SKIPS:
            self.passed_over.append((rule, rel))


def readable_by_us(st: os.stat_result) -> bool:
    """Whether the mode bits let this process read a file (root reads everything)."""
    euid = os.geteuid()
    if euid == 0:
        return True
    if st.st_uid == euid:
        return bool(st.st_mode & stat.S_IRUSR)
    if st.st_gid == os.getegid() or st.st_gid in os.getgroups():
        return bool(st.st_mode & stat.S_IRGRP)
    return bool(st.st_mode & stat.S_IROTH)


def _join(rel_dir: str, name: str) -> str:
    return f"{rel_dir}/{name}" if rel_dir else name


def _kept_names(
    entries: list[os.DirEntry[str]], rel_dir: str, rules: PathRules, rep: WalkReport
) -> dict[str, str]:
    """NFC name -> on-disk name of the entries of one folder the walk keeps."""
    seen: dict[str, str] = {}
    for entry in entries:
        name = entry.name
        if has_surrogates(name):
            rep.undecodable_names += 1
            rep.pass_over("undecodable_name", rel_dir)
            continue
        cname = nfc(name)
        rel = _join(rel_dir, cname)
        try:
            if entry.is_symlink():
                rep.symlinks_skipped += 1
                rep.pass_over("symlink", rel)
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if not is_dir and not is_file:
            rep.special_files_skipped += 1
            rep.pass_over("special_file", rel)
            continue
        if rules.hidden(rel, is_dir):
            continue
        if cname in seen:
            rep.normalization_collisions.append(rel)
            if name == cname and seen[cname] != cname:
                seen[cname] = name  # prefer the NFC spelling on disk
            continue
        seen[cname] = name
    folded: set[str] = set()
    for cname in sorted(seen):
        key = cname.casefold()
        if key in folded:
            rep.case_twins.append(_join(rel_dir, cname))
        else:
            folded.add(key)
    return seen


def walk_vault(
    root: Path,
    rules: PathRules,
    report: WalkReport | None = None,
    notes_only: bool = True,
    also: tuple[str, ...] = (),
) -> Iterator[WalkEntry]:
    """Every non-excluded regular file (notes only by default) under `root`, in sorted order;
    `also`: name endings (lower case) yielded beside the notes (the indexer's `.base` files).

    Raises:
        VaultUnavailable: the root folder itself is gone: an empty walk would read as
            "every note deleted" (a sync tool or a checkout that removes and restores it).
    """
    rep = report if report is not None else WalkReport()
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        abs_dir, rel_dir = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            if not rel_dir:
                raise VaultUnavailable() from None
            continue
        except PermissionError:
            rep.unreadable_folders.append(rel_dir)
            continue
        except OSError:
            continue
        seen = _kept_names(entries, rel_dir, rules, rep)
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            if has_surrogates(name):
                continue
            cname = nfc(name)
            if seen.get(cname) != name:
                continue
            rel = _join(rel_dir, cname)
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((entry.path, rel))
                    continue
                if notes_only and not rules.is_note_name(rel) and not (also and rel.lower().endswith(also)):
                    continue
                st = entry.stat(follow_symlinks=False)
            except PermissionError:  # a listable folder we may not search (no x bit)
                rep.unreadable_files.append(rel)
                continue
            except OSError:
                continue
            if st.st_nlink > 1:
                rep.hardlinks_skipped += 1
                rep.pass_over("hardlink", rel)
                continue
            if notes_only and not readable_by_us(st):
                rep.unreadable_files.append(rel)
                continue
            yield WalkEntry(rel, st.st_mtime_ns, st.st_size)
        stack.extend(reversed(subdirs))
