"""helm's bytes on real public charts, as operators run them, on every helm of REALCHART_HELMS.

The charts are the packaged public ones of ../shared/realcharts (see its README): large generated CRDs
(wrapped quoted and plain descriptions, CEL rules, `|2-` blocks), RBAC with flow sequences spanning lines,
webhooks, a `List`, comment-only documents. Each chart is untarred once per session and rendered once per
helm; the apps run on that render in process, the pass-through case through the real CLI. The
expectations are worked out from helm's stream alone, cut on its `---` lines and read by the exact reading.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from cmp import goyaml, manifests
from cmp.helm.crds import printed_crds
from cmp.manifests import Resource
from cmp.model import App, split_api_version
from cmp.ownership import rules
from cmp.ownership.outcome import Outcome
from cmp.ownership.process import process
from cmp.ownership.scope import Scope, ScopeTable, crd_scopes
from conftest import (
    REALCHART_HELMS,
    REALCHARTS_MISSING,
    realchart,
    realchart_helm,
    realchart_index,
    realcharts,
    run_cli,
    untarred,
)

helm = pytest.fixture(scope="session", params=REALCHART_HELMS, ids=lambda version: f"helm{version}")(realchart_helm)

FOLDER = realcharts()
INDEX = realchart_index(FOLDER)
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"


@pytest.fixture(scope="module", params=sorted(INDEX) or [REALCHARTS_MISSING])
def chart(request: pytest.FixtureRequest) -> dict[str, Any]:
    return realchart(request, INDEX)


class Workspace(NamedTuple):
    """A repository holding the untarred charts and their values files, and the renders made so far."""

    root: Path
    renders: dict[tuple[str, str], str]
    pieces: dict[tuple[str, str], list[Piece]]


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root = tmp_path_factory.mktemp("realcharts")
    (root / "charts").mkdir()
    (root / "values").mkdir()
    return Workspace(root, {}, {})


def _chart_dir(workspace: Workspace, chart: dict[str, Any]) -> Path:
    """The chart untarred (once) into the workspace, its values file beside it."""
    assert FOLDER is not None
    if chart["values"] and not (workspace.root / "values" / chart["values"]).exists():
        (workspace.root / "values" / chart["values"]).write_bytes((FOLDER / chart["values"]).read_bytes())
    return untarred(FOLDER, chart, workspace.root / "charts")


def _helm_args(workspace: Workspace, chart: dict[str, Any]) -> list[str]:
    """`helm template` as chartshare runs it for this app."""
    args = ["template", ".", f"--name-template={chart['release']}", f"--namespace={chart['namespace']}"]
    if chart["values"]:
        args.append(f"--values={workspace.root / 'values' / chart['values']}")
    return [*args, "--include-crds"]


def _render(workspace: Workspace, chart: dict[str, Any], helm: str) -> str:
    key = (chart["name"], helm)
    if key not in workspace.renders:
        folder = _chart_dir(workspace, chart)
        workspace.renders[key] = subprocess.run(
            [helm, *_helm_args(workspace, chart)], cwd=folder, capture_output=True, text=True, check=True, timeout=120
        ).stdout
    return workspace.renders[key]


class Piece(NamedTuple):
    """One piece of helm's stream (from its `---` line on), with what the exact reading makes of it."""

    text: str
    objects: list[dict[str, Any]]  # none for a comment-only piece, the items for a List
    listed: bool


def _pieces(stream: str) -> list[Piece]:
    found = []
    for text in re.split(r"(?m)^(?=---$)", stream):
        if not text:
            continue
        obj = goyaml.load(text)
        if isinstance(obj, dict) and isinstance(obj.get("items"), list):
            found.append(Piece(text, obj["items"], True))
        else:
            found.append(Piece(text, [obj] if obj is not None else [], False))
    return found


def _scopes(pieces: list[Piece]) -> ScopeTable:
    return ScopeTable.build(crd_scopes(obj for piece in pieces for obj in piece.objects), (), ())


def _cluster_scoped(obj: dict[str, Any], scopes: ScopeTable) -> bool:
    return scopes.of(split_api_version(obj["apiVersion"])[0], obj["kind"]) is Scope.CLUSTER


