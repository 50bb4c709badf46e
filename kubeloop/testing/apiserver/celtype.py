"""The type a CEL expression evaluates to, as far as the fake can tell from its parse tree and the schema
it is declared on: a rule must evaluate to a bool, a messageExpression to a string (cel.Compile's checks).

Only what is certain is inferred: literals, ``self`` and its declared fields, arithmetic and string
concatenation of known types, comparisons and logical operators, ``size``, ``has`` and the conversion
functions. Anything else is ``None`` (dynamic, or beyond this inference), and passes, as a value of type
``dyn`` does on the real server until it is evaluated.
"""

from __future__ import annotations

from typing import Any

_SCHEMA_TYPES = {"integer": "int", "number": "double", "string": "string", "boolean": "bool", "array": "list",
                 "object": "map"}
_BOOLEAN_METHODS = ("startsWith", "endsWith", "contains", "matches", "all", "exists", "exists_one", "isSorted")
_FUNCTIONS = {"size": "int", "has": "bool", "int": "int", "uint": "uint", "double": "double", "string": "string",
              "bool": "bool", "matches": "bool"}


def result_type(tree: Any, node: dict[str, Any]) -> str | None:
    """The CEL type of the parsed expression ``tree`` where ``self`` has the schema ``node``."""
    return _typed(tree, node)


def _schema_type(node: Any) -> str | None:
    if not isinstance(node, dict) or node.get("x-kubernetes-int-or-string") or (
            node.get("x-kubernetes-preserve-unknown-fields") and node.get("type") in (None, "object")):
        return None
    return _SCHEMA_TYPES.get(node.get("type") or "")


def _typed(tree: Any, node: dict[str, Any]) -> str | None:
    from lark import Tree

    if not isinstance(tree, Tree):
        return None
    data, kids = str(tree.data), tree.children
    if data == "expr" and len(kids) == 3:  # a ? b : c
        then, other = _typed(kids[1], node), _typed(kids[2], node)
        return then if then == other else None
    # (a binary operator's tree: the operator node, holding the left operand, then the right operand)
    if data in ("conditionalor", "conditionaland", "relation") and len(kids) == 2:
        return "bool"
    if data in ("addition", "multiplication") and len(kids) == 2 and isinstance(kids[0], Tree):
        op, left, right = str(kids[0].data), _typed(kids[0].children[0], node), _typed(kids[1], node)
        if left == right and left in ("int", "uint", "double"):
            return left
        return left if op == "addition_add" and left == right and left in ("string", "list") else None
    if data == "unary" and len(kids) == 2 and isinstance(kids[0], Tree):
        return "bool" if str(kids[0].data) == "unary_not" else _typed(kids[1], node)
    if data == "literal":
        return _literal(str(kids[0]))
    if data == "ident":
        return _schema_type(node) if str(kids[0]) == "self" else None
    if data == "ident_arg":
        return _FUNCTIONS.get(str(kids[0]))
    if data == "member_dot_arg":
        return "bool" if str(kids[1]) in _BOOLEAN_METHODS else "int" if str(kids[1]) == "size" else None
    if data == "member_dot":
        found = _schema_of(kids[0], node)
        prop = (found.get("properties") or {}).get(str(kids[1])) if isinstance(found, dict) else None
        return _schema_type(prop)
    if data in ("list_lit", "map_lit"):
        return "list" if data == "list_lit" else "map"
    if len(kids) == 1:  # (expr, conditionalor, relation, addition, unary, member, primary, paren_expr...)
        return _typed(kids[0], node)
    return None


def _schema_of(tree: Any, node: dict[str, Any]) -> dict[str, Any] | None:
    """The schema of a selection path (``self``, ``self.a.b``), None when it is anything else."""
    from lark import Tree

    while isinstance(tree, Tree) and len(tree.children) == 1:
        if str(tree.data) == "ident":
            return node if str(tree.children[0]) == "self" else None
        tree = tree.children[0]
    if not isinstance(tree, Tree):
        return None
    if str(tree.data) == "member_dot":
        base = _schema_of(tree.children[0], node)
        found = (base.get("properties") or {}).get(str(tree.children[1])) if isinstance(base, dict) else None
        return found if isinstance(found, dict) else None
    return None


def _literal(text: str) -> str | None:
    if text in ("true", "false"):
        return "bool"
    if text == "null":
        return "null_type"
    if text[:1] in ("'", '"') or text[:2].lower() in ("r'", 'r"', "b'", 'b"'):
        return "bytes" if text[:1] in "bB" else "string"
    if text.endswith(("u", "U")):
        return "uint"
    if any(ch in text for ch in ".eE") and not text.lower().startswith("0x"):
        return "double"
    return "int"
