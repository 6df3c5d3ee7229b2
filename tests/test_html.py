"""The HTML report: one self-contained page, rendered from saved JSON, checked in a real
browser (Debian's chromium; .ci/run installs it) when one is here."""
import re
import shutil
import subprocess

import pytest

from gelucheck.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    report = folder / "r.json"
    assert main(["report", "--backend", "scipy", "--backend", "numpy", "--dtype", "float16",
                 "--dtype", "float32", "--json", str(report), "--no-progress"]) == 0
    older = folder / "older.json"
    older.write_text(report.read_text().replace('"max_ulp": 7.1', '"max_ulp": 9.1'))
    out = folder / "r.html"
    assert main(["html", str(older), str(report), "-o", str(out)]) == 0
    return out


@pytest.mark.slow  # a whole report rendered to a page: seconds
def test_the_page_is_self_contained(page):
    text = page.read_text()
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert not re.search(r'(src|href)="(?!data:|#)', text)  # nothing loaded from anywhere
    assert "http://" not in text and "https://" not in text
    assert text.count("<img") >= 4 and 'src="data:image/png;base64,' in text
    assert "Compare older -&gt; r" in text or "Compare older -> r" in text
    assert page.stat().st_size < 5e6
    # the summary the terminal report opens with heads the page too
    assert text.index("<h2>Summary: ") < text.index("<h2>Ulp error against x</h2>")


@pytest.mark.slow  # a headless browser: seconds
def test_it_renders_in_a_browser_without_errors(page, tmp_path):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed here (apt-get install chromium; CI has it)")
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path}",
                           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                           "--dump-dom", f"file://{page}#selfcheck"],
                          capture_output=True, text=True, timeout=120)
    check = re.search(r'data-selfcheck="([^"]*)"', done.stdout)
    assert check, done.stderr[-2000:]
    import html
    import json

    found = json.loads(html.unescape(check.group(1)))
    assert found["images"] >= 4 and found["drawn"] == found["images"]  # every figure drawn
    assert found["sorted"] is True  # clicking a numeric column's header sorted the table
    console = [line for line in done.stderr.splitlines() if "CONSOLE" in line
               or "Refused to" in line or "Uncaught" in line]
    assert not console, console  # no script error, no request the policy had to refuse
