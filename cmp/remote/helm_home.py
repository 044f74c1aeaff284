"""helm with a home of its own: a private folder under /tmp per request, holding only this request's logins.

The sidecar's helm home may hold anything (another app's registry login); a download runs with every
HELM_*_HOME variable pointed into a fresh folder that is deleted afterwards, passwords reach helm on stdin,
and helm's messages are scrubbed of every secret before they are shown.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from cmp.errors import HelmError
from cmp.helm.process import run_helm
from cmp.remote.credentials import ENV, Credential, Credentials, scrub
from cmp.remote.deadline import Deadline

# The variables that point helm at its homes; all of them are set, so none leaks in from the sidecar.
HELM_HOME_VARS = {
    "HELM_CACHE_HOME": "cache",
    "HELM_CONFIG_HOME": "config",
    "HELM_DATA_HOME": "data",
    "HELM_REPOSITORY_CACHE": "cache/repository",
    "HELM_CONTENT_CACHE": "cache/content",
    "HELM_REPOSITORY_CONFIG": "config/repositories.yaml",
    "HELM_REGISTRY_CONFIG": "config/registry/config.json",
}


@contextlib.contextmanager
def private_home(env: Mapping[str, str]) -> Iterator[tuple[Path, dict[str, str]]]:
    """(the home, the environment pointing helm at it); the home is deleted on the way out."""
    home = Path(tempfile.mkdtemp(prefix="chartshare-helm-"))
    try:
        private = dict(env)
        private.update({name: str(home / relative) for name, relative in HELM_HOME_VARS.items()})
        yield home, private
    finally:
        shutil.rmtree(home, ignore_errors=True)


def helm_major(helm: str, env: Mapping[str, str], deadline: Deadline, cwd: Path) -> int:
    """3 or 4: their registry flags differ (`--insecure` became `--plain-http`)."""
    what = "helm version"
    out = run_helm(
        [helm, "version", "--template={{.Version}}"], cwd=cwd, timeout=deadline.left(what), what=what, env=env
    )
    found = re.match(r"v?([0-9]+)\.", out.strip())
    return int(found.group(1)) if found else 3


def registry_login(
    helm: str,
    host: str,
    entry: Credential,
    secrets: Credentials,
    *,
    env: Mapping[str, str],
    deadline: Deadline,
    cwd: Path,
    what: str,
) -> None:
    """`helm registry login` to one host with the entry's credentials (password on stdin)."""
    argv = [helm, "registry", "login", host, f"--username={entry.username}", "--password-stdin"]
    if entry.ca_file:
        argv.append(f"--ca-file={entry.ca_file}")
    if entry.plain_http:
        argv.append("--plain-http" if helm_major(helm, env, deadline, cwd) >= 4 else "--insecure")
    try:
        run_helm(argv, cwd=cwd, timeout=deadline.left(what), what=what, env=env, stdin=entry.password.encode())
    except HelmError as error:
        raise HelmError(repository_error(str(error), entry, secrets)) from None


def repository_error(message: str, entry: Credential | None, secrets: Credentials, url: str = "") -> str:
    """helm's message, scrubbed, with where to look: the entry used, the entry that serves other projects
    only, or where to add one."""
    withheld = secrets.withheld(url) if entry is None and url else ""
    if withheld:
        hint = f"; {withheld}"
    elif entry is None:
        hint = f"; if it needs credentials, add its URL to the file {ENV} names"
    elif entry.username:
        hint = f"; check {entry.label} in {secrets.source}"
    else:
        hint = f"; if it needs credentials, give {entry.label} in {secrets.source} a username and password"
    return scrub(message, secrets.secrets) + hint
