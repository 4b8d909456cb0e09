"""The warnings a structured query can add to its answer (codes and wording in one place)."""

from __future__ import annotations

from vault_agent.query.structured.values import Lit

Warning_ = tuple[str, str]  # (code, message)

TYPE_MISMATCH = "TYPE_MISMATCH"
PARTIAL = "PARTIAL"


def mismatch_warning(field: str, value: Lit) -> Warning_:
    """A comparison the field's type can never satisfy (the condition matches no note)."""
    return (
        TYPE_MISMATCH,
        f"'{field}' cannot be compared with {value.describe()}; that condition matches no note",
    )


def data_mismatch_warning(field: str, value: Lit, notes: int) -> Warning_:
    """Notes whose value of `field` has another type than the compared constant."""
    which = "1 note holds" if notes == 1 else f"{notes} notes hold"
    return (
        TYPE_MISMATCH,
        f"'{field}': {which} a value that is not {value.describe()}; such values never match this comparison",
    )


def const_mismatch_warning(left: Lit, right: Lit) -> Warning_:
    """Two constants of different types compared (`"abc" > 3`)."""
    return (
        TYPE_MISMATCH,
        f"{left.describe()} cannot be compared with {right.describe()}; that condition is false",
    )
