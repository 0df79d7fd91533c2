#!/usr/bin/env python3
"""The demo models' training text: the docstrings of the Python standard library.

    python3 corpus.py [--stdlib DIR] --out corpus.jsonl

Walks the standard library of the Python that runs it (or --stdlib), parses every module with
`ast` (nothing is imported or executed) and writes one JSON line per documented module, class or
function: {"name": "json.dumps", "kind": "function", "module": "json", "doc": "..."}.

Source and licence: the Python standard library's docstrings are part of Python, distributed under
the Python Software Foundation License Version 2 (https://docs.python.org/3/license.html).

Cleaning: inspect.cleandoc, interactive examples (">>>" / "..." lines and the output that follows
them) and reST directives dropped, paragraphs rejoined into single lines, docstrings without two
English words in a row skipped. Order is sorted by path, so the output is the same on every run of
the same Python. Modules whose name hashes into the last 5% (zlib.crc32) are the held-out split.
"""

import argparse
import ast
import inspect
import json
import re
import sysconfig
import zlib
from pathlib import Path

SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__", "lib2to3",
             "ensurepip", "turtledemo", "idlelib", "pydoc_data", "config-3", "tkinter"}
HELD_OUT_PERCENT = 5
WORDS = re.compile(r"[A-Za-z]{2,} [a-z]{2,}")


def held_out(module):
    return zlib.crc32(module.encode()) % 100 < HELD_OUT_PERCENT


def clean(doc):
    """Prose paragraphs of a docstring, each on one line."""
    lines = inspect.cleandoc(doc).splitlines()
    paragraphs, current, in_example = [], [], False
    for line in lines:
        s = line.strip()
        if s.startswith(">>>") or s.startswith("... "):
            in_example = True
            continue
        if in_example:
            if not s:
                in_example = False
            continue
        if s.startswith(".. ") or s.startswith(":") and s.endswith(":"):
            continue
        if not s:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(s)
    if current:
        paragraphs.append(" ".join(current))
    keep = []
    for p in paragraphs:
        p = re.sub(r"\s+", " ", p).strip()
        # drop lines that are code or tables rather than sentences
        letters = sum(c.isalpha() or c == " " for c in p)
        if len(p) < 3 or letters < 0.75 * len(p):
            continue
        keep.append(p)
    text = "\n".join(keep)
    return text if WORDS.search(text) else ""


def module_name(root, path):
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def walk(root):
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS or part.startswith("config-") for part in rel.parts[:-1]):
            continue
        if rel.name.startswith("test_") or rel.name == "__main__.py":
            continue
        yield path


def entries(root, path):
    name = module_name(root, path)
    if not name or name.startswith("_") and name not in ("__future__",):
        return
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="strict"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return
    doc = ast.get_docstring(tree, clean=False)
    if doc:
        yield {"name": name, "kind": "module", "module": name, "doc": doc}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if child.name.startswith("_") and child.name != "__init__":
                    continue
                qual = f"{prefix}.{child.name}"
                d = ast.get_docstring(child, clean=False)
                if d:
                    kind = "class" if isinstance(child, ast.ClassDef) else "function"
                    if child.name == "__init__":
                        qual, kind = prefix, "constructor"
                    yield {"name": qual, "kind": kind, "module": name, "doc": d}
                if isinstance(child, ast.ClassDef):
                    yield from visit(child, qual)

    yield from visit(tree, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stdlib", type=Path, action="append",
                    help="a standard library folder (repeatable; default: this Python's)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    n = {"train": 0, "held_out": 0}
    chars = 0
    seen = set()
    roots = args.stdlib or [Path(sysconfig.get_paths()["stdlib"])]
    with args.out.open("w", encoding="utf-8") as f:
        for e in (e for root in roots for path in walk(root) for e in entries(root, path)):
            e["doc"] = clean(e["doc"])
            if not e["doc"] or e["doc"] in seen:
                continue
            seen.add(e["doc"])
            e["split"] = "held_out" if held_out(e["module"]) else "train"
            n[e["split"]] += 1
            chars += len(e["doc"])
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    print(f"{args.out}: {n['train']} train + {n['held_out']} held-out docstrings, {chars} characters, "
          f"from {', '.join(map(str, roots))}")


if __name__ == "__main__":
    main()
