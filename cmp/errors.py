"""The errors chartshare reports.

Every failure a user can cause or meet is one of these: the CLI prints its message as a single
`chartshare: error: ...` line on stderr, prints nothing on stdout and exits non-zero, because Argo CD
reads an empty stdout as "this application has no resources" and prunes accordingly.
"""

from __future__ import annotations


def shortened(text: str, limit: int) -> str:
    """`text` cut at its last word boundary within `limit` characters, ending in " ..."; a text with no
    boundary there is kept whole. A reason cut mid-word ("must spe") reads as a different word."""
    if len(text) <= limit:
        return text
    at = max(text.rfind(" ", 0, limit + 1), text.rfind("\n", 0, limit + 1))
    return text[:at].rstrip() + " ..." if at > 0 else text


class ChartShareError(Exception):
    """A problem reported to the user as one line; exit status 1."""

    exit_code = 1

    @property
    def problems(self) -> tuple[str, ...]:
        """What to tell the user, one line each."""
        return (str(self),)


class UsageError(ChartShareError):
    """The command line itself is wrong; exit status 2."""

    exit_code = 2


class BadInput(UsageError):
    """Several problems with what a command was given (check's manifests), all reported at once; exit 2."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.found = tuple(problems)

    @property
    def problems(self) -> tuple[str, ...]:
        return self.found


class ParameterError(ChartShareError):
    """An Application parameter or plugin env variable is unknown or malformed."""


class PathError(ChartShareError):
    """A chart, value file or config path is missing or escapes the repository root."""


class ConfigError(ChartShareError):
    """chartshare.yaml is malformed; the message names the file, line, rule and key."""


class PolicyError(ConfigError):
    """The fleet policy (the platform's file, not the app's) is missing or malformed; the message names its
    file and line. Every render fails with it; the Parameters tab says only where it is (cmp/parameters)."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where or message.partition(": ")[0]  # `chartshare-policy.yaml:12`, never its content


class HelmError(ChartShareError):
    """helm is missing, failed, timed out or printed something unusable."""


class RemoteError(ChartShareError):
    """A remote chart cannot be fetched or trusted: the repository, its credentials, the archive, the deadline."""


class ManifestError(ChartShareError):
    """helm's output holds a document Argo CD would reject."""


class RuleError(ChartShareError):
    """A rule cannot be applied to the resource it matched."""
