"""docs/rules.md is checked against the code: every key, placeholder, action, reference row and naming rule
is documented, every example file loads, and every stderr excerpt is one chartshare really prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cmp import name_rules
from cmp.ownership import policy, rules
from cmp.ownership.reference_fields import NAME_REFERENCES, SELECTOR_REFERENCES, NameReference, SelectorReference
from conftest import ROOT, TESTS

DOCS = ROOT / "docs" / "rules.md"
TEXT = DOCS.read_text(encoding="utf-8")
BLOCKS = re.findall(r"^ *```(\w*)\n(.*?)^ *```", TEXT, flags=re.M | re.S)


def _normalise(line: str) -> str:
    """File paths and rule positions differ between the docs' story and the test cases."""
    line = re.sub(r"[\w./-]*chartshare\.yaml:\d+: rules\[\d+\]", "chartshare.yaml:N: rules[i]", line.strip())
    return line


def test_the_docs_have_examples() -> None:
    assert len([body for lang, body in BLOCKS if lang == "yaml"]) >= 8


@pytest.mark.parametrize("body", [body for lang, body in BLOCKS if lang == "yaml" and "kind: ChartShare\n" in body])
def test_every_chartshare_yaml_in_the_docs_loads(body: str) -> None:
    rules.parse(body, Path("chartshare.yaml"), "docs/rules.md")


@pytest.mark.parametrize("body", [body for lang, body in BLOCKS if lang == "yaml" and "kind: ChartSharePolicy" in body])
def test_every_policy_in_the_docs_loads_and_names_every_key(body: str) -> None:
    read = policy.parse(body, "docs/rules.md")
    assert read.projects
    for key in (*policy.TOP_KEYS, *policy.PROJECT_KEYS):
        assert key in TEXT


@pytest.mark.parametrize(
    "word",
    [
        *rules.TOP_KEYS,
        *rules.CHART_KEYS,
        *rules.RULE_KEYS,
        *rules.MATCH_KEYS,
        *rules.REFERENCE_KEYS,
        *rules.OTHERS_CHOICES,
        *rules.UNOWNED_CHOICES,
        *rules.CACHE_CHOICES,
        *(f"{{{placeholder}}}" for placeholder in rules.PLACEHOLDERS),
    ],
)
def test_every_key_choice_and_placeholder_is_documented(word: str) -> None:
    assert f"`{word}`" in TEXT or f"{word}:" in TEXT


@pytest.mark.parametrize("row", [*NAME_REFERENCES, *SELECTOR_REFERENCES], ids=lambda row: row.id)
def test_every_reference_row_is_in_the_docs_table(row: NameReference | SelectorReference) -> None:
    assert f"| `{row.id}` |" in TEXT


@pytest.mark.parametrize("kind", sorted({kind for _, kind in name_rules.NAME_RULES}))
def test_every_special_naming_rule_is_documented(kind: str) -> None:
    assert re.search(rf"^\|[^\n]*\b{kind}\b[^\n]*\|", TEXT, flags=re.M), kind


def test_every_stderr_excerpt_is_what_chartshare_prints() -> None:
    printed = {
        _normalise(line)
        for expected in (TESTS / "cases" / "generate").glob("*/expected.err")
        for line in expected.read_text(encoding="utf-8").splitlines()
    }
    excerpts = [
        _normalise(line)
        for lang, body in BLOCKS
        if lang == ""
        for line in body.splitlines()
        if line.strip().startswith("chartshare:")
    ]
    assert len(excerpts) >= 10
    missing = [line for line in excerpts if line not in printed]
    assert not missing, missing


def test_the_readme_points_at_the_rules_docs() -> None:
    assert "docs/rules.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_policy_worked_example_is_the_example_fleets_own() -> None:
    """docs/rules.md "Policy" shows examples/fleet-policy's policy as it is (tests/generate and tests/check
    run that fleet on both helm majors)."""
    assert (ROOT / "examples" / "fleet-policy" / "chartshare-policy.yaml").read_text() in TEXT
