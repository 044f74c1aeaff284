"""The fleet policy (chartshare-policy.yaml): what the platform team decides for every app of a project, read
as strictly as chartshare.yaml, with every error naming the policy file and line.

One sidecar serves every team; the policy is its own file (mounted from a ConfigMap), never a tenant's. A
malformed policy fails every render: a policy that quietly did nothing would let every tenant decide what
the platform meant to.
"""

from __future__ import annotations

import fnmatch
from typing import NamedTuple

import yaml

from cmp import goyaml
from cmp.errors import ConfigError
from cmp.model import DEFAULT_PROJECT
from cmp.ownership.reader import Reader
from cmp.ownership.rules import compose, read_match, read_rule
from cmp.ownership.ruleset import API_VERSION, Match, Rule

KIND = "ChartSharePolicy"
TOP_KEYS = ("apiVersion", "kind", "projects")
PROJECT_KEYS = ("match", "rules", "forbid", "protect", "allowRepoRules")


class Located(NamedTuple):
    """One `forbid` or `protect` entry: a match, and where it is written."""

    position: int
    line: int
    match: Match


class ProjectPolicy(NamedTuple):
    """One entry of `projects:`: what the apps of the AppProjects its globs name may and may not decide."""

    display: str  # the policy file as messages name it
    position: int
    line: int
    globs: tuple[str, ...]
    rules: tuple[Rule, ...]
    forbid: tuple[Located, ...]
    protect: tuple[Located, ...]
    allow_repo_rules: bool = True

    @property
    def place(self) -> str:
        return f"projects[{self.position}]"

    @property
    def label(self) -> str:
        """`chartshare-policy.yaml:4: projects[0]`: where a message about the entry sends the reader."""
        return f"{self.display}:{self.line}: {self.place}"

    def at(self, line: int) -> str:
        return f"{self.display}:{line}"


class Policy(NamedTuple):
    """A validated policy file."""

    display: str
    projects: tuple[ProjectPolicy, ...]

    def entry_for(self, project: str) -> ProjectPolicy | None:
        """The first entry whose `match` globs the AppProject's name; None when none does."""
        name = project or DEFAULT_PROJECT
        return next((entry for entry in self.projects if any(fnmatch.fnmatchcase(name, g) for g in entry.globs)), None)


def parse(text: str, display: str) -> Policy:
    """The policy in `text`; ConfigError naming `display`, the line and the place of the first problem."""
    node = compose(text, display)
    if node is None:
        raise ConfigError(
            f"{display}:1: the policy file is empty; it needs apiVersion: {API_VERSION}, kind: {KIND} and projects:"
        )
    reader = Reader(display, goyaml.GoLoader(""))
    top = reader.mapping(node, "", TOP_KEYS)
    for key, expected in (("apiVersion", API_VERSION), ("kind", KIND)):
        if key not in top:
            raise reader.error(node, "", f"missing {key}: {expected}")
        value = reader.string(top[key], key)
        if value != expected:
            raise reader.error(top[key], key, f"{value!r} is not supported; use {expected!r}")
    if "projects" not in top:
        raise reader.error(node, "", "missing `projects:`; list the AppProjects this policy decides for")
    projects = reader.items(top["projects"], "projects", lambda n, w: _project(reader, n, w))
    return Policy(display, projects)


def _project(reader: Reader, node: yaml.Node, where: str) -> ProjectPolicy:
    entries = reader.mapping(node, where, PROJECT_KEYS)
    if "match" not in entries:
        raise reader.error(node, where, "missing `match:`; name the AppProjects (globs) this entry is for")
    globs = reader.globs(entries["match"], f"{where}.match")

    def located(key: str) -> tuple[Located, ...]:
        if key not in entries:
            return ()
        return reader.items(
            entries[key],
            f"{where}.{key}",
            lambda n, w: Located(
                int(w.rpartition("[")[2].rstrip("]")), n.start_mark.line + 1, read_match(reader, n, w)
            ),
        )

    rules = (
        reader.items(entries["rules"], f"{where}.rules", lambda n, w: read_rule(reader, n, w))
        if "rules" in entries
        else ()
    )
    allow = (
        reader.scalar(entries["allowRepoRules"], f"{where}.allowRepoRules", bool, "true or false")
        if "allowRepoRules" in entries
        else True
    )
    return ProjectPolicy(
        display=reader.display,
        position=int(where.rpartition("[")[2].rstrip("]")),
        line=node.start_mark.line + 1,
        globs=globs,
        rules=rules,
        forbid=located("forbid"),
        protect=located("protect"),
        allow_repo_rules=allow,
    )
