"""Settings precedence (flag > env > config file > defaults) and documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_agent.config import Settings, env_setting, load_settings
from vault_agent.errors import InvalidParameter
from vault_agent.setting_specs import SETTINGS

README = Path(__file__).resolve().parents[2] / "README.md"


def _write_config(vault: Path, text: str) -> None:
    (vault / ".vault-agent").mkdir(parents=True, exist_ok=True)
    (vault / ".vault-agent" / "config.toml").write_text(text)


def test_defaults(tmp_path: Path) -> None:
    s = load_settings({"vault": tmp_path}, env={})
    assert s.index_dir == tmp_path / ".vault-agent"
    assert (s.host, s.port, s.writes_enabled, s.extensions) == ("127.0.0.1", 8765, False, (".md",))


def test_precedence_flag_env_file_default(tmp_path: Path) -> None:
    _write_config(
        tmp_path,
        'exclude = ["drafts/"]\n[server]\nport = 9001\nhost = "127.0.0.2"\n[writes]\nenabled = true\n',
    )
    env = {"VAULT_AGENT_PORT": "9002"}
    s = load_settings({"vault": tmp_path}, env=env)
    assert (s.port, s.host, s.writes_enabled, s.exclude) == (9002, "127.0.0.2", True, ("drafts/",))
    s = load_settings({"vault": tmp_path, "port": 9003}, env=env)
    assert s.port == 9003


def test_env_selects_vault_and_lists(tmp_path: Path) -> None:
    env = {
        "VAULT_AGENT_VAULT": str(tmp_path),
        "VAULT_AGENT_EXCLUDE": "a/, b/",
        "VAULT_AGENT_WRITES_ENABLED": "yes",
    }
    s = load_settings({}, env=env)
    assert (s.vault, s.exclude, s.writes_enabled) == (tmp_path, ("a/", "b/"), True)


def test_explicit_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "elsewhere.toml"
    cfg.write_text('[mcp]\ntool_profile = "agent-files"\n')
    s = load_settings({"vault": tmp_path, "config": cfg}, env={})
    assert s.tool_profile == "agent-files"
    with pytest.raises(InvalidParameter):
        load_settings({"vault": tmp_path, "config": tmp_path / "missing.toml"}, env={})


@pytest.mark.parametrize("text", ["port = [", '[server]\nport = "abc"\n', '[mcp]\ntool_profile = "x"\n'])
def test_bad_config_is_invalid_parameter(tmp_path: Path, text: str) -> None:
    _write_config(tmp_path, text)
    with pytest.raises(InvalidParameter) as exc:
        load_settings({"vault": tmp_path}, env={})
    assert str(tmp_path) not in exc.value.message


def test_fingerprint_tracks_index_settings(tmp_path: Path) -> None:
    a = load_settings({"vault": tmp_path}, env={})
    b = load_settings({"vault": tmp_path, "port": 1}, env={})
    c = load_settings({"vault": tmp_path, "exclude": ["x/"]}, env={})
    assert a.index_fingerprint() == b.index_fingerprint() != c.index_fingerprint()


def test_every_setting_documented_in_readme() -> None:
    text = README.read_text()
    missing = [s.env for s in SETTINGS if s.env not in text]
    assert missing == []


def test_settings_defaults_come_from_the_table(tmp_path: Path) -> None:
    """The table is the one place a default is declared; `Settings` repeats none."""
    direct = Settings(vault=tmp_path, index_dir=tmp_path / "state")
    loaded = load_settings({"vault": tmp_path}, env={})
    for spec in SETTINGS:
        if spec.default is None:
            continue
        want = tuple(spec.default) if spec.kind == "list" else spec.default
        assert (getattr(direct, spec.name), getattr(loaded, spec.name)) == (want, want), spec.name


def test_env_setting_reads_one_variable_through_the_table() -> None:
    assert env_setting("log_level", {"VAULT_AGENT_LOG_LEVEL": "debug"}) == "debug"
    assert env_setting("log_level", {"VAULT_AGENT_LOG_LEVEL": ""}) is None
    assert env_setting("log_level", {}) is None
    assert env_setting("port", {"VAULT_AGENT_PORT": "9000"}) == 9000
    with pytest.raises(InvalidParameter):
        env_setting("port", {"VAULT_AGENT_PORT": "many"})


def test_index_workers_default_to_the_available_cores(tmp_path: Path) -> None:
    import os

    s = load_settings({"vault": tmp_path}, env={})
    assert s.index_workers == len(os.sched_getaffinity(0))
    assert load_settings({"vault": tmp_path}, env={"VAULT_AGENT_INDEX_WORKERS": "3"}).index_workers == 3
    (tmp_path / ".vault-agent").mkdir()
    (tmp_path / ".vault-agent" / "config.toml").write_text("[index]\nworkers = 5\n")
    assert load_settings({"vault": tmp_path}, env={}).index_workers == 5
    with pytest.raises(InvalidParameter):
        load_settings({"vault": tmp_path}, env={"VAULT_AGENT_INDEX_WORKERS": "0"})
