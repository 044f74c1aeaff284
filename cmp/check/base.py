"""`check --base REV`: the fleet as it was at a revision of the repository, for the lifecycle comparison.

The revision's tree is read with `git archive` into a temporary folder, so the checkout, its index and
its branches are never written, and rendered with the same options as the checkout. The paths given to
check are taken at the same place inside that tree (a path the revision lacks adds nothing to its
fleet), and so is every repository the checkout stands for: its own remotes, and each `--repo URL=DIR`
whose DIR is `--repo-root` or inside it. Other mapped repositories are read as they are, and a note says
so once. Every problem (not a Git repository, a revision it lacks, a shallow clone, an unreadable tree, a
fleet that does not load there) is one error line naming the revision.

An app the change removes is not gone from the cluster: its Application keeps syncing its last spec, which
now reads the new revision, until something deletes it (ARGOCD.md). `last_specs` renders those specs at the
checkout, so the lifecycle model knows what each emits meanwhile.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from cmp.check import rounds
from cmp.check.analysis.claims import AppClaims
from cmp.check.analysis.lifecycle import LastSpecs
from cmp.check.fleet import inventory
from cmp.check.fleet.applications import Application, Fleet, Skip
from cmp.check.fleet.repos import Repositories, remotes_of
from cmp.check.sources import renders
from cmp.check.sources.plan import plan

OUTSIDE_NOTE = (
    "--base: --repo {url}={folder} is outside --repo-root, so its files are read as they are now at both "
    "revisions: a change there is not seen"
)

GIT_TIMEOUT = 60.0  # an archive of a large repository takes a while; a hung git must not hang CI


class BaseError(Exception):
    """The revision cannot be read; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class Tree:
    """The revision's copy of the repository root, and the check paths inside it."""

    top: Path  # the repository's top folder, extracted
    root: Path  # --repo-root's place in it
    paths: list[Path] = field(default_factory=list)
    commit: str = ""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise BaseError("--base needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise BaseError(f"--base: git {args[0]} took longer than {GIT_TIMEOUT:.0f} s in {root}") from None


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].removeprefix("fatal: ").removeprefix("error: ") if lines else f"git exited {done.returncode}"


def resolve(root: Path, revision: str) -> tuple[Path, str]:
    """(the repository's top folder, the revision's commit) for `revision` of the repository at `root`."""
    if not revision.strip() or revision.startswith("-"):
        raise BaseError(f"--base {revision!r} is not a revision: give a branch, tag or commit, e.g. origin/main")
    top = _git(root, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise BaseError(f"--base {revision}: --repo-root {root} is not in a Git repository ({_said(top)})")
    found = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}")
    if found.returncode != 0:
        shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true"
        if shallow:
            raise BaseError(
                f"--base {revision}: no such revision in {root}, a shallow clone: fetch the history first "
                "(git fetch --unshallow, or fetch-depth: 0 in actions/checkout)"
            )
        raise BaseError(
            f"--base {revision}: no such revision in {root}: fetch it (e.g. git fetch origin main) or name another"
        )
    return Path(top.stdout.decode().strip()), found.stdout.decode().strip()


@contextmanager
def checked_out(root: Path, revision: str, paths: Sequence[Path]) -> Iterator[Tree]:
    """The revision's tree in a temporary folder (removed afterwards), with `paths` mapped into it."""
    top, commit = resolve(root, revision)
    inside = root.resolve().relative_to(top.resolve())
    mapped: list[Path] = []
    for path in paths:
        try:
            mapped.append(inside / path.resolve().relative_to(root.resolve()))
        except ValueError:
            raise BaseError(
                f"--base {revision}: {path} is outside --repo-root {root}, so it has no copy at the revision"
            ) from None
    with tempfile.TemporaryDirectory(prefix="chartshare-base-") as scratch:
        tree = Path(scratch) / "tree"
        tree.mkdir()
        _extract(top, revision, commit, tree)
        base_root = tree / inside
        yield Tree(tree, base_root, [tree / path for path in mapped if (tree / path).exists()], commit)


