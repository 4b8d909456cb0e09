"""RELIABILITY.md §4 "Bad input", cases (1)–(22) at parser level ((20), (21): test_parse_walk.py)."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vault_agent.contracts import ParsedNote
from vault_agent.indexer.parse import parse_note


def parse(raw: bytes, rel: str = "bad.md") -> ParsedNote:
    return parse_note(rel, raw, 0, len(raw))


def summary(parsed: ParsedNote) -> dict[str, object]:
    n = parsed.note
    return {
        "fm": (n["fm_status"], n["fm_error"]),
        "flags": n["flags"],
        "headings": [h["text"] for h in parsed.headings],
        "lines": n["line_count"],
        "too_large": n["too_large"],
    }


def test_01_bom_before_frontmatter() -> None:
    parsed = parse(b"\xef\xbb\xbf---\ntitle: Bom\ntags: [a]\n---\n# H\n")
    assert summary(parsed) == {
        "fm": ("valid", None),
        "flags": ["bom"],
        "headings": ["H"],
        "lines": 5,
        "too_large": False,
    }
    assert (parsed.note["title"], parsed.note["tags"]) == ("Bom", ["a"])


def test_02_invalid_utf8_body() -> None:
    parsed = parse(b"---\ntitle: ok\n---\n# Head \xc3\x28\nbody \x80\x81\n")
    assert summary(parsed) == {
        "fm": ("valid", None),
        "flags": ["undecodable"],
        "headings": ["Head \ufffd("],
        "lines": 5,
        "too_large": False,
    }


def test_02b_invalid_utf8_in_frontmatter() -> None:
    parsed = parse(b"---\ntitle: caf\xe9\n---\n")
    assert parsed.note["title"] == "caf\ufffd"


def test_03_nul_bytes() -> None:
    late = parse(b"# H\n" + b"a" * 8200 + b"\n\x00\n")
    assert summary(late)["flags"] == ["nul"]
    assert summary(late)["headings"] == ["H"]
    # A stray NUL early in a text note is still text (issue 8 item 1): outline kept.
    early = parse(b"# H\n\x00\n")
    assert summary(early) == {
        "fm": ("none", None),
        "flags": ["nul"],
        "headings": ["H"],
        "lines": 2,
        "too_large": False,
    }


def test_04_crlf() -> None:
    parsed = parse(b"---\r\ntitle: W\r\n---\r\n# A\r\ntext\r\n")
    assert summary(parsed) == {
        "fm": ("valid", None),
        "flags": ["crlf"],
        "headings": ["A"],
        "lines": 5,
        "too_large": False,
    }
    assert parsed.note["title"] == "W"


def test_05_cr_only() -> None:
    parsed = parse(b"---\rtitle: M\r---\r# A\rtext\r")
    assert summary(parsed) == {
        "fm": ("valid", None),
        "flags": ["cr_only"],
        "headings": ["A"],
        "lines": 5,
        "too_large": False,
    }
    assert parsed.chunks[0]["start_line"] == 4


def test_06_ten_megabyte_single_line() -> None:
    raw = b"lorem ipsum dolor " * 600_000  # 10.8 MB, no newline
    parsed = parse(raw)
    assert summary(parsed) == {
        "fm": ("none", None),
        "flags": [],
        "headings": [],
        "lines": 1,
        "too_large": True,
    }
    assert parsed.note["char_count"] == len(raw)
    assert "".join(c["text"] for c in parsed.chunks) == raw.decode()
    assert all((c["start_line"], c["end_line"]) == (1, 1) for c in parsed.chunks)


def test_07_over_size_cap_500k_lines() -> None:
    raw = b"# not parsed as heading\n" + b"line of text\n" * 500_000
    parsed = parse(raw)
    assert summary(parsed) == {
        "fm": ("none", None),
        "flags": [],
        "headings": [],
        "lines": 500_001,
        "too_large": True,
    }
    assert parsed.note["chunk_count"] == 10_001


def test_08_yaml_25k_deep_does_not_crash_the_process() -> None:
    # Run where a segfault could not take the test runner down with it.
    code = textwrap.dedent(
        """
        from vault_agent.indexer.parse import parse_note
        for nested in (b"x: " + b"[" * 25000, b"x: " + b"{" * 25000, b"x:\\n  " + b"- " * 25000):
            raw = b"---\\n" + nested + b"\\n---\\n# After\\n"
            n = parse_note("deep.md", raw, 0, len(raw))
            print(n.note["fm_status"], n.note["fm_error"], [h["text"] for h in n.headings])
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["invalid too_deep ['After']"] * 3


