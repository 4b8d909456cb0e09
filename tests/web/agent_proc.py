"""An agent's MCP session in its own process, for the browser tests: the real SDK client over
Streamable HTTP (no elicitation: its questions wait on the reply channel). One JSON line
per call on stdin `{"id", "tool", "arguments"}`; one per answer on stdout `{"id",
"is_error", "data"}`. Calls run concurrently, so a question can wait while others go on.

    python tests/web/agent_proc.py URL TOKEN
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    hc = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300)
    async with hc, Client(streamable_http_client(url + "/mcp", http_client=hc), mode="legacy") as client:
        print(json.dumps({"ready": True}), flush=True)

        async def one(request: dict[str, Any]) -> None:
            result = await client.call_tool(request["tool"], request["arguments"])
            data = (result.structured_content or {}).get("data")
            print(
                json.dumps(
                    {
                        "id": request["id"],
                        "is_error": result.is_error,
                        "data": data,
                        "text": "" if data is not None else str(result.content),
                    }
                ),
                flush=True,
            )

        tasks = set()
        while line := await reader.readline():
            task = asyncio.create_task(one(json.loads(line)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