def _extract(top: Path, revision: str, commit: str, into: Path) -> None:
    try:
        process = subprocess.Popen(
            ["git", "-C", str(top), "archive", "--format=tar", commit],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except FileNotFoundError:
        raise BaseError("--base needs git on PATH") from None
    assert process.stdout is not None and process.stderr is not None
    problem = ""
    try:
        with tarfile.open(fileobj=process.stdout, mode="r|") as archive:
            archive.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as error:
        problem = str(error)
    finally:
        process.stdout.close()
        stderr = process.stderr.read().decode("utf-8", "replace").strip().splitlines()
        process.stderr.close()
        returncode = process.wait(timeout=GIT_TIMEOUT)
    if returncode != 0 or problem:
        said = stderr[-1].removeprefix("fatal: ").removeprefix("error: ") if stderr else problem
        raise BaseError(f"--base {revision}: cannot read the revision's files ({said or f'git exited {returncode}'})")


@dataclass(frozen=True, slots=True)
class Settings:
    """The checkout's options, for rendering the revision the same way (a shard renders its own apps):
    `tree` is how the checkout's fleet was rendered; its repositories and scratch folder are the revision's."""

    root: Path
    mappings: Sequence[tuple[str, Path]]
    tree: rounds.Settings


@dataclass(frozen=True, slots=True)
class Base:
    """The fleet at the revision: each app's claims and its place in the fleet's order, or the errors that
    stop the check (naming `REV:path`); and the render cache's notices."""

    apps: dict[str, AppClaims] = field(default_factory=dict)
    places: dict[str, int] = field(default_factory=dict)
    commit: str = ""
    skipped: tuple[Skip, ...] = ()  # the sources check did not render there (a failed render among them)
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said once on stderr

    @property
    def unrendered(self) -> frozenset[str]:
        """The apps with a source not rendered at the revision."""
        return frozenset(skip.app for skip in self.skipped)


def at(revision: str, paths: Sequence[Path], settings: Settings) -> Base:
    """The fleet's claims at `revision`, rendered as the checkout is, with the checkout's own remotes
    mapped to the revision's tree."""
    try:
        with checked_out(settings.root, revision, paths) as tree:
            return render(tree, revision, settings)
    except BaseError as problem:
        return Base(errors=[str(problem)])


def render(tree: Tree, revision: str, settings: Settings) -> Base:
    mappings, notes = at_revision(settings.mappings, settings.root, tree.root)
    repositories = Repositories.build(tree.root, remotes_of(settings.root), mappings)
    how = settings.tree
    loaded = inventory.load(tree.paths, how.control_plane_namespace, repositories, how.clusters)
    if loaded.errors:
        planned = plan(loaded.applications, repositories, raw=how.raw, helm=how.helm, timeout=how.timeout)
        return Base(errors=[relative(error, tree, revision) for error in loaded.errors + planned.errors])
    with tempfile.TemporaryDirectory(prefix="chartshare-check-") as scratch:  # dependencies built here
        found = rounds.render_tree(
            loaded, replace(how, repositories=repositories, progress=None, scratch=Path(scratch))
        )
    notices = list(dict.fromkeys(n for result in found.rendered for n in result.notices))
    if found.errors:
        return Base(errors=[relative(error, tree, revision) for error in found.errors], notices=notices)
    skipped = [*found.skipped, *found.unfetched, *found.failed]  # a failed render there: unsure, as skipped
    places = {app.name: place for place, app in enumerate(found.applications)}
    apps = renders.claims_by_app(found.rendered, skipped)
    return Base(apps, places, tree.commit, tuple(skipped), notices=notices, notes=notes)


def at_revision(
    mappings: Sequence[tuple[str, Path]], root: Path, tree_root: Path
) -> tuple[list[tuple[str, Path]], list[str]]:
    """The --repo mappings for the revision: a folder that is --repo-root or inside it, at its place in the
    revision's tree; any other as it is, with a note saying so."""
    moved: list[tuple[str, Path]] = []
    notes: list[str] = []
    for url, folder in mappings:
        try:
            inside = folder.resolve().relative_to(root.resolve())
        except ValueError:
            moved.append((url, folder))
            notes.append(OUTSIDE_NOTE.format(url=url, folder=folder))
            continue
        moved.append((url, tree_root / inside))
    return moved, notes


def last_specs(base: Base, current: Collection[str], settings: rounds.Settings) -> LastSpecs:
    """The last specs of the apps the change removes (those at the revision the fleet lacks now), rendered
    at the checkout: what each emits while its Application keeps syncing. An app whose source path is gone
    there, or whose render fails, is one Argo CD cannot render either, so it cannot sync."""
    removed = [result.app for name, result in base.apps.items() if name not in current]
    stuck: dict[str, str] = {}
    ready: list[Application] = []
    for app in removed:
        missing = [source for source in app.sources if _gone(source.path, source.chart, source.repo_url, settings)]
        if missing:
            stuck[app.name] = f"its source path {missing[0].path} is gone at the new revision"
        else:
            ready.append(replace(app, parent=None))
    if not ready:
        return LastSpecs({}, stuck)
    with tempfile.TemporaryDirectory(prefix="chartshare-check-") as scratch:
        found = rounds.render_tree(Fleet(ready), replace(settings, progress=None, scratch=Path(scratch)))
    stuck.update((skip.app, skip.reason) for skip in found.failed)
    rendered = renders.claims_by_app(found.rendered, [*found.skipped, *found.unfetched, *found.failed])
    names = {app.name for app in ready}
    return LastSpecs({name: result for name, result in rendered.items() if name in names and name not in stuck}, stuck)


def _gone(path: str | None, chart: str | None, url: str, settings: rounds.Settings) -> bool:
    """Whether a Git source's path is missing from the checkout its repoURL names."""
    if path is None or chart:
        return False
    root = settings.repositories.folder_of(url)
    return root is not None and not (root / path.strip("/")).is_dir()


def relative(text: str, tree: Tree, revision: str) -> str:
    """A message about the revision's copy, naming places as `REV:path` instead of the temporary folder."""
    return text.replace(f"{tree.top}/", f"{revision}:").replace(str(tree.top), f"{revision}:.")
