#!/usr/bin/env python3
"""Checks that rendered DOMs (chromium --dump-dom) are inert: no script element, no event-handler
attribute, no javascript: URL in any attribute. Text may say anything.

usage: check_dom.py FILE... ; exit 0 when clean, else one line per finding and exit 1."""
import html.parser
import sys


class Checker(html.parser.HTMLParser):
    def __init__(self, name):
        super().__init__(convert_charrefs=True)
        self.name = name
        self.problems = []

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.problems.append(f"{self.name}: a script element")
        for key, value in attrs:
            if key.lower().startswith("on"):
                self.problems.append(f"{self.name}: <{tag} {key}=...>")
            if value and "javascript:" in value.replace(" ", "").lower():
                self.problems.append(f"{self.name}: <{tag} {key}={value!r}>")


def main():
    problems = []
    for path in sys.argv[1:]:
        c = Checker(path.rsplit("/", 1)[-1])
        with open(path, encoding="utf-8", errors="replace") as f:
            c.feed(f.read())
        problems += c.problems
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
