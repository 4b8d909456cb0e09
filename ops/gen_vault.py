#!/usr/bin/env python3
"""Generate a deterministic, realistic synthetic vault for benchmarks and soak tests.

    python ops/gen_vault.py OUT_DIR --notes 10000 --seed 1

Same arguments → byte-identical vault. Nested folders (depth 1–4), ~80% of notes with
frontmatter (title/tags/type/status/date/project), 2–15 headings of mixed levels, paragraphs,
lists, code blocks, wikilinks to other generated notes, ~5% Japanese notes, ~3.7 KB per note
on average. Notes are streamed to disk one at a time. Prints one summary line.

Fields worth querying (vault_query, ops/bench/bench_query.py) come from a second RNG, so
everything else is the same vault as before they existed (`--no-query-fields` leaves them
out: byte-identical to the older vaults): typed properties (`priority` 1-5, `done`,
`rating`, `due` dates, `reviewed` datetimes, `authors` lists, `Start Date` ISO strings,
empty `reviewer`), and inline `#tags` (nested, some capitalized) in ~30% of the notes.

Tasks (vault_tasks, ops/bench/bench_tasks.py) come from a third RNG in the same way
(`--no-tasks` leaves them out): ~3 a note, in blocks under some headings, in both
notations (Tasks emoji ~75%, Dataview `[key:: value]`), nested by indentation (sometimes
through a plain item), statuses ` x / - X ? !`, due/scheduled/start/created/done/cancelled
dates around 2026-2027 (~1% no calendar date, e.g. `2026-02-30`), priorities, recurrence,
ids and dependencies, inline tags, block links, and decoy task lines in code blocks.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

_WORD_TEXT = (
    "account action agenda alpha analysis answer archive area audit backlog balance baseline batch beacon "
    "benchmark branch bridge budget buffer cache calendar canvas capture catalog channel chapter checklist "
    "client cluster coffee column comment commit compass concept context contract corner cursor customer "
    "dashboard dataset deadline decision delta design detail digest draft editor effort engine estimate event "
    "export feature feedback field filter focus folder forecast format garden gateway glossary goal graph "
    "handoff harbor header heuristic history horizon idea impact import inbox index insight interview issue "
    "journal kernel keyword label ladder lantern layer ledger lesson library lighthouse limit link list "
    "meeting memo metric migration milestone model module monitor morning network note object offset "
    "outline owner packet page panel parser pattern payload pipeline plan platform policy portal priority "
    "process profile project prompt proposal prototype query queue quota range ratio reader recipe record "
    "release report request research review risk roadmap routine sample schedule schema scope search "
    "section segment sequence server session signal sketch snapshot source sprint stack status storage "
    "story summary survey system table target task template theme thread ticket timeline token topic "
    "tracker update vault version vision watcher window workflow writer"
)
WORDS = _WORD_TEXT.split()
JA_SENTENCES = (
    "今日は東京で打ち合わせがありました。",
    "議事録をまとめて共有します。",
    "次回の会議は来週の月曜日です。",
    "予算の見直しが必要になりました。",
    "新しい機能の設計について議論しました。",
    "検索の精度を改善するための案を出しました。",
    "大阪の拠点とも情報を共有する予定です。",
    "課題と担当者を一覧にしました。",
    "進捗は順調ですが、テストが不足しています。",
    "資料は共有フォルダに置いてあります。",
)
JA_HEADINGS = ("概要", "議事録", "決定事項", "課題", "次の一歩", "参考資料", "背景", "進捗", "東京の拠点")
TOP_FOLDERS = ("projects", "areas", "resources", "archive", "meetings", "research", "journal", "inbox")
TYPES = ("note", "meeting", "project", "reference", "idea", "log", "howto", "review")
STATUSES = ("active", "draft", "done", "review", "someday", "archived")
TASK_STATUSES = (" ",) * 55 + ("x",) * 25 + ("/",) * 6 + ("-",) * 5 + ("?", "?", "X", "X", "!", "!", "!")
RECURRENCES = ("every day", "every week", "every month on the 1st", "every 2 weeks when done", "every year")
EMOJI = {"due": "📅", "scheduled": "⏳", "start": "🛫", "created": "➕", "done": "✅", "cancelled": "❌"}
DATAVIEW = {"due": "due", "scheduled": "scheduled", "start": "start", "created": "created", "done": "completion",
            "cancelled": "cancelled"}  # fmt: skip
PRIORITIES = (("🔺", "highest"), ("⏫", "high"), ("🔼", "medium"), ("🔽", "low"), ("⏬", "lowest"))
LANGS = ("python", "bash", "json", "sql", "yaml")


class Generator:
    """All randomness flows from one seeded RNG, consumed in a fixed order."""

    def __init__(self, notes: int, seed: int, query_fields: bool = True, tasks: bool = True) -> None:
        self.rng = random.Random(seed)
        self.qrng = random.Random(seed * 7919 + 17) if query_fields else None
        self.trng = random.Random(seed * 104729 + 31) if tasks else None
        self.task_ids = 0
        self.notes = notes
        self.tags = [f"{a}" for a in self.rng.sample(WORDS, 60)] + [
            f"{a}/{b}" for a, b in zip(self.rng.sample(WORDS, 20), self.rng.sample(WORDS, 20), strict=True)
        ]
        self.projects = [
            f"{a}-{b}" for a, b in zip(self.rng.sample(WORDS, 30), self.rng.sample(WORDS, 30), strict=True)
        ]
        self.sentences = [self._sentence() for _ in range(3000)]
        self.folders = self._folders(max(8, notes // 40))
        self.stems = [self._stem(i) for i in range(notes)]

    def _sentence(self) -> str:
        words = self.rng.choices(WORDS, k=self.rng.randint(5, 13))
        return " ".join(words).capitalize() + self.rng.choice((".", ".", ".", "?", "!"))

    def _folders(self, count: int) -> list[str]:
        folders = list(TOP_FOLDERS)
        while len(folders) < count:
            parent = self.rng.choice(folders)
            if parent.count("/") >= 3:  # depth 1–4
                continue
            folders.append(f"{parent}/{self.rng.choice(WORDS)}-{len(folders)}")
        return folders

    def _stem(self, i: int) -> str:
        a, b = self.rng.choice(WORDS), self.rng.choice(WORDS)
        return f"{a.capitalize()} {b} {i:06d}"

    def _paragraph(self, japanese: bool) -> str:
        if japanese:
            return "".join(self.rng.choices(JA_SENTENCES, k=self.rng.randint(2, 5)))
        return " ".join(self.rng.choices(self.sentences, k=self.rng.randint(2, 4)))

    def _link(self) -> str:
        target = self.stems[self.rng.randrange(self.notes)]
        roll = self.rng.random()
        if roll < 0.15:
            return f"[[{target}#{self.rng.choice(WORDS).capitalize()}]]"
        if roll < 0.3:
            return f"[[{target}|{self.rng.choice(WORDS)}]]"
        return f"[[{target}]]"

    def _frontmatter(self, stem: str, folder: str, japanese: bool) -> list[str]:
        rng = self.rng
        lines = ["---"]
        lines.append(
            f"title: {JA_HEADINGS[rng.randrange(len(JA_HEADINGS))]} {stem[-6:]}"
            if japanese
            else f"title: {stem}"
        )
        tags = rng.sample(self.tags, rng.randint(0, 4))
        if tags:
            if rng.random() < 0.3:
                lines.append("tags: " + ", ".join(("#" + t) if rng.random() < 0.2 else t for t in tags))
            else:
                lines.append("tags:")
                lines.extend(f"  - {t}" for t in tags)
        if rng.random() < 0.7:
            lines.append(f"type: {rng.choice(TYPES)}")
        if rng.random() < 0.6:
            status = rng.choice(STATUSES)
            lines.append(
                f"status: [{status}, {rng.choice(STATUSES)}]" if rng.random() < 0.1 else f"status: {status}"
            )
        if rng.random() < 0.7:
            lines.append(f"date: 20{rng.randint(22, 26)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        if folder.startswith("projects/") or rng.random() < 0.1:
            lines.append(f"project: {rng.choice(self.projects)}")
        if self.qrng is not None:
            lines += self._query_fields(self.qrng)
        lines.append("---")
        return lines

    def _query_fields(self, q: random.Random) -> list[str]:
        """Typed properties from the second RNG (see the module doc)."""
        out: list[str] = []
        if q.random() < 0.5:
            out.append(f"priority: {q.randint(1, 5)}")
        if q.random() < 0.4:
            out.append(f"done: {q.choice(('true', 'false'))}")
        if q.random() < 0.2:
            out.append(f"rating: {q.randint(0, 50) / 10}")
        if q.random() < 0.3:
            out.append(f"due: 20{q.randint(24, 26)}-{q.randint(1, 12):02d}-{q.randint(1, 28):02d}")
        if q.random() < 0.1:
            out.append(
                f"reviewed: 2025-{q.randint(1, 12):02d}-{q.randint(1, 28):02d}T{q.randint(0, 23):02d}:30:00"
            )
        if q.random() < 0.1:
            out.append("authors: [" + ", ".join(q.sample(WORDS, q.randint(1, 3))) + "]")
        if q.random() < 0.05:
            out.append(f'Start Date: "2025-{q.randint(1, 12):02d}-01"')
        if q.random() < 0.05:
            out.append("reviewer:")
        return out

    def _inline_tag(self) -> str:
        """An inline tag for a paragraph, or '' (second RNG; ~30% of notes get one)."""
        q = self.qrng
        if q is None or q.random() >= 0.12:
            return ""
        tag = q.choice(self.tags)
        return " #" + (tag.capitalize() if q.random() < 0.2 else tag)

    def _task_date(self, t: random.Random) -> str:
        """A date around 2026-2027; ~1% of them no calendar date (kept and marked invalid)."""
        if t.random() < 0.01:
            return t.choice(("2026-02-30", "2026-13-05", "2027-04-31", "2026-00-10"))
        return f"20{t.randint(26, 27)}-{t.randint(1, 12):02d}-{t.randint(1, 28):02d}"

    def _task_line(self, t: random.Random, indent: str) -> str:
        """One task line (third RNG; see the module doc)."""
        status = t.choice(TASK_STATUSES)
        words = " ".join(t.choices(WORDS, k=t.randint(2, 8))).capitalize()
        if t.random() < 0.1:
            words += " " + self._link_from(t)
        if t.random() < 0.15:
            words += " #" + t.choice(self.tags)
        dataview = t.random() < 0.25
        fields: dict[str, str] = {}
        for kind, share in (("created", 0.2), ("start", 0.1), ("scheduled", 0.2), ("due", 0.5)):
            if t.random() < share:
                fields[kind] = self._task_date(t)
        if status in "xX" and t.random() < 0.7:
            fields["done"] = self._task_date(t)
        if status == "-" and t.random() < 0.5:
            fields["cancelled"] = self._task_date(t)
        parts = [f"{indent}- [{status}] {words}"]
        if t.random() < 0.3:
            emoji, name = t.choice(PRIORITIES)
            parts.append(f"[priority:: {name}]" if dataview else emoji)
        if t.random() < 0.08:
            rule = t.choice(RECURRENCES)
            parts.append(f"[repeat:: {rule}]" if dataview else f"🔁 {rule}")
        for kind, value in fields.items():
            parts.append(f"[{DATAVIEW[kind]}:: {value}]" if dataview else f"{EMOJI[kind]} {value}")
        if t.random() < 0.05:
            self.task_ids += 1
            parts.append(f"[id:: t{self.task_ids}]" if dataview else f"🆔 t{self.task_ids}")
        if self.task_ids and t.random() < 0.04:
            dep = f"t{t.randint(1, self.task_ids)}"
            parts.append(f"[dependsOn:: {dep}]" if dataview else f"⛔ {dep}")
        if t.random() < 0.03:
            parts.append(f"^task-{t.randrange(10**6)}")
        return " ".join(parts)

    def _link_from(self, t: random.Random) -> str:
        return f"[[{self.stems[t.randrange(self.notes)]}]]"

    def _tasks(self) -> list[str]:
        """A block of tasks under a heading, or nothing (third RNG; ~3 tasks a note)."""
        t = self.trng
        if t is None or t.random() >= 0.075:
            return []
        out: list[str] = []
        if t.random() < 0.03:  # decoys: task lines in a code block are no tasks
            out += ["```markdown", self._task_line(t, ""), "```", ""]
        depth = 0
        for _ in range(t.randint(1, 6)):
            roll = t.random()
            depth = min(depth + 1, 3) if roll < 0.25 else 0 if roll < 0.8 else max(depth - 1, 0)
            indent = ("\t" if t.random() < 0.2 else "    ") * depth
            if depth and t.random() < 0.1:
                out.append(f"{indent}- a plain item")
                indent += "    "
            out.append(self._task_line(t, indent))
        return [*out, ""]

    def note(self, i: int) -> tuple[str, str]:
        """(vault-relative path, text) of note i."""
        rng = self.rng
        stem = self.stems[i]
        folder = rng.choice(self.folders)
        japanese = rng.random() < 0.05
        out: list[str] = []
        if rng.random() < 0.8:
            out.extend(self._frontmatter(stem, folder, japanese))
        if rng.random() < 0.5:
            out += [self._paragraph(japanese), ""]
        level = 1
        for h in range(rng.randint(2, 15)):
            level = (
                1 if h == 0 and rng.random() < 0.6 else max(1, min(6, level + rng.choice((-1, 0, 0, 1, 1))))
            )
            text = (
                rng.choice(JA_HEADINGS)
                if japanese
                else " ".join(rng.choices(WORDS, k=rng.randint(1, 4))).capitalize()
            )
            out += ["#" * level + " " + text, ""]
            for _ in range(rng.randint(1, 2)):
                para = self._paragraph(japanese)
                if rng.random() < 0.4:
                    para += " See " + self._link() + "."
                para += self._inline_tag()
                out += [para, ""]
            roll = rng.random()
            if roll < 0.25:
                out += [f"- {self._paragraph(japanese)[:80]}" for _ in range(rng.randint(2, 5))] + [""]
            elif roll < 0.35:
                out += [f"```{rng.choice(LANGS)}", f"# {rng.choice(WORDS)} comment, not a heading"]
                out += [f"{rng.choice(WORDS)}_{k} = {rng.randint(0, 999)}" for k in range(rng.randint(1, 6))]
                out += ["```", ""]
            elif roll < 0.4:
                out += [f"- [ ] {rng.choice(WORDS)} {self._link()}", f"- [x] {rng.choice(WORDS)}", ""]
            out += self._tasks()
        return f"{folder}/{stem}.md", "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-query-fields", action="store_true", help="the vault as before the query fields")
    parser.add_argument("--no-tasks", action="store_true", help="the vault as before the generated tasks")
    args = parser.parse_args(argv)
    if args.notes < 1:
        parser.error("--notes must be at least 1")
    started = time.perf_counter()
    gen = Generator(args.notes, args.seed, query_fields=not args.no_query_fields, tasks=not args.no_tasks)
    root: Path = args.out_dir
    made: set[str] = set()
    total = 0
    for i in range(args.notes):
        rel, text = gen.note(i)
        folder = rel.rpartition("/")[0]
        if folder not in made:
            (root / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        data = text.encode("utf-8")
        with open(os.path.join(root, rel), "wb") as fh:
            fh.write(data)
        total += len(data)
    elapsed = time.perf_counter() - started
    print(
        f"gen_vault: {args.notes} notes in {len(made)} folders, {total / 1e6:.1f} MB "
        f"(avg {total / args.notes / 1024:.2f} KiB), seed {args.seed}, {elapsed:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
