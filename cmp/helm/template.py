"""`helm template` as Argo CD's native Helm source runs it: the arguments (pure) and the render.

The arguments match Argo CD's, so an app that moves to chartshare renders the same objects; every value
travels as `--flag=value`, so none can pose as a flag. Every render starts here, generate's (early or
not) and check's: the chart's schemas are checked first, so that helm never reads or fetches what a
`$ref` names (cmp/helm/schemas.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from cmp.helm import early, schemas
from cmp.helm.process import RunningHelm
from cmp.inputs.config import Template


class HelmInvocation(NamedTuple):
    """A chart folder and what to render from it."""

    chart_dir: Path
    template: Template


def helm_args(call: HelmInvocation, inline_values_file: Path | None = None) -> list[str]:
    """`helm template` argv, in Argo CD's order."""
    template = call.template
    args = ["template", ".", f"--name-template={template.release}"]
    if template.namespace:
        args.append(f"--namespace={template.namespace}")
    if template.kube_version:
        args.append(f"--kube-version={template.kube_version}")
    args += [f"--api-versions={entry}" for entry in template.api_versions]
    args += [f"--values={path}" for path in template.values_files]
    if inline_values_file is not None:
        args.append(f"--values={inline_values_file}")
    args += [f"--set={key}={value}" for key, value in template.set_values]
    args += [f"--set-string={key}={value}" for key, value in template.set_strings]
    args += [f"--set-file={key}={path}" for key, path in template.set_files]
    # Always said, `=false` included: helm 2 has no such flag, so a helm 2 binary fails at once with
    # "unknown flag: --include-crds" instead of rendering with helm 2's rules (see process.HELM2_SIGN).
    args.append("--include-crds" if template.include_crds else "--include-crds=false")
    if template.skip_tests:
        args.append("--skip-tests")
    if template.skip_schema_validation:
        args.append("--skip-schema-validation")
    return args


def start(helm: str, call: HelmInvocation, timeout: float, spent: float = 0.0) -> RunningHelm:
    """Start rendering, once the chart's schemas refer to nothing outside themselves (unless helm is told
    to skip them); `finish()` waits for helm's stdout, so other work can go on meanwhile. helm has
    `timeout` less the seconds already `spent` of it."""
    if not call.template.skip_schema_validation:
        schemas.refuse_remote_references(call.chart_dir, timeout / 4)
    if not call.template.values_inline:
        argv = [helm, *helm_args(call)]
        return RunningHelm(argv, cwd=call.chart_dir, timeout=timeout, spent=spent, what="helm template")
    import tempfile  # only an inline values file needs a scratch folder

    scratch = tempfile.TemporaryDirectory(prefix="chartshare-")
    try:
        inline = Path(scratch.name) / "inline-values.yaml"
        inline.write_text(call.template.values_inline, encoding="utf-8")
        argv = [helm, *helm_args(call, inline)]
        return RunningHelm(
            argv, cwd=call.chart_dir, timeout=timeout, spent=spent, what="helm template", scratch=scratch
        )
    except BaseException:
        scratch.cleanup()
        raise


def start_early(helm: str, call: HelmInvocation, timeout: float, spent: float = 0.0) -> None:
    """Start a render that a later `render` with the same arguments will take over."""
    early.keep((helm, call, timeout, spent), start(helm, call, timeout, spent))


def render(
    helm: str,
    call: HelmInvocation,
    timeout: float,
    meanwhile: Callable[[], object] | None = None,
    seen: Callable[[bytes], object] | None = None,
    spent: float = 0.0,
) -> str:
    """helm's stdout for the chart; any failure is a HelmError carrying helm's stderr. `meanwhile` runs
    while helm renders, `seen` is handed stdout's bytes before they are decoded. An early render started for
    exactly these arguments is used instead of a new one."""
    running = early.claim((helm, call, timeout, spent)) or start(helm, call, timeout, spent)
    if meanwhile is not None:
        try:
            meanwhile()
        except BaseException:
            running.kill()
            raise
    return running.finish(seen)
