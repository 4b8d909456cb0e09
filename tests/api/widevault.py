"""A synthetic vault wide enough to reach every operation's largest answer (issue 23).

Every listing reaches its maximum `limit` here: 600 folders (tree), 320 tags (tags), 320
frontmatter fields (facets), 1,100 files in one folder (ls), 600 matching lines (vault_search),
a 150,000-character note (read, scan, get), a note with 600 headings (outline contracts),
cross links (related), a summary with 300 uncited claims (artifact_audit). Names are
realistic, 40-60 characters, not pathological.
"""

from __future__ import annotations

from pathlib import Path

FOLDERS = 600
TAGS = 320
FIELDS = 320
FLAT = 1_100
HEADINGS = 600
LONG_LINES = 2_500  # of about 60 characters: a note of 150,000 characters


def write_wide_vault(root: Path) -> Path:
    """Write the wide vault under `root` (created) and return it."""
    files: dict[str, str] = {}
    for i in range(FOLDERS):
        tags = ", ".join(f"topic-{(i * 7 + k) % TAGS:03d}-lighthouse-maintenance" for k in range(3))
        fields = "\n".join(
            f"field_{(i * 5 + k) % FIELDS:03d}_of_the_keeper_record: value {i}" for k in range(3)
        )
        files[f"areas/area-{i:03d}-coastal-station-records/note-{i:03d}.md"] = (
            f"---\ntype: record\nstatus: open\ntags: [{tags}]\n{fields}\n---\n"
            f"# Station {i}\n\nThe keeper checked needle gauge {i}. See [[note-{(i + 1) % FOLDERS:03d}]] "
            f"and [[note-{(i + 2) % FOLDERS:03d}]].\n"
        )
    for i in range(FLAT):
        files[f"flat/entry-{i:04d}-daily-lamp-and-weather-observations.md"] = (
            f"# Entry {i}\n\nneedle {i}: the lamp burned all night; wind from the west.\n"
        )
    lines = [f"Line {n:05d}: the keeper wiped the needle of the lamp glass again." for n in range(LONG_LINES)]
    files["long/keeper-log-of-every-night-for-seven-years.md"] = "# Long log\n\n" + "\n".join(lines) + "\n"
    headings = [
        f"## Section {n:03d} about the lens, the lamp and the weather\n\nText {n}.\n" for n in range(HEADINGS)
    ]
    files["long/handbook-with-six-hundred-sections.md"] = "# Handbook\n\n" + "\n".join(headings)
    claims = [
        f"- The keeper says claim {n:03d} about the lamp without any citation at all" for n in range(300)
    ]
    files["artifacts/summary-with-three-hundred-uncited-claims.md"] = (
        "# Summary\n\n" + "\n".join(claims) + "\n"
    )
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
