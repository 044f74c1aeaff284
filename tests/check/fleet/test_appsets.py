"""ApplicationSet templating: fasttemplate and the Go-template subset, as Argo CD renders them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cmp.check.fleet import appsets as appset
from cmp.check.fleet.appsets import TemplateError, Unsupported, render_fast, render_go


def test_fasttemplate_replaces_known_tags_and_keeps_unknown_ones() -> None:
    params = {"name": "seoul", "values.tier": "gold"}
    assert render_fast("{{name}}-{{ values.tier }}-{{missing}}-{{}}", params) == "seoul-gold-{{missing}}-{{}}"


def test_fasttemplate_flattens_the_values_map_and_prints_scalars_like_go() -> None:
    element = {"name": "a", "replicas": 3, "ratio": 1.5, "big": 1000000, "on": True, "none": None, "values": {"x": 2}}
    assert appset.flat_params(element) == {
        "name": "a",
        "replicas": "3",
        "ratio": "1.5",
        "big": "1e+06",
        "on": "true",
        "none": "",
        "values.x": "2",
    }


@pytest.mark.parametrize("value", [{"url": "x"}, ["a"]])
def test_fasttemplate_refuses_nested_element_values(value: object) -> None:
    with pytest.raises(TemplateError, match="goTemplate: true"):
        appset.flat_params({"cluster": value})


@pytest.mark.parametrize(
    ("number", "printed"),
    [(0, "0"), (7, "7"), (123456, "123456"), (1234567, "1.234567e+06"), (0.0001, "0.0001"), (0.00001, "1e-05")],
)
def test_numbers_print_as_gos_fmt_prints_a_float64(number: float, printed: str) -> None:
    assert appset.go_string(number) == printed


def test_go_template_reads_nested_keys_and_honours_trim_markers() -> None:
    data = {"cluster": {"name": "seoul", "server": "https://seoul"}, "service": "order"}
    assert render_go("{{.cluster.name}}-shoong-{{ .service }}", data) == "seoul-shoong-order"
    assert render_go("a  {{- .service -}}  b", data) == "aorderb"
    assert render_go("{{/* a comment */}}x", data) == "x"


def test_go_template_pipelines_pass_the_piped_value_last() -> None:
    data = {"name": "team-a", "labels": {"app.kubernetes.io/name": "api"}, "n": 3}
    assert render_go('{{ .name | replace "-" "_" | upper }}', data) == "TEAM_A"
    assert render_go('{{ printf "%s-%d" .name .n }}', data) == "team-a-3"
    assert render_go('{{ default "fallback" .missing }}', data) == "fallback"
    assert render_go('{{ index .labels "app.kubernetes.io/name" }}', data) == "api"
    assert render_go("{{ .name | trunc 4 }}", data) == "team"
    assert render_go('{{ "Team A_1" | normalize }}', data) == "team-a-1"


def test_go_template_missing_keys_print_no_value_unless_missingkey_error() -> None:
    assert render_go("{{.nope}}", {}) == "<no value>"
    with pytest.raises(TemplateError, match='no entry for key "nope"'):
        render_go("{{.nope}}", {}, ("missingkey=error",))


@pytest.mark.parametrize("text", ["{{ if .x }}y{{ end }}", "{{ $v := .x }}", "{{ range .items }}{{ . }}{{ end }}"])
def test_go_template_control_flow_is_left_unsupported(text: str) -> None:
    with pytest.raises(Unsupported):
        render_go(text, {"x": 1, "items": []})


def test_go_template_unknown_functions_are_unsupported() -> None:
    with pytest.raises(Unsupported, match="sha256sum"):
        render_go("{{ .x | sha256sum }}", {"x": "a"})


def test_every_string_and_map_key_is_rendered_and_null_values_dropped() -> None:
    tree = {"metadata": {"name": "{{name}}", "labels": {"tier-{{name}}": "x", "gone": None}}, "n": 3}
    rendered = appset.render_tree(tree, lambda text: render_fast(text, {"name": "a"}))
    assert rendered == {"metadata": {"name": "a", "labels": {"tier-a": "x"}}, "n": 3}


def test_a_generator_template_overrides_the_spec_template_where_it_sets_values() -> None:
    base = {"metadata": {"name": "x", "labels": {"a": "1"}}, "spec": {"project": "p"}}
    override = {"metadata": {"labels": {"b": "2"}}, "spec": {"project": ""}}
    assert appset.merge_template(base, override) == {
        "metadata": {"name": "x", "labels": {"a": "1", "b": "2"}},
        "spec": {"project": "p"},
    }


@given(st.text().filter(lambda text: "{{" not in text), st.dictionaries(st.text(), st.text()))
def test_text_without_actions_renders_unchanged(text: str, params: dict[str, str]) -> None:
    assert render_fast(text, params) == text
    assert render_go(text, params) == text
