"""Safe agent write tools: create, write, replace, edit, move, delete, mkdir, stat.

Every change goes through one pipeline (`pipeline.py`): policy check → write lock →
descriptor-relative open of the parent (no symlinks) → precondition (`expected_sha256`) →
atomic replace (temp + fsync + rename + dir fsync) → read-back verification → event log.
Transports live in `vault_agent/api/ops/files.py` and `agent_files.py`.
"""
