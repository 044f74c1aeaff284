"""What the scan found, kept across renders by a document's bytes: recalled as the scan would find it, only
new documents scanned, bounded, and never a failure."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cmp import manifests
from cmp.cache import bounded
from cmp.cache.identities import Identities
from cmp.manifests import Scanned

CRD = (
    "# Source: c/crds/ws.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    "metadata:\n  name: ws.example.io\nspec:\n  group: example.io\n  names:\n    kind: W\n    plural: ws\n"
    "  scope: Namespaced\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n"
    "        description: 'Selects `{job=\"node\"}` [30s, 1m] {unclosed \"open it''s\n"
    "          [see {{ $labels.instance }}'\n        type: object\n"
)
LABELLED = "# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: flow, labels: {a: b}}\n"


def _config_map(name: str) -> str:
    return f"# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  x: y\n"


STREAM = "---\n".join([CRD, LABELLED, _config_map("a"), _config_map("b")])


class Counting(Identities):
    """Identities that count what the scan had to read."""

    scanned = 0

    def remember(self, text: str, scanned: Scanned) -> None:
        self.scanned += 1
        super().remember(text, scanned)


def _heads(resources: list[manifests.Resource]) -> list[tuple[object, ...]]:
    return [(r.head, r.metadata if r.head is not None else None, r.read_exactly) for r in resources]


def _kept(tmp_path: Path, stream: str = STREAM) -> Path:
    folder = tmp_path / "identities"
    memory = Identities(folder, tmp_path / "chart", tmp_path).load()
    manifests.parse(stream, memory=memory)
    memory.save()
    return folder


def test_a_render_seen_before_scans_only_its_new_documents(tmp_path: Path) -> None:
    folder = _kept(tmp_path)
    changed = STREAM + "---\n" + _config_map("c")
    memory = Counting(folder, tmp_path / "chart", tmp_path).load()
    recalled = manifests.parse(changed, memory=memory)
    assert memory.scanned == 1
    assert _heads(recalled) == _heads(manifests.parse(changed))
    assert manifests.exact_readings(recalled) == 0
    assert [r.obj for r in recalled] == [r.obj for r in manifests.parse(changed, exact=True)]


def test_crds_foreseen_are_recalled_too(tmp_path: Path) -> None:
    folder = _kept(tmp_path)
    memory = Counting(folder, tmp_path / "chart", tmp_path).load()
    foreseen = manifests.foresee([CRD], memory)
    assert memory.scanned == 0 and len(foreseen) == 1


def test_later_stages_changing_the_metadata_change_nothing_kept(tmp_path: Path) -> None:
    folder = tmp_path / "identities"
    memory = Identities(folder, tmp_path / "chart", tmp_path).load()
    first = manifests.parse(LABELLED, memory=memory)
    assert first[0].metadata is not None
    first[0].metadata["labels"]["a"] = "changed"
    memory.save()
    again = manifests.parse(LABELLED, memory=Counting(folder, tmp_path / "chart", tmp_path).load())
    assert again[0].metadata == {"name": "flow", "labels": {"a": "b"}}


def test_a_broken_or_foreign_file_reads_as_nothing_kept(tmp_path: Path) -> None:
    folder = _kept(tmp_path)
    (name,) = os.listdir(folder)
    data = (folder / name).read_bytes()
    for broken in (data[:-7], data[:40] + b"x" + data[41:], b"", b"\x00" * 64):
        (folder / name).write_bytes(broken)
        memory = Counting(folder, tmp_path / "chart", tmp_path).load()
        assert _heads(manifests.parse(STREAM, memory=memory)) == _heads(manifests.parse(STREAM))
        assert memory.scanned == 4
    folder.chmod(0o755)  # not this user's alone: neither read nor written
    (folder / name).write_bytes(data)
    memory = Counting(folder, tmp_path / "chart", tmp_path).load()
    manifests.parse(STREAM, memory=memory)
    memory.save()
    assert memory.scanned == 4 and (folder / name).read_bytes() == data


def test_an_unwritable_folder_is_no_failure(tmp_path: Path) -> None:
    (tmp_path / "identities").write_text("a file where the folder goes")
    memory = Identities(tmp_path / "identities", tmp_path / "chart", tmp_path).load()
    assert len(manifests.parse(STREAM, memory=memory)) == 4
    memory.save()


def test_the_files_stay_under_their_cap_the_oldest_used_going_first(tmp_path: Path) -> None:
    folder = _kept(tmp_path)
    cap = 2 * _disk_use(folder)  # two charts' files
    sizes = []
    for number in range(6):
        memory = Identities(folder, tmp_path / f"chart-{number}", tmp_path, cap=cap).load()
        manifests.parse(STREAM, memory=memory)
        memory.save()
        sizes.append(_disk_use(folder))
    assert max(sizes) <= cap
    newest = Identities(folder, tmp_path / "chart-5", tmp_path).load()
    assert newest.kept and not Identities(folder, tmp_path / "chart-0", tmp_path).load().kept


def _disk_use(folder: Path) -> int:
    return sum(bounded.disk_use(entry.stat()) for entry in folder.iterdir())


def test_the_files_count_in_the_cache_folders_one_budget(tmp_path: Path) -> None:
    """CHARTSHARE_CACHE_MB covers everything under the cache folder: the identities' files are charged to
    its running total as the render cache's entries are."""
    folder = _kept(tmp_path)
    total, entries, _ = (int(field) for field in (tmp_path / bounded.USAGE).read_text().split())
    assert (total, entries) == (_disk_use(folder) + bounded.disk_use(folder.stat()), 1)  # the folder counts too
    assert bounded.Budget(str(tmp_path), 1 << 30).evict()[1] == 1  # a full count finds the same one entry


def test_a_chart_is_one_file_whichever_checkout_renders_it(tmp_path: Path) -> None:
    first = Identities(tmp_path / "ids", tmp_path / "a" / "chart", tmp_path / "a")
    second = Identities(tmp_path / "ids", tmp_path / "b" / "chart", tmp_path / "b")
    assert first.name == second.name


QUOTED = (
    "# Source: c/templates/q.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: q\ndata:\n"
    '  rule: "a {b: [c\n  d] \'e"\n  other: [x,\n    y]\n'
)
POOL = (CRD, LABELLED, QUOTED, _config_map("a"), _config_map("b"), "# Source: c/templates/empty.yaml\n# nothing\n")


class Recalling:
    """A memory that knows some documents (by their text), as a file kept from other renders would."""

    def __init__(self, known: dict[str, Scanned]) -> None:
        self.known = known

    def recall(self, text: str) -> Scanned | None:
        return self.known.get(text)

    def remember(self, text: str, scanned: Scanned) -> None:
        pass


class Remembering(Recalling):
    """A memory that knows nothing and keeps what the scan finds."""

    def recall(self, text: str) -> Scanned | None:
        return None

    def remember(self, text: str, scanned: Scanned) -> None:
        self.known[text] = scanned


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=8, unique=True), st.data())
def test_documents_recalled_or_not_in_any_mix_read_as_the_scan_reads_them(
    picked: list[int], data: st.DataObject
) -> None:
    stream = "---\n".join(POOL[number] for number in picked)
    scanned = manifests.parse(stream)
    everything: dict[str, Scanned] = {}
    manifests.parse(stream, memory=Remembering(everything))
    known = {text: found for text, found in everything.items() if data.draw(st.booleans())}
    assert _heads(manifests.parse(stream, memory=Recalling(known))) == _heads(scanned)
