"""Issue 8 item 10: `bash ops/test.sh` after `bash ops/demo.sh` must pass. The demo leaves a
`.vault-agent/` state dir inside fixtures/demo; test copies of a fixture never take it along."""

from __future__ import annotations

from pathlib import Path

from api.serverkit import build_fixture_vault, copy_fixture
from vault_agent.freshness import read_current_manifest


def _fixtures_with_left_state(tmp_path: Path) -> Path:
    fixtures = tmp_path / "fixtures"
    (fixtures / "demo" / ".vault-agent" / "snapshots").mkdir(parents=True)
    (fixtures / "demo" / ".vault-agent" / "CURRENT").write_text("snapshot-000009\n")
    (fixtures / "demo" / ".vault-agent" / "token").write_text("left-by-demo")
    (fixtures / "demo" / "Welcome.md").write_text("# Welcome\n")
    return fixtures


def test_copy_leaves_a_left_over_state_dir_behind(tmp_path: Path) -> None:
    fixtures = _fixtures_with_left_state(tmp_path)
    dest = copy_fixture("demo", tmp_path / "copy", fixtures)
    assert sorted(p.name for p in dest.iterdir()) == ["Welcome.md"]


def test_fixture_vault_builds_snapshot_one_whatever_the_checkout_holds(tmp_path: Path) -> None:
    settings = build_fixture_vault(tmp_path, "demo")
    manifest = read_current_manifest(settings.index_dir)
    assert manifest is not None and manifest.snapshot_id == 1
