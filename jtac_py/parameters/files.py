"""Reading YAML the way ROS does: floats like ``1e-3``, line numbers of every key, repeated keys refused,
nested parameters flattened into dotted names, node entries selected by ROS's name matching."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from jtac_py.parameters.validators import ParameterError


class RosYamlLoader(yaml.SafeLoader):
    """SafeLoader that reads ``1e-3`` as a float, as the ROS parameter parser does (YAML 1.1 needs a dot).

    Shared by every YAML jtac reads from users (parameter files here, goal files in jtac_ros)."""


_Loader = RosYamlLoader


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _read_yaml(path: Path, error: type[ParameterError]) -> tuple[Any, dict[tuple, int]]:
    """Parse a YAML file; return the data and the line (1-based) of every mapping key, by key path."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise error(f"malformed YAML: {exc}", source=where) from exc
    lines: dict[tuple, int] = {}

    def walk(node: yaml.Node, key_path: tuple) -> None:
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, value_node in node.value:
                key = key_node.value
                # PyYAML keeps the last of two equal keys silently; a repeated parameter is a mistake.
                if key in seen:
                    raise error(
                        f"key '{key}' appears twice in the same mapping",
                        name=str(key),
                        source=f"{path}:{key_node.start_mark.line + 1}",
                    )
                seen.add(key)
                lines[(*key_path, key)] = key_node.start_mark.line + 1
                walk(value_node, (*key_path, key))

    if root is not None:
        walk(root, ())
    return data, lines


def _flatten(
    node: Mapping,
    key_path: tuple,
    name_path: tuple,
    out: dict[str, Any],
    out_lines: dict[str, int],
    key_lines: Mapping[tuple, int],
) -> None:
    """Turn nested mappings into dotted parameter names, as ROS does."""
    for key, value in node.items():
        name = ".".join((*name_path, str(key)))
        if isinstance(value, dict):
            _flatten(value, (*key_path, key), (*name_path, str(key)), out, out_lines, key_lines)
            continue
        out[name] = value
        line = key_lines.get((*key_path, key))
        if line is not None:
            out_lines[name] = line


def _node_matches(pattern: str, node_name: str) -> bool:
    """ROS node-name matching: ``*`` stands for one name token, ``**`` for any number of them."""
    pattern_tokens = [t for t in pattern.split("/") if t]
    name_tokens = [t for t in node_name.split("/") if t]

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(pattern_tokens):
            return j == len(name_tokens)
        if pattern_tokens[i] == "**":
            return any(match(i + 1, k) for k in range(j, len(name_tokens) + 1))
        if j == len(name_tokens):
            return False
        return pattern_tokens[i] in ("*", name_tokens[j]) and match(i + 1, j + 1)

    return match(0, 0)


def _select_nodes(path: Path, data: dict, node_name: str | None, key_lines: Mapping[tuple, int]) -> list:
    """Node entries of a parameters file that apply to node_name, in file order (later ones win)."""
    keys = list(data)
    for key in keys:
        if not isinstance(key, str):
            where = _where(path, key_lines.get((key,)))
            raise ParameterError(f"node name {key!r} is not a string", source=where)
    if node_name is not None:
        selected = [key for key in keys if _node_matches(key, node_name)]
        if not selected:
            raise ParameterError(
                f"no entry for node '{node_name}' (entries: {', '.join(keys)})", source=str(path)
            )
        return selected
    plain = {key.strip("/") for key in keys if "*" not in key}
    if len(plain) > 1:
        raise ParameterError(
            f"entries for several nodes ({', '.join(sorted(plain))}): pass node_name", source=str(path)
        )
    return keys


# ------------------------------------------------------------------------------------------------ loading
def _where(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)
