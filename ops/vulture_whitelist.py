# Names ops/deadcode.py (vulture) cannot see used, each with the reason. vulture matches by
# name, so one line covers every definition of that name. Never imported or run (the `_.x`
# lines are vulture's whitelist format; ruff and mypy skip this file, see pyproject.toml).
# Before adding a line, check the code is really alive: delete dead code instead.

# Frameworks call these by name.
_.handle_error  # aiohttp RequestHandler override (api/http_limits.py)
_.on_any_event  # watchdog FileSystemEventHandler override (indexer/watcher.py)
_.debug  # logging.Logger override that silences markdown-it's rule logs (indexer/markdown.py)
_.__getattr__  # module __getattr__ (PEP 562): lazy `cli.main.app`, arrow schemas in contracts
_.__signature__  # read by inspect/typer to build a command's options (cli/remote.py, a test)
_.metavar  # click prints it in help (cli/help_format.py)
_.model_config  # pydantic reads it when the class is built
_.exc_type  # __aexit__ protocol arguments (api/stdio_guard.py)
_.tb
_.show_version  # typer option; its callback does the work (cli/root.py)
_.handle_starttag  # html.parser.HTMLParser override (tests/web/pagekit.py)
_.handle_startendtag  # html.parser.HTMLParser override (tests/web/test_note_render.py)
# markdown-it-py's renderer calls its rules by token type (web/note_render.py _PageRenderer)
_.heading_open
_.heading_close
_.blockquote_open
_.blockquote_close
_.link_open
_.link_close
_.image
_.th_open
_.td_open
_.validateLink  # markdown-it-py's link check, replaced on the parser (web/note_render.py)
_.do_GET  # http.server handler overrides (tests/web/test_browser.py: a foreign origin)
_.log_message

# onnxruntime's SessionOptions and onnx's ModelProto: set by name, read by the library
# (semantic/e5_encoder.py, semantic/e5_build.py).
_.intra_op_num_threads
_.inter_op_num_threads
_.log_severity_level
_.graph_optimization_level
_.enable_mem_pattern
_.ir_version
# The encoder API's weights hash (semantic/encoder.py Encoder): what sem-quality's
# benchmarks and a caller record beside vectors; the product keys files by model_id.
_.weights_sha256

# Fields written by attribute and read by serialization (model_dump / asdict), not by name.
_.diff_truncated  # pydantic field set after the plan is made (conversations/undo_plan.py)
_.editor_saves  # ops/race_trial.py Tally, printed with asdict
_.lost_updates
_.false_conflicts

# tasks-core's first commit, merged early into tasks-write for the line syntax; its later
# commits (the tasks index, vault_tasks) use these (remove the lines when that merges).
_.TaskRow
_.OPEN_TYPES

# Read by a child process's script a test runs (tests/semantic/test_failures.py).
_.model_failed

# tasks-lang's ```tasks block reader, merged into tasks-core for its date phrases; tasks-lang
# wires it into vault_tasks(block=…) (query/tasks/blocks.py).
_.read_block
