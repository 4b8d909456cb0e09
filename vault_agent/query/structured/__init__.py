"""Structured queries (`vault_query`, and the filters of `search` / `vault_search`).

Filters (`filters.py`) and Dataview's query language (`dql_parse.py` → `dql_compile.py`)
compile into one small typed plan (`plan.py`); the plan renders parameterised SQL over the
pinned snapshot's `notes`, `props` and `links` tables (`sql.py`); `run.py` answers from it.
Nothing in a query is ever executed as code: table columns of a DQL query are evaluated by
a small interpreter over the parsed expression (`evaluate.py`; the values it reads are rebuilt by `display.py`).
"""
