"""One operation run for one HTTP request: its parameters from the query string
(GET) or the JSON object body (POST, read under the body limits), `invoke` off the event
loop. The generated routes (http.py) and the conversation routes (messages_sse.py) share it.
When the CLI is the caller, parameter errors name its commands (`hints.Hints.for_cli`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web
from multidict import MultiMapping
from pydantic import BaseModel

from vault_agent.api.bodies import request_body
from vault_agent.api.hints import Hints
from vault_agent.api.invoke import invoke
from vault_agent.api.operation import AppContext, Operation
from vault_agent.api.param_text import container_kind as _container_kind
from vault_agent.api.param_text import field_info as _field
from vault_agent.api.param_text import json_text as _json_text
from vault_agent.api.param_text import nested_model as _nested_model
from vault_agent.api.security import SURFACE_HEADER
from vault_agent.api.surface_names import PARAMETER_ERRORS, Surface
from vault_agent.contracts import Outcome
from vault_agent.errors import InvalidParameter

CTX_KEY = web.AppKey("vault_agent_ctx", AppContext)
HINTS_KEY = web.AppKey("vault_agent_hints", Hints)


# ----------------------------------------------------------------------------- params
def params_from_query(model: type[BaseModel], query: MultiMapping[str]) -> dict[str, Any]:
    """GET parameters → raw params: camelCase or snake names, dotted keys nest, JSON for containers.

    Raises:
        InvalidParameter: a scalar given twice, a dotted key that clashes, or bad JSON text.
    """
    out: dict[str, Any] = {}
    for key in dict.fromkeys(query.keys()):
        values = query.getall(key)
        parts = key.split(".")
        node: dict[str, Any] = out
        node_model: type[BaseModel] | None = model
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InvalidParameter(f"parameter '{key}' clashes with another parameter")
            info = _field(node_model, part)
            node, node_model = child, _nested_model(info.annotation) if info else None
        last = parts[-1]
        info = _field(node_model, last)
        kind = _container_kind(info.annotation) if info is not None else "scalar"
        if kind == "scalar":
            if len(values) > 1:
                raise InvalidParameter(f"parameter '{key}' is given more than once")
            node[last] = values[0]
        elif kind == "list":
            if len(values) == 1 and values[0].lstrip().startswith("["):
                node[last] = _json_text(key, values[0])
            else:
                node[last] = [_json_text(key, v) if v.lstrip()[:1] == "{" else v for v in values]
        else:
            if len(values) > 1:
                raise InvalidParameter(f"parameter '{key}' is given more than once")
            node[last] = _json_text(key, values[0]) if values[0].lstrip()[:1] == "{" else values[0]
    return out


def body_params(body: bytes) -> dict[str, Any]:
    """The raw parameters in a POST body: a JSON object (an empty body is no parameters).

    Raises:
        InvalidParameter: the body is not a JSON object.
    """
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise InvalidParameter("the request body must be a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidParameter("the request body must be a JSON object")
    return data


async def invoke_request(
    op: Operation, request: web.Request, extra: dict[str, Any] | None = None
) -> Outcome[Any]:
    """Run `op` on one request's parameters (the query string for GET, the JSON object body
    for POST, plus `extra` from the route's path) off the event loop; returns its outcome.

    Raises:
        VaultAgentError: as the operation, or its parameters (see body_params, request_body).
    """
    ctx = request.app[CTX_KEY]
    # The CLI says it is the caller, so that errors name its flags, not query parameters.
    surface: Surface = "cli" if request.headers.get(SURFACE_HEADER) == "cli" else "http"
    if request.method == "GET":  # a POST op with http_both takes the query string by GET too
        raw = {**params_from_query(op.params, request.query), **(extra or {})}
        return await _invoke(op, ctx, raw, surface, request.app[HINTS_KEY])
    async with request_body(request) as raw_body:  # the body budget is held while it runs
        raw = {**body_params(raw_body), **(extra or {})}
        return await _invoke(op, ctx, raw, surface, request.app[HINTS_KEY])


async def _invoke(
    op: Operation, ctx: AppContext, raw: dict[str, Any], surface: Surface, hints: Hints
) -> Outcome[Any]:
    """`invoke` in a worker thread; on the CLI's behalf, a parameter error in the CLI's words."""
    try:
        return await asyncio.get_running_loop().run_in_executor(None, invoke, op, ctx, raw, surface)
    except PARAMETER_ERRORS as exc:
        if surface != "cli":
            raise
        raise hints.for_cli(exc) from None
