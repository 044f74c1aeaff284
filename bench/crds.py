"""Large, realistic CustomResourceDefinitions for the benchmark chart, generated (never copied).

Operators' CRDs are big because they embed Kubernetes types whole: pod templates, containers, probes, volumes,
affinity. They are written by controller-gen in block style, keys sorted, with long descriptions as `|-`
literal blocks, long one-line descriptions wrapped at 80 columns (quoted when they hold `: `, so their
continuation lines may start with `[`, `&` or `*` and hold unbalanced quotes), CEL validation rules whose
plain scalar wraps onto lines starting with `&&`, `!=`, `!has(` or `*`, and schemas nested ten levels deep.
This module builds schemas of that shape from a seeded random generator, so every run writes the same bytes
and PyYAML meets as many nodes per byte as it does on real operator CRDs.
"""

from __future__ import annotations

import random
from typing import Any

Schema = dict[str, Any]

_PROSE = (
    "the object field value controller reconciles resource when set defaults to empty cluster namespace "
    "pod container selector label annotation spec status condition reason message must may should be is "
    "are of for in on a an this that which specifies describes overrides configuration replicas "
    "deployment service endpoint port protocol secret key reference name version api group kind list map "
    "entries optional required immutable cannot updated after creation deprecated use instead only "
    "applies if not nil zero unset scheduler node affinity toleration taint weight term expression "
    "operator values prefix suffix duration seconds timeout period threshold probe handler command args "
    "environment variable mount path volume claim storage class access mode read write capacity request "
    "limit quantity cpu memory "
)
_WORDS = tuple(_PROSE.split())
# What prometheus-operator's descriptions hold besides prose: label matchers, templates, JSON and YAML
# examples, Go durations, each of which opens a quote or flow where a parser would look for one.
_NOISE = (
    '`{job="node"}`',
    '{__name__=~"up|scrape_.*"}',
    "`[30s, 1m]`",
    "'{{ $labels.instance }}'",
    '"{{ .Values.x }}"',
    '["a", "b"]',
    "{a: b, c: [d]}",
    "`relabel_configs`",
    '`"quoted"`',
    "[`Authorization`]",
    '(e.g. `{app: "x"}`)',
    "it's",
    '"open',
    "{unclosed",
    "[see:",
)


