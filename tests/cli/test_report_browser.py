"""The HTML report in a real browser: headless Chromium (Debian package `chromium`; CI installs it) opens
index.html and a group page offline, every picture loads, and a screenshot is not blank. Skipped only
where no Chromium is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

from jobs.cli import main as cli_main
from tests.cli.report_warehouse import build_warehouse

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium)"
)
# root in a container needs --no-sandbox; no GPU, no network, no first-run chatter
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars", "--mute-audio")
CHROMIUM_TIMEOUT_S = 120  # a hung browser fails the test instead of the suite


@pytest.fixture(scope="module")
def html_report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    warehouse = build_warehouse(root / "warehouse", with_causes=True)
    assert cli_main(["report", "--warehouse", str(warehouse), "--html", str(root / "html")]) == 0
    return root / "html"


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        timeout=CHROMIUM_TIMEOUT_S,
    )


@pytest.mark.parametrize("page", ["index.html", "group-001.html"])
def test_every_picture_loads_in_chromium(html_report, page, tmp_path):
    # the page's own script marks <body data-images="loaded/total"> once the window has loaded
    done = chromium(
        "--virtual-time-budget=5000", "--dump-dom", (html_report / page).as_uri(), profile=tmp_path
    )
    dom = done.stdout.decode(errors="replace")
    marker = re.search(r'<body[^>]*data-images="(\d+)/(\d+)"', dom)
    assert marker, f"the page did not finish loading: {done.stderr.decode(errors='replace')[-400:]}"
    loaded, total = map(int, marker.groups())
    # index: heatmap + incidents; a group page: ownership, stop-the-world, causes
    assert total == (2 if page == "index.html" else 3) and loaded == total


def test_a_screenshot_of_the_index_is_not_blank(html_report, tmp_path):
    shot = tmp_path / "index.png"
    done = chromium(
        f"--screenshot={shot}",
        "--window-size=1280,1400",
        (html_report / "index.html").as_uri(),
        profile=tmp_path,
    )
    assert shot.is_file(), done.stderr.decode(errors="replace")[-400:]
    colours, dark_share = png_colours(shot.read_bytes())
    assert colours > 20  # text, table rules, heatmap shades, incident bars: not one flat colour
    assert 0.005 < dark_share < 0.5  # some ink on a mostly white page


def png_colours(png: bytes) -> tuple[int, float]:
    """(distinct RGB colours, share of dark pixels) of an 8-bit RGB/RGBA non-interlaced PNG, decoded with
    zlib only (no imaging library needed)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, [], None
    while position < len(png):
        length = int.from_bytes(png[position : position + 4], "big")
        kind = png[position + 4 : position + 8]
        body = png[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour_type, interlace = header[8], header[9], header[12]
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, "unexpected PNG format"
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    colours, dark, position = set(), 0, 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1 : position + 1 + stride])
        position += 1 + stride
        _unfilter(kind, line, previous, channels)
        for x in range(0, stride, channels * 4):  # every 4th pixel is plenty
            r, g, b = line[x], line[x + 1], line[x + 2]
            colours.add((r, g, b))
            dark += r + g + b < 384
        previous = line
    return len(colours), dark / (height * width / 4)


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    """PNG's per-line filters (RFC 2083, 6.2), in place."""
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        corner = previous[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
            line[i] = (line[i] + predictor) & 0xFF
