"""Which charts render differently on every run: template actions (packed subcharts included) and value
files that call a function of the table."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from cmp.helm import nondeterminism


def test_random_functions_are_found_in_actions_of_packed_subcharts(tmp_path: Path) -> None:
    (tmp_path / "plain" / "templates").mkdir(parents=True)
    (tmp_path / "plain" / "templates" / "a.yaml").write_text("# now and then\nkind: ConfigMap\n")
    assert not nondeterminism.uses_nondeterministic_functions(tmp_path / "plain", ())
    data = b"password: {{ randAlphaNum 16 }}\n"
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as archive:
        info = tarfile.TarInfo("sub/templates/secret.yaml")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    (tmp_path / "packed" / "charts").mkdir(parents=True)
    (tmp_path / "packed" / "charts" / "sub-1.0.0.tgz").write_bytes(packed.getvalue())
    assert nondeterminism.uses_nondeterministic_functions(tmp_path / "packed", ())
    values = tmp_path / "values.yaml"
    values.write_text("token: '{{ uuidv4 }}'\n")
    assert nondeterminism.uses_nondeterministic_functions(tmp_path / "plain", (values,))
