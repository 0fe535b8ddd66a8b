"""Screenshots of an evaluation report at a browser's default width, for a reader's check
that every label is whole and every figure readable (headless Chromium; none: an error).

    python bench/experiments/report_screenshot/report_screenshot.py REPORT.html \
        [--out DIR] [--width 1280] [--slice 2000]

Writes DIR/page.png (the whole page) and DIR/page_00.png, ... (slices of --slice pixels).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TALL = 30000  # pixels: the window is cut to the page's content afterwards


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("report")
    p.add_argument("--out", default="report_screenshots")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--slice", type=int, default=2000)
    a = p.parse_args(argv)
    browser = next(filter(None, map(shutil.which, BROWSERS)), None)
    if browser is None:
        sys.exit("no Chromium or Chrome installed (e.g. apt-get install chromium)")
    import numpy as np
    from PIL import Image
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={profile}",
                        f"--window-size={a.width},{TALL}", f"--screenshot={out / 'page.png'}",
                        Path(a.report).resolve().as_uri()],
                       check=True, capture_output=True, timeout=300)
    im = Image.open(out / "page.png")
    rows = np.flatnonzero((np.asarray(im.convert("L")) < 250).any(axis=1))
    end = int(rows.max()) + 20 if len(rows) else im.height
    im = im.crop((0, 0, a.width, end))
    im.save(out / "page.png")
    for k, top in enumerate(range(0, end, a.slice)):
        im.crop((0, top, a.width, min(top + a.slice, end))).save(out / f"page_{k:02d}.png")
    print(f"{out / 'page.png'}: {a.width} x {end} px, {k + 1} slices")
    return 0


if __name__ == "__main__":
    sys.exit(main())
