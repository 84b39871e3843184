"""The page before its script runs, and HEAD requests, through a real
``donutbox serve``: ``curl -I /`` answers as GET does, and the HTML says
something of its own (a placeholder, and what to do without JavaScript)."""

from __future__ import annotations

import urllib.request
from html.parser import HTMLParser
from typing import Any


def _fetch(url: str, method: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(request, timeout=10) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def test_head_answers_like_get_without_the_body(module_server: Any) -> None:
    for path in ("/", "/static/index.html", "/static/style.css", "/docs"):
        got_status, got_headers, body = _fetch(module_server.url + path, "GET")
        status, headers, empty = _fetch(module_server.url + path, "HEAD")
        assert (status, got_status) == (200, 200), path
        assert empty == b"" and body, path
        assert headers["content-type"] == got_headers["content-type"], path
        assert headers["content-length"] == str(len(body)), path


class _Text(HTMLParser):
    """The text of the element with id ``loading`` and of ``<noscript>``, and
    whether ``loading`` is hidden in the HTML itself."""

    def __init__(self) -> None:
        super().__init__()
        self.inside: list[str] = []
        self.text: dict[str, str] = {"loading": "", "noscript": ""}
        self.loading_hidden = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if attributes.get("id") == "loading":
            self.inside.append("loading")
            self.loading_hidden = "hidden" in attributes
        elif tag == "noscript":
            self.inside.append("noscript")
        elif self.inside and tag not in ("br", "img", "input"):
            self.inside.append("")

    def handle_endtag(self, tag: str) -> None:
        if self.inside:
            self.inside.pop()

    def handle_data(self, data: str) -> None:
        for name in self.inside:
            if name:
                self.text[name] += data


def test_the_html_says_it_is_loading_and_what_to_do_without_javascript(
    module_server: Any,
) -> None:
    _, _, body = _fetch(module_server.url + "/", "GET")
    page = _Text()
    page.feed(body.decode("utf-8"))
    assert not page.loading_hidden
    assert page.text["loading"].strip() == "Loading the table…"
    assert "turn JavaScript on" in page.text["noscript"]
