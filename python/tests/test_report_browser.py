"""The analysis report as a reader sees it: `iorelay analyze`'s HTML opened in headless Chromium
(installed by `make test`: scripts/setup.sh browser). Every figure decodes and is shown, the
headings read as sentences, the answer says where the runs cannot tell the options apart, and
a screenshot of the page is taken. Skipped without Chromium (failed in CI)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import in_ci
from matplotlib.image import imread

from iorelay.analysis import cli

CHROMIUM_TIMEOUT_S = 60
# Appended to a copy of the report: once the page has loaded, what the browser made of each
# image and heading, as JSON in a <pre> that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", () => {
  const seen = {
    images: [...document.images].map(i => ({alt: i.alt, complete: i.complete,
      width: i.naturalWidth, height: i.naturalHeight,
      shown: i.getBoundingClientRect().width})),
    headings: [...document.querySelectorAll("h1, h2, h3")].map(
      h => h.tagName + " " + h.textContent),
  };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        reason = "chromium not installed (`make test` installs it: scripts/setup.sh browser)"
        if in_ci():
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return path


def _browse(*args: str) -> str:
    argv = [_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", *args]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _demo_like_runs() -> pd.DataFrame:
    """Shaped like the testbed demo's results: 8 patterns, 0-2 I/O nodes, 3 runs each; the
    strided 8 KiB writes far apart (forwarding wins), the other patterns within their noise."""
    rng = np.random.default_rng(7)
    rows = []
    for spatiality in ("contiguous", "strided"):
        for request in (8192, 1 << 20):
            for op in ("write", "read"):
                apart = spatiality == "strided" and request == 8192 and op == "write"
                for ionodes in (0, 1, 2):
                    base = (4.0, 20.0, 27.0)[ionodes] if apart else 30.0
                    for rep in range(3):
                        spread = 0.02 if apart else 0.3
                        bandwidth = base * (1 + spread * rng.uniform(-1, 1))
                        rows.append({"layout": "shared", "spatiality": spatiality, "nodes": 2,
                                     "processes": 16, "request_bytes": request, "operation": op,
                                     "ionodes": ionodes, "repetition": rep,
                                     "bandwidth_mib_s": bandwidth})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_report_reads_well_in_a_browser(tmp_path: Path) -> None:
    runs = tmp_path / "results.csv"
    _demo_like_runs().to_csv(runs, index=False)
    out = tmp_path / "report"
    assert cli.main([str(runs), "--out", str(out)]) == 0
    report = out / "report.html"
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text(encoding="utf-8") + PROBE, encoding="utf-8")

    dom = _browse("--dump-dom", "--virtual-time-budget=5000", probed.as_uri())
    match = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert match, dom[-2000:]
    seen = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))

    pngs = sorted(out.glob("*.png"))
    assert len(seen["images"]) == len(pngs) == 6
    for image in seen["images"]:  # decoded (a broken image has no natural size) and shown
        assert image["complete"] and image["width"] > 300 and image["height"] > 200, image
        assert image["shown"] > 300, image
    headings = seen["headings"]
    assert headings[0] == "H1 Which choices of I/O nodes matter"
    assert "H2 The answer: the best choice of I/O nodes per pattern" in headings
    assert "H2 How many choices of I/O nodes matter" in headings
    assert "H2 How often each choice of I/O nodes is best" in headings
    for facet in ("shared-contiguous", "shared-strided"):
        assert f"H3 bandwidth (MiB/s) per option: {facet}" in headings
    assert "In 7 of 8 patterns the runs cannot tell the options apart" in dom
    assert "shared-strided 8K write: best I/O nodes 2" in dom

    shot = tmp_path / "report.png"
    _browse(f"--screenshot={shot}", "--window-size=1100,1400", report.as_uri())
    pixels = imread(shot)
    assert pixels.shape[:2] == (1400, 1100)
    assert float(pixels[..., :3].std()) > 0.05  # text and figures, not a blank page
