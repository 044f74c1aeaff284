"""Chart repository credentials, read from a file mounted from a Kubernetes Secret.

`CHARTSHARE_REPOSITORIES` names a YAML list of `{url, username, password, caFile, plainHttp, projects}`; among
the entries that serve the request's AppProject, the one whose URL is the longest prefix of a chart's
repository (at a `/` boundary, so `https://charts.example.com` never matches
`https://charts.example.com.evil.io`) supplies its credentials. The file is sidecar-wide, so every request
"presents" it: an entry's `projects:` (AppProject name globs, as Argo CD scopes a repository to a project)
is what authorises one team and not another; an entry without it serves every project. Nothing read here
is ever put in a message: errors name the file, the entry and the key, never a value.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from cmp.errors import ConfigError
from cmp.model import DEFAULT_PROJECT, Access

ENV = "CHARTSHARE_REPOSITORIES"
KEYS = ("url", "username", "password", "caFile", "plainHttp", "projects")
SCHEMES = ("https://", "http://", "oci://")


@dataclass(frozen=True, slots=True)
class Credential:
    """One repository entry; `index` locates it in messages (the password never appears in repr)."""

    url: str
    index: int
    username: str = ""
    password: str = field(default="", repr=False)
    ca_file: str = ""
    plain_http: bool = False
    projects: tuple[str, ...] = ()  # AppProject name globs this entry serves; () serves every project

    def serves(self, project: str) -> bool:
        """Whether an app of `project` may use this entry."""
        return not self.projects or any(fnmatch.fnmatchcase(project, glob) for glob in self.projects)

    @property
    def grant(self) -> str:
        """What the chart store keys a chart fetched with this entry by: its URL (one entry each) and user."""
        return f"entry {self.url.rstrip('/')} {self.username}"

    def covers(self, repository: str) -> bool:
        """True when `url` is a prefix of `repository` ending at a path boundary."""
        prefix = self.url.rstrip("/")
        target = repository.rstrip("/")
        return target == prefix or target.startswith(prefix + "/")

    @property
    def label(self) -> str:
        return f"entry [{self.index}] ({self.url})"


@dataclass(frozen=True, slots=True)
class Credentials:
    """All entries of the file, and the project of the request that reads them; `source` is the file name
    for messages."""

    entries: tuple[Credential, ...] = ()
    source: str = ""
    project: str = DEFAULT_PROJECT

    def find(self, repository: str) -> Credential | None:
        """The entry with the longest URL that covers `repository` among those serving the project, if any."""
        matching = [entry for entry in self.entries if entry.covers(repository) and entry.serves(self.project)]
        return max(matching, key=lambda entry: len(entry.url.rstrip("/")), default=None)

    def withheld(self, repository: str) -> str:
        """When no entry serving the project covers `repository` but one for other projects does: what to
        say (the entry, the file, the fix); else ""."""
        if self.find(repository) is not None:
            return ""
        other = [entry for entry in self.entries if entry.covers(repository)]
        if not other:
            return ""
        entry = max(other, key=lambda entry: len(entry.url.rstrip("/")))
        return (
            f"{entry.label} in {self.source} serves projects {', '.join(entry.projects)}, not {self.project}; "
            f"add {self.project} to its projects: if this project may use it"
        )

    def grant(self, repository: str) -> str:
        """The chart store's key for what this request fetches from `repository`: the entry it uses ("" for
        none). A stored chart is served only to a request whose grant is the same."""
        entry = self.find(repository)
        return "" if entry is None else entry.grant

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every password, so that helm's messages can be scrubbed before they reach the Argo CD UI."""
        return tuple(entry.password for entry in self.entries if entry.password)


def load(env: Mapping[str, str]) -> Credentials:
    """Read the file `CHARTSHARE_REPOSITORIES` points at, for the request's project; no variable means no
    credentials."""
    return load_for(Access.of(env))


def load_for(access: Access) -> Credentials:
    """The entries of the repositories file `access` names, as its project may use them."""
    location = access.repositories
    if not location:
        return Credentials(project=access.project)
    path = Path(location)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(
            f"{ENV}={location}: cannot read ({error.strerror}); mount the repository credentials Secret there "
            "or unset the variable"
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{ENV}={location}: not UTF-8 text") from None
    return parse(text, location, access.project)


def parse(text: str, source: str, project: str = DEFAULT_PROJECT) -> Credentials:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}{line}: not valid YAML") from None
    if root is None:
        return Credentials((), source, project)
    if not isinstance(root, yaml.SequenceNode):
        raise ConfigError(f"{source}: must be a list of {{url, username, password, caFile}} entries")
    entries = tuple(_entry(node, index, source) for index, node in enumerate(root.value))
    seen: dict[str, int] = {}
    for entry in entries:
        key = entry.url.rstrip("/")
        if key in seen:
            raise ConfigError(f"{source}: entries [{seen[key]}] and [{entry.index}] have the same url {entry.url}")
        seen[key] = entry.index
    return Credentials(entries, source, project)


def _entry(node: yaml.Node, index: int, source: str) -> Credential:
    where = f"{source}:{node.start_mark.line + 1}: entry [{index}]"
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"{where}: must be a mapping with url, username, password, caFile")
    values: dict[str, str | bool] = {}
    projects: tuple[str, ...] = ()
    for key_node, value_node in node.value:
        key = str(key_node.value)
        if key not in KEYS:
            hint = difflib.get_close_matches(key, KEYS, n=1)
            suggestion = f"did you mean {hint[0]!r}?" if hint else f"valid keys: {', '.join(KEYS)}"
            raise ConfigError(f"{where}: unknown key {key!r}; {suggestion}")
        if key == "projects":
            projects = _projects(value_node, f"{source}:{value_node.start_mark.line + 1}: entry [{index}]")
            continue
        if not isinstance(value_node, yaml.ScalarNode):
            raise ConfigError(f"{where}: {key} must be a single value")
        value = str(value_node.value)  # verbatim: a password `0123` must stay `0123`
        if key == "plainHttp":
            if value_node.value not in ("true", "false"):
                raise ConfigError(f"{where}: plainHttp must be true or false")
            values[key] = value_node.value == "true"
        else:
            values[key] = value
    url = values.get("url")
    if not isinstance(url, str) or not url.startswith(SCHEMES):
        raise ConfigError(f"{where}: url must start with one of {', '.join(SCHEMES)}")
    username, password = str(values.get("username", "")), str(values.get("password", ""))
    if bool(username) != bool(password):
        missing = "password" if username else "username"
        raise ConfigError(f"{where}: {missing} is missing (give both username and password, or neither)")
    ca_file = str(values.get("caFile", ""))
    if ca_file and not Path(ca_file).is_file():
        raise ConfigError(f"{where}: caFile {ca_file} does not exist; mount the CA bundle there")
    return Credential(url, index, username, password, ca_file, bool(values.get("plainHttp", False)), projects)


def _projects(node: yaml.Node, where: str) -> tuple[str, ...]:
    """`projects:`, a non-empty list of AppProject name globs (an empty list would serve no one: refused)."""
    fix = 'write a list of AppProject names or globs, e.g. projects: [team-a, "team-b-*"], or drop the key'
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise ConfigError(f"{where}: projects must be a non-empty list; {fix}")
    globs = []
    for item in node.value:
        if not isinstance(item, yaml.ScalarNode) or not str(item.value):
            raise ConfigError(f"{where}: projects: every item must be a project name or glob; {fix}")
        globs.append(str(item.value))
    return tuple(globs)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced by `***`."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
