"""chartshare.yaml is loaded strictly: every error names the file, the line, the place and the value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cmp.errors import ConfigError
from cmp.model import Action
from cmp.ownership import rules

HEAD = "apiVersion: chartshare/v1\nkind: ChartShare\n"


def load(text: str) -> rules.Ownership:
    return rules.parse(text, Path("chartshare.yaml"), "chartshare.yaml")


def test_a_full_file_loads_into_frozen_rules() -> None:
    ownership = load(
        HEAD
        + """chart: ../../charts/app
owner: [dev-*]
unowned: strip
allowEmpty: true
clusterScopedKinds: [example.io/Widget, Gadget]
rules:
  - match: {group: "", kind: Namespace, name: shoong, labels: {team: a}}
    owner: dev-shoong-notification
  - match: {kind: ClusterRole, name: "shoong-*"}
    others: rename
    renameTo: "{app}-{name}"
    patch:
      - {op: add, path: /metadata/labels/team, value: shoong}
"""
    )
    assert ownership.chart == "../../charts/app"
    assert ownership.unowned is Action.STRIP and ownership.allow_empty
    first, second = ownership.rules
    assert first.owners == ("dev-shoong-notification",) and first.others is Action.STRIP
    assert first.match.labels == (("team", "a"),) and first.line == 9
    assert second.others is Action.RENAME and second.rename_to == "{app}-{name}"
    assert second.patch == ({"op": "add", "path": "/metadata/labels/team", "value": "shoong"},)


def test_defaults() -> None:
    ownership = load(HEAD + "rules:\n  - match: {kind: ClusterRole}\n")
    assert ownership.chart == "." and ownership.unowned is Action.FAIL and not ownership.allow_empty
    assert ownership.rules[0].others is Action.KEEP and ownership.rules[0].rename_to == "{release}-{name}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "rules:\n  - match: {knd: Namespace}\n",
            r"chartshare.yaml:4: rules\[0\].match: unknown key 'knd'; did you mean 'kind'\?",
        ),
        ("ownr: x\n", r":3: unknown key 'ownr'; did you mean 'owner'\?"),
        ("unowned: drop\n", r":3: unowned: 'drop' is not valid; choose one of: fail, keep, strip"),
        ("allowEmpty: maybe\n", r":3: allowEmpty: must be true or false, got 'maybe'"),
        ("rules:\n  - owner: x\n", r":4: rules\[0\]: missing `match:`"),
        ("rules:\n  - match: {}\n", r"rules\[0\].match: is empty"),
        ("rules:\n  - match: {name: 'a[b'}\n", r"unclosed or empty"),
        ("rules:\n  - match: {kind: X}\n    others: move\n", r"rules\[0\].others: 'move' is not valid"),
        ("rules:\n  - match: {kind: X}\n    renameTo: '{name}'\n", r"used only with `others: rename`"),
        (
            "rules:\n  - match: {kind: X}\n    others: rename\n    renameTo: '{bogus}-{name}'\n",
            r"unknown placeholder \{bogus\}",
        ),
        ("rules:\n  - match: {kind: Namespace}\n    others: rename\n", r"cannot rename a Namespace"),
        ("rules:\n  - match: {kind: CustomResourceDefinition}\n    others: rename\n", r"cannot rename a Custom"),
        ("rules:\n  - match: {kind: X}\n    patch: [{op: add, path: metadata}]\n", r"not a JSON Pointer"),
        ("rules:\n  - match: {kind: X}\n    patch: [{op: add, path: /a}]\n", r"`add` needs a `value`"),
        ("rules:\n  - match: {kind: X}\n    patch: [{op: remove, path: /a, value: 1}]\n", r"not used by `remove`"),
        ("rules:\n  - match: {kind: X}\n    patch: [{op: frob, path: /a}]\n", r"'frob' is not valid"),
        ("rules:\n  - match: {kind: X}\n    owner: []\n", r"must name at least one app"),
        ("rules: {}\n", r"rules: must be a list, got a mapping"),
        ("clusterScopedKinds: ['a/b/C']\n", r"more than one '/': expected 'Kind' or 'group/Kind'"),
        ("references:\n  - {kind: ClusterRole, path: /spec/x}\n", r"missing `from`"),
        ("rules:\n  - match: {kind: X}\n    match: {kind: Y}\n", r"key 'match' appears twice"),
    ],
)
def test_bad_files_are_refused_with_line_and_place(body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(HEAD + body)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("kind: ChartShare\n", "missing apiVersion: chartshare/v1"),
        ("apiVersion: chartshare/v2\nkind: ChartShare\n", r"apiVersion: 'chartshare/v2' is not supported"),
        ("apiVersion: chartshare/v1\nkind: Other\n", r"kind: 'Other' is not supported"),
        ("rules: [\n", "not valid YAML"),
        ("- a\n", "must be a mapping, got a list"),
    ],
)
def test_wrong_header_or_syntax_is_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(text)


def test_aliases_are_refused_before_they_can_expand() -> None:
    bomb = HEAD + "x: &a [1, 1]\ny: &b [*a, *a]\nz: [*b, *b]\n"
    with pytest.raises(ConfigError, match=r":3: YAML anchors and aliases are not allowed"):
        load(bomb)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("chart: !foo x\n", r":3: chart: cannot read '!foo' value"),
        ("chart: !!python/name:os.system x\n", r":3: chart: cannot read 'tag:yaml.org,2002:python/name:os.system'"),
        ("chart: !!float abc\n", r":3: chart: cannot read"),
        (
            "rules:\n  - match: {kind: X}\n    patch: [{op: add, path: /a, value: !bad {}}]\n",
            r"rules\[0\].patch\[0\].value",
        ),
    ],
)
def test_explicit_tags_pyyaml_cannot_build_are_config_errors(body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load(HEAD + body)


def test_a_control_character_is_reported_on_its_line_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^chartshare.yaml:3: not valid YAML: unacceptable character #x0001") as info:
        load(HEAD + "owner: a\x01b\n")
    assert "\n" not in str(info.value)


def test_an_ownership_file_that_is_no_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "chartshare.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"chartshare.yaml: not a regular file"):
        rules.load(fifo, "chartshare.yaml")


def test_a_huge_ownership_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    big = tmp_path / "chartshare.yaml"
    with big.open("wb") as file:
        file.truncate(1 << 30)  # sparse: a GiB on paper, nothing on disk
    with pytest.raises(ConfigError, match=r"1073741824 bytes is too large for an ownership file"):
        rules.load(big, "chartshare.yaml")
