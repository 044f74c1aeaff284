"""The YAML-free reading of chartshare.yaml's `chart:`, held to the loader's: it answers what the loader reads,
or None; and a remote chart already in the chart store starts helm early like a folder does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from archives import good_members, tgz
from hypothesis import given, settings
from hypothesis import strategies as st

from cmp.cli import launch
from cmp.errors import ConfigError
from cmp.helm import early, template
from cmp.model import RemoteChart
from cmp.ownership import rules
from cmp.remote.archive import unpack
from cmp.remote.store import chart_store
from cmp.render.chart import chart_dir, chart_entry, load_ownership

HEAD = "apiVersion: chartshare/v1\nkind: ChartShare\n"
REMOTE = RemoteChart("https://charts.example.com/stable", "evil", "1.0.0")
DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        (
            "chart:\n  repository: https://charts.example.com/stable\n  name: evil\n  version: 1.0.0\n",
            REMOTE,
        ),
        (
            "chart:   # the vendor's\n\n  name: 'evil'\n# a comment\n  version: \"1.0.0\"  # pinned\n"
            f"  digest: {DIGEST}\n  repository: https://charts.example.com/stable\nowner: a\n",
            REMOTE._replace(digest=DIGEST),
        ),
        ("chart: {repository: https://charts.example.com/stable, name: evil, version: 1.0.0}\n", None),
        ("chart:\n  repository: https://x\n  name: evil\n    version: 1.0.0\n", None),
        ("chart:\n  repository: https://x\n  name: evil\n  name: evil\n  version: 1.0.0\n", None),
        ("chart:\n  repository: https://x\n  name: 123\n  version: 1.0.0\n", None),
        ("chart:\n  repository: https://x\n  name: evil\n  version: ^1.0\n", None),
        ("chart:\n  repository: https://x\n  name: evil\n", None),
        ("chart:\n  repository: https://x\n  name: evil#x\n  version: 1.0.0\n", None),
        ("chart:\n\trepository: https://x\n\tname: evil\n\tversion: 1.0.0\n", None),
        ("chart: ../c#not-a-comment\n", None),
    ],
)
def test_the_remote_chart_is_read_only_when_plain(text: str, entry: RemoteChart | None) -> None:
    assert chart_entry(HEAD + text) == entry


KEYS = st.sampled_from(["repository", "name", "version", "digest", "verison"])
VALUES = st.sampled_from(
    ["https://charts.example.com", "oci://r.example.com/c", "evil", "1.0.0", "v1.2.3-rc.1", "^1.0", "1.0", "yes",
     "1e3", "null", "a:", "a b", "x#y", DIGEST, "ftp://x", "'1.0.0'", '"evil"', "'it''s'", "[a]", "{}", "&a x", ""]
)  # fmt: skip
LINE = st.one_of(
    st.tuples(st.sampled_from(["  ", "   ", "\t", ""]), KEYS, st.sampled_from([": ", " : ", ":", ":\t"]), VALUES).map(
        "".join
    ),
    st.sampled_from(["", "  # note", "# note", "owner: a", "chart: x", "---", "  - a"]),
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["chart:", "chart: # c", "chart :", "chart: x"]), st.lists(LINE, max_size=7))
def test_the_quick_reading_answers_what_the_loader_reads_or_nothing(key: str, lines: list[str]) -> None:
    text = HEAD + "\n".join([key, *lines]) + "\n"
    quick = chart_entry(text)
    if quick is None:
        return
    try:
        exact = rules.parse(text, Path("/repo/app/chartshare.yaml"), "app/chartshare.yaml").chart
    except ConfigError:
        return  # the pipeline reports it; the early helm is killed for not matching
    assert exact == quick or (exact == "" and quick == "."), text


def test_a_cached_remote_chart_starts_helm_early_and_the_pipeline_takes_it(helm: str, tmp_path: Path) -> None:
    chart_store(tmp_path / "cache").publish(REMOTE, _fill)
    app = tmp_path / "repo" / "app"
    app.mkdir(parents=True)
    (app / "chartshare.yaml").write_text(
        HEAD + f"chart:\n  repository: {REMOTE.repository}\n  name: evil\n  version: 1.0.0\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ARGOCD_", "CHARTSHARE_"))}
    env["CHARTSHARE_CACHE"] = str(tmp_path / "cache")
    command = launch.read_generate(["generate", str(app), "--app", "a", "--helm", helm, "--repo-root", str(app.parent)])
    assert command is not None
    launch.start_early(command, env)
    started = early.waiting()
    assert started is not None, "helm started early for the cached remote chart"
    config = command.resolve(env)
    stream = template.render(
        config.helm, template.HelmInvocation(chart_dir(config, load_ownership(config)), config.template), config.timeout
    )
    assert early.waiting() is None and started.process.returncode == 0, "the pipeline used the early helm"
    assert "name: a-evil" in stream


def _fill(scratch: Path) -> None:
    (scratch / "a.tgz").write_bytes(tgz(good_members()))
    unpack(scratch / "a.tgz", scratch / "chart", "a.tgz")