_METADATA_ENTRY = re.compile(r"(?m)^metadata:.*\n(?:(?:[ \t]+.*)?\n)*")


def _outside_metadata(text: str) -> str:
    """A document's text without its top-level `metadata` entry (comment lines at column 0 after it
    stay: they belong to what follows)."""
    return _METADATA_ENTRY.sub("", text, count=1)


class Ran(NamedTuple):
    outcome: Outcome
    output: str
    resources: list[Resource]


def _app(workspace: Workspace, chart: dict[str, Any], helm: str, config: str, app: str) -> tuple[Ran, list[Piece]]:
    """An app run on the chart's render (made once), and the render's pieces (read once)."""
    stream = _render(workspace, chart, helm)
    key = (chart["name"], helm)
    if key not in workspace.pieces:
        workspace.pieces[key] = _pieces(stream)
    return _run(stream, config, app, chart), workspace.pieces[key]


def _run(stream: str, config: str, app: str, chart: dict[str, Any]) -> Ran:
    resources = manifests.parse(stream)
    ownership = rules.parse(config, Path("chartshare.yaml"), "chartshare.yaml")
    outcome = process(resources, ownership, App(app, chart["release"], chart["namespace"]))
    return Ran(outcome, manifests.emit_yaml(outcome.resources), resources)


OWNER = "apiVersion: chartshare/v1\nkind: ChartShare\nowner: app-a\n"
# The non-owner accepts the owner's bindings (it would otherwise refuse to strip those of its own account).
NON_OWNER = (
    OWNER + "allowEmpty: true\n"  # linkerd-crds holds nothing namespaced
    "rules:\n  - match: {kind: ClusterRoleBinding}\n    owner: app-a\n    others: strip\n"
)
RENAMES = (
    OWNER + "allowEmpty: true\nrules:\n"
    "  - match: {kind: 'ClusterRole*'}\n    others: rename\n"
    "  - match: {kind: Deployment}\n    patch: [{op: add, path: /metadata/labels/team, value: b}]\n"
)


def _paired(helm_pieces: list[Piece], output: str) -> Iterator[tuple[Piece, Piece]]:
    """Each piece of the output with the piece of helm's stream it comes from (the output keeps helm's
    order and drops whole pieces)."""
    source = iter(helm_pieces)
    for ours in _pieces(output):
        theirs = next(source)
        while (not ours.objects and theirs.objects) or [o.get("kind") for o in ours.objects] != [
            o.get("kind") for o in theirs.objects
        ]:
            theirs = next(source)
        yield theirs, ours


def _metadata_only(theirs: Piece, ours: Piece) -> bool:
    """Whether our piece is helm's, or differs from it only inside `metadata:`."""
    return _outside_metadata(ours.text) == _outside_metadata(theirs.text)


def _resources_of(ran: Ran, pieces: list[tuple[Piece, Piece]]) -> Iterator[tuple[Resource, Piece, Piece]]:
    emitted = iter(ran.outcome.resources)
    for theirs, ours in pieces:
        for _ in ours.objects:
            yield next(emitted), theirs, ours


def test_without_chartshare_yaml_stdout_is_helms_own(workspace: Workspace, chart: dict[str, Any], helm: str) -> None:
    folder = _chart_dir(workspace, chart)
    values = ["-f", f"/values/{chart['values']}"] if chart["values"] else []
    app = ["--app", "app-a", "-n", chart["namespace"], "--release-name", chart["release"]]
    result = run_cli(["generate", str(folder), *app, *values, "--repo-root", str(workspace.root), "--helm", helm])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == _render(workspace, chart, helm)


def test_every_document_is_identified_without_the_exact_reading(
    workspace: Workspace, chart: dict[str, Any], helm: str
) -> None:
    stream = _render(workspace, chart, helm)
    fast, exact = manifests.parse(stream), manifests.parse(stream, exact=True)
    assert [(r.id, r.api_version, r.source) for r in fast] == [(r.id, r.api_version, r.source) for r in exact]
    assert crd_scopes(r.identity() for r in fast) == crd_scopes(r.obj for r in exact)
    assert manifests.exact_readings(fast) == 0


