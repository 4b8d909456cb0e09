"""Running one operation: the writes switch, its params validated, its adapter called.

Transports parse → `invoke` → `body_of` → `dump_json`; they hold no logic of their own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from vault_agent.api.operation import AppContext, Operation, Params
from vault_agent.api.surface_names import PARAMETER_ERRORS, Surface, reword, validation_error
from vault_agent.errors import Forbidden, from_os_error

if TYPE_CHECKING:
    from vault_agent.contracts import Outcome


def parse_params(op: Operation, raw: dict[str, Any], surface: Surface = "mcp") -> Params:
    """Validate raw parameters; the error names the parameter as `surface` spells it and
    says what is allowed, in our words (`surface_names`), never echoing the value.

    Raises:
        InvalidParameter / InvalidLimit: a value is missing, malformed or out of range.
    """
    try:
        return op.params.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(op, exc, surface, raw) from None


def invoke(op: Operation, ctx: AppContext, raw: dict[str, Any], surface: Surface = "mcp") -> Outcome[Any]:
    """Check that the operation is allowed, validate its params and run it.

    `surface` is who called (MCP, HTTP or the CLI through HTTP): parameter names in error
    messages are spelled its way (`surface_names.reword`). Unexpected exceptions pass
    through: the transport's translator turns them into INTERNAL.

    Raises:
        Forbidden: a write operation while writes are disabled (checked first, on every surface).
        VaultAgentError: the typed error of the failure.
    """
    if op.kind == "write" and not ctx.settings.writes_enabled:
        raise Forbidden("write tools are disabled; start the server with --allow-writes to enable them")
    params = parse_params(op, raw, surface)
    try:
        return op.func(ctx, params)
    except PARAMETER_ERRORS as exc:
        raise reword(op, exc, surface, raw) from None
    except OSError as exc:
        mapped = from_os_error(exc, "vault")  # e.g. a note whose permissions deny reading
        if mapped is None:
            raise  # unexpected: the transport's translator turns it into INTERNAL
        raise mapped from None


def dump_json(obj: Any) -> str:
    """The one serializer of response bodies: deterministic, UTF-8, compact."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


def body_of(op: Operation, outcome: Outcome[Any]) -> dict[str, Any]:
    """The HTTP body (= MCP structuredContent = CLI --json) of a successful call."""
    data = to_jsonable(outcome.data)
    if not op.envelope:
        return data  # type: ignore[no-any-return]
    return {"data": data, "warnings": [w.model_dump() for w in outcome.warnings]}
