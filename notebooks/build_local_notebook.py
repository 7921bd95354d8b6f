"""Build the local Jupyter notebook from the Databricks source, so both hold the same content.

    python notebooks/build_local_notebook.py          # writes notebooks/rebalance_report.ipynb
    python notebooks/build_local_notebook.py --check  # exit 1 if the .ipynb is out of date

Databricks source format: cells separated by `# COMMAND ----------`; markdown cells are lines
starting with `# MAGIC %md` then `# MAGIC ...`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "rebalance_report.py"
TARGET = HERE / "rebalance_report.ipynb"
HEADER = "# Databricks notebook source"
SEPARATOR = "# COMMAND ----------"


def to_notebook(text: str) -> nbformat.NotebookNode:
    lines = text.splitlines()
    if not lines or lines[0].strip() != HEADER:
        raise ValueError(f"{SOURCE.name} must start with '{HEADER}'")
    cells, chunk = [], []
    for line in lines[1:] + [SEPARATOR]:
        if line.strip() != SEPARATOR:
            chunk.append(line)
            continue
        body = "\n".join(chunk).strip("\n")
        chunk = []
        if not body.strip():
            continue
        body_lines = body.splitlines()
        if body_lines[0].startswith("# MAGIC %md"):
            md = [
                ln[len("# MAGIC ") :] if ln.startswith("# MAGIC ") else ln.removeprefix("# MAGIC")
                for ln in body_lines
            ]
            cells.append(nbformat.v4.new_markdown_cell("\n".join(md[1:]).strip("\n")))
        else:
            cells.append(nbformat.v4.new_code_cell(body))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    # Stable cell ids so that rebuilding an unchanged source gives the same file.
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the .ipynb is out of date")
    args = parser.parse_args(argv)
    text = render(to_notebook(SOURCE.read_text()))
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(
                f"{TARGET.name} is out of date: run python notebooks/build_local_notebook.py", file=sys.stderr
            )
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