class _Gen:
    """Builds schemas from a seeded RNG; every helper returns a fresh dict (the YAML dumper must not alias)."""

    def __init__(self, seed: int, noisy: bool = False) -> None:
        self.rng = random.Random(seed)
        self.noisy = noisy

    def sentence(self) -> str:
        words = [self.rng.choice(_WORDS) for _ in range(self.rng.randint(6, 16))]
        if self.noisy:  # prometheus-operator's prose: examples in braces, brackets, backquotes and quotes
            for _ in range(self.rng.randint(1, 3)):
                words.insert(self.rng.randrange(len(words) + 1), self.rng.choice(_NOISE))
        return " ".join(words).capitalize() + "."

    def description(self, name: str) -> str:
        """One line for most fields (a long one, the dumper wraps and quotes, for some), a wrapped paragraph
        (a `|-` block) for about a third of them."""
        first = f"{name} {self.sentence().lower()}"
        roll = self.rng.random()
        if roll < 0.15:
            values = ", ".join(f'"{self.rng.choice(_WORDS).upper()}' for _ in range(self.rng.randint(2, 4)))
            return f"{first} Valid values are: [{values}], or * for all of them, & {self.sentence().lower()}"
        if roll < 0.65:
            return first
        lines = [first] + [self.sentence() for _ in range(self.rng.randint(2, 7))]
        if self.rng.random() < 0.3:
            lines += ["", f'More info: https://kubernetes.io/docs/concepts/{name.lower()}#"{name}"']
        return "\n".join(lines)

    def leaf(self, name: str, kind: str = "string") -> Schema:
        schema: Schema = {"description": self.description(name), "type": kind}
        roll = self.rng.random()
        if kind == "integer":
            schema["format"] = "int32" if roll < 0.7 else "int64"
            if roll < 0.3:
                schema["minimum"] = 0
        elif kind == "string" and roll < 0.15:
            schema["enum"] = self.rng.sample(["Always", "Never", "IfNotPresent", "=", "!=", "In", "NotIn", "Exists"], 3)
        elif kind == "string" and roll < 0.25:
            schema["pattern"] = (
                "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"
            )
        return schema

    def obj(self, name: str, properties: Schema, required: tuple[str, ...] = ()) -> Schema:
        schema: Schema = {"description": self.description(name), "properties": dict(sorted(properties.items()))}
        if required:
            schema["required"] = list(required)
        schema["type"] = "object"
        if self.rng.random() < 0.2:
            schema["x-kubernetes-map-type"] = "atomic"
        if self.rng.random() < 0.15:
            schema["x-kubernetes-validations"] = [self.validation(sorted(properties)) for _ in range(2)]
        return schema

    def validation(self, fields: list[str]) -> Schema:
        """A CEL rule long enough to wrap, as Gateway API's CRDs hold them: a plain scalar (its continuation
        lines then start with `&&`, `!has(`, `*` or `!=`), or a quoted one when it compares with ''."""
        a, b, c = (self.rng.choice(fields) for _ in range(3))
        if self.rng.random() < 0.5:
            rule = (
                f"self.all(x, has(x.{a})) && x.{a} != 0 || !has(self.{b}) && size(self.{c}) * 2 <= 64 "
                f"&& self.{b}.all(y, y.{a} != self.{c}) || !has(self.{c})"
            )
        else:
            rule = (
                f"self.all(x, has(x.{a})) && x.{a} != '' || !has(self.{b}) ? size(self.{c}) * 2 <= 64 "
                f"&& self.{b}.all(y, y.{a} != self.{c}) : true"
            )
        return {"message": f"{a} must not be set for protocols ['HTTP', 'TCP', 'UDP'] when {b} is", "rule": rule}

    def array(self, name: str, items: Schema, key: str | None = None) -> Schema:
        schema: Schema = {"description": self.description(name), "items": items, "type": "array"}
        if key:
            schema["x-kubernetes-list-map-keys"] = [key]
            schema["x-kubernetes-list-type"] = "map"
        return schema

    def int_or_string(self, name: str) -> Schema:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "description": self.description(name),
            "x-kubernetes-int-or-string": True,
        }

    def quantities(self, name: str) -> Schema:
        return {
            "additionalProperties": {
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])?$",
                "x-kubernetes-int-or-string": True,
            },
            "description": self.description(name),
            "type": "object",
        }

    def key_ref(self, name: str) -> Schema:
        return self.obj(
            name,
            {"key": self.leaf("key"), "name": self.leaf("name"), "optional": self.leaf("optional", "boolean")},
            ("key",),
        )

    def env_var(self) -> Schema:
        value_from = self.obj(
            "valueFrom",
            {
                "configMapKeyRef": self.key_ref("configMapKeyRef"),
                "fieldRef": self.obj(
                    "fieldRef", {"apiVersion": self.leaf("apiVersion"), "fieldPath": self.leaf("fieldPath")}
                ),
                "resourceFieldRef": self.obj(
                    "resourceFieldRef",
                    {
                        "containerName": self.leaf("containerName"),
                        "divisor": self.int_or_string("divisor"),
                        "resource": self.leaf("resource"),
                    },
                ),
                "secretKeyRef": self.key_ref("secretKeyRef"),
            },
        )
        return self.obj("env", {"name": self.leaf("name"), "value": self.leaf("value"), "valueFrom": value_from})

    def probe(self, name: str) -> Schema:
        header = self.obj("httpHeader", {"name": self.leaf("name"), "value": self.leaf("value")}, ("name", "value"))
        return self.obj(
            name,
            {
                "exec": self.obj("exec", {"command": self.array("command", {"type": "string"})}),
                "failureThreshold": self.leaf("failureThreshold", "integer"),
                "grpc": self.obj("grpc", {"port": self.leaf("port", "integer"), "service": self.leaf("service")}),
                "httpGet": self.obj(
                    "httpGet",
                    {
                        "host": self.leaf("host"),
                        "httpHeaders": self.array("httpHeaders", header),
                        "path": self.leaf("path"),
                        "port": self.int_or_string("port"),
                        "scheme": self.leaf("scheme"),
                    },
                    ("port",),
                ),
                "initialDelaySeconds": self.leaf("initialDelaySeconds", "integer"),
                "periodSeconds": self.leaf("periodSeconds", "integer"),
                "successThreshold": self.leaf("successThreshold", "integer"),
                "tcpSocket": self.obj("tcpSocket", {"host": self.leaf("host"), "port": self.int_or_string("port")}),
                "timeoutSeconds": self.leaf("timeoutSeconds", "integer"),
            },
        )

    def security_context(self) -> Schema:
        return self.obj(
            "securityContext",
            {
                "allowPrivilegeEscalation": self.leaf("allowPrivilegeEscalation", "boolean"),
                "capabilities": self.obj(
                    "capabilities",
                    {
                        "add": self.array("add", {"type": "string"}, None),
                        "drop": self.array("drop", {"type": "string"}, None),
                    },
                ),
                "privileged": self.leaf("privileged", "boolean"),
                "readOnlyRootFilesystem": self.leaf("readOnlyRootFilesystem", "boolean"),
                "runAsGroup": self.leaf("runAsGroup", "integer"),
                "runAsNonRoot": self.leaf("runAsNonRoot", "boolean"),
                "runAsUser": self.leaf("runAsUser", "integer"),
                "seLinuxOptions": self.obj(
                    "seLinuxOptions", {k: self.leaf(k) for k in ("level", "role", "type", "user")}
                ),
                "seccompProfile": self.obj(
                    "seccompProfile",
                    {"localhostProfile": self.leaf("localhostProfile"), "type": self.leaf("type")},
                    ("type",),
                ),
            },
        )

    def container(self) -> Schema:
        port = self.obj(
            "port",
            {
                "containerPort": self.leaf("containerPort", "integer"),
                "hostIP": self.leaf("hostIP"),
                "name": self.leaf("name"),
                "protocol": self.leaf("protocol"),
            },
            ("containerPort",),
        )
        mount = self.obj(
            "volumeMount",
            {
                "mountPath": self.leaf("mountPath"),
                "name": self.leaf("name"),
                "readOnly": self.leaf("readOnly", "boolean"),
                "subPath": self.leaf("subPath"),
            },
            ("mountPath", "name"),
        )
        return self.obj(
            "container",
            {
                "args": self.array("args", {"type": "string"}),
                "command": self.array("command", {"type": "string"}),
                "env": self.array("env", self.env_var(), "name"),
                "image": self.leaf("image"),
                "imagePullPolicy": self.leaf("imagePullPolicy"),
                "livenessProbe": self.probe("livenessProbe"),
                "name": self.leaf("name"),
                "ports": self.array("ports", port, "containerPort"),
                "readinessProbe": self.probe("readinessProbe"),
                "resources": self.obj(
                    "resources", {"limits": self.quantities("limits"), "requests": self.quantities("requests")}
                ),
                "securityContext": self.security_context(),
                "startupProbe": self.probe("startupProbe"),
                "volumeMounts": self.array("volumeMounts", mount, "mountPath"),
                "workingDir": self.leaf("workingDir"),
            },
            ("name",),
        )

    def selector(self, name: str) -> Schema:
        requirement = self.obj(
            "matchExpressions",
            {
                "key": self.leaf("key"),
                "operator": self.leaf("operator"),
                "values": self.array("values", {"type": "string"}),
            },
            ("key", "operator"),
        )
        return self.obj(
            name,
            {
                "matchExpressions": self.array("matchExpressions", requirement),
                "matchLabels": {
                    "additionalProperties": {"type": "string"},
                    "description": self.description("matchLabels"),
                    "type": "object",
                },
            },
        )

    def affinity(self) -> Schema:
        term = self.obj(
            "podAffinityTerm",
            {
                "labelSelector": self.selector("labelSelector"),
                "namespaceSelector": self.selector("namespaceSelector"),
                "namespaces": self.array("namespaces", {"type": "string"}),
                "topologyKey": self.leaf("topologyKey"),
            },
            ("topologyKey",),
        )
        weighted = self.obj(
            "weightedPodAffinityTerm",
            {"podAffinityTerm": term, "weight": self.leaf("weight", "integer")},
            ("podAffinityTerm", "weight"),
        )
        pod_affinity = {
            "preferredDuringSchedulingIgnoredDuringExecution": self.array("preferred", weighted),
            "requiredDuringSchedulingIgnoredDuringExecution": self.array("required", term),
        }
        node_term = self.obj(
            "nodeSelectorTerm",
            {
                "matchExpressions": self.selector("nodeSelectorTerm")["properties"]["matchExpressions"],
                "matchFields": self.selector("matchFields")["properties"]["matchExpressions"],
            },
        )
        return self.obj(
            "affinity",
            {
                "nodeAffinity": self.obj(
                    "nodeAffinity",
                    {
                        "preferredDuringSchedulingIgnoredDuringExecution": self.array(
                            "preferred",
                            self.obj(
                                "preferredSchedulingTerm",
                                {"preference": node_term, "weight": self.leaf("weight", "integer")},
                            ),
                        ),
                        "requiredDuringSchedulingIgnoredDuringExecution": self.obj(
                            "required", {"nodeSelectorTerms": self.array("nodeSelectorTerms", node_term)}
                        ),
                    },
                ),
                "podAffinity": self.obj("podAffinity", pod_affinity),
                "podAntiAffinity": self.obj("podAntiAffinity", dict(pod_affinity)),
            },
        )

    def volume(self) -> Schema:
        items = self.array(
            "items",
            self.obj(
                "keyToPath", {"key": self.leaf("key"), "mode": self.leaf("mode", "integer"), "path": self.leaf("path")}
            ),
        )
        return self.obj(
            "volume",
            {
                "configMap": self.obj(
                    "configMap",
                    {"defaultMode": self.leaf("defaultMode", "integer"), "items": items, "name": self.leaf("name")},
                ),
                "emptyDir": self.obj(
                    "emptyDir", {"medium": self.leaf("medium"), "sizeLimit": self.int_or_string("sizeLimit")}
                ),
                "hostPath": self.obj("hostPath", {"path": self.leaf("path"), "type": self.leaf("type")}, ("path",)),
                "name": self.leaf("name"),
                "persistentVolumeClaim": self.obj(
                    "persistentVolumeClaim",
                    {"claimName": self.leaf("claimName"), "readOnly": self.leaf("readOnly", "boolean")},
                    ("claimName",),
                ),
                "secret": self.obj(
                    "secret",
                    {
                        "defaultMode": self.leaf("defaultMode", "integer"),
                        "items": items,
                        "secretName": self.leaf("secretName"),
                    },
                ),
            },
            ("name",),
        )

    def conditions(self) -> Schema:
        condition = self.obj(
            "condition",
            {
                "lastTransitionTime": {**self.leaf("lastTransitionTime"), "format": "date-time"},
                "message": self.leaf("message"),
                "observedGeneration": {**self.leaf("observedGeneration", "integer"), "format": "int64"},
                "reason": self.leaf("reason"),
                "status": {**self.leaf("status"), "enum": ["True", "False", "Unknown"]},
                "type": self.leaf("type"),
            },
            ("lastTransitionTime", "message", "reason", "status", "type"),
        )
        return self.array("conditions", condition, "type")

    def spec(self, parts: tuple[str, ...]) -> Schema:
        """A workload-like spec embedding the named Kubernetes types."""
        builders: dict[str, Any] = {
            "containers": lambda: self.array("containers", self.container(), "name"),
            "initContainers": lambda: self.array("initContainers", self.container(), "name"),
            "affinity": self.affinity,
            "volumes": lambda: self.array("volumes", self.volume(), "name"),
            "tolerations": lambda: self.array(
                "tolerations",
                self.obj("toleration", {k: self.leaf(k) for k in ("effect", "key", "operator", "value")}),
            ),
            "selector": lambda: self.selector("selector"),
            "podSecurityContext": self.security_context,
            "healthCheck": lambda: self.probe("healthCheck"),
            "env": lambda: self.array("env", self.env_var(), "name"),
        }
        props: Schema = {
            "image": self.leaf("image"),
            "paused": self.leaf("paused", "boolean"),
            "replicas": self.leaf("replicas", "integer"),
            "resources": self.obj(
                "resources", {"limits": self.quantities("limits"), "requests": self.quantities("requests")}
            ),
        }
        for name in parts:
            props[name] = builders[name]()
        return self.obj("spec", props)


