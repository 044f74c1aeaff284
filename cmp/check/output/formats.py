"""The report formats, by the name `--format` and `--report FORMAT=FILE` take: each a pure function of the
one analysis (a Report) and the run's settings, so one render serves every report CI wants."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cmp.check.analysis.conflicts import Report
from cmp.check.output import html_report, json_report, junit, markdown, sarif, text_report


@dataclass(frozen=True, slots=True)
class Settings:
    """What a report needs besides the analysis: whether rules were ignored, and the repository root that
    file locations are written relative to."""

    raw: bool = False
    root: Path = Path(".")


Format = Callable[[Report, Settings], str]

FORMATS: Mapping[str, Format] = {
    "text": lambda report, settings: text_report.to_text(report, raw=settings.raw),
    "json": lambda report, settings: json_report.to_json(report),
    "junit": lambda report, settings: junit.to_junit(report, raw=settings.raw),
    "markdown": lambda report, settings: markdown.to_markdown(report, raw=settings.raw),
    "html": lambda report, settings: html_report.to_html(report, raw=settings.raw),
    "sarif": lambda report, settings: sarif.to_sarif(report, settings.root, raw=settings.raw),
}
