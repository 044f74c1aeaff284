"""`generate`'s command line as read, by typer or by the fast reader of a plain line, in one shape.

Both readers hand over the options they found by option name (the names of parameters.GENERATE_OPTIONS),
with the values as the command line spelled them, so adding a parameter touches neither reader: its table
row gives both the flag, and config.build the code that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Union

from cmp.inputs import parameters

if TYPE_CHECKING:
    from cmp.inputs.config import Config

Given = Union[str, tuple[str, ...]]  # one value, or the values of a repeated option


class GenerateOptions(NamedTuple):
    """APP_DIR and the options given on the command line, sorted by option name; and the seconds of the
    deadline already spent before this process could start helm (a failed hand-over to the warm process)."""

    app_dir: Path = Path(".")
    given: tuple[tuple[str, Given], ...] = ()
    spent: float = 0.0

    def resolve(self, env: Mapping[str, str]) -> Config:
        """The run's configuration: flags over Application parameters over plugin env over defaults."""
        from cmp.inputs import config

        flags: dict[str, parameters.Value] = {}
        for name, value in self.given:
            option = parameters.BY_OPTION[name]
            if option.kind == "map":
                items = value if isinstance(value, tuple) else (value,)
                flags[name] = parameters.parse_pairs(items, option.flags[0])
            else:
                flags[name] = value
        built = config.build(self.app_dir, flags, env)
        return built._replace(spent=self.spent) if self.spent else built


def options(app_dir: Path, given: Mapping[str, Given | None]) -> GenerateOptions:
    """The options of a command line; an option absent (None, or no repeat) is left out."""
    found = tuple(sorted((name, value) for name, value in given.items() if value is not None and value != ()))
    return GenerateOptions(app_dir, found)
