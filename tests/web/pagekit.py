"""Test kit of the web page: a signed-in raw HTTP client (cookie, CSRF token, Origin)."""

from __future__ import annotations

import http.client
import json
import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode

import httpx2
from api.serverkit import CANARY, ClosingClient, ServerThread
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
SETTINGS_NOTE = """---
title: Settings
tags: [setup, "#appearance"]
aliases:
  - Preferences
updated: 2026-01-05
---
# Settings

How the editor looks. See [[plan|the alpha plan]] and [[Missing note]]. %% a private remark %%

## Font size

| Option | Default | Range |
| :--- | ---: | :---: |
| font size | 16 | 10–32 |
| line height | ~~1.4~~ 1.5 | 1–3 |

```python
def font_size(zoom: float) -> int:
    return round(16 * zoom)  # <b>not bold</b>
```

> [!tip] Keyboard
> Ctrl + and Ctrl - change the size.

![[diagram.png]]
![[plan#Goals]]

- [x] pick a font
- [ ] check [[plan#Goals|the goals]]
"""
HOSTILE_MARKDOWN = """# Hostile markdown

[click me](javascript:alert(document.domain)) and [data](data:text/html,<script>alert(3)</script>)
and <a href="javascript:alert(4)">raw link</a> and <img src=x onerror="alert(5)">

![pixel](javascript:alert(6)) ![remote](https://example.com/x.png)

<script>alert(7)</script>

<div onclick="alert(8)">raw block</div>

[[javascript:alert(9)]] [[plan|<b onclick=alert(10)>x</b>]]

<style>body { display: none }</style>
"""
EXTRA_NOTES = {
    # Note text is untrusted HTML; it carries the canary that must never reach a log line.
    "projects/alpha/hostile.md": f"---\ntags: [web]\n---\n# Hostile {HOSTILE}\n\nlighthouse {HOSTILE} {CANARY}\n",
    "projects/alpha/sections.md": "# Top\n\nintro words\n\n## First part\n\nfirst body apples\n\n### Deeper\n\n"
    "deeper body pears\n\n## Second part\n\nsecond body plums\n",
    "projects/alpha/long.md": "# Long\n\n" + "".join(f"line {i} of a long section\n" for i in range(3000)),
    # A note that reads as a note: properties, a table, code, links, embeds, a callout.
    "resources/settings.md": SETTINGS_NOTE,
    "resources/manual.md": "Intro of the manual before any heading.\n\n# Part one\n\n"
    + "".join(
        f"Paragraph {i} of the manual, long enough to need more than one page.\n\n" for i in range(400)
    ),
    # Note text that tries to run script through Markdown: links, images, raw HTML.
    "projects/alpha/hostile-markdown.md": HOSTILE_MARKDOWN,
}
CSRF_RE = re.compile(r'<meta name="csrf-token" content="([^"]*)">')


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def element_tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    """Every element of a page as the browser's parser sees it: (tag, attributes)."""
    parser = _Tags()
    parser.feed(html)
    return parser.tags


class Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], text: str) -> None:
        self.status, self.header_list, self.text = status, headers, text
        self.headers = {k.lower(): v for k, v in headers}

    def cookies(self) -> list[str]:
        return [v for k, v in self.header_list if k.lower() == "set-cookie"]


def exchange(
    server: ServerThread,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Response:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return Response(resp.status, resp.getheaders(), resp.read().decode("utf-8"))
    finally:
        conn.close()


def sign_in_link(server: ServerThread) -> str:
    """A one-time sign-in link's path and query (`/sign-in?once=…`), as `vault-agent web` gets it."""
    made = exchange(server, "POST", "/sign-in/link", headers={"Authorization": f"Bearer {server.token}"})
    assert made.status == 200, made.text
    url = json.loads(made.text)["data"]["url"]
    prefix = f"http://127.0.0.1:{server.port}"
    assert url.startswith(prefix + "/sign-in?once="), url
    return str(url).removeprefix(prefix)


class PageClient:
    """A browser's side of the page, by hand: signs in with a one-time link, keeps the cookie."""

    def __init__(self, server: ServerThread) -> None:
        self.server = server
        self.origin = f"http://127.0.0.1:{server.port}"
        first = exchange(server, "GET", sign_in_link(server))
        assert (first.status, first.headers.get("location")) == (303, "/"), first.text
        self.set_cookie = first.cookies()[0]
        self.cookie = self.set_cookie.split(";", 1)[0]
        self.csrf = CSRF_RE.search(self.get("/").text).group(1)  # type: ignore[union-attr]

    def get(self, path: str, **headers: str) -> Response:
        return exchange(self.server, "GET", path, headers={"Cookie": self.cookie, **headers})

    def post(
        self,
        path: str,
        form: dict[str, Any],
        *,
        csrf: bool = True,
        origin: str | None = "",
        cookie: bool = True,
        **headers: str,
    ) -> Response:
        fields = dict(form)
        if csrf:
            fields["csrf"] = self.csrf
        hdrs = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        if cookie:
            hdrs["Cookie"] = self.cookie
        if origin is not None:
            hdrs["Origin"] = origin or self.origin
        return exchange(self.server, "POST", path, headers=hdrs, body=urlencode(fields).encode())


def agent_client(url: str, token: str, *, on_log: Any = None) -> ClosingClient:
    """A real SDK client over Streamable HTTP that cannot show forms (no elicitation): its
    questions wait on the reply channel, where the page answers them."""
    hc = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    client = Client(
        streamable_http_client(url + "/mcp", http_client=hc), mode="legacy", logging_callback=on_log
    )
    return ClosingClient(client, hc)
