"""The reader chartshare.yaml's loaders share: composed YAML nodes walked so that every error carries the
file, the line and the place in the file."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import yaml

from cmp import goyaml
from cmp.errors import ConfigError

T = TypeVar("T")


class Reader:
    """Walks the composed YAML nodes, so every error can carry the line it is about."""

    def __init__(self, display: str, loader: goyaml.GoLoader) -> None:
        self.display = display
        self.loader = loader

    def error(self, node: yaml.Node, where: str, message: str) -> ConfigError:
        prefix = f"{self.display}:{node.start_mark.line + 1}"
        return ConfigError(f"{prefix}: {where}: {message}" if where else f"{prefix}: {message}")

    def mapping(self, node: yaml.Node, where: str, allowed: Sequence[str]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, where, f"must be a mapping, got {describe(node)}")
        entries: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else ""
            if key not in allowed or not isinstance(key_node, yaml.ScalarNode):
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; valid keys: {', '.join(allowed)}"
                raise self.error(key_node, where, f"unknown key {key!r}{suggestion}")
            if key in entries:
                raise self.error(key_node, where, f"key {key!r} appears twice")
            entries[key] = value_node
        return entries

    def construct(self, node: yaml.Node, where: str) -> Any:
        """The node's value; an explicit tag PyYAML cannot build (`!foo`, `!!float abc`) is the user's error."""
        try:
            return self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as error:
            problem = getattr(error, "problem", None) or str(error)
            raise self.error(node, where, f"cannot read {node.tag!r} value: {problem}") from None

    def scalar(self, node: yaml.Node, where: str, kind: type[T], what: str) -> T:
        value = self.construct(node, where) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.error(node, where, f"must be {what}, got {describe(node)}")
        return value

    def string(self, node: yaml.Node, where: str) -> str:
        return self.scalar(node, where, str, "a string")

    def choice(self, node: yaml.Node, where: str, choices: Sequence[str]) -> str:
        value = self.string(node, where)
        if value not in choices:
            raise self.error(node, where, f"{value!r} is not valid; choose one of: {', '.join(choices)}")
        return value

    def glob(self, node: yaml.Node, where: str) -> str:
        value = self.string(node, where)
        if _bad_glob(value):
            raise self.error(node, where, f"glob {value!r} has an unclosed or empty '[...]' class")
        return value

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, where, f"must be a list, got {describe(node)}")
        return list(node.value)

    def globs(self, node: yaml.Node, where: str) -> tuple[str, ...]:
        """An app-name glob, or a non-empty list of them."""
        if isinstance(node, yaml.SequenceNode):
            items = tuple(self.glob(item, f"{where}[{i}]") for i, item in enumerate(node.value))
            if not items:
                raise self.error(node, where, "must name at least one app")
            return items
        return (self.glob(node, where),)

    def items(self, node: yaml.Node, where: str, read: Callable[[yaml.Node, str], T]) -> tuple[T, ...]:
        return tuple(read(item, f"{where}[{i}]") for i, item in enumerate(self.sequence(node, where)))


def describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value else "nothing"


def _bad_glob(pattern: str) -> bool:
    depth_start = pattern.find("[")
    while depth_start != -1:
        end = pattern.find(
            "]", depth_start + 2 if pattern[depth_start + 1 : depth_start + 2] in "!]" else depth_start + 1
        )
        if end == -1 or end == depth_start + 1:
            return True
        depth_start = pattern.find("[", end + 1)
    return False


class AnyKey(tuple[str, ...]):
    """An `allowed` that admits every key (label maps)."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)
