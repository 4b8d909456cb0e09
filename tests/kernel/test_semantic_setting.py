"""`VAULT_AGENT_SEMANTIC` is a row of the settings table, and semantic_enabled() reads it through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_agent.config import load_settings
from vault_agent.errors import InvalidParameter
from vault_agent.semantic.settings import ENV, semantic_enabled
from vault_agent.setting_specs import SPEC_BY_NAME


def test_the_switch_is_declared_once_in_the_table(tmp_path: Path) -> None:
    spec = SPEC_BY_NAME["semantic"]
    assert (spec.env, spec.kind, spec.default) == (ENV, "bool", True)
    assert load_settings({"vault": tmp_path}, env={}).semantic is True
    assert load_settings({"vault": tmp_path}, env={ENV: "off"}).semantic is False
    with pytest.raises(InvalidParameter):
        load_settings({"vault": tmp_path}, env={ENV: "sometimes"})


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        (None, True),
        ("", True),
        ("on", True),
        ("1", True),
        ("off", False),
        ("OFF", False),
        ("no", False),
        ("0", False),
    ],
)
def test_semantic_enabled_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, enabled: bool
) -> None:
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    assert semantic_enabled() is enabled
