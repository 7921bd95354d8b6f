"""Small SVG pictures for the HTML report, built as text (no plotting library, no network): a time axis,
a heatmap, horizontal bars on a time line, bars of a count. Each returns an `Svg` whose `data_uri()`
goes into an <img> so that one HTML file holds everything.
"""

from __future__ import annotations

import base64
import datetime as dt
import html

# Colour-blind-friendly qualitative palette (Tableau 10), then its lighter tints.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#a0cbe8",
    "#ffbe7d",
    "#ff9d9a",
    "#86bcb6",
    "#8cd17d",
    "#f1ce63",
    "#d4a6c8",
    "#fabfd2",
    "#d7b5a6",
    "#79706e",
)
FONT = 'font-family="system-ui, sans-serif" font-size="11"'
_STEPS_MS = (
    1_000,
    5_000,
    10_000,
    30_000,
    60_000,
    300_000,
    600_000,
    1_800_000,
    3_600_000,
    3 * 3_600_000,
    6 * 3_600_000,
    12 * 3_600_000,
    86_400_000,
    7 * 86_400_000,
)


class Svg:
    def __init__(self, width: int, height: int, title: str):
        self.width, self.height = width, height
        self.parts = [f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>']
        self.title = title

    def rect(self, x, y, w, h, fill, stroke=None, tip: str | None = None) -> None:
        edge = f' stroke="{stroke}" stroke-width="1"' if stroke else ""
        inner = f"<title>{html.escape(tip)}</title>" if tip else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{h:.1f}" fill="{fill}"{edge}>{inner}</rect>'
        )

    def text(self, x, y, value: str, anchor: str = "start", size: int | None = None, fill="#222") -> None:
        font = FONT if size is None else FONT.replace('font-size="11"', f'font-size="{size}"')
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" {font}>{html.escape(value)}</text>'
        )

    def line(self, x1, y1, x2, y2, stroke="#999") -> None:
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"/>'
        )

    def markup(self) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
            f'viewBox="0 0 {self.width} {self.height}"><title>{html.escape(self.title)}</title>'
            + "".join(self.parts)
            + "</svg>"
        )

    def data_uri(self) -> str:
        return "data:image/svg+xml;base64," + base64.b64encode(self.markup().encode()).decode()


def colours(names) -> dict[str, str]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(names))}


def _label(ms: int, step: int) -> str:
    moment = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    if step >= 86_400_000:
        return f"{moment:%m-%d}"
    if step >= 60_000:
        return f"{moment:%m-%d %H:%M}" if moment.hour == moment.minute == 0 else f"{moment:%H:%M}"
    return f"{moment:%H:%M:%S}"


def time_axis(svg: Svg, start: int, end: int, x0: float, x1: float, y: float) -> None:
    """A UTC time axis under a plot spanning x0..x1 for start..end (epoch ms), about 6 labelled ticks."""
    span = max(end - start, 1)
    step = next((s for s in _STEPS_MS if span / s <= 7), _STEPS_MS[-1])
    svg.line(x0, y, x1, y)
    tick = -(-start // step) * step
    while tick <= end:
        x = x0 + (tick - start) / span * (x1 - x0)
        svg.line(x, y, x, y + 4)
        svg.text(x, y + 15, _label(tick, step), anchor="middle", size=10)
        tick += step
    svg.text(x1, y + 28, "UTC", anchor="end", size=10, fill="#666")


def heatmap(
    rows: list[str], columns: list[int], counts: dict[tuple[str, int], int], bucket_ms: int, title: str
) -> Svg:
    """rows x time buckets (`columns`: bucket starts, epoch ms), a cell's darkness its count."""
    label_w, cell_h = 230, 16
    cell_w = max(4.0, min(24.0, 900 / max(len(columns), 1)))
    width = int(label_w + cell_w * len(columns) + 20)
    height = int(30 + cell_h * len(rows) + 50)
    svg = Svg(width, height, title)
    top = max(counts.values(), default=0) or 1
    svg.text(label_w, 14, f"{title} (darkest: {top})", size=12)
    for r, name in enumerate(rows):
        y = 24 + r * cell_h
        svg.text(label_w - 6, y + cell_h - 4, name, anchor="end")
        for c, bucket in enumerate(columns):
            count = counts.get((name, bucket), 0)
            shade = "#f3f3f3" if count == 0 else _blue(count / top)
            svg.rect(label_w + c * cell_w, y, cell_w - 1, cell_h - 1, shade, tip=f"{name}: {count}")
    bottom = 24 + len(rows) * cell_h + 4
    time_axis(svg, columns[0], columns[-1] + bucket_ms, label_w, label_w + cell_w * len(columns), bottom)
    return svg


def _blue(fraction: float) -> str:
    light, dark = (222, 235, 247), (8, 48, 107)
    f = 0.25 + 0.75 * fraction
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(light, dark))