def test_the_crds_files_read_while_helm_renders_are_the_documents_helm_prints(
    workspace: Workspace, chart: dict[str, Any], helm: str, record_property: Any
) -> None:
    stream = _render(workspace, chart, helm)
    folder = _chart_dir(workspace, chart)
    own = [
        fragment for fragment in printed_crds(folder) if fragment.startswith(f"---\n# Source: {chart['name']}/crds/")
    ]
    assert all(fragment in stream for fragment in own)
    foreseen = manifests.foresee(printed_crds(folder))
    found = len(foreseen)
    early = manifests.parse(stream, foreseen=foreseen)
    plain = manifests.parse(stream)
    assert [(r.head, r.text, r.source) for r in early] == [(r.head, r.text, r.source) for r in plain]
    record_property("foreseen", found - len(foreseen))


def test_the_owner_emits_every_document_changing_only_metadata(
    workspace: Workspace, chart: dict[str, Any], helm: str
) -> None:
    ran, helm_pieces = _app(workspace, chart, helm, OWNER, "app-a")
    ours = _pieces(ran.output)
    assert len(ours) == len(helm_pieces)
    for theirs, mine in zip(helm_pieces, ours, strict=True):
        assert _metadata_only(theirs, mine), mine.text[:300]
        for before, after in zip(theirs.objects, mine.objects, strict=True):
            assert {**before, "metadata": after["metadata"]} == after
            annotations = dict(after["metadata"].get("annotations") or {})
            added = annotations.pop(SYNC_OPTIONS, None)
            assert annotations == {
                k: v for k, v in (before["metadata"].get("annotations") or {}).items() if k != SYNC_OPTIONS
            }
            assert mine.text == theirs.text or "Prune=false" in (added or "")
    for resource in ran.outcome.resources:
        assert not resource.read_exactly, f"{resource.id} changed only in metadata, yet was parsed whole"


def test_a_non_owner_emits_exactly_the_namespaced_documents_as_helm_wrote_them(
    workspace: Workspace, chart: dict[str, Any], helm: str
) -> None:
    ran, helm_pieces = _app(workspace, chart, helm, NON_OWNER, "app-b")
    scopes = _scopes(helm_pieces)
    kept = [
        piece
        for piece in helm_pieces
        if not piece.objects or not all(_cluster_scoped(obj, scopes) for obj in piece.objects)
    ]
    expected = "".join(piece.text for piece in kept) if any(piece.objects for piece in kept) else ""
    assert ran.output == expected
    for applied in ran.outcome.stripped:
        assert not applied.resource.read_exactly, f"{applied.resource.id} was stripped, yet parsed"
    assert manifests.exact_readings(ran.resources) == 0


def test_renames_and_label_patches_change_only_metadata_where_they_can(
    workspace: Workspace, chart: dict[str, Any], helm: str, record_property: Any
) -> None:
    ran, helm_pieces = _app(workspace, chart, helm, RENAMES, "app-b")
    pairs = list(_paired(helm_pieces, ran.output))
    for resource, theirs, ours in _resources_of(ran, pairs):
        kind = resource.kind
        if _metadata_only(theirs, ours):
            assert not resource.read_exactly, f"{resource.id} changed only in metadata, yet was parsed whole"
        else:
            assert kind.endswith("Binding"), f"{resource.id} changed outside metadata:\n{ours.text[:400]}"
            (before,), (after,) = theirs.objects, ours.objects
            assert {**before, "metadata": {}, "roleRef": {}} == {**after, "metadata": {}, "roleRef": {}}
        obj = ours.objects[0]
        if kind == "Deployment":
            assert obj["metadata"]["labels"]["team"] == "b"
        if kind in ("ClusterRole", "ClusterRoleBinding"):
            name, prefix = theirs.objects[0]["metadata"]["name"], f"{chart['release']}-"
            assert obj["metadata"]["name"] == (name if name.startswith(prefix) else prefix + name)
    for applied in ran.outcome.stripped:
        assert not applied.resource.read_exactly, f"{applied.resource.id} was stripped, yet parsed"
    record_property("exact_readings", manifests.exact_readings(ran.resources))
