"""Strategic merge as kustomize carries it out: kyaml's merge, with the patch's list elements first.

kustomize does not use the API server's strategic merge: it walks the object and the patch together
(kyaml's merge2), and the two differ where charts meet them. Maps merge key by key; `null` deletes a key;
`$patch: delete` and `$patch: replace` work on a map, and on a list through an element holding only that
key. A list merges element by element only where the schema (merge_keys.py) says so; there, the
elements the patch names come first, in the patch's order, the others after, in theirs; every other
list, and everything in a kind with no schema, is replaced. `$retainKeys` and `$setElementOrder` are not
directives to kustomize, and are not to chartshare.

Objects are the plain values YAML gives (dicts, lists, scalars). The merge edits the target in place, as
kyaml does, and takes nodes from the patch, so callers hand it a copy of each.
"""

from __future__ import annotations

from typing import Any, Final

from cmp.postrender.merge_keys import Field, field_of

DIRECTIVE: Final = "$patch"
DIRECTIVES: Final = ("delete", "replace", "merge")


class _Sentinel:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING: Final = _Sentinel("MISSING")  # no such field (not the same as a null one)
CLEAR: Final = _Sentinel("CLEAR")  # the merge removes the value


class MergeError(ValueError):
    """The patch cannot merge into the object (a map against a list, an unknown directive)."""


def merge(target: dict[str, Any], patch: dict[str, Any], type_name: str | None) -> dict[str, Any] | None:
    """The target with the patch merged in (edited in place); None when the patch deletes it."""
    result = _walk(target, patch, Field(None, type_name), "")
    return result if isinstance(result, dict) and result else None


def _shape(value: Any) -> str:
    return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"


def _walk(dest: Any, patch: Any, schema: Field | None, path: str) -> Any:
    present = [value for value in (dest, patch) if value is not MISSING and value is not None]
    shape = _shape(present[0]) if present else "map"
    for value in present[1:]:
        if _shape(value) != shape:
            raise MergeError(f"cannot merge a {_shape(value)} into a {shape} at {path or '/'}")
    if shape == "map":
        return _walk_map(dest, patch, schema.type if schema is not None else None, path)
    if shape == "list":
        return _walk_list(dest, patch, schema, path)
    if patch is None:
        return CLEAR
    return dest if patch is MISSING else patch


def _walk_map(dest: Any, patch: Any, type_name: str | None, path: str) -> Any:
    if dest is MISSING or dest is None:
        directive = _map_directive(patch, path, strict=False)
        if directive == "delete":
            return CLEAR
        if patch is MISSING:
            return dest  # a null the target holds stays (MISSING: nothing to set)
        if patch is None:
            return CLEAR
        node, other = patch, patch  # the patch's map is taken, and walked against itself
    else:
        if patch is None:
            return CLEAR
        directive = _map_directive(patch, path, strict=True)
        if directive == "delete":
            return CLEAR
        node, other = (patch, patch) if directive == "replace" else (dest, patch)
    others = other if isinstance(other, dict) else {}
    for key in sorted(set(node) | set(others), key=str):
        value = _walk(node.get(key, MISSING), others.get(key, MISSING), field_of(type_name, key), f"{path}/{key}")
        if value is CLEAR or value is MISSING:
            node.pop(key, None)
        else:
            node[key] = value
    return node


def _map_directive(patch: Any, path: str, *, strict: bool) -> str:
    """The `$patch` of a map in the patch, removed from it; `merge` without one."""
    if not isinstance(patch, dict) or DIRECTIVE not in patch:
        return "merge"
    value = patch.pop(DIRECTIVE)
    if value not in DIRECTIVES:
        if strict:
            raise MergeError(f"unknown patch strategy {value!r} at {path or '/'} (use delete, replace or merge)")
        return "unknown"
    return str(value)


def _list_directive(patch: list[Any], path: str) -> str:
    """The `$patch` of a list: an element holding only that key (removed from the list)."""
    for index, element in enumerate(patch):
        if isinstance(element, dict) and DIRECTIVE in element:
            if len(element) > 1:
                return "merge"
            value = element[DIRECTIVE]
            if value not in DIRECTIVES:
                raise MergeError(f"unknown patch strategy {value!r} at {path or '/'} (use delete, replace or merge)")
            del patch[index]
            return str(value)
    return "merge"


def _walk_list(dest: Any, patch: Any, schema: Field | None, path: str) -> Any:
    if schema is None or schema.keys is None:
        if patch is None:
            return CLEAR
        return dest if patch is MISSING else patch
    if dest is MISSING or dest is None:
        dest = patch  # taken, and walked against itself
    elif patch is None:
        return CLEAR
    elif patch is not MISSING:
        directive = _list_directive(patch, path)
        if directive == "delete":
            return CLEAR
        if directive == "replace":
            dest = patch
    sources = [source for source in (patch, dest) if isinstance(source, list)]  # the patch's elements first
    keys = schema.keys
    if keys:
        values = _element_values(sources, keys)
        return _merge_elements(values, list(keys), dest, patch, schema.type, path)
    primitive = _primitive_values(sources)
    return _merge_elements(primitive, [""], dest, patch, schema.type, path)


