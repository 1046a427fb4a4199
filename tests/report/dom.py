"""A small element tree of an HTML page (the standard library's html.parser), enough to find the report's
sections, cells and texts in the page as written or as a browser's --dump-dom serializes it."""
from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Iterator, Optional

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list["Element | str"] = field(default_factory=list)
    parent: Optional["Element"] = None

    def iter(self, tag: Optional[str] = None) -> Iterator["Element"]:
        if tag is None or self.tag == tag:
            yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter(tag)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def by_id(self, ident: str) -> Optional["Element"]:
        return next((e for e in self.iter() if e.attrs.get("id") == ident), None)

    def find_all(self, tag: str, cls: Optional[str] = None) -> list["Element"]:
        return [e for e in self.iter(tag) if cls is None or cls in e.classes()]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.open = self.root

    def handle_starttag(self, tag, attrs):
        el = Element(tag, {k: v or "" for k, v in attrs}, parent=self.open)
        self.open.children.append(el)
        if tag not in VOID:
            self.open = el

    def handle_startendtag(self, tag, attrs):
        self.open.children.append(Element(tag, {k: v or "" for k, v in attrs}, parent=self.open))

    def handle_endtag(self, tag):
        el = self.open
        while el is not None and el.tag != tag:  # an element closed implicitly (a <p> before a block)
            el = el.parent
        if el is not None and el.parent is not None:
            self.open = el.parent

    def handle_data(self, data):
        self.open.children.append(data)


def parse(html: str) -> Element:
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root
