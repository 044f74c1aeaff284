"""What the API server accepts as an object's name, per kind: the check every new name must pass.

A rename builds a name from a template (`{release}-{name}`), so it can grow past a limit or pick up a
character the kind forbids; the API server would then reject the object at sync time, long after the
render looked fine. The rules are data, taken from Kubernetes' validation code (`ValidateXName` in
pkg/apis/*/validation) and the limits that labels impose on a few kinds.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from cmp.model import GroupKind

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class NameRule(NamedTuple):
    """A naming rule: the pattern a name must fit, its longest length, and prefixes the system keeps."""

    short: str
    description: str
    pattern: re.Pattern[str] | None  # None: a path segment (anything but '/', '%', '.' and '..')
    max_length: int | None
    why_max: str = ""
    reserved_prefixes: tuple[str, ...] = ()

    def matches(self, name: str) -> bool:
        """Whether `name` has the rule's syntax (its length aside)."""
        return self.pattern is not None and self.pattern.fullmatch(name) is not None

    def problem(self, name: str) -> str | None:
        """Why `name` breaks the rule, or None when it fits."""
        if not name:
            return "it is empty"
        if self.max_length is not None and len(name) > self.max_length:
            limit = (
                f"this kind allows {self.max_length}: {self.why_max}"
                if self.why_max
                else (f"a {self.short} has at most {self.max_length}")
            )
            return f"it is {len(name)} characters long; {limit}"
        if self.pattern is None:
            if name in (".", "..") or "/" in name or "%" in name:
                return f"a {self.description} may not be '.' or '..' or contain '/' or '%'"
        elif not self.pattern.fullmatch(name):
            return f"it is not a {self.description}"
        for prefix in self.reserved_prefixes:
            if name.startswith(prefix):
                return f"names starting with {prefix!r} are reserved for the system"
        return None


DNS_SUBDOMAIN = NameRule(
    "DNS-1123 subdomain",
    "DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)",
    _DNS_SUBDOMAIN,
    253,
)
DNS_LABEL = NameRule(
    "DNS-1123 label",
    "DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit)",
    _DNS_LABEL,
    63,
)
DNS_1035_LABEL = NameRule(
    "DNS-1035 label",
    "DNS-1035 label (lower-case letters, digits and '-', starting with a letter, ending with a letter or digit)",
    _DNS_1035_LABEL,
    63,
)
PATH_SEGMENT = NameRule("path segment name", "path segment name", None, None)

# Kinds whose names follow another rule than the DNS-1123 subdomain most kinds (custom resources included) use.
NAME_RULES: dict[GroupKind, NameRule] = {
    ("", "Namespace"): DNS_LABEL,
    ("", "Service"): DNS_1035_LABEL,
    ("rbac.authorization.k8s.io", "ClusterRole"): PATH_SEGMENT,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): PATH_SEGMENT,
    ("rbac.authorization.k8s.io", "Role"): PATH_SEGMENT,
    ("rbac.authorization.k8s.io", "RoleBinding"): PATH_SEGMENT,
    ("batch", "Job"): NameRule(
        DNS_SUBDOMAIN.short,
        DNS_SUBDOMAIN.description,
        _DNS_SUBDOMAIN,
        63,
        "the name is copied into the job-name label of its pods, and label values have at most 63",
    ),
    ("batch", "CronJob"): NameRule(
        DNS_SUBDOMAIN.short,
        DNS_SUBDOMAIN.description,
        _DNS_SUBDOMAIN,
        52,
        "the Jobs it creates add an 11-character suffix and must stay within 63",
    ),
    ("apps", "StatefulSet"): NameRule(
        DNS_SUBDOMAIN.short,
        DNS_SUBDOMAIN.description,
        _DNS_SUBDOMAIN,
        52,
        "its pods' controller-revision-hash label is <name>-<hash of up to 10 characters>, at most 63",
    ),
    ("scheduling.k8s.io", "PriorityClass"): NameRule(
        DNS_SUBDOMAIN.short, DNS_SUBDOMAIN.description, _DNS_SUBDOMAIN, 253, reserved_prefixes=("system-",)
    ),
}


def rule_for(group: str, kind: str) -> NameRule:
    return NAME_RULES.get((group, kind), DNS_SUBDOMAIN)
