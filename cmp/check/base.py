"""`check --base REV`: the fleet as it was at a revision of the repository, for the lifecycle comparison.

The revision's tree is read with `git archive` into a temporary folder, so the checkout, its index and
its branches are never written, and rendered with the same options as the checkout. The paths given to
check are taken at the same place inside that tree (a path the revision lacks adds nothing to its
fleet). Every problem (not a Git repository, a revision it lacks, a shallow clone, an unreadable tree, a
fleet that does not load there) is one error line naming the revision.
"""

from __future__ import annotations

import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from cmp.check import rounds
from cmp.check.analysis.claims import AppClaims
from cmp.check.fleet import inventory
from cmp.check.fleet.repos import Repositories, remotes_of
from cmp.check.sources import renders
from cmp.check.sources.plan import plan

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
    skipped: frozenset[str] = frozenset()  # apps with a source check did not render there
    errors: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def at(revision: str, paths: Sequence[Path], settings: Settings) -> Base:
    """The fleet's claims at `revision`, rendered as the checkout is, with the checkout's own remotes
    mapped to the revision's tree."""
    try:
        with checked_out(settings.root, revision, paths) as tree:
            return render(tree, revision, settings)
    except BaseError as problem:
        return Base(errors=[str(problem)])


def render(tree: Tree, revision: str, settings: Settings) -> Base:
    repositories = Repositories.build(tree.root, remotes_of(settings.root), settings.mappings)
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
    unrendered = frozenset(skip.app for skip in skipped)
    return Base(renders.claims_by_app(found.rendered, skipped), places, tree.commit, unrendered, notices=notices)


def relative(text: str, tree: Tree, revision: str) -> str:
    """A message about the revision's copy, naming places as `REV:path` instead of the temporary folder."""
    return text.replace(f"{tree.top}/", f"{revision}:").replace(str(tree.top), f"{revision}:.")
