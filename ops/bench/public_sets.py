"""Public retrieval benchmarks nobody on this project wrote, as vaults of Markdown notes and
query sets in our JSON format (`{"sets": [{"vault", "queries": [{q, targets, kind, lang}]}]}`).

    .venv/bin/python ops/bench/public_sets.py --out DIR [--names locomo,xquad]
        # writes DIR/<name>/vault/… and DIR/<name>.json; prints counts per class

They are there to veto: no model, weight, threshold or rule is ever chosen on them
(docs/retrieval.md). Their data is never committed here (neither licence is ours to
relicense, and this repository holds no fetched data): it is read from the pinned git
snapshot of the benchmark's own repository, `/work/.mirror/<owner>+<name>/repo` (what the
session tool `fetch` brings), else a `git clone --filter=blob:none` of it from GitHub into
the work dir (bench_vaults.py's `git:` vaults do the same).

- `locomo`: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM
  Agents", ACL 2024), snap-research/locomo @ e76cdff, `data/locomo10.zip` (CC BY-NC 4.0):
  ten long conversations between two people, 272 dated sessions; each session is a note
  (`conv-26/2023-05-08 session 01.md`, frontmatter date and people, one line per turn, a
  shared photo as its caption). 1,986 questions with evidence turn ids (`D3:12`): the
  targets are the sessions holding the evidence; a question whose evidence spans several
  sessions scores the share of them found (`need: all`, like our bridge questions).
  Classes are LoCoMo's own categories: 1 multi-hop, 2 temporal, 3 open-domain (commonsense),
  4 single-hop, 5 adversarial (a question about the other speaker; the evidence is the same).
- `xquad`: XQuAD (Artetxe et al., "On the Cross-lingual Transferability of Monolingual
  Representations", ACL 2020), google-deepmind/xquad @ 7d30520 (CC BY-SA 4.0): 240 Wikipedia
  paragraphs (48 articles) and 1,190 questions professionally translated into 11 languages
  beside English. One vault per language (`<lang>/a07-p3.md`, the paragraph as the body,
  no title: the article name would be an English handle in every language); every fifth
  question (238 per language), target = its paragraph. Class `factoid-<lang>`.

--smoke: a synthetic stand-in of each (a few notes in the same shapes), no snapshot needed.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import benchkit

MIRRORS = Path("/work/.mirror")
PINS = {
    "locomo": ("snap-research/locomo", "e76cdff4a04fce19090596d49862fe87a5c15aaa"),
    "xquad": ("google-deepmind/xquad", "7d30520c717524000f0d9d2f9c10a069acd9d285"),
}
NAMES = tuple(PINS)
XQUAD_LANGS = ("en", "de", "es", "ro", "tr", "vi", "el", "ru", "ar", "hi", "th", "zh")
XQUAD_EVERY = 5  # every fifth question: 238 a language
LOCOMO_CLASSES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
EVIDENCE_RE = re.compile(r"D(\d+):(\d+)")

__all__ = ["NAMES", "PINS", "materialize", "public_set"]


# ----- reading the pinned snapshot ------------------------------------------------------
def _git_dir(repo: str, work: Path) -> Path:
    mirror = MIRRORS / repo.replace("/", "+") / "repo"
    if mirror.exists():
        return mirror
    clone = work / "clones" / repo.replace("/", "+")
    if not clone.exists():
        clone.parent.mkdir(parents=True, exist_ok=True)
        url = f"https://github.com/{repo}"
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", "--filter=blob:none", url, str(clone)], check=True
        )
    return clone


def _blob(name: str, path: str, work: Path) -> bytes:
    repo, commit = PINS[name]
    git = _git_dir(repo, work)
    return subprocess.run(
        ["git", "-C", str(git), "show", f"{commit}:{path}"], capture_output=True, check=True
    ).stdout


# ----- LoCoMo -------------------------------------------------------------------------
def _locomo_raw(work: Path) -> list[tuple[str, dict[str, Any]]]:
    """(sample id, conversation) pairs from the pinned zip, in sample-id order."""
    archive = zipfile.ZipFile(io.BytesIO(_blob("locomo", "data/locomo10.zip", work)))
    out = []
    for info in archive.infolist():
        if info.filename.endswith(".json"):
            out.append((f"conv-{Path(info.filename).stem}", json.loads(archive.read(info))))
    return sorted(out, key=lambda kv: int(kv[0].split("-")[1]))


def _sessions(conv: dict[str, Any]) -> Iterator[tuple[int, datetime, list[dict[str, Any]]]]:
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            when = datetime.strptime(conv[f"{key}_date_time"], "%I:%M %p on %d %B, %Y")
            yield int(m.group(1)), when, turns


def locomo_notes(raw: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The vault ({path: text}) and the questions of LoCoMo conversations."""
    notes: dict[str, str] = {}
    queries: list[dict[str, Any]] = []
    for sample, conv in raw:
        people = f"{conv['speaker_a']} and {conv['speaker_b']}"
        where: dict[int, str] = {}
        for number, when, turns in sorted(_sessions(conv)):
            path = f"{sample}/{when:%Y-%m-%d} session {number:02d}.md"
            where[number] = path
            lines = [
                "---",
                f"date: {when:%Y-%m-%d}",
                f"people: [{conv['speaker_a']}, {conv['speaker_b']}]",
                "---",
                f"# {people}, session {number} ({when.day} {when:%B %Y})",
                "",
            ]
            for t in turns:
                photo = f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else ""
                lines.append(f"**{t['speaker']}:** {t.get('text', '')}{photo}")
                lines.append("")
            notes[path] = "\n".join(lines)
        for qa in conv.get("qa", []):
            sessions = sorted({int(s) for s, _ in EVIDENCE_RE.findall(" ".join(qa.get("evidence", [])))})
            targets = [where[s] for s in sessions if s in where]
            if not targets or not str(qa.get("question", "")).strip():
                continue  # no usable evidence id (a few have none, or name no session)
            item = {
                "q": qa["question"],
                "targets": targets,
                "kind": LOCOMO_CLASSES[qa["category"]],
                "lang": "en",
            }
            if len(targets) > 1:
                item["need"] = "all"
            queries.append(item)
    return notes, queries


