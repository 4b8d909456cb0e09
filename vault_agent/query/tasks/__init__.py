"""Tasks: the task rows of a snapshot, `vault_tasks`, and the Tasks plugin's query language."""
