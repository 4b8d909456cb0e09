"""How an error's message names parameters: words, some of them `Mention`s of a parameter.

`errors.VaultAgentError.about` and `.naming` build them; a transport renders them with its
own `Spelling` (`api/surface_names.py`), the errors' default is `mcp_spelling`, the core's
names. So no message is ever searched for a parameter's name to replace it.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    """A parameter a message names: the core's name, as the sentence's subject (`lead`:
    `parameter 'limit'`, `option --limit`) or inside it (`'limit'`, `--limit`)."""

    name: str
    lead: bool


Words = tuple[str | Mention, ...]
Spelling = Callable[[Mention], str]


def mcp_spelling(mention: Mention) -> str:
    """A parameter as the core names it (the MCP surface's spelling)."""
    return f"parameter '{mention.name}'" if mention.lead else f"'{mention.name}'"


def worded(template: str, values: dict[str, object]) -> Words:
    """A template's words: each `{name}` field a mention of parameter `name` (`{name:lead}`
    as the subject), each field given in `values` its value as text.

    Raises:
        ValueError: a parameter's field with a format other than `lead`.
    """
    words: list[str | Mention] = []
    for literal, field, spec, _conversion in string.Formatter().parse(template):
        if literal:
            words.append(literal)
        if field is None:
            continue
        if field in values:
            words.append(format(values[field], spec or ""))
        elif spec in ("", "lead"):
            words.append(Mention(field, lead=spec == "lead"))
        else:
            raise ValueError(f"a parameter's field takes no format but 'lead': {{{field}:{spec}}}")
    return tuple(words)


def rendered(words: Words, spelling: Spelling) -> str:
    """The message `words` make with each mention spelled by `spelling`."""
    return "".join(w if isinstance(w, str) else spelling(w) for w in words)
