"""Human output of search, note and related."""

from __future__ import annotations

from typing import Any

from vault_agent.api.human.common import command, data_of


def render_search(body: dict[str, Any]) -> str:
    out = []
    for i, r in enumerate(data_of(body).get("results", []), 1):
        where = " > ".join(r.get("headingPath") or [])
        out.append(f"{i:>2}. {r['path']}:{r['startLine']}-{r['endLine']}  {r['score']:.3f}  {where}")
        out.append(f"    {r['snippet']}")
        if r.get("explain"):
            out.append("    " + explain_line(r["explain"]))
    return "\n".join(out) or "(no results)"


def explain_line(e: dict[str, Any]) -> str:
    """One line of `search --explain`: ranks, scores, fusion shares, matched fields."""
    f = e.get("fusion") or {}
    lex = f"lexical #{e['lexicalRank']} ({e['lexicalScore']:.2f})" if e.get("lexicalRank") else "lexical -"
    sem = f"semantic #{e['semanticRank']} (cos {e['cosine']:.3f})" if e.get("semanticRank") else "semantic -"
    parts = [lex, sem, f"fusion {f.get('lexical', 0):.4f}+{f.get('semantic', 0):.4f}"]
    if f.get("pinned"):
        parts.append(f"pinned: {f['pinned']}")
    parts.append("fields: " + (", ".join(e.get("matchedFields") or []) or "-"))
    return "  ".join(parts)


def render_note(body: dict[str, Any]) -> str:
    d = data_of(body)
    head = f"{d['path']}  ({d.get('title')})  tags: {', '.join(d.get('tags', [])) or '-'}"
    head += "" if d.get("snapshotMatches") else "  [changed since the index]"
    section = d.get("section")
    if section:  # a section read: say which lines of the note the text is
        head += f"\nsection {section['id']} ({section['text']}), lines {section['startLine']}-{section['endLine']}"
    rest = command("scan", d["path"]) if isinstance(d.get("path"), str) else "vault-agent scan"
    tail = f"\n-- truncated; read it all, chunk by chunk: {rest}" if d.get("truncated") else ""
    return head + "\n\n" + str(d.get("text", "")).rstrip("\n") + tail


def render_related(body: dict[str, Any]) -> str:
    rows = data_of(body).get("related", [])
    return (
        "\n".join(f"{r['score']:>7.3f}  {r['path']}  ({', '.join(r['reasons'])})" for r in rows) or "(none)"
    )
