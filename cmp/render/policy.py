"""The fleet policy's entry for one app: the policy parsed from the text the run's configuration holds,
the entry of the app's project chosen, and an app's rules refused where the entry allows none.

Every render asks before helm starts, so a malformed policy fails every render at once, and never after
helm's time was spent.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from cmp.errors import ConfigError, PolicyError

if TYPE_CHECKING:
    from cmp.inputs.config import Config
    from cmp.ownership.policy import Policy, ProjectPolicy
    from cmp.ownership.rules import Ownership


def policy_entry(config: Config, ownership: Ownership | None) -> ProjectPolicy | None:
    """The entry of the app's project (None without a policy, or when no entry names the project); a
    ConfigError naming the policy file and line when it is malformed, or naming chartshare.yaml and the
    entry when the app carries rules that the entry's `allowRepoRules: false` refuses."""
    if config.policy is None:
        return None
    entry = parsed(config.policy.text, config.policy.display).entry_for(config.project)
    if entry is not None and not entry.allow_repo_rules and ownership is not None and ownership.rules:
        first = ownership.rules[0]
        raise ConfigError(
            f"{ownership.display or ownership.path.name}:{first.line}: rules: the fleet policy's {entry.label} "
            f"sets allowRepoRules: false for project {config.project!r}: this app's chartshare.yaml may not "
            "carry rules; remove `rules:` (the policy decides) or ask the platform team"
        )
    return entry


@lru_cache(maxsize=4)
def parsed(text: str, display: str) -> Policy:
    """One parse per policy text in a process (check renders many apps under one policy)."""
    from cmp.ownership.policy import parse

    try:
        return parse(text, display)
    except PolicyError:
        raise
    except ConfigError as error:  # the platform's file, not the app's: said as such (cmp/parameters)
        raise PolicyError(str(error)) from None
