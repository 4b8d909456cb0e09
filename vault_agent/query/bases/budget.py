"""The bound on one evaluation's work: steps, allocated items, regex time, formula depth.

Every node evaluated, every element a method visits and every comparison a `contains` or
`sort` makes is a step; every character of a string and every element of a list or object
an evaluation makes is an allocated item, charged before it is made (so `"x".repeat(1e9)`
is refused without allocating). A regex call may run at most `regex_seconds` (the `regex`
package's own `timeout=`, checked inside its matcher, so catastrophic backtracking stops
there). Formulas evaluated for another formula share their caller's budget and add their
tree depth to `depth`, bounded by `max_depth` (Python's recursion stays far from its limit).

One `Budget` per evaluation by default; bases-run may pass one `Budget` to all of a row's
evaluations (its filters and formulas) so a row has one bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_agent.query.bases.expr_ast import NOWHERE, Position
from vault_agent.query.bases.expr_errors import BudgetExceeded


@dataclass(frozen=True, slots=True)
class Limits:
    max_steps: int = 200_000
    max_items: int = 2_000_000  # characters + list/object elements made by one evaluation
    max_string: int = 1_000_000  # characters of one string
    max_list: int = 100_000  # elements of one list
    regex_seconds: float = 0.25  # one regex call
    # tree depth of an evaluation and the formulas it references: about four Python frames
    # a level, so at most ~520 frames of Python's 1,000
    max_depth: int = 128


DEFAULT_LIMITS = Limits()


class Budget:
    """The counters of one evaluation (or of one row, when bases-run shares it)."""

    __slots__ = ("limits", "steps", "items", "depth")

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.steps = 0
        self.items = 0
        self.depth = 0

    def step(self, count: int = 1, pos: Position = NOWHERE) -> None:
        """Charge `count` steps.

        Raises:
            BudgetExceeded: past `max_steps`.
        """
        self.steps += count
        if self.steps > self.limits.max_steps:
            raise BudgetExceeded(
                f"the evaluation took more than {self.limits.max_steps} steps (a loop over too much data?)",
                pos,
            )

    def allocate(self, count: int, pos: Position = NOWHERE, *, string: bool = False) -> None:
        """Charge `count` items before making a string (`string=True`) or list of that size.

        Raises:
            BudgetExceeded: one value or the evaluation's total would pass its bound.
        """
        single = self.limits.max_string if string else self.limits.max_list
        if count > single:
            what = "characters" if string else "elements"
            raise BudgetExceeded(f"a value of more than {single} {what} would be made", pos)
        if self.items + count > self.limits.max_items:
            raise BudgetExceeded(f"the evaluation would make more than {self.limits.max_items} items", pos)
        self.items += count

    def enter(self, levels: int, pos: Position = NOWHERE) -> None:
        """Go `levels` deeper (a formula's tree evaluated for another).

        Raises:
            BudgetExceeded: past `max_depth`.
        """
        if self.depth + levels > self.limits.max_depth:
            raise BudgetExceeded(f"formulas nest deeper than {self.limits.max_depth} levels", pos)
        self.depth += levels

    def leave(self, levels: int) -> None:
        """Come back up `levels` (after the formula's evaluation, raised or not)."""
        self.depth -= levels
