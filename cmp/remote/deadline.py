"""One time budget for every network call and helm call of a command.

Argo CD gives init and generate 60 s together and kills the plugin without a word at the end; a command
that spends its budget must stop and say so while there is still time to print the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cmp.errors import RemoteError

MARGIN = 0.5  # seconds kept back to report the problem


@dataclass(slots=True)
class Deadline:
    """`seconds` from creation; `hint` says what to do when they run out, `budget` whose seconds they are."""

    seconds: float
    hint: str = "vendor the dependencies in charts/ or let the cache warm up"
    budget: str = "for init; Argo CD kills the plugin at 60 s"
    start: float = field(default_factory=time.monotonic)

    def left(self, what: str) -> float:
        """The seconds still available for `what`; RemoteError when too few are left to use."""
        remaining = self.seconds - (time.monotonic() - self.start)
        if remaining <= MARGIN:
            raise self.spent(what)
        return remaining

    def spent(self, what: str) -> RemoteError:
        return RemoteError(f"{what}: out of time ({self.seconds:g} s {self.budget}); {self.hint}")