def crd(index: int, parts: tuple[str, ...], versions: int, noisy: bool = False) -> dict[str, Any]:
    """The CRD number `index`: its spec embeds the `parts` types; it is served in `versions` versions;
    `noisy` descriptions hold braces, brackets, backquotes and quotes, as prometheus-operator's do."""
    gen = _Gen(index, noisy)
    group = f"{['monitoring', 'networking', 'storage', 'batch', 'security'][index % 5]}.bench.example.io"
    kind = f"{['Collector', 'Gateway', 'Volume', 'Pipeline', 'Policy', 'Agent', 'Mesh', 'Probe'][index % 8]}{index}"
    plural = kind.lower() + "s"
    schema = gen.obj(
        kind,
        {
            "apiVersion": gen.leaf("apiVersion"),
            "kind": gen.leaf("kind"),
            "metadata": {"type": "object"},
            "spec": gen.spec(parts),
            "status": gen.obj(
                "status",
                {
                    "conditions": gen.conditions(),
                    "observedGeneration": gen.leaf("observedGeneration", "integer"),
                    "replicas": gen.leaf("replicas", "integer"),
                },
            ),
        },
        ("spec",),
    )
    names = ["v1", "v1beta1", "v1alpha1"][:versions]
    metadata: dict[str, Any] = {"name": f"{plural}.{group}"}
    if index % 4:  # most operator CRDs carry controller-gen's annotation; some carry none
        metadata = {"annotations": {"controller-gen.kubebuilder.io/version": "v0.16.5"}, **metadata}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": metadata,
        "spec": {
            "group": group,
            "names": {
                "categories": ["bench"],
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
            },
            "scope": "Cluster" if index % 7 == 0 else "Namespaced",
            "versions": [
                {
                    "additionalPrinterColumns": [
                        {"jsonPath": ".status.replicas", "name": "Replicas", "type": "integer"},
                        {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
                    ],
                    "name": name,
                    "schema": {"openAPIV3Schema": schema},
                    "served": True,
                    "storage": position == 0,
                    "subresources": {"status": {}},
                }
                for position, name in enumerate(names)
            ],
        },
    }
