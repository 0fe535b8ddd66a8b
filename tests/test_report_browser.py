"""The report in a real browser: headless Chromium when one is installed (skipped otherwise).

A probe script put at the top of the page records errors (script errors, resources that fail
to load, console.error) and, once the page has loaded, how many images decoded; the DOM that
Chromium dumps carries the result.  Chromium's own console log is checked too."""
import html
import json
import re
import shutil
import subprocess

import pytest

BROWSER = next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                               "google-chrome", "google-chrome-stable"))),
               None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium or Chrome installed")

PROBE = """<script>
window.__errors = [];
addEventListener('error', e => __errors.push(String(e.message ||
  ('cannot load ' + (e.target && e.target.tagName)))), true);
const __consoleError = console.error;
console.error = (...a) => { __errors.push(a.join(' ')); __consoleError(...a); };
addEventListener('load', () => {
  const imgs = [...document.images];
  document.documentElement.setAttribute('data-probe', JSON.stringify({
    images: imgs.length,
    decoded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    overflow: document.documentElement.scrollWidth > window.innerWidth,
    errors: __errors}));
});
</script>"""


def _load(page: str, tmp_path) -> tuple:
    """(the probe's findings, Chromium's console lines) for this page."""
    path = tmp_path / "page.html"
    path.write_text(page.replace("<head>", "<head>" + PROBE, 1))
    run = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--window-size=1200,900", "--virtual-time-budget=10000",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=180)
    found = re.search(r'data-probe="([^"]*)"', run.stdout)
    assert found, f"the page did not finish loading: {run.stderr[-2000:]}"
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(html.unescape(found.group(1))), console


def test_the_probe_sees_broken_images_and_console_errors(tmp_path):
    # without this, a probe that saw nothing would pass every page
    bad = ("<!doctype html><html><head><meta charset='utf-8'></head><body>"
           "<img src='data:image/png;base64,AAAA'><script>console.error('boom')</script>"
           "</body></html>")
    found, console = _load(bad, tmp_path)
    assert found["images"] == 1 and found["decoded"] == 0
    assert "boom" in found["errors"] and any("boom" in line for line in console)


def test_report_loads_cleanly_and_every_image_decodes(tmp_path):
    pytest.importorskip("matplotlib")
    from report_case import page
    report = page()
    found, console = _load(report, tmp_path)
    assert found["errors"] == [] and console == []
    assert found["images"] == report.count("<img") == 14
    assert found["decoded"] == found["images"]
    assert not found["overflow"]  # nothing wider than a 1200 px window
