"""A render-cache hit equals the cold render byte for byte (stdout, and stderr but for `(cached)`), over
generated charts and rule sets (hypothesis), with the real CLI and real helm.

Each example renders twice in a cache folder of its own; a render that fails must fail the same way twice
and keep nothing. CI runs a fixed budget; CHARTSHARE_PROPERTY_EXAMPLES=200 runs more.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import run_cli

LONG_RUN = "CHARTSHARE_PROPERTY_EXAMPLES" in os.environ
BUDGET = settings(
    max_examples=int(os.environ.get("CHARTSHARE_PROPERTY_EXAMPLES", "12")),
    deadline=None,
    derandomize=not LONG_RUN,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
APPS = ("dev-a", "dev-b", "team_web")
NAMES = ("shared", "web", "reader")
KINDS = {
    "Namespace": "v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1",
    "ConfigMap": "v1",
    "ServiceAccount": "v1",
}


def _document(kind: str, name: str, templated: bool) -> str:
    named = "{{ .Release.Name }}-" + name if templated else name
    body = (
        "rules: []\n"
        if kind == "ClusterRole"
        else "data:\n  value: {{ .Values.value | quote }}\n"
        if kind == "ConfigMap"
        else ""
    )
    return f"apiVersion: {KINDS[kind]}\nkind: {kind}\nmetadata:\n  name: {named}\n  labels:\n    team: a\n{body}"


documents = st.lists(
    st.tuples(st.sampled_from(sorted(KINDS)), st.sampled_from(NAMES), st.booleans()), min_size=1, max_size=6
).map(lambda items: sorted(set(items)))

rules = st.lists(
    st.fixed_dictionaries(
        {
            "match": st.fixed_dictionaries(
                {"kind": st.sampled_from(sorted(KINDS))}, optional={"name": st.sampled_from((*NAMES, "*"))}
            )
        },
        optional={
            "owner": st.sampled_from(APPS),
            "others": st.sampled_from(("strip", "keep", "rename")),
            "patch": st.builds(lambda: [{"op": "add", "path": "/metadata/labels/patched", "value": "yes"}]),
        },
    ),
    max_size=3,
)


def _write_repo(
    base: Path, docs: list[tuple[str, str, bool]], rule_set: list[dict[str, Any]], unowned: str, value: str
) -> Path:
    repo = base / "repo"
    templates = repo / "chart" / "templates"
    templates.mkdir(parents=True)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: generated\nversion: 0.1.0\n")
    (repo / "chart" / "values.yaml").write_text(yaml.safe_dump({"value": value}))
    (templates / "all.yaml").write_text("---\n".join(_document(*doc) for doc in docs))
    config = {"apiVersion": "chartshare/v1", "kind": "ChartShare", "chart": "../chart", "unowned": unowned}
    (repo / "app").mkdir()
    (repo / "app" / "chartshare.yaml").write_text(yaml.safe_dump({**config, "rules": rule_set}, sort_keys=False))
    return repo


@BUDGET
@given(
    docs=documents,
    rule_set=rules,
    unowned=st.sampled_from(("keep", "strip", "fail")),
    app=st.sampled_from(APPS),
    value=st.text(alphabet="ab: #'\"", max_size=6),
    output=st.sampled_from(("yaml", "json")),
)
def test_a_hit_equals_the_cold_render(
    helm: str,
    docs: list[tuple[str, str, bool]],
    rule_set: list[dict[str, Any]],
    unowned: str,
    app: str,
    value: str,
    output: str,
) -> None:
    base = Path(tempfile.mkdtemp(prefix="chartshare-cache-property-"))
    try:
        repo = _write_repo(base, docs, rule_set, unowned, value)
        args = ["generate", str(repo / "app"), "--repo-root", str(repo), "--app", app, "--output", output]
        env = {"CHARTSHARE_HELM": helm, "CHARTSHARE_CACHE": str(base / "cache"), "CHARTSHARE_RENDER_CACHE": "on"}
        cold, again = run_cli(args, env=env), run_cli(args, env=env)
        event("rendered" if cold.exit_code == 0 else "refused")
        assert again.exit_code == cold.exit_code
        assert again.stdout == cold.stdout
        if cold.exit_code != 0:
            assert again.stderr == cold.stderr
            assert not (base / "cache" / "renders").exists() or not os.listdir(base / "cache" / "renders")
            return
        first, _, rest = again.stderr.partition("\n")
        assert first.endswith(" (cached)")
        assert first.removesuffix(" (cached)") + "\n" + rest == cold.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
