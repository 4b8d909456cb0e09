"""Operations that only tests serve (POST params, writes, crashes), in a catalog beside the real ones."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from vault_agent.api.operation import AppContext, Operation, Params
from vault_agent.api.ops import CATALOG
from vault_agent.contracts import Outcome


class Span(Params):
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)


class ProbeParams(Params):
    path: str
    span: Span | None = None
    labels: list[str] = []
    options: dict[str, Any] = {}
    limit: int = Field(10, ge=1, le=50)


def _probe(_ctx: AppContext, p: ProbeParams) -> Outcome[dict[str, Any]]:
    return Outcome(data=p.model_dump(mode="json", by_alias=True), freshness="fresh")


def _crash(ctx: AppContext, _p: Params) -> Outcome[dict[str, Any]]:
    raise RuntimeError(f"boom in {ctx.settings.vault}/secret.md")


class WriteParams(Params):
    path: str
    dry_run: bool = False


def _write(_ctx: AppContext, p: WriteParams) -> Outcome[dict[str, Any]]:
    return Outcome(data={"path": p.path, "dryRun": p.dry_run})


TEMP_OPS = (
    Operation(
        name="test-probe",
        mcp_name="test_probe",
        http_method="POST",
        http_path="/test-probe",
        params=ProbeParams,
        func=_probe,
        description="Test only: echoes validated params.",
        cli_args=("path",),
    ),
    Operation(
        name="test-probe-get",
        mcp_name="test_probe_get",
        http_method="GET",
        http_path="/test-probe-get",
        params=ProbeParams,
        func=_probe,
        description="Test only: echoes validated params (GET).",
    ),
    Operation(
        name="test-crash",
        mcp_name="test_crash",
        http_method="GET",
        http_path="/test-crash",
        params=Params,
        func=_crash,
        description="Test only: raises an unexpected exception.",
    ),
    Operation(
        name="test-write",
        mcp_name="test_write",
        http_method="POST",
        http_path="/test-write",
        params=WriteParams,
        func=_write,
        description="Test only: a write tool.",
        kind="write",
        destructive=True,
        idempotent=False,
    ),
)

# The real catalog and the test operations after it: pass it to the server under test.
TEST_CATALOG = CATALOG.with_operations(*TEMP_OPS)
