"""helm's crds/ files, known before helm prints them: what `printed_crds` expects is helm's own bytes, on
both majors, and identifying them early changes nothing `parse` makes of the stream."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cmp import manifests
from cmp.helm.crds import printed_crds

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.example.io
spec:
  group: example.io
  names:
    kind: {kind}
    plural: {plural}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        description: "A {kind} holds
          [\\"CREATE, \\"UPDATE\\"] & more."
        type: object
"""


def _chart(root: Path) -> Path:
    """A chart named unlike its folder, whose crds/ files start with `---` or not, hold two documents or end
    without a newline, sit in a subfolder, and whose unpacked subchart has a crds/ folder of its own."""
    chart = root / "folder"
    (chart / "crds" / "more").mkdir(parents=True)
    (chart / "templates").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: shop\nversion: 1.0.0\n")
    (chart / "crds" / "a.yaml").write_text("---\n" + CRD.format(kind="Apple", plural="apples"))
    two = (
        CRD.format(kind="Berry", plural="berries") + "---\n# a comment\n" + CRD.format(kind="Cherry", plural="cherries")
    )
    (chart / "crds" / "b.yml").write_text(two.rstrip("\n"))
    (chart / "crds" / "more" / "d.yaml").write_text(CRD.format(kind="Date", plural="dates"))
    (chart / "crds" / "notes.txt").write_text("not a manifest")
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
    sub = chart / "charts" / "subfolder"
    (sub / "crds").mkdir(parents=True)
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: basket\nversion: 0.1.0\n")
    (sub / "crds" / "e.yaml").write_text(CRD.format(kind="Elder", plural="elders"))
    return chart


def _render(helm: str, chart: Path) -> str:
    argv = [helm, "template", ".", "--name-template=r", "--namespace=n", "--include-crds"]
    return subprocess.run(argv, cwd=chart, capture_output=True, text=True, check=True, timeout=60).stdout


def test_the_crds_files_are_printed_as_helm_prints_them(tmp_path: Path, helm: str) -> None:
    chart = _chart(tmp_path)
    stream = _render(helm, chart)
    fragments = list(printed_crds(chart))
    assert len(fragments) == 4  # b.yml holds two documents
    for fragment in fragments:
        assert fragment in stream


def test_foreseen_documents_are_identified_as_the_stream_identifies_them(tmp_path: Path, helm: str) -> None:
    chart = _chart(tmp_path)
    stream = _render(helm, chart)
    foreseen = manifests.foresee(printed_crds(chart))
    assert len(foreseen) == 5
    early = manifests.parse(stream, foreseen=foreseen)
    assert not foreseen  # every one taken from there
    assert _read(early) == _read(manifests.parse(stream))


def test_a_document_foreseen_once_and_printed_twice_is_identified_again(tmp_path: Path) -> None:
    document = CRD.format(kind="Fig", plural="figs")
    stream = f"---\n# Source: a/crds/f.yaml\n{document}\n---\n# Source: b/crds/f.yaml\n{document}\n"
    foreseen = manifests.foresee([f"---\n# Source: a/crds/f.yaml\n{document}\n"])
    early = manifests.parse(stream, foreseen=foreseen)
    assert _read(early) == _read(manifests.parse(stream))
    assert early[0].head is not early[1].head


def test_what_is_foreseen_but_never_printed_changes_nothing() -> None:
    stream = "---\n# Source: shop/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
    foreseen = manifests.foresee(["---\n# Source: shop/crds/g.yaml\n" + CRD.format(kind="Grape", plural="grapes")])
    assert _read(manifests.parse(stream, foreseen=foreseen)) == _read(manifests.parse(stream))


def test_unreadable_charts_foresee_nothing(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "a.yaml").write_text(CRD.format(kind="Kiwi", plural="kiwis"))
    assert list(printed_crds(tmp_path)) == []  # no Chart.yaml: no name to print them under
    (tmp_path / "Chart.yaml").write_text("name: [unclosed\n")
    assert list(printed_crds(tmp_path)) == []
    (tmp_path / "Chart.yaml").write_text("name: kiwi\n")
    (tmp_path / "crds" / "b.yaml").write_bytes(b"\xff\xfe not text")
    assert len(list(printed_crds(tmp_path))) == 1


def _read(resources: list[manifests.Resource]) -> list[tuple[object, ...]]:
    return [(r.head, r.text, r.source, r.read_exactly, r.id) for r in resources]


def test_a_folder_symlink_loop_and_an_oversized_file_are_passed_over(tmp_path: Path) -> None:
    (tmp_path / "Chart.yaml").write_text("name: loop\n")
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "a.yaml").write_text(CRD.format(kind="Lime", plural="limes"))
    (tmp_path / "crds" / "again").symlink_to(tmp_path / "crds")
    with (tmp_path / "crds" / "huge.yaml").open("wb") as huge:
        huge.truncate((16 << 20) + 1)
    assert [fragment.splitlines()[1] for fragment in printed_crds(tmp_path)] == ["# Source: loop/crds/a.yaml"]
