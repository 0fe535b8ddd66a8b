"""HTML pieces of the report: escaped tables, and the page around the sections."""
from __future__ import annotations

import html


class Markup(str):
    """Text that is already HTML: table() leaves it unescaped."""


def esc(x) -> str:
    return x if isinstance(x, Markup) else html.escape(str(x))


def table(rows, header, cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    attr = f" class='{cls}'" if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figures(images) -> str:
    """Figures side by side where they fit, wrapping to the next row."""
    return "<div class='plots'>" + "".join(images) + "</div>"


STYLE = """
body{font-family:system-ui,sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;
 color:#222;line-height:1.45}
h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.8em 0}
td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.num,th.num{text-align:right}
.plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.plots img{max-width:100%;height:auto}
img{max-width:100%;height:auto}
.notice{background:#fdd;border:3px solid #c00;padding:1em;font-size:1.15em}
.verdict{background:#f3f7ff;border-left:6px solid #36c;padding:.8em 1em;font-size:1.05em}
.warn{background:#fff3cd;border-left:6px solid #c90;padding:.6em 1em}
.danger{background:#fdd;border-left:6px solid #c00;padding:.6em 1em}
.good{color:#176b26;font-weight:bold}.fair{color:#8a5a00;font-weight:bold}
.poor{color:#b00;font-weight:bold}
.exact{font-family:monospace;font-size:11px;color:#555}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:14px}
dl.meta dt{font-weight:bold}dl.meta dd{margin:0}
details summary{cursor:pointer;color:#36c}
"""


def page(title: str, parts) -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{esc(title)}</title><style>{STYLE}</style></head>"
            f"<body>{''.join(parts)}</body></html>")
