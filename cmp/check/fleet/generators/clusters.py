"""The clusters generator: one parameter set per Argo CD cluster Secret its selector matches, plus the
local cluster.

Argo CD reads the Secrets labelled `argocd.argoproj.io/secret-type: cluster`; check reads them from
`--clusters FILE`, as `kubectl get secret -o yaml` prints them (`data` in base64, or `stringData`). The
local cluster `in-cluster` (https://kubernetes.default.svc) has no Secret and so no labels: it joins only
when the selector is empty and no matching Secret already names that server.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cmp.check.fleet import applications
from cmp.check.fleet.generators.context import ClusterSecret, Context, Unevaluated
from cmp.check.fleet.generators.params import GeneratorError, Params, sanitize_name, with_values
from cmp.check.fleet.generators.selector import read_selector

SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
CLUSTER = "cluster"
IN_CLUSTER_NAME = applications.IN_CLUSTER_NAME
IN_CLUSTER_SERVER = applications.IN_CLUSTER_SERVER
HOW_TO_DUMP = f"kubectl -n argocd get secret -l {SECRET_TYPE_LABEL}={CLUSTER} -o yaml > clusters.yaml"


def generate(spec: Mapping[str, Any], where: str, context: Context) -> list[Params]:
    selector = read_selector(spec.get("selector"), f"{where}.selector")
    if context.clusters is None:
        raise Unevaluated(
            f"{where}: the clusters generator reads Argo CD's cluster Secrets; give them with --clusters FILE "
            f"({HOW_TO_DUMP})"
        )
    by_name = {secret.name: secret for secret in context.clusters if selector.matches(secret.labels)}
    found = [_params(secret, context.go_template) for secret in by_name.values()]
    if selector.empty and not any(secret.server == IN_CLUSTER_SERVER for secret in by_name.values()):
        found.append(
            {"name": IN_CLUSTER_NAME, "nameNormalized": IN_CLUSTER_NAME, "server": IN_CLUSTER_SERVER, "project": ""}
        )
    found = [with_values(spec.get("values"), params, context.go_template, context.options, where) for params in found]
    flat_list = spec.get("flatList", False)
    if not isinstance(flat_list, bool):
        raise GeneratorError(f"{where}.flatList must be true or false")
    return [{"clusters": found}] if flat_list else found


def _params(secret: ClusterSecret, go: bool) -> Params:
    params: Params = {
        "name": secret.name,
        "nameNormalized": sanitize_name(secret.name),
        "server": secret.server,
        "project": secret.project or "",
    }
    if go:
        metadata: Params = {}
        if secret.annotations:
            metadata["annotations"] = dict(secret.annotations)
        if secret.labels:
            metadata["labels"] = dict(secret.labels)
        params["metadata"] = metadata
        return params
    params.update({f"metadata.annotations.{key}": value for key, value in secret.annotations.items()})
    params.update({f"metadata.labels.{key}": value for key, value in secret.labels.items()})
    return params


def read_clusters(path: Path, errors: list[str]) -> list[ClusterSecret]:
    """The cluster Secrets of a `kubectl get secret -o yaml` dump; Secrets of other types are left out,
    and anything malformed is an error naming the document and the field."""
    if not path.is_file():
        errors.append(f"--clusters {path}: no such file")
        return []
    found: list[ClusterSecret] = []
    for number, count, document in applications.documents(path, errors):
        for suffix, obj in applications.items(document):
            place = applications.place(path, number, count, suffix)
            try:
                secret = cluster_secret(obj)
            except GeneratorError as problem:
                errors.append(f"{place}: {problem}")
                continue
            if secret is not None:
                found.append(secret)
    return found


def cluster_secret(obj: Any) -> ClusterSecret | None:
    """One object of the dump as a cluster Secret; None for a Secret of another type."""
    if not isinstance(obj, Mapping) or obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        raise GeneratorError(f"a cluster Secret must be a v1 Secret, got {kind or 'something else'}")
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str):
        raise GeneratorError("Secret has no metadata.name")
    label = f"Secret {metadata['name']}"
    labels = _strings(metadata.get("labels"), f"{label}: metadata.labels")
    if labels.get(SECRET_TYPE_LABEL) != CLUSTER:
        return None
    annotations = _strings(metadata.get("annotations"), f"{label}: metadata.annotations")
    fields = {**_decoded(obj.get("data"), label), **_strings(obj.get("stringData"), f"{label}: stringData")}
    for key in ("name", "server"):
        if not fields.get(key):
            raise GeneratorError(f"{label}: data.{key} is missing; an Argo CD cluster Secret needs name and server")
    return ClusterSecret(fields["name"], fields["server"], fields.get("project"), labels, annotations)


def _decoded(data: Any, label: str) -> dict[str, str]:
    """`data` of a Secret: base64 values, as the API server prints them."""
    found = {}
    for key, value in _strings(data, f"{label}: data").items():
        try:
            found[key] = base64.b64decode(value, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise GeneratorError(f"{label}: data.{key} is not base64 of UTF-8 text") from None
    return found


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(item, str) for item in value.values()):
        raise GeneratorError(f"{where} must map names to strings")
    return {str(key): item for key, item in value.items()}
