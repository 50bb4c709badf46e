"""The built site in a real browser: headless Chromium loads the home page, a tutorial page and an API
page from a local HTTP server; the rendered DOM must have the page title, the navigation and
highlighted code, and a screenshot of each is kept (under pytest's tmp_path) for a person to look at."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("material", reason="the docs extra is not installed: pip install -e '.[docs]'")

PAGES = [
    ("", "kubeloop", "Where to go"),
    ("tutorial/3-reconcile/", "3. The reconciler", "reconcile_website"),
    ("reference/operator/", "Operator", "finalize"),
]


def _browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium): the browser check needs one")
    return found


@pytest.fixture(scope="module")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)], cwd=REPO,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def _chromium(browser: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", f"--user-data-dir={home / 'profile'}", "--virtual-time-budget=5000", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=dict(os.environ, HOME=str(home)))


@pytest.mark.parametrize(("path", "title", "text"), PAGES)
def test_page_renders(site_url: str, tmp_path: Path, path: str, title: str, text: str) -> None:
    browser = _browser()
    url = site_url + path
    dom = _chromium(browser, "--dump-dom", url, home=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert f"<title>{title}" in html, html[:2000]
    assert 'class="md-nav' in html and "Tutorial" in html and "API reference" in html  # the navigation
    assert text in html
    if path.startswith("tutorial/"):
        assert 'class="highlight' in html and "<code" in html  # highlighted code blocks
    shot = tmp_path / "page.png"
    result = _chromium(browser, f"--screenshot={shot}", "--window-size=1280,1600", url, home=tmp_path)
    assert result.returncode == 0 and shot.is_file(), result.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 30_000, f"a {len(data)}-byte screenshot is likely blank"
