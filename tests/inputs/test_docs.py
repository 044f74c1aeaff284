"""docs/generate.md and --help are checked against the parameter table, so they cannot drift from the code."""

from __future__ import annotations

from cmp.inputs import parameters as params
from conftest import ROOT, run_cli


def test_the_generate_page_holds_the_generated_parameter_table() -> None:
    assert params.markdown_table() in (ROOT / "docs" / "generate.md").read_text(encoding="utf-8")


def test_generate_help_names_every_parameter_flag() -> None:
    result = run_cli(["generate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for parameter in params.PARAMETERS:
        for flag in parameter.flag.split("/"):
            assert flag in result.stdout, flag
