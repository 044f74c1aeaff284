"""An ApplicationSet expanded offline: each generator's parameter sets, filtered by its selector, and the
template rendered once per set into the Application Argo CD would create.

Generators nest as Argo CD lets them: a matrix or merge may hold another matrix or merge, whose children
are plain generators (a third level is refused). A child's `template` is ignored, as Argo CD ignores it;
the second child of a matrix is first rendered with each parameter set of the first. Anything check cannot
evaluate (a generator that asks a running service, a template form outside the subset) is skipped with
the generator or field that caused it; anything Argo CD itself would refuse is bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from cmp.check.fleet import appsets as templating
from cmp.check.fleet.applications import (
    Application,
    Lifetime,
    Malformed,
    Skip,
    application,
    has_finalizer,
    mapping_of,
    name_of,
)
from cmp.check.fleet.generators import clusters, git, lists, matrix, merge
from cmp.check.fleet.generators.context import Context, Unevaluated
from cmp.check.fleet.generators.params import GeneratorError, Params, flatten, render
from cmp.check.fleet.generators.selector import read_selector

Generate = Callable[[Mapping[str, Any], str, Context], list[Params]]
GENERATORS: Mapping[str, Generate] = {"list": lists.generate, "git": git.generate, "clusters": clusters.generate}
COMBINERS: Mapping[str, Callable[[Mapping[str, Any], str, Context, matrix.Children], list[Params]]] = {
    "matrix": matrix.generate,
    "merge": merge.generate,
}
# Why the other generators are not expanded: each asks something only a running Argo CD can reach.
NOT_EXPANDED: Mapping[str, str] = {
    "clusterDecisionResource": "reads a cluster decision resource of the running cluster",
    "plugin": "calls a generator plugin service",
    "pullRequest": "queries open pull requests",
    "scmProvider": "queries an SCM provider's API",
}
ARGO_GENERATORS = tuple(sorted([*GENERATORS, *COMBINERS, *NOT_EXPANDED]))
MAX_NESTING = 2  # matrix/merge inside matrix/merge; their children are plain generators
SHOWN_PARAMS = 3


def expand(
    obj: Mapping[str, Any], place: str, context: Context, control_plane_namespace: str
) -> tuple[list[Application], list[Skip]]:
    """The Applications the ApplicationSet makes, and what was skipped; raises Malformed for bad input."""
    name = name_of(obj)
    label = f"ApplicationSet {name}"
    metadata = mapping_of(obj.get("metadata"), "metadata")
    spec = mapping_of(obj.get("spec"), "spec", required=True)
    generators = spec.get("generators")
    if not isinstance(generators, list) or not generators:
        raise Malformed("spec.generators must be a non-empty list")
    template = mapping_of(spec.get("template"), "spec.template", required=True)
    if spec.get("templatePatch"):
        return [], [Skip(name, "ApplicationSet spec.templatePatch is not evaluated by check")]
    found: list[Application] = []
    skipped: list[Skip] = []
    for index, generator in enumerate(generators):
        where = f"spec.generators[{index}]"
        try:
            kind = _kind(generator, where)
            sets = parameter_sets(generator, where, context)
            base = templating.merge_template(template, mapping_of(generator[kind], where).get("template") or {})
        except Unevaluated as problem:
            skipped.append(Skip(name, f"ApplicationSet {problem}"))
            continue
        except templating.Unsupported as problem:
            skipped.append(Skip(name, f"ApplicationSet {where}: {problem}"))
            continue
        except (GeneratorError, templating.TemplateError) as problem:
            raise Malformed(str(problem)) from None
        except RecursionError:
            raise Malformed(f"{where}: the generator is nested too deeply to read") from None
        for params in sets:
            which = f"{where} ({_shown(params)})"
            try:
                rendered = _render(base, params, context)
            except templating.Unsupported as problem:
                skipped.append(Skip(name, f"ApplicationSet {which}: {problem}"))
                continue
            except templating.TemplateError as problem:
                raise Malformed(f"{which}: {problem}") from None
            except RecursionError:
                raise Malformed(f"{which}: the template is nested too deeply to render") from None
            rendered_meta = dict(mapping_of(rendered.get("metadata"), "spec.template.metadata"))
            rendered_meta.setdefault("namespace", metadata.get("namespace") or control_plane_namespace)
            try:
                made = application(
                    {**rendered, "metadata": rendered_meta}, f"{place}: {label} {which}", control_plane_namespace
                )
            except Malformed as problem:
                raise Malformed(f"{which} makes an invalid Application: {problem}") from None
            found.append(replace(made, lifetime=_lifetime(made, rendered_meta, spec, name)))
    return found, skipped


KEEPING_POLICIES = ("create-only", "create-update")  # applicationsSync values that never delete an Application


def _lifetime(made: Application, meta: Mapping[str, Any], spec: Mapping[str, Any], appset: str) -> Lifetime:
    """The generated Application's lifetime: the ApplicationSet adds the resources finalizer to a template
    without finalizers unless `preserveResourcesOnDeletion` (applicationset/utils RenderTemplateParams), and
    never deletes its Applications under applicationsSync create-only or create-update."""
    found = spec.get("syncPolicy")
    policy: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    preserve = policy.get("preserveResourcesOnDeletion") is True
    finalizers = meta.get("finalizers")
    finalizer = has_finalizer(meta) if finalizers else not preserve
    keeps = str(policy.get("applicationsSync") or "")
    return replace(
        made.lifetime, finalizer=finalizer, appset=appset, appset_keeps=keeps if keeps in KEEPING_POLICIES else ""
    )


def parameter_sets(
    entry: Any, where: str, context: Context, depth: int = 1, inherited: Params | None = None
) -> list[Params]:
    """The parameter sets of one generator entry (rendered first with `inherited`, a matrix's first child's)."""
    kind = _kind(entry, where)
    if inherited:
        entry = _interpolated(entry, inherited, context)
    spec = mapping_of(entry[kind], f"{where}.{kind}", required=True) if entry[kind] is not None else {}
    if kind in NOT_EXPANDED:
        raise Unevaluated(
            f"{where}: the {kind} generator {NOT_EXPANDED[kind]}; list the Applications it makes with "
            "`argocd appset generate`"
        )
    if kind in COMBINERS:
        if depth > MAX_NESTING:
            raise GeneratorError(
                f"{where}: a {kind} generator nested three levels deep; Argo CD nests matrix and merge "
                "generators two levels at most"
            )

        def children(child: Any, child_where: str, params: Params | None) -> list[Params]:
            return parameter_sets(child, child_where, context, depth + 1, params)

        found = COMBINERS[kind](spec, f"{where}.{kind}", context, children)
    else:
        found = GENERATORS[kind](spec, f"{where}.{kind}", context)
    selector = read_selector(entry.get("selector"), f"{where}.selector")
    return found if selector.empty else [params for params in found if selector.matches(flatten(params))]


def _kind(entry: Any, where: str) -> str:
    if not isinstance(entry, Mapping):
        raise GeneratorError(f"{where} must be a mapping")
    kinds = [key for key in entry if key != "selector"]
    unknown = [key for key in kinds if key not in ARGO_GENERATORS]
    if unknown or len(kinds) != 1:
        problem = f"unknown generator {unknown[0]!r}" if unknown else f"{len(kinds)} generators in one entry"
        raise GeneratorError(f"{where}: {problem}; each entry holds one of: {', '.join(ARGO_GENERATORS)}")
    return str(kinds[0])


def _interpolated(entry: Mapping[str, Any], params: Params, context: Context) -> Any:
    """A matrix's second child rendered with the first child's parameters; its `values` keep any template
    that names a parameter the first child lacks, for the child's own parameters to fill."""

    def walk(node: Any, in_values: bool) -> Any:
        if isinstance(node, Mapping):
            return {key: walk(value, key == "values") for key, value in node.items()}
        if isinstance(node, list):
            return [walk(item, False) for item in node]
        if isinstance(node, str):
            if in_values and context.go_template:
                try:
                    return render(node, params, True, (*context.options, "missingkey=error"))
                except templating.TemplateError:
                    return node
            return render(node, params, context.go_template, context.options)
        return node

    return walk(entry, False)


def _render(template: Mapping[str, Any], params: Params, context: Context) -> Any:
    if not params:
        return template  # Argo CD renders nothing without parameters
    return templating.render_tree(template, lambda text: render(text, params, context.go_template, context.options))


def _shown(params: Params) -> str:
    """A few of a parameter set's values, to tell the reader which Application a message is about."""
    flat = flatten(params)
    keys = sorted(flat, key=lambda key: (not key.startswith(("name", "path", "server")), key))[:SHOWN_PARAMS]
    return ", ".join(f"{key}={flat[key]}" for key in keys) + (", ..." if len(flat) > SHOWN_PARAMS else "")