# ----- XQuAD --------------------------------------------------------------------------
def xquad_notes(lang: str, doc: dict[str, Any]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The vault ({path: text}) of one language's paragraphs and every XQUAD_EVERY-th question."""
    notes: dict[str, str] = {}
    queries: list[dict[str, Any]] = []
    n = 0
    for a, article in enumerate(doc["data"]):
        for p, para in enumerate(article["paragraphs"]):
            path = f"{lang}/a{a:02d}-p{p}.md"
            notes[path] = para["context"].strip() + "\n"
            for qa in para["qas"]:
                if n % XQUAD_EVERY == 0:
                    queries.append(
                        {"q": qa["question"], "targets": [path], "kind": f"factoid-{lang}", "lang": lang}
                    )
                n += 1
    return notes, queries


# ----- synthetic stand-ins (--smoke) -------------------------------------------------
def _smoke_locomo() -> list[tuple[str, dict[str, Any]]]:
    conv: dict[str, Any] = {"speaker_a": "Ada", "speaker_b": "Bo", "qa": []}
    topics = ["a pottery class", "a marathon in the rain", "adopting a grey cat", "a new job at the bakery"]
    for i, topic in enumerate(topics, start=1):
        conv[f"session_{i}_date_time"] = f"1:0{i} pm on {i + 3} May, 2023"
        conv[f"session_{i}"] = [
            {"speaker": "Ada", "dia_id": f"D{i}:1", "text": f"Guess what, I tried {topic} last week!"},
            {
                "speaker": "Bo",
                "dia_id": f"D{i}:2",
                "text": "That sounds lovely, tell me more.",
                "blip_caption": "a photo",
            },
        ]
        conv["qa"].append(
            {"question": f"What did Ada try before {i + 3} May?", "evidence": [f"D{i}:1"], "category": 4}
        )
    conv["qa"].append({"question": "What did Ada do in May?", "evidence": ["D1:1", "D3:1"], "category": 1})
    return [("conv-1", conv)]


def _smoke_xquad() -> dict[str, Any]:
    paras = ["The river floods every spring.", "The bridge was built in 1890.", "Owls hunt at night."]
    return {
        "data": [{"title": "t", "paragraphs": [{"context": c, "qas": [{"question": c}] * 5} for c in paras]}]
    }


# ----- the sets ------------------------------------------------------------------------
def _write(notes: dict[str, str], root: Path) -> None:
    tmp = root.with_name(root.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    for path, text in notes.items():
        (tmp / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp / path).write_text(text, encoding="utf-8")
    if root.exists():
        shutil.rmtree(root)
    tmp.rename(root)


def _build(name: str, work: Path, smoke: bool) -> list[tuple[str, dict[str, str], list[dict[str, Any]]]]:
    """(vault name, notes, queries) of one benchmark."""
    if name == "locomo":
        notes, queries = locomo_notes(_smoke_locomo() if smoke else _locomo_raw(work))
        return [("locomo", notes, queries)]
    out = []
    for lang in XQUAD_LANGS[:2] if smoke else XQUAD_LANGS:
        doc = _smoke_xquad() if smoke else json.loads(_blob("xquad", f"xquad.{lang}.json", work))
        notes, queries = xquad_notes(lang, doc)
        out.append((f"xquad-{lang}", notes, queries))
    return out


def materialize(name: str, work: Path, smoke: bool = False) -> dict[str, Any]:
    """Write the benchmark's vaults under `work/public/` (once; `smoke`: the stand-in) and
    return its set file's content, every vault named `path:<folder>`."""
    tag = "smoke" if smoke else PINS[name][1][:8]
    base = work / "public" / f"{name}-{tag}"
    index = base / "sets.json"
    if not index.exists():
        sets = []
        for vault_name, notes, queries in _build(name, work, smoke):
            _write(notes, base / vault_name)
            sets.append({"vault": f"path:{base / vault_name}", "queries": queries})
        index.parent.mkdir(parents=True, exist_ok=True)
        about = f"{name}: {PINS[name][0]} @ {PINS[name][1]} (ops/bench/public_sets.py; never chosen on)"
        index.write_text(json.dumps({"about": about, "sets": sets}, ensure_ascii=False, indent=0))
    doc: dict[str, Any] = json.loads(index.read_text())
    return doc


def public_set(spec: str, work: Path, smoke: bool = False) -> dict[str, Any]:
    """`public:<name>` → its set file's content (see materialize)."""
    return materialize(spec.removeprefix("public:"), work, smoke)


def main() -> None:
    ap = benchkit.parser(__doc__)
    ap.add_argument("--out", type=Path, default=None, help="work dir (default: a temporary one)")
    ap.add_argument("--names", default=",".join(NAMES))
    args = benchkit.parse(ap, smoke={})
    with benchkit.workdir("public-sets", keep=args.out) as work:
        for name in args.names.split(","):
            doc = materialize(name, work, smoke=args.smoke)
            for s in doc["sets"]:
                kinds: dict[str, int] = {}
                for q in s["queries"]:
                    kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
                notes = sum(1 for _ in Path(s["vault"].removeprefix("path:")).rglob("*.md"))
                print(
                    json.dumps(
                        {"set": name, "vault": Path(s["vault"]).name, "notes": notes, "queries": kinds}
                    )
                )
    benchkit.report({"names": args.names, "smoke": args.smoke})


if __name__ == "__main__":
    main()
