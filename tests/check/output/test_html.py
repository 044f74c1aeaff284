"""The HTML page: one self-contained file a person opens, loaded in a real browser (headless Chromium) to
see what it shows; nothing from a repository becomes markup."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from cmp.check.analysis.claims import AppClaims, Claim
from cmp.check.analysis.conflicts import AppRow, Report, judge
from cmp.check.fleet.applications import Application, Skip
from cmp.check.output.html_report import to_html
from cmp.model import ClusterResourceId
from conftest import ROOT, make_source, run_cli

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make setup, as root)")
CLUSTER = "https://kubernetes.default.svc"
HOSTILE = '<script>document.title="owned"</script><img src=x onerror=alert(1)>'


def chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Headless Chromium with a profile of its own (no network needed: the page loads nothing)."""
    assert CHROMIUM is not None
    argv = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={cwd / 'profile'}",
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


def dump_dom(page: Path) -> str:
    """The DOM after load, scripts run, as the browser shows it."""
    done = chromium("--dump-dom", page.as_uri(), cwd=page.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(page: Path, png: Path, size: str = "1200,900") -> Path:
    done = chromium(f"--screenshot={png}", f"--window-size={size}", page.as_uri(), cwd=page.parent)
    assert done.returncode == 0 and png.is_file(), done.stderr[-2000:]
    return png


def png_colours(png: Path) -> int:
    """How many distinct colours the PNG's pixels hold (a blank page has one): read with zlib alone."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width = height = 0
    chunks = []
    position = 8
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) in ((8, 2), (8, 6)), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    colours: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                guess = min((abs(p - left), left), (abs(p - up), up), (abs(p - corner), corner))[1]
                line[i] = (line[i] + guess) & 0xFF
        previous = line
        colours.update(bytes(line[i : i + 3]) for i in range(0, stride, channels * 7))
    return len(colours)


def _claims(name: str, *emitted: Claim, stripped: tuple[Claim, ...] = ()) -> AppClaims:
    app = Application(name, f"apps.yaml: Application {name}", "default", CLUSTER, "ns", (make_source(),))
    return AppClaims(app, ["chartshare"], {c.id: c for c in emitted}, {c.id: c for c in stripped})


def _hostile_report() -> Report:
    namespace = ClusterResourceId(CLUSTER, "", "Namespace", "", "team")
    role = ClusterResourceId(CLUSTER, "rbac.authorization.k8s.io", "ClusterRole", "", HOSTILE)
    apps = {
        HOSTILE: _claims(HOSTILE, Claim(namespace, {}), Claim(role, {}, rule="apps/x/chartshare.yaml:3")),
        "b": _claims(
            "b", Claim(namespace, {}, protected=True), stripped=(Claim(role, {}, rule="apps/x/chartshare.yaml:3"),)
        ),
        "c": _claims("c", Claim(role._replace(name="c-role"), {}, renamed_from=HOSTILE)),
    }
    report = judge(apps, [], [Skip("d", f"render failed: {HOSTILE}")])
    return report


def test_the_page_is_self_contained_and_escapes_what_a_repository_wrote() -> None:
    page = to_html(_hostile_report())
    assert "<script>document" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing fetched
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page


@needs_chromium
def test_headless_chromium_shows_every_shared_object_and_app_and_runs_nothing_from_a_name(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(to_html(_hostile_report()), encoding="utf-8")
    dom = dump_dom(page)
    assert "<title>chartshare check</title>" in dom  # the name's script never ran (it would set the title)
    assert "<script>document.title" not in dom and "<img" not in dom
    assert dom.count("&lt;script&gt;document.title") >= 3  # the name, as text, in the map, the tree and skipped
    rows = re.findall(r'<tr class="(shared[^"]*)">', dom)
    assert rows == ["shared conflict", "shared"]  # Namespace team (a conflict), the ClusterRole (a rename)
    header = dom[dom.index("<thead>") : dom.index("</thead>")]
    assert header.count('class="app"') == 3
    assert "renames to c-role" in dom and "conflict: emits" in dom and "strips" in dom
    assert "d</span>: render failed" in dom


@needs_chromium
def test_the_screenshot_of_the_page_is_not_blank(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(to_html(_hostile_report()), encoding="utf-8")
    assert png_colours(screenshot(page, tmp_path / "page.png")) > 8
    (tmp_path / "blank.html").write_text("<!DOCTYPE html><title>x</title>", encoding="utf-8")
    assert png_colours(screenshot(tmp_path / "blank.html", tmp_path / "blank.png")) == 1


EXAMPLE = ROOT / "examples" / "shoong-delivery"
MAPPING = ["--repo", "https://git.example.com/platform/gitops.git=."]


@pytest.mark.parametrize("mode", ["raw", "rules"])
def test_the_example_pages_are_what_check_writes_today(tmp_path: Path, helm: str, mode: str) -> None:
    """examples/shoong-delivery/reports/: the shoong fleet's page and comment without (`--raw`) and with
    its chartshare.yaml; regenerate with the command in that folder's README when this fails."""
    written = {name: tmp_path / f"check-{mode}.{name}" for name in ("html", "md")}
    args = ["check", "examples/shoong-delivery/argocd", *MAPPING, *(["--raw"] if mode == "raw" else [])]
    args += ["--report", f"html={written['html']}", "--report", f"markdown={written['md']}"]
    result = run_cli(args, env={"CHARTSHARE_HELM": helm})
    assert result.exit_code == (1 if mode == "raw" else 0), result.stderr
    for name, path in written.items():
        assert path.read_text() == (EXAMPLE / "reports" / f"check-{mode}.{name}").read_text(), name


@needs_chromium
@pytest.mark.parametrize("mode", ["raw", "rules"])
def test_the_example_page_shows_the_shared_namespace_and_every_app(tmp_path: Path, mode: str) -> None:
    page = tmp_path / "page.html"
    shutil.copy(EXAMPLE / "reports" / f"check-{mode}.html", page)
    dom = dump_dom(page)
    row = dom[dom.index('<tr class="shared') : dom.index("</tr>", dom.index('<tr class="shared'))]
    assert "Namespace shoong" in row
    apps = ["batch", "delivery", "kitchen", "notification", "order"]
    for app in apps:
        assert f'<th class="app">dev-shoong-{app}</th>' in dom
        assert f'<span class="app">dev-shoong-{app}</span>' in dom
    cells = re.findall(r'<td class="([^"]+)"', row)
    if mode == "raw":
        assert row.startswith('<tr class="shared conflict"') and cells == ["conflict unprotected"] * 5
    else:
        assert cells == ["strips", "strips", "strips", "emits", "strips"]  # notification owns it, protected


def test_the_tree_nests_each_app_under_the_app_that_renders_it() -> None:
    rows = (
        AppRow("root", CLUSTER, "argocd", "directory", 2),
        AppRow("child-a", CLUSTER, "a", "helm", 3, parent="root"),
        AppRow("grandchild", CLUSTER, "g", "helm", 1, parent="child-a"),
        AppRow("alone", CLUSTER, "x", "helm", 1),
    )
    page = to_html(Report(rows, (), (), (), None))
    tree = page[page.index('<ul class="tree">') :]
    assert re.findall(r'<span class="app">([^<]+)</span>|(</ul>)', tree)[:6] == [
        ("root", ""),
        ("child-a", ""),
        ("grandchild", ""),
        ("", "</ul>"),
        ("", "</ul>"),
        ("alone", ""),
    ]
