"""`python -m vault_agent`: the console script, for a caller that holds an interpreter rather
than a PATH (tests run the CLI with `sys.executable -m vault_agent`)."""

from vault_agent.cli.main import run

run()
