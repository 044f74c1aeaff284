"""The documentation holds together: every relative link in README.md, SECURITY.md and docs/ leads to a file
of the repository (and, with an `#anchor`, to a heading of that page, by GitHub's slug rules), and the
README's table lists every page under docs/, so no page is out of a reader's reach."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^ *(```|~~~)")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_HTML_ID = re.compile(r"<a\s[^>]*\b(?:name|id)=\"([^\"]+)\"")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _prose(text: str) -> str:
    """The page without its fenced code blocks: neither their links nor their `#` lines count."""
    kept, fence = [], ""
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1) == fence:
                fence = ""
            kept.append("")
        elif opened:
            fence = opened.group(1)
            kept.append("")
        else:
            kept.append(line)
    return "\n".join(kept)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its rendered text lower-cased, every character but letters, marks,
    digits, `_`, `-` and spaces dropped, spaces turned into `-`."""
    text = _CODE_SPAN.sub(lambda code: code.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    kept = "".join(char for char in text.lower() if unicodedata.category(char)[0] in "LMN" or char in "_- ")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor GitHub gives a page: one per heading (a repeated one numbered -1, -2, ...) and explicit ids."""
    prose = _prose(page.read_text(encoding="utf-8"))
    found: set[str] = set(_HTML_ID.findall(prose))
    seen: dict[str, int] = {}
    for line in prose.splitlines():
        heading = _HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The link targets of a page's prose (inline, image and reference links), code spans left out."""
    prose = _prose(page.read_text(encoding="utf-8"))
    targets = list(_REFERENCE.findall(prose))
    for block in re.split(r"\n\s*\n", prose):
        targets += [target for _, target in _LINK.findall(_CODE_SPAN.sub("code", block))]
    return targets


def broken(page: Path, root: Path) -> list[str]:
    """The relative links of a page that lead nowhere, each with why."""
    problems = []
    for target in links(page):
        if _SCHEME.match(target) or target.startswith("//"):
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.is_relative_to(root.resolve()):
            problems.append(f"{target}: leaves the repository")
        elif not destination.exists():
            problems.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            problems.append(f"{target}: no heading #{anchor} in {destination.relative_to(root.resolve())}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    assert not broken(page, ROOT)


def test_the_readme_table_lists_every_page_under_docs() -> None:
    readme = ROOT / "README.md"
    table = _prose(readme.read_text(encoding="utf-8")).split("\n## Documentation\n", 1)[1]
    listed = {
        (ROOT / target).resolve()
        for row in table.splitlines()
        if row.startswith("|")
        for _, target in _LINK.findall(row)
    }
    missing = [str(page.relative_to(ROOT)) for page in PAGES[2:] if page.resolve() not in listed]
    assert not missing, f"README.md's Documentation table does not list {missing}"


@pytest.mark.parametrize(
    ("command", "pages"),
    [
        ([], ["README.md"]),
        (["generate"], ["docs/generate.md", "docs/rules.md"]),
        (["init"], ["docs/install.md"]),
        (["parameters"], ["docs/generate.md"]),
        (["check"], ["docs/check.md", "docs/ci.md"]),
    ],
)
def test_every_help_says_what_the_command_is_for_and_names_its_page(command: list[str], pages: list[str]) -> None:
    result = run_cli([*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    top = result.stdout.split("Options", 1)[0].split("Arguments", 1)[0]
    assert len(top.strip().splitlines()) <= 10, top
    named = re.findall(r"\b(?:docs/[\w-]+\.md|README\.md)\b", top)
    assert named[: len(pages)] == pages
    assert all((ROOT / page).is_file() for page in named), named


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("The render cache", "the-render-cache"),
        ("chartshare.yaml: the ownership rules", "chartshareyaml-the-ownership-rules"),
        ("`chartshare generate [APP_DIR]`", "chartshare-generate-app_dir"),
        ("A fleet across runners: `--shard I/N` and `--merge`", "a-fleet-across-runners---shard-in-and---merge"),
        ("The CLI framework: typer-slim 0.21.2, pinned", "the-cli-framework-typer-slim-0212-pinned"),
        ("See [the rules](docs/rules.md)", "see-the-rules"),
    ],
)
def test_slugs_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_a_missing_file_or_heading_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "repository"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A page\n\n## Twice\n\n## Twice\n", encoding="utf-8")
    (tmp_path / "elsewhere.md").touch()
    page = root / "README.md"
    page.write_text(
        "# Top\n\n[ok](docs/a.md#twice-1) [also](#top) [web](https://example.com/x)\n"
        "`[not a link](nowhere.md)` [gone](docs/b.md) [no heading](docs/a.md#twice-2)\n"
        "[out](../elsewhere.md)\n\n```text\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken(page, root) == [
        "docs/b.md: no such file",
        "docs/a.md#twice-2: no heading #twice-2 in docs/a.md",
        "../elsewhere.md: leaves the repository",
    ]