def lanes(
    bars: list[tuple[str, int, int, str | None, str]],
    title: str,
    legend: dict[str, str] | None = None,
    start: int | None = None,
    end: int | None = None,
) -> Svg:
    """One lane per distinct first field; bars (lane, start ms, end ms, fill or None = gap, tooltip).
    A gap is drawn white with a red edge."""
    names = list(dict.fromkeys(bar[0] for bar in bars))
    label_w, lane_h = 170, 14
    plot_w = 900
    start = min(b[1] for b in bars) if start is None else start
    end = max(b[2] for b in bars) if end is None else end
    span = max(end - start, 1)
    legend = legend or {}
    legend_rows = -(-len(legend) // 5)
    height = int(30 + lane_h * len(names) + 40 + 16 * legend_rows)
    svg = Svg(label_w + plot_w + 20, height, title)
    svg.text(label_w, 14, title, size=12)
    for lane, name in enumerate(names):
        svg.text(label_w - 6, 24 + lane * lane_h + lane_h - 3, name, anchor="end", size=10)
    for name, first, last, fill, tip in bars:
        y = 24 + names.index(name) * lane_h
        x = label_w + (first - start) / span * plot_w
        w = (last - first) / span * plot_w
        svg.rect(
            x, y + 1, max(w, 2.0), lane_h - 2, fill or "white", stroke=None if fill else "#d62728", tip=tip
        )
    bottom = 24 + len(names) * lane_h + 4
    time_axis(svg, start, end, label_w, label_w + plot_w, bottom)
    for i, (name, fill) in enumerate(legend.items()):
        x, y = label_w + (i % 5) * 180, bottom + 36 + (i // 5) * 16
        svg.rect(x, y - 9, 10, 10, fill)
        svg.text(x + 14, y, name[:26], size=10)
    return svg


def bars(items: list[tuple[str, float]], title: str, unit: str = "") -> Svg:
    """Horizontal bars, one per (label, value)."""
    label_w, bar_h, plot_w = 230, 18, 500
    top = max((v for _, v in items), default=0) or 1
    svg = Svg(label_w + plot_w + 90, 30 + bar_h * len(items) + 10, title)
    svg.text(label_w, 14, title, size=12)
    for i, (label, value) in enumerate(items):
        y = 24 + i * bar_h
        svg.text(label_w - 6, y + bar_h - 5, label, anchor="end")
        svg.rect(label_w, y + 2, value / top * plot_w, bar_h - 4, PALETTE[0], tip=f"{label}: {value:g}{unit}")
        svg.text(label_w + value / top * plot_w + 4, y + bar_h - 5, f"{value:g}{unit}", size=10)
    return svg


def columns_over_time(points: list[tuple[int, float, str]], title: str) -> Svg:
    """A thin column per (epoch ms, value, tooltip) on a time axis (the title names the value's unit)."""
    label_w, plot_w, plot_h = 70, 900, 160
    start = min(p[0] for p in points)
    end = max(p[0] for p in points)
    if end == start:
        start, end = start - 60_000, end + 60_000
    span = end - start
    top = max((p[1] for p in points), default=0) or 1
    svg = Svg(label_w + plot_w + 30, plot_h + 70, title)
    svg.text(label_w, 14, title, size=12)
    base = 24 + plot_h
    svg.line(label_w, 24, label_w, base)
    for fraction in (0, 0.5, 1):
        y = base - fraction * plot_h
        svg.line(label_w - 4, y, label_w, y)
        svg.text(label_w - 6, y + 4, f"{top * fraction:.3g}", anchor="end", size=10)
    for ts, value, tip in points:
        x = label_w + (ts - start) / span * plot_w
        h = value / top * plot_h
        svg.rect(x - 2, base - h, 4, max(h, 1), PALETTE[2], tip=tip)
    time_axis(svg, start, end, label_w, label_w + plot_w, base)
    return svg