def test_09_yaml_600_deep() -> None:
    flow = parse(b"---\nx: " + b"[" * 600 + b"]" * 600 + b"\n---\n")
    block = parse(b"---\n" + "".join(f"{' ' * i}k:\n" for i in range(300)).encode() + b"---\n")
    assert summary(flow)["fm"] == summary(block)["fm"] == ("invalid", "too_deep")


def test_10_billion_laughs() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    raw = ("---\n" + "\n".join(lines) + "\ntags: *i\n---\n# H\n").encode()
    assert summary(parse(raw)) == {
        "fm": ("invalid", "too_many_aliases"),
        "flags": [],
        "headings": ["H"],
        "lines": 13,
        "too_large": False,
    }


def test_11_fifty_megabyte_scalar() -> None:
    raw = b"---\nx: " + b"a" * 50_000_000 + b"\n---\n# H\n"
    parsed = parse(raw)
    assert summary(parsed) == {
        "fm": ("invalid", "too_large"),
        "flags": [],
        "headings": [],
        "lines": 4,
        "too_large": True,
    }


def test_12_impossible_date() -> None:
    parsed = parse(b"---\ndate: 2024-02-30\ntitle: T\n---\n# H\n")
    assert summary(parsed)["fm"] == ("invalid", "yaml_error")
    assert parsed.note["title"] == "bad"


def test_13_non_string_and_duplicate_keys() -> None:
    parsed = parse(b"---\n2: two\n2024-01-05: d\n~: n\nyes: b\ntitle: first\ntitle: second\n---\n")
    assert summary(parsed)["fm"] == ("valid", None)
    assert parsed.note["fm_fields"] == ["2", "2024-01-05", "null", "true", "title"]
    assert parsed.note["title"] == "second"


def test_14_list_and_scalar_frontmatter() -> None:
    for block in (b"- a\n- b", b"plain scalar", b"3.5"):
        parsed = parse(b"---\n" + block + b"\n---\n# H\n")
        assert summary(parsed)["fm"] == ("invalid", "not_mapping")
        assert summary(parsed)["headings"] == ["H"]


def test_15_unclosed_frontmatter() -> None:
    parsed = parse(b"---\ntitle: x\ntags: [a]\n\n# Body heading\n")
    assert summary(parsed)["fm"] == ("none", None)
    assert (parsed.note["tags"], summary(parsed)["headings"]) == ([], ["Body heading"])


def test_16_note_opening_with_a_rule() -> None:
    # Two rules at the top are, by the fence rule, a frontmatter block (not a mapping).
    fenced = parse(b"---\n\nIntro paragraph.\n\n---\n# H\n")
    assert summary(fenced)["fm"] == ("invalid", "not_mapping")
    assert [c["start_line"] for c in fenced.chunks] == [6]
    # A single opening rule has no closing fence: the whole file is body.
    single = parse(b"---\n\nIntro paragraph.\n\n# H\n")
    assert summary(single)["fm"] == ("none", None)
    assert [(c["start_line"], c["heading_ordinal"]) for c in single.chunks] == [(1, None), (5, 1)]


def test_17_json_first_line() -> None:
    parsed = parse(b'{"title": "J"}\n# H\n')
    assert summary(parsed)["fm"] == ("none", None)
    assert parsed.note["title"] == "bad"


def test_18_tab_indented_yaml() -> None:
    assert summary(parse(b"---\nouter:\n\tinner: 1\n---\n"))["fm"] == ("invalid", "yaml_error")


