"""A chart from an OCI registry: `helm pull oci://<repository>/<name> --version <version>` in a private home.

The login (when CHARTSHARE_REPOSITORIES has an entry with credentials for the reference) goes to a
registry config under /tmp that is deleted with the home; the password reaches helm on stdin.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from cmp.errors import HelmError, RemoteError
from cmp.helm.process import run_helm
from cmp.model import RemoteChart
from cmp.remote.credentials import Credentials
from cmp.remote.deadline import Deadline
from cmp.remote.helm_home import private_home, registry_login, repository_error


def reference(chart: RemoteChart) -> str:
    return f"{chart.repository.rstrip('/')}/{chart.name}"


def download(
    chart: RemoteChart, target: Path, secrets: Credentials, deadline: Deadline, *, helm: str, env: Mapping[str, str]
) -> None:
    """Write the chart's .tgz to `target` (helm pulls into a scratch folder beside it)."""
    ref = reference(chart)
    entry = secrets.find(ref)
    pulled = target.parent / "pulled"
    pulled.mkdir()
    with private_home(env) as (_, private):
        if entry is not None and entry.username:
            host = urlsplit(ref).netloc
            what = f"registry {host} (chart {chart.name})"
            registry_login(helm, host, entry, secrets, env=private, deadline=deadline, cwd=pulled, what=what)
        argv = [helm, "pull", ref, f"--version={chart.version}", f"--destination={pulled}"]
        if entry is not None and entry.plain_http:
            argv.append("--plain-http")
        if entry is not None and entry.ca_file:
            argv.append(f"--ca-file={entry.ca_file}")
        what = f"helm pull {ref} --version {chart.version}"
        try:
            run_helm(argv, cwd=pulled, timeout=deadline.left(what), what=what, env=private)
        except HelmError as error:
            raise RemoteError(repository_error(str(error), entry, secrets, ref)) from None
    archives = sorted(pulled.glob("*.tgz"))
    if len(archives) != 1:
        raise RemoteError(f"helm pull {ref} --version {chart.version} left {len(archives)} archives, not one")
    archives[0].rename(target)
    pulled.rmdir()
