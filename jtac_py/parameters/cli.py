"""Command line of jtac_py.parameters (``python -m jtac_py.parameters``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from jtac_py.parameters.docs import DEFAULT_DOCS_PATH, docs_are_current, render_markdown, write_docs
from jtac_py.parameters.schema import Schema, load_schema
from jtac_py.parameters.validators import ParameterError


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: regenerate or check the files generated from the schema (docs/parameters.md, the
    C++ Params header, its binding and the mapping onto the core), or validate a parameters file."""
    parser = argparse.ArgumentParser(prog="python -m jtac_py.parameters", description=main.__doc__)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the docs and the C++ files")
    action.add_argument("--check", action="store_true", help="exit 1 if the docs or a C++ file is stale")
    action.add_argument("--write-docs", action="store_true", help="regenerate the docs file")
    action.add_argument("--check-docs", action="store_true", help="exit 1 if the docs file is stale")
    action.add_argument("--validate", metavar="FILE", help="validate a ROS parameters file")
    parser.add_argument("--schema", help="schema file (default: params/jtac_parameters.yaml)")
    parser.add_argument("--docs", help="docs file (default: docs/parameters.md)")
    parser.add_argument("--node", help="node name to select in the parameters file")
    args = parser.parse_args(argv)
    try:
        schema = load_schema(args.schema)
        if args.write or args.check:
            return _generate(schema, args.docs, write=args.write)
        if args.write_docs:
            changed = write_docs(args.docs, schema)
            print(f"{args.docs or DEFAULT_DOCS_PATH}: {'written' if changed else 'already current'}")
            return 0
        if args.check_docs:
            if docs_are_current(args.docs, schema):
                return 0
            print(f"{args.docs or DEFAULT_DOCS_PATH} is stale: run python -m jtac_py.parameters --write-docs")
            return 1
        values = schema.load_params_file(args.validate, args.node)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for name, value in values.items():
        print(f"{name}: {value!r}")
    return 0


def _generate(schema: Schema, docs: str | None, *, write: bool) -> int:
    """Write (or check) every file generated from the schema; 1 when checking finds a stale one."""
    from jtac_py.parameters import cpp, mapping  # need clang-format: only for these two actions

    files = {
        Path(docs) if docs else DEFAULT_DOCS_PATH: render_markdown(schema),
        **cpp.generated_files(schema),
        **mapping.generated_files(schema),
    }
    stale = [
        path for path, text in files.items() if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    for path in stale:
        if write:
            path.write_text(files[path], encoding="utf-8")
        print(f"{path}: {'written' if write else 'stale: run python -m jtac_py.parameters --write'}")
    return 1 if stale and not write else 0


if __name__ == "__main__":
    sys.exit(main())
