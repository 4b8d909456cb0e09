"""The error table of SPEC.md is the whole mapping: code, HTTP status, CLI exit code."""

from __future__ import annotations

import logging

from vault_agent import errors

SPEC_TABLE = {
    "INVALID_PARAMETER": (400, 2),
    "INVALID_LIMIT": (400, 2),
    "INVALID_PATH": (400, 2),
    "UNAUTHORIZED": (401, 3),
    "FORBIDDEN": (403, 3),
    "NOT_FOUND": (404, 4),
    "INDEX_NOT_FOUND": (409, 4),
    "INDEX_INCOMPATIBLE": (409, 7),
    "CONFLICT": (409, 8),
    "INDEX_BUSY": (409, 5),
    "TOO_LARGE": (413, 2),
    "INVALID_QUERY": (400, 2),
    "SERVER_UNAVAILABLE": (None, 6),
    "INTERNAL": (500, 1),
    # Added by issue 9 (README "Decisions where the contract was open"):
    "PERMISSION_DENIED": (403, 3),
    "STORAGE_FULL": (507, 9),
    "STORAGE_READ_ONLY": (503, 9),
    # Added by SPEC this round (issue 23: a name that matches several notes):
    "AMBIGUOUS": (409, 2),
    # Added by issue 20 (README "Decisions"): the vault root itself is missing.
    "VAULT_UNAVAILABLE": (503, 9),
}


def test_table_matches_spec() -> None:
    got = {
        c.code: (c.http_status if c.code != "SERVER_UNAVAILABLE" else None, c.exit_code)
        for c in errors.ALL_ERRORS
    }
    assert got == SPEC_TABLE


def test_body_shape_and_roundtrip() -> None:
    err = errors.NotFound("'a.md' does not exist in the vault")
    body = err.to_body()
    assert body == {"error": {"code": "NOT_FOUND", "message": "'a.md' does not exist in the vault"}}
    back = errors.from_body(body)
    assert isinstance(back, errors.NotFound) and back.message == err.message


def test_internal_message_has_only_an_incident_id() -> None:
    err = errors.Internal("abc123")
    assert err.message == "internal error; see the server log for incident abc123"


def test_index_errors_say_what_to_run() -> None:
    assert "vault-agent index" in errors.IndexNotFound().message
    assert "vault-agent reindex" in errors.IndexIncompatible().message


def test_internal_error_logs_the_traceback_under_the_incident_id() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("vault_agent.test_internal_error")
    logger.propagate = False
    handler = Keep()
    logger.addHandler(handler)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            err = errors.internal_error(logger, "thing failed", op="probe")
    finally:
        logger.removeHandler(handler)
    assert isinstance(err, errors.Internal)
    [record] = records
    assert record.getMessage() == f"thing failed (incident {err.incident_id})"
    assert (record.__dict__["incident"], record.__dict__["code"], record.__dict__["op"]) == (
        err.incident_id,
        "INTERNAL",
        "probe",
    )
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
