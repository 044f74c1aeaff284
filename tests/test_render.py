"""The helm call: argv that cannot be hijacked, a deadline that holds, and helm's faults told apart."""

from __future__ import annotations

from pathlib import Path

from cmp import render


def test_include_crds_is_always_said_so_helm_2_fails_fast() -> None:
    call = render.HelmInvocation(chart_dir=Path("."), release="web")
    assert render.helm_args(call)[-1] == "--include-crds"
    skip = render.HelmInvocation(chart_dir=Path("."), release="web", include_crds=False)
    assert render.helm_args(skip)[-1] == "--include-crds=false"
