"""The documentation site: built by MkDocs in strict mode, every internal link (and anchor)
resolves, and every page opens in headless Chromium (Debian's; .ci/run installs it) without a
console error or a refused request - served from localhost, as a reader's browser would get
it."""
import functools
import html.parser
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

pytestmark = pytest.mark.docs
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(errors="replace"))
    return parser


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.name != "404.html")


def test_every_internal_link_and_anchor_resolves(site):
    pages = _pages(site)
    assert len(pages) >= 20
    broken = []
    for page in pages:
        base = "file://" + str(page)
        for link in _parse(page).links:
            url = urlparse(urljoin(base, link))
            if url.scheme != "file":
                continue  # (no page links outside but the source repository's own address)
            target = Path(unquote(url.path))
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif url.fragment and target.suffix == ".html" and url.fragment not in _parse(
                    target).ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, broken


def test_the_api_reference_is_generated_from_the_docstrings(site):
    text = (site / "plugin" / "index.html").read_text()
    for name in ("assert_max_ulp", "assert_minimum"):
        assert f'id="gelucheck.testing.{name}"' in text


def test_each_command_page_shows_its_options(site):
    text = (site / "commands" / "sweep" / "index.html").read_text()
    assert "usage: gelucheck sweep" in text and "--function" in text


def test_the_signatures_page_prints_the_sentences_the_tool_prints(site):
    import html as markup

    from gelucheck import signatures

    text = markup.unescape((site / "checks" / "index.html").read_text())
    assert "<!-- gelucheck-signatures -->" not in text
    for name, variants in signatures.sentences().items():
        assert f"<code>{name}</code>" in text
        assert all(sentence in text for sentence in variants.values()), name


@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def test_every_page_opens_in_a_browser_without_console_errors(site, served, tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed here (apt-get install chromium; CI has it)")
    failures = []
    for page in _pages(site):
        url = served + str(page.relative_to(site)).removesuffix("index.html")
        done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path}",
                               "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
                               "--dump-dom", url], capture_output=True, text=True, timeout=120)
        console = [line for line in done.stderr.splitlines()
                   if re.search(r"CONSOLE|Refused to|Uncaught|Failed to load", line)]
        if done.returncode or "</html>" not in done.stdout or console:
            failures.append((url, done.returncode, console[:3]))
    assert not failures, failures
