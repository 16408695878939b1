#!/usr/bin/env python3
"""Checks the size limits of the sources outside tests/: no file over 450 lines, no class over 250.

A class's size is the lines of its definition plus those of its member functions defined out of
line, in any file (`Status Store::Batch(...) { ... }` counts for Store). Nested classes count
for themselves and inside their outer class's definition. Comments and string literals are
ignored when finding braces; blank lines count.

Usage: check_sizes.py [REPO_ROOT] | --self-test. Exit 0 when within limits; otherwise one line
per offender and exit 1.
"""
import pathlib
import re
import sys

import checker_main

MAX_FILE_LINES = 450
MAX_CLASS_LINES = 250
TOPS = ("estimator", "tracker", "daemon")

CLASS_HEAD = re.compile(
    r"(?:template\s*<.*>\s*)?\b(?:class|struct)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_][\w:]*)"
    r"(?:\s+final)?\s*(?::[^{;]*)?$", re.S)
FUNCTION_NAME = re.compile(r"([A-Za-z_][\w]*(?:::~?[A-Za-z_]\w*)+)\s*\($")


def strip(text: str) -> str:
    """`text` with comments, string and character literals and preprocessor lines blanked out
    (newlines kept, so offsets keep their line numbers)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i) or (c == "#" and (i == 0 or text[i - 1] == "\n")):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def blocks(text: str):
    """(head, start_line, end_line, depth) for every brace block; head is the text before its
    `{` back to the previous `;`, `{` or `}`."""
    text = strip(text)
    stack = []
    head_start = 0
    line = 1
    result = []
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[head_start:i]
            # The block starts where its head does (a signature may span lines).
            start_line = line - head.strip("\n ").count("\n") if head.strip() else line
            stack.append((" ".join(head.split()), start_line, len(stack)))
            head_start = i + 1
        elif c == "}":
            if stack:
                h, s, d = stack.pop()
                result.append((h, s, line, d, [x[0] for x in stack]))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    return result


def measure(root: pathlib.Path):
    files = {}
    for top in TOPS:
        for p in sorted((root / top).rglob("*")):
            if p.suffix in (".h", ".cc"):
                files[p.relative_to(root).as_posix()] = p.read_text(errors="replace")
    class_lines = {}
    members = []  # (class key, lines, where)
    for rel, text in files.items():
        for head, start, end, _, outer in blocks(text):
            m = CLASS_HEAD.search(head)
            if m and "(" not in head and not head.startswith("enum"):
                enclosing = [CLASS_HEAD.search(o).group(1) for o in outer
                             if CLASS_HEAD.search(o) and "(" not in o]
                key = "::".join(enclosing + [m.group(1)])
                class_lines.setdefault(key, [0, rel])[0] += end - start + 1
                continue
            decl = head.split("(")[0].split() if "(" in head else []
            if not decl or outer and any(CLASS_HEAD.search(o) for o in outer):
                continue
            fm = FUNCTION_NAME.search(head[: head.find("(") + 1])
            if fm:
                members.append((fm.group(1).rsplit("::", 1)[0], end - start + 1, rel))
    for key, lines, rel in members:
        for k in class_lines:
            if k == key or k.endswith("::" + key):
                class_lines[k][0] += lines
                break
    return files, class_lines


def check(root: pathlib.Path):
    files, class_lines = measure(root)
    problems = []
    for rel, text in files.items():
        n = text.count("\n")
        if n > MAX_FILE_LINES:
            problems.append(f"{rel}: {n} lines (limit {MAX_FILE_LINES})")
    for key, (lines, rel) in sorted(class_lines.items()):
        if lines > MAX_CLASS_LINES:
            problems.append(f"{rel}: class {key}: {lines} lines with its out-of-line members "
                            f"(limit {MAX_CLASS_LINES})")
    return problems


def make_bad_tree(root: pathlib.Path):
    """A long file, a long class, and a class long by its out-of-line members only (with braces
    in comments and strings that must not count), beside a small class."""
    (root / "tracker/x").mkdir(parents=True)
    (root / "tracker/x/big.cc").write_text("int x;\n" * 501)
    body = "  int f%d() { return 1; }  // { not a brace\n"
    (root / "tracker/x/long.h").write_text(
        "class Long final : public Base {\n" + "".join(body % i for i in range(300)) + "};\n")
    (root / "tracker/x/wide.h").write_text("struct Wide {\n  void F();\n};\n")
    members = "".join(f"void Wide::F{i}() {{\n  const char* s = \"}}\";\n}}\n" for i in range(101))
    (root / "tracker/x/wide.cc").write_text(members)
    (root / "tracker/x/small.h").write_text("class Small {\n public:\n  int a;\n};\n")


if __name__ == "__main__":
    sys.exit(checker_main.run(check, make_bad_tree, ["big.cc: 501 lines", "class Long: 302 lines",
                                                     "class Wide: 306 lines"]))
