"""What a generator may read while check expands it: the templating style, the checkouts, the clusters.

Generators are pure where Argo CD's are: list, matrix and merge read nothing; git reads a checkout and
clusters the Secrets given with `--clusters`. A generator check cannot evaluate faithfully raises
Unevaluated with the reason, and the ApplicationSet (or that generator) is listed as skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cmp.check.fleet.repos import Repositories


class Unevaluated(Exception):
    """A generator check cannot evaluate offline; the message says which field and why."""


@dataclass(frozen=True, slots=True)
class ClusterSecret:
    """An Argo CD cluster Secret: what the clusters generator makes parameters from."""

    name: str
    server: str
    project: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Context:
    """The ApplicationSet's templating style and what its generators may read."""

    go_template: bool
    options: tuple[str, ...]
    repositories: Repositories
    clusters: tuple[ClusterSecret, ...] | None  # None: no --clusters given
    notes: set[str] = field(default_factory=set)  # said once per run (the git revision is ignored)