def text(value: Any) -> str:
    """A scalar as YAML writes it (what kyaml compares merge keys by); a map or a list has none."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value)


def _key_text(element: Any, key: str) -> str:
    if not isinstance(element, dict):
        return ""
    value = element.get(key)
    if value is None or value in ("", {}, []):
        return ""
    return text(value)


def _element_values(sources: list[list[Any]], keys: tuple[str, ...]) -> list[list[str]]:
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for source in sources:
        for element in source:
            values = [_key_text(element, key) for key in keys]
            if tuple(values) not in seen:
                seen.add(tuple(values))
                found.append(values)
    return found


def _primitive_values(sources: list[list[Any]]) -> list[list[str]]:
    found: list[list[str]] = []
    seen: set[str] = set()
    for source in sources:
        for element in source:
            value = text(element)
            if value not in seen:
                seen.add(value)
                found.append([value])
    return found


def _unify(values_list: list[list[str]]) -> None:
    """Key tuples that differ only where one of them is empty name one element (a port with and without
    its protocol)."""
    for i, first in enumerate(values_list):
        for j, second in enumerate(values_list):
            common = False
            merged: list[str] = []
            for a, b in zip(first, second, strict=True):
                if a == b:
                    common = True
                    merged.append(a)
                elif a and b:
                    break
                else:
                    merged.append(a or b)
            else:
                if common:
                    values_list[i] = merged
                    values_list[j] = list(merged)


def _valid(values_list: list[list[str]], values: list[str], keys: list[str]) -> tuple[list[str], list[str]]:
    """The keys some element gives a value to (all of them when none does), and this element's values."""
    valid = {keys[i] for entry in values_list for i, value in enumerate(entry) if value}
    if not valid:
        return keys, values
    return [key for key in keys if key in valid], [v for i, v in enumerate(values) if v or keys[i] in valid]


def _matches(element: Any, keys: list[str], values: list[str], *, exact: bool) -> bool:
    """Whether an element has these key values (`exact`: the value "" must be ""; otherwise "" matches
    any present value)."""
    if keys == [""]:
        return not isinstance(element, dict | list) and element is not None and text(element) == values[0]
    if not isinstance(element, dict) or not values:
        return False
    for key, value in zip(keys, values, strict=False):
        if key not in element or element[key] is None:
            return False
        if (exact or value) and text(element[key]) != value:
            return False
    return True


def _find(source: Any, keys: list[str], values: list[str]) -> Any:
    if not isinstance(source, list):
        return MISSING
    return next((element for element in source if _matches(element, keys, values, exact=True)), MISSING)


def _is_empty(element: Any) -> bool:
    return element is None or element == {}


def _set(items: list[Any], element: Any, keys: list[str], values: list[str]) -> list[Any]:
    """kyaml's element setter: every match replaced by `element` (removed when it is None), else appended;
    empty elements dropped on the way."""
    content: list[Any] = []
    found = False
    mapping = keys[0] != ""
    for item in items:
        if _is_empty(item):
            continue
        if mapping and not isinstance(item, dict):
            content.append(item)
            continue
        if not _matches(item, keys, values, exact=False):
            content.append(item)
            continue
        found = True
        if element is not None:
            content.append(element)
    if element is not None and not found:
        content.append(element)
    return content


def _merge_elements(
    values_list: list[list[str]], keys: list[str], dest: Any, patch: Any, type_name: str | None, path: str
) -> Any:
    items: list[Any] = []
    if len(keys) > 1:
        _unify(values_list)
    valid_keys: list[str] = keys
    valid_values: list[str] = []
    for values in values_list:
        if not values:
            continue
        valid_keys, valid_values = _valid(values_list, values, keys)
        lookup_keys, lookup_values = _valid([valid_values], valid_values, valid_keys)
        value = _walk(
            _find(dest, lookup_keys, lookup_values),
            _find(patch, lookup_keys, lookup_values),
            Field(None, type_name),
            f"{path}/{'/'.join(valid_values)}",
        )
        if value is CLEAR or value is MISSING or _is_empty(value):
            if isinstance(dest, list):
                dest[:] = _set(dest, None, valid_keys, valid_values)
            continue
        if isinstance(value, dict):
            for key, key_value in zip(valid_keys, valid_values, strict=False):
                if key not in value and key_value:
                    value[key] = key_value
        items = _set(items, value, valid_keys, valid_values)
    if values_list and isinstance(dest, list):
        items = _append(items, dest, valid_keys)
    return items


def _append(items: list[Any], source: list[Any], keys: list[str]) -> list[Any]:
    """The target's elements set into the merged ones (the patch's come first)."""
    for element in source:
        if keys[0] == "":
            items = _set(items, element, [""], [text(element)])
            continue
        values: list[str] = []
        for key in keys:
            if not isinstance(element, dict) or key not in element:
                items.append(element)
                continue
            values.append(text(element[key]))
        if len(keys) > 1:
            items = _set(items, None, keys, values)
        items = _set(items, element, keys, values)
    return items
