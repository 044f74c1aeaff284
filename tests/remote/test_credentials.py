"""CHARTSHARE_REPOSITORIES: strict parsing, longest prefix at a path boundary, no secret in any message."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmp.errors import ConfigError
from cmp.remote.credentials import load, parse, scrub

FILE = """
- url: https://charts.example.com
  username: wide
  password: wide-secret
- url: https://charts.example.com/team-a/
  username: team-a
  password: "0123"
- url: oci://registry.example.com/charts
  username: robot
  password: oci-secret
  plainHttp: true
"""


def test_the_longest_covering_url_wins() -> None:
    credentials = parse(FILE, "repositories.yaml")
    assert credentials.find("https://charts.example.com/team-a/stable").username == "team-a"  # type: ignore[union-attr]
    assert credentials.find("https://charts.example.com/team-b").username == "wide"  # type: ignore[union-attr]
    assert credentials.find("oci://registry.example.com/charts/app").plain_http  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "repository",
    ["https://charts.example.com.evil.io/x", "https://charts.example.community", "http://charts.example.com", ""],
)
def test_a_prefix_counts_only_at_a_path_boundary(repository: str) -> None:
    assert parse(FILE, "f").find(repository) is None


def test_passwords_stay_verbatim_strings() -> None:
    assert "0123" in parse(FILE, "f").secrets


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("url: x", "must be a list"),
        ("- {url: ftp://x}", r"entry \[0\]: url must start with one of https://, http://, oci://"),
        ("- {url: https://x, usrname: a}", "unknown key 'usrname'; did you mean 'username'"),
        ("- {url: https://x, username: a}", "password is missing"),
        ("- {url: https://x, caFile: /nonexistent/ca.pem}", "caFile /nonexistent/ca.pem does not exist"),
        ("- {url: https://x, plainHttp: yes}", "plainHttp must be true or false"),
        ("- {url: https://x/}\n- {url: https://x}", r"entries \[0\] and \[1\] have the same url"),
        ("- [", "not valid YAML"),
        (
            "- {url: https://x, projects: team-a}",
            r"repositories.yaml:1: entry \[0\]: projects must be a non-empty list",
        ),
        ("- {url: https://x, projects: []}", r"projects must be a non-empty list; write a list of AppProject names"),
        ("- {url: https://x, projects: [[a]]}", "projects: every item must be a project name or glob"),
    ],
)
def test_every_problem_names_the_file_and_entry(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse(text, "repositories.yaml")


def test_no_message_ever_holds_a_password() -> None:
    with pytest.raises(ConfigError) as caught:
        parse("- {url: https://x, password: hunter2, pasword: hunter3}", "f")
    assert "hunter" not in str(caught.value)


def test_an_unreadable_file_says_what_to_mount(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"CHARTSHARE_REPOSITORIES=.*cannot read .*mount the repository credentials"):
        load({"CHARTSHARE_REPOSITORIES": str(tmp_path / "missing.yaml")})
    assert load({}).entries == ()


def test_scrub_replaces_every_secret() -> None:
    assert scrub("auth robot:s3cret failed, s3cret!", ["s3cret"]) == "auth robot:*** failed, ***!"


SCOPED = """
- url: https://charts.example.com
  username: wide
  password: wide-secret
  projects: [platform]
- url: https://charts.example.com/team-b
  username: team-b
  password: b-secret
  projects: ["team-b", "team-b-*"]
"""


@pytest.mark.parametrize(
    ("project", "user"),
    [("team-b", "team-b"), ("team-b-batch", "team-b"), ("platform", "wide"), ("team-a", None), ("default", None)],
)
def test_an_entry_with_projects_serves_only_those_projects(project: str, user: str | None) -> None:
    found = parse(SCOPED, "f", project).find("https://charts.example.com/team-b/index.yaml")
    assert (found.username if found else None) == user


def test_the_store_keys_a_fetch_by_the_entry_its_project_uses_and_never_another_s() -> None:
    url = "https://charts.example.com/team-b/index.yaml"
    grants = {project: parse(SCOPED, "f", project).grant(url) for project in ("team-b", "platform", "team-a")}
    assert len(set(grants.values())) == 3 and grants["team-a"] == ""
    assert "secret" not in "".join(grants.values())
    assert parse(SCOPED, "f", "team-a").secrets == ("wide-secret", "b-secret"), "every password is still scrubbed"
