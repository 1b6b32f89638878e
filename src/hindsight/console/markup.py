"""HTML for the console, escaped by construction.

Every page is built from :class:`Html` fragments. Text from anywhere else (memory
content, owner names, errors) goes in through :func:`h`, which escapes it, so a memory
that holds ``<script>`` is shown as text, never run. Only this module and the pages'
fixed markup make :class:`Html` directly. Charts are inline SVG drawn here, and the
pages need no script of their own beyond ``console.js``, which the Content Security
Policy allows and nothing inline.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Final
from urllib.parse import urlencode

NAV: Final = (
    ("Owners", "/ui/"),
    ("Memories", "/ui/memories"),
    ("Recall", "/ui/recall"),
    ("Sessions", "/ui/sessions"),
    ("Review", "/ui/review"),
    ("Audit", "/ui/audit"),
    ("Forget", "/ui/forget"),
    ("LLM", "/ui/llm"),
)


class Html(str):
    """Markup that is safe to send as it is."""

    __slots__ = ()


def h(value: object) -> Html:
    """``value`` as text in HTML (escaped), or as it is when it is :class:`Html` already."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html("")
    if isinstance(value, datetime):
        value = value.isoformat(timespec="seconds")
    return Html(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Html:
    return Html(sep.join(h(p) for p in parts))


def tag(element: str, /, *children: object, **attrs: object) -> Html:
    """An element; ``class_`` is ``class``, ``data_x`` is ``data-x``; a True attribute
    is written bare, False or None left out."""
    return Html(f"<{element}{_attributes(attrs)}>{join(children)}</{element}>")


def void(element: str, /, **attrs: object) -> Html:
    """An element without content or end tag (``input``), its attributes as :func:`tag`'s."""
    return Html(f"<{element}{_attributes(attrs)}>")


def _attributes(attrs: Mapping[str, object]) -> str:
    written = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name_ = key.rstrip("_").replace("_", "-")
        written.append(f" {name_}" if value is True else f' {name_}="{h(value)}"')
    return "".join(written)


def url(path: str, **params: object) -> str:
    """A console path with its query, without empty parameters."""
    given = {k: str(v) for k, v in params.items() if v not in (None, "", False)}
    return path + ("?" + urlencode(given) if given else "")


def link(text: object, href: str, **attrs: object) -> Html:
    return tag("a", text, href=href, **attrs)


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], caption: str = "") -> Html:
    head = tag("tr", *(tag("th", x, scope="col") for x in headers))
    body = join(tag("tr", *(tag("td", cell) for cell in row)) for row in rows)
    return tag(
        "div",
        tag(
            "table",
            tag("caption", caption) if caption else "",
            tag("thead", head),
            tag("tbody", body),
        ),
        class_="scroll",
    )


def definitions(items: Iterable[tuple[str, object]]) -> Html:
    return tag("dl", join(join([tag("dt", k), tag("dd", v)]) for k, v in items))


def form(
    action: str,
    csrf: str,
    *children: object,
    method: str = "post",
    class_: str | None = None,
) -> Html:
    """A form; a POST carries the CSRF token."""
    token = hidden("csrf", csrf) if method == "post" else ""
    return tag("form", token, *children, action=action, method=method, class_=class_)


def hidden(name: str, value: object) -> Html:
    return void("input", type="hidden", name=name, value=value)


def field(
    label: str, name: str, value: object = "", *, type_: str = "text", **attrs: object
) -> Html:
    ident = f"f-{name}"
    box = void("input", id=ident, name=name, type=type_, value=value, **attrs)
    return tag("label", tag("span", label), box, for_=ident)


def select(label: str, name: str, options: Sequence[str], chosen: str | None) -> Html:
    ident = f"f-{name}"
    choices = join(
        tag("option", o or "any", value=o, selected=o == (chosen or "")) for o in ["", *options]
    )
    return tag("label", tag("span", label), tag("select", choices, id=ident, name=name), for_=ident)


def button(
    text: str, *, name: str | None = None, value: str | None = None, danger: bool = False
) -> Html:
    return tag(
        "button", text, type="submit", name=name, value=value, class_="danger" if danger else None
    )


def bars(title: str, values: Mapping[str, float], *, unit: str = "") -> Html:
    """A horizontal bar chart as inline SVG, with its figures as text too."""
    if not values:
        return tag("p", f"{title}: nothing yet.", class_="muted")
    top = max(values.values()) or 1
    row, label_w, bar_w = 22, 130, 220
    height = row * len(values) + 8
    parts = []
    for i, (name, value) in enumerate(values.items()):
        y = 4 + i * row
        width = max(1, round(bar_w * value / top)) if value else 0
        figure = f"{value:g}{unit}"
        parts.append(
            f'<text x="0" y="{y + 15}" class="label">{h(name)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{width}" height="14" class="bar"></rect>'
            f'<text x="{label_w + width + 6}" y="{y + 15}" class="figure">{h(figure)}</text>'
        )
    svg = Html(
        f'<svg role="img" aria-label="{h(title)}" viewBox="0 0 {label_w + bar_w + 70} {height}" '
        f'width="100%" preserveAspectRatio="xMinYMin meet">{"".join(parts)}</svg>'
    )
    return tag("figure", tag("figcaption", title), svg, class_="chart")


def page(
    title: str,
    body: object,
    *,
    who: str | None,
    csrf: str,
    active: str = "",
    notice: str | None = None,
) -> Html:
    """A whole page: the navigation, who is signed in, a notice, the body."""
    nav = join(
        tag("a", name, href=href, aria_current="page" if name == active else None)
        for name, href in NAV
    )
    account = ""
    if who is not None:
        account = tag(
            "div",
            tag("span", f"signed in as {who}", class_="muted"),
            form("/ui/logout", csrf, button("Sign out")),
            class_="account",
        )
    banner = tag("p", notice, class_="notice", role="status") if notice else ""
    return Html(
        "<!doctype html>"
        + tag(
            "html",
            tag(
                "head",
                Html('<meta charset="utf-8">'),
                Html('<meta name="viewport" content="width=device-width, initial-scale=1">'),
                tag("title", f"{title} - hindsight"),
                Html('<link rel="stylesheet" href="/ui/static/console.css">'),
                Html('<script src="/ui/static/console.js" defer></script>'),
            ),
            tag(
                "body",
                tag("a", "Skip to the content", href="#main", class_="skip"),
                tag(
                    "header",
                    tag("a", "hindsight", href="/ui/", class_="brand"),
                    tag("nav", nav, aria_label="Console"),
                    account,
                ),
                tag("main", tag("h1", title), banner, body, id="main"),
            ),
            lang="en",
        )
    )
