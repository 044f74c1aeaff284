"""The values that flow through the pipeline: resource identity, decisions, and the remote chart an app names."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeAlias

GroupKind: TypeAlias = tuple[str, str]  # (API group, kind): "" is the core group


class ResourceId(NamedTuple):
    """What Argo CD tracks an object by: group, kind, namespace and name ("" for none)."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace}/{self.name}" if self.namespace else f"{kind} {self.name}"


class ClusterResourceId(NamedTuple):
    """An object on one destination cluster: what `check` compares apps by, since the same object sent to
    two clusters is no contention. (Of any scope: "cluster" is the destination, not cluster-scoped.)"""

    cluster: str
    group: str
    kind: str
    namespace: str
    name: str

    @classmethod
    def on(cls, cluster: str, resource: ResourceId) -> ClusterResourceId:
        return cls(cluster, *resource)

    @property
    def resource(self) -> ResourceId:
        """The identity Argo CD tracks the object by within its cluster."""
        return ResourceId(self.group, self.kind, self.namespace, self.name)

    def __str__(self) -> str:
        return str(self.resource)


def split_api_version(api_version: str) -> tuple[str, str]:
    """`apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`)."""
    group, _, version = api_version.rpartition("/")
    return group, version


class App(NamedTuple):
    """The Application being rendered, as Argo CD names it, and what helm was told."""

    name: str  # ARGOCD_APP_NAME: `<namespace>_<name>` for apps outside the control-plane namespace
    release: str
    namespace: str  # the destination namespace

    @property
    def dns_name(self) -> str:
        """`{app}` in renameTo: DNS names have no `_`."""
        return self.name.replace("_", "-")


class Action(enum.Enum):
    """What one app does with one resource."""

    KEEP = "keep"
    STRIP = "strip"
    RENAME = "rename"
    FAIL = "fail"


class PolicyRef(NamedTuple):
    """The fleet policy entry behind a decision: the platform team's word, which the app's own file
    cannot override."""

    place: str  # `projects[0].rules[1]`, `projects[2].forbid[0]`, `projects[0].protect[0]`
    at: str  # the policy file and the entry's line, `chartshare-policy.yaml:12`
    accepted: bool = False  # a strip the platform wrote itself (`forbid`, `others: strip`): never refused
    overrode: str = ""  # the app's own rule it overrode, located (`apps/x/chartshare.yaml:7: rules[0]`)

    @property
    def label(self) -> str:
        return f"{self.at}: {self.place}"


class Decision(NamedTuple):
    """The verdict on one resource for one app, with the rule and the reason behind it."""

    action: Action
    reason: str
    rule: int | None = None
    protect: bool = False
    rename_to: str | None = None
    patch: tuple[dict[str, Any], ...] = ()
    owners: tuple[str, ...] = ()  # the owner globs behind the verdict; () when nobody owns the object
    policy: PolicyRef | None = None  # the fleet policy entry that decided it (then `rule` is None), or protected it

    @property
    def origin(self) -> str:
        if self.rule is None and self.policy is not None:
            return f"policy {self.policy.place}"
        return f"rules[{self.rule}]" if self.rule is not None else "no rule"


# One exact chart version (SemVer 2, with the `v` helm tolerates): what a pin names, never a range.
EXACT_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
CHART_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # one path segment: a file name, never `..` or `a/b`
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
REMOTE_SCHEMES = ("https://", "http://", "oci://")


DEFAULT_PROJECT = "default"  # the project of an app naming none, and of a request without ARGOCD_APP_PROJECT_NAME


class Access(NamedTuple):
    """Whose credentials a request may use: the repositories file (CHARTSHARE_REPOSITORIES, "" for none) and
    the request's AppProject, which a `projects:` entry of that file must name to serve it."""

    repositories: str = ""
    project: str = DEFAULT_PROJECT

    @classmethod
    def of(cls, env: Mapping[str, str], project: str | None = None) -> Access:
        """The access of a request's environment (`project`, when given, is the Application's own)."""
        named = project if project is not None else env.get("ARGOCD_APP_PROJECT_NAME", "")
        return cls(env.get("CHARTSHARE_REPOSITORIES", ""), named or DEFAULT_PROJECT)


class RemoteChart(NamedTuple):
    """A chart from a Helm repository or an OCI registry, pinned to one version (and, if given, one .tgz)."""

    repository: str  # https:// or http:// Helm repository, or oci://host/path
    name: str
    version: str
    digest: str = ""  # `sha256:<hex>` of the chart's .tgz, or "" when not pinned

    @property
    def oci(self) -> bool:
        return self.repository.startswith("oci://")

    @property
    def label(self) -> str:
        """How messages name the chart: the OCI reference, or the chart and version in its repository."""
        if self.oci:
            return f"{self.repository.rstrip('/')}/{self.name}:{self.version}"
        return f"{self.name} {self.version} from {self.repository}"