def test_19_markdown_torture() -> None:
    for unit in (b"a <![CDATA[ ", b"[](", b"**_* ", b"*_", b"a <!-- ", b"[", b"<a "):
        parsed = parse(b"# " + unit * 200 + b"\n\n" + unit * 20_000 + b"\n")
        assert len(parsed.headings) == 1
        assert parsed.note["too_large"] is False
    table = b"|" + b"a|" * 800 + b"\n|" + b"-|" * 800 + b"\n|" + b"1|" * 800 + b"\n"
    assert parse(table).note["chunk_count"] == 1


def test_19b_unterminated_inline_html_in_heading() -> None:
    # Regression guard for quadratic unterminated inline HTML (markdown-it CVE-2026-111766).
    parsed = parse(b"# " + b"<a href='x' " * 20_000 + b"\n")
    assert parsed.headings[0]["text"].startswith("<a href='x'")


def test_22_zero_byte_and_binary() -> None:
    assert summary(parse(b"")) == {
        "fm": ("none", None),
        "flags": ["empty"],
        "headings": [],
        "lines": 0,
        "too_large": False,
    }
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    parsed = parse(png, "img.md")
    assert "binary" in parsed.note["flags"]
    assert (parsed.note["title"], parsed.chunks, parsed.headings) == ("img", [], [])


BAD_FILES: dict[str, bytes] = {
    "bad/01-bom.md": b"\xef\xbb\xbf---\ntitle: Bom\n---\n# H\n",
    "bad/02-utf8.md": b"# H \xc3\x28\n\xff\n",
    "bad/03-nul.md": b"# H\n\x00\n",
    "bad/04-crlf.md": b"---\r\ntitle: W\r\n---\r\n# A\r\n",
    "bad/05-cr.md": b"# A\rtext\r",
    "bad/06-long-line.md": b"lorem ipsum " * 900_000,
    "bad/07-many-lines.md": b"line\n" * 500_000,
    "bad/08-deep.md": b"---\nx: " + b"[" * 25_000 + b"\n---\n",
    "bad/09-deep600.md": b"---\nx: " + b"[" * 600 + b"]" * 600 + b"\n---\n",
    "bad/10-laughs.md": b"---\na: &a [x]\n" + b"b: [" + b", ".join([b"*a"] * 100) + b"]\n---\n",
    "bad/11-scalar.md": b"---\nx: " + b"a" * 50_000_000 + b"\n---\n",
    "bad/12-date.md": b"---\ndate: 2024-02-30\n---\n",
    "bad/13-keys.md": b"---\n1: a\nnull: b\nk: 1\nk: 2\n---\n",
    "bad/14-list.md": b"---\n- a\n---\n",
    "bad/15-unclosed.md": b"---\ntitle: x\n",
    "bad/16-rule.md": b"---\n\ntext\n\n---\n",
    "bad/17-json.md": b'{"a": 1}\n',
    "bad/18-tab.md": b"---\na:\n\tb: 1\n---\n",
    "bad/19-torture.md": b"a <![CDATA[ " * 20_000 + b"\n" + b"**_* " * 20_000 + b"\n",
    "bad/22-empty.md": b"",
    "bad/22-binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}


@pytest.mark.slow
def test_bad_input_beside_1000_good_notes_builds(tmp_path: Path) -> None:
    """RELIABILITY.md §4: every bad case beside 1,000 good notes; the build survives and
    indexes all of them (undecodable names and NFC twins are skipped by the walk)."""
    from vault_agent.config import Settings
    from vault_agent.indexer.build import build_index

    gen_vault = runpy.run_path(str(Path(__file__).resolve().parents[2] / "ops" / "gen_vault.py"))
    vault = tmp_path / "vault"
    gen_vault["main"]([str(vault), "--notes", "1000", "--seed", "3"])
    for rel, data in BAD_FILES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
    with open(os.fsencode(vault) + b"/bad/20-name-\xff.md", "wb") as fh:
        fh.write(b"# undecodable name")
    (vault / "bad" / "21-cafe\u0301.md").write_text("nfd", encoding="utf-8")
    (vault / "bad" / "21-caf\u00e9.md").write_text("nfc", encoding="utf-8")
    manifest = build_index(Settings(vault=vault, index_dir=tmp_path / "state"), full=True)
    assert manifest.note_count == 1000 + len(BAD_FILES) + 1
