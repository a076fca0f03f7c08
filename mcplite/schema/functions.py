"""JSON Schema for plain Python functions: a function's signature, type hints and docstring -> its schemas.

Tools and prompts are plain functions. This module reads them into the JSON Schemas MCP needs (a tool's
``inputSchema`` and ``outputSchema``, a prompt's arguments) and gives `FunctionSchema.bind`, which validates
JSON arguments and turns them into the Python values the annotations promise. A type's schema is
`from_types`'s, the JSON -> Python converters are `convert`'s, checking values against schemas and parsing
text by a schema are `validation`'s: this module re-exports their names for existing callers. Pure: no I/O.
"""

from __future__ import annotations  # annotations are not evaluated at import: a lighter start-up

import functools
import re
import types
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, get_args, get_origin

from .convert import _argument_converters
from .from_types import (
    _MAPPING_ORIGINS, _UNION_ORIGINS, Header, Schema, _add_default, _Definitions, _is_dataclass, _is_typeddict,
    _NoneType, _object_schema, _schema, _type_hints, _unwrap, is_model, to_jsonable, type_schema,
)

# validate and compile_schema are not used here: like ValidationError and coerce_from_string, they are
# re-exported (see __all__) for the callers that import them from here, where they used to live.
# The check that compile_schema wraps: `bind` runs on every tool call, and calling it directly saves a call.
from .validation import ValidationError, _compile_check, coerce_from_string, compile_schema, validate

__all__ = [
    "ValidationError", "validate", "compile_schema", "Parameter", "FunctionSchema", "function_schema",
    "type_schema", "to_jsonable", "coerce_from_string", "Header",
]


class Parameter(NamedTuple):
    """One argument of a tool or prompt, as its schema advertises it."""

    name: str
    schema: Schema
    required: bool
    description: Optional[str]


class FunctionSchema:
    """What `function_schema` learned about a function: its JSON Schemas and how to call it.

    Attributes:
        name: the function's name.
        description: its docstring without the Args/Parameters section (None when there is none).
        parameters: the arguments a caller supplies, in signature order (injected ones excluded).
        injected: parameter name -> the skip type it matched; the caller of the function fills these in.
        input_schema: the object schema of the arguments (with "$defs" when any).
        output_schema: the schema of the structured result, None when the result is plain content.
        wraps_output: the result is not an object, so structured content is ``{"result": value}``.
        accepts_extra: the function has ``**kwargs``, so `bind` passes unknown arguments through.

    The input schema and the conversions `bind` makes are compiled when the object is made: treat the
    attributes as read-only.
    """

    def __init__(self, name: str, description: Optional[str], parameters: List[Parameter],
                 injected: Dict[str, type], input_schema: Schema, output_schema: Optional[Schema],
                 wraps_output: bool, accepts_extra: bool, annotations: Dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.injected = injected
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.wraps_output = wraps_output
        self.accepts_extra = accepts_extra
        self._parameter_names = frozenset(annotations)
        self._check_arguments = _compile_check(input_schema)
        # Only the parameters whose annotation promises more than the JSON value (a dataclass, an Enum...).
        self._converters = _argument_converters(annotations)
        # Each parameter's schema with the shared "$defs", so that its "$ref"s resolve when parsing text.
        defs = input_schema.get("$defs")
        self._text_schemas = [(p.name, {**p.schema, "$defs": defs} if defs else p.schema) for p in parameters]

    def __repr__(self) -> str:
        return f"FunctionSchema({self.name!r}, parameters={[p.name for p in self.parameters]})"

    def bind(self, arguments: Optional[Dict[str, Any]], *, from_strings: bool = False) -> Dict[str, Any]:
        """Validate JSON arguments and turn them into keyword arguments for the function.

        Missing optional arguments are left out (the Python default applies), unknown ones are dropped
        unless the function takes ``**kwargs``, and values become what their annotations promise:
        dataclass instances, Enum members, tuples, sets, floats. Values that already are (strings, lists
        of strings...) are passed on as they are, not copied.

        Args:
            arguments: the JSON object of arguments (None means none).
            from_strings: every value arrived as a string (prompt arguments); parse each one by its
                parameter's schema first, as `coerce_from_string` does.

        Raises:
            ValidationError: listing every argument that does not match the input schema.
        """
        if arguments is None:
            arguments = {}
        if from_strings and isinstance(arguments, dict):
            arguments = self._parse_strings(arguments)
        # The input schema's "type": "object" refuses a non-object too. Invalid values only get a second
        # pass, which lists the problems with their paths.
        if self._check_arguments(arguments, None):
            raise ValidationError(list(self._check_arguments(arguments, "$")))
        if arguments.keys() <= self._parameter_names:  # the usual case: no unknown arguments to drop
            kwargs = dict(arguments)
        elif self.accepts_extra:
            kwargs = {name: value for name, value in arguments.items() if name not in self.injected}
        else:
            kwargs = {name: value for name, value in arguments.items() if name in self._parameter_names}
        if self._converters:
            for name, (convert, path) in self._converters.items():
                if name in kwargs:
                    kwargs[name] = convert(kwargs[name], path)
        return kwargs

    def _parse_strings(self, arguments: Dict[str, Any]) -> Dict[str, Any]:
        parsed = dict(arguments)
        for name, schema in self._text_schemas:
            text = arguments.get(name)
            if isinstance(text, str):
                try:
                    parsed[name] = coerce_from_string(text, schema)
                except ValidationError:
                    pass  # keep the text: validation then reports the mismatch with the argument's path
        return parsed

    def structure_output(self, value: Any) -> Any:
        """The JSON value for ``structuredContent``: `to_jsonable(value)`, wrapped when `wraps_output`."""
        value = to_jsonable(value)
        return {"result": value} if self.wraps_output else value


def function_schema(fn: Callable[..., Any], *, skip_types: Tuple[type, ...] = (),
                    output: bool = True) -> FunctionSchema:
    """Read a function's signature, type hints and docstring into its MCP schemas.

    Args:
        fn: a function, method, functools.partial or callable object. String annotations (and
            ``from __future__ import annotations``) are resolved in the function's module.
        skip_types: parameters annotated with one of these classes (or Optional of one) are injected by
            the caller instead of being arguments; the server passes its Context class here.
        output: also derive the output schema from the return annotation.

    Raises:
        TypeError: a parameter's annotation has no JSON Schema, a hint cannot be resolved, or a
            parameter cannot be passed by keyword (``*args``, positional-only).
    """
    name, doc, annotated = _inspect_callable(fn)
    description, argument_docs = _parse_docstring(doc)
    hints = _type_hints(annotated, name)
    defs = _Definitions()
    parameters: List[Parameter] = []
    injected: Dict[str, type] = {}
    annotations: Dict[str, Any] = {}
    accepts_extra = False
    for param_name, kind, default in _signature(fn):
        if kind == "VAR_KEYWORD":
            accepts_extra = True
            continue
        if kind in ("VAR_POSITIONAL", "POSITIONAL_ONLY"):
            raise TypeError(f"{name}(): parameter {param_name!r} cannot be passed by keyword")
        annotation = hints.get(param_name, Any)
        skip_type = _skip_type(annotation, skip_types)
        if skip_type is not None:
            injected[param_name] = skip_type
            continue
        parameter = _parameter(name, param_name, default, annotation, argument_docs.get(param_name), defs)
        parameters.append(parameter)
        annotations[param_name] = annotation
    properties = {parameter.name: parameter.schema for parameter in parameters}
    input_schema = _object_schema(properties, [p.name for p in parameters if p.required])
    if defs.schemas:
        input_schema["$defs"] = defs.schemas
    output_schema, wraps_output = _output_schema(hints.get("return", Any)) if output else (None, False)
    return FunctionSchema(name, description, parameters, injected, input_schema, output_schema, wraps_output,
                          accepts_extra, annotations)


# One parameter of a signature, as function_schema reads it: (name, kind, default). The kind is the name of
# an inspect.Parameter kind ("POSITIONAL_ONLY", "KEYWORD_ONLY", "VAR_KEYWORD"...); the default is
# _NO_DEFAULT when there is none.
_Param = Tuple[str, str, Any]
_NO_DEFAULT: Any = object()

# Flags of a code object (inspect.CO_VARARGS, inspect.CO_VARKEYWORDS): the function takes *args, **kwargs.
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def _is_plain_function(fn: Any) -> bool:
    """Whether `fn` is a function made by ``def`` or ``lambda`` that carries no attributes (such as the
    ``__wrapped__`` of functools.wraps, or a ``__signature__``), so that its code object tells its signature.

    Such functions, the usual tools and prompts, are read without inspect: importing it (and the ast, dis
    and tokenize modules it imports) would weigh on every server's start-up. Anything else (methods,
    partials, classes, callable objects, wrappers) is left to inspect.
    """
    return type(fn) is types.FunctionType and not fn.__dict__


def _signature(fn: Callable[..., Any]) -> List[_Param]:
    """The parameters of `fn` as inspect.signature lists them, in order."""
    if not _is_plain_function(fn):
        import inspect

        return [(p.name, p.kind.name, _NO_DEFAULT if p.default is p.empty else p.default)
                for p in inspect.signature(fn).parameters.values()]
    code = fn.__code__
    # co_varnames starts with the positional parameters, then the keyword-only ones, then *args and **kwargs.
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    defaults = fn.__defaults__ or ()
    first_default = positional - len(defaults)  # the defaults belong to the last positional parameters
    params: List[_Param] = []
    for index in range(positional):
        kind = "POSITIONAL_ONLY" if index < code.co_posonlyargcount else "POSITIONAL_OR_KEYWORD"
        default = defaults[index - first_default] if index >= first_default else _NO_DEFAULT
        params.append((names[index], kind, default))
    next_name = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        params.append((names[next_name], "VAR_POSITIONAL", _NO_DEFAULT))
        next_name += 1
    keyword_defaults = fn.__kwdefaults__ or {}
    params.extend((name, "KEYWORD_ONLY", keyword_defaults.get(name, _NO_DEFAULT))
                  for name in names[positional:positional + keyword_only])
    if code.co_flags & _CO_VARKEYWORDS:
        params.append((names[next_name], "VAR_KEYWORD", _NO_DEFAULT))
    return params


def _parameter(function: str, name: str, default: Any, annotation: Any, doc: Optional[str],
               defs: _Definitions) -> Parameter:
    try:
        schema = dict(_schema(annotation, defs))
    except TypeError as exc:
        raise TypeError(f"{function}(): parameter {name!r}: {exc}") from None
    description = schema.get("description") or doc  # an Annotated description wins over the docstring
    if description:
        schema["description"] = description
    required = default is _NO_DEFAULT
    if not required:
        _add_default(schema, default)
    return Parameter(name, schema, required, description)


def _inspect_callable(fn: Callable[..., Any]) -> Tuple[str, Optional[str], Callable[..., Any]]:
    """The name, the docstring and the annotated function behind `fn`."""
    if _is_plain_function(fn):
        return fn.__name__, fn.__doc__, fn
    import inspect  # see _is_plain_function

    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isroutine(target):
        name, doc = target.__name__, target.__doc__
    elif inspect.isclass(target):  # calling a class runs its __init__
        name, doc, target = target.__name__, target.__doc__, target.__init__
    else:  # a callable object: its class's __call__ carries the annotations
        cls = type(target)
        name, doc, target = cls.__name__, cls.__call__.__doc__ or cls.__doc__, cls.__call__
    # Hints come from the innermost function, as inspect.signature reads its parameters from there too.
    return name, doc, inspect.unwrap(getattr(target, "__func__", target))


def _skip_type(annotation: Any, skip_types: Tuple[type, ...]) -> Optional[type]:
    """The skip type that `annotation` (or Optional of it) is, or a subclass of; None when none."""
    annotation = _unwrap(annotation)
    if get_origin(annotation) in _UNION_ORIGINS:
        arms = [arm for arm in get_args(annotation) if arm is not _NoneType]
        if len(arms) != 1:
            return None
        annotation = _unwrap(arms[0])
    if get_origin(annotation) is None and isinstance(annotation, type):
        for skip_type in skip_types:
            if issubclass(annotation, skip_type):
                return skip_type
    return None


#: The keyword that marks an output schema wrapping a value that is not an object as ``{"result": value}``.
WRAP_MARK = "x-fastmcp-wrap-result"


def _output_schema(annotation: Any) -> Tuple[Optional[Schema], bool]:
    """(output schema, wraps_output) for a return annotation.

    Text is a tool's natural content, so no annotation, None, Any and str give no schema. So does a type
    with no JSON Schema (such as a server's content classes): its value is content, not structured data.
    Objects are their own schema; anything else is wrapped as {"result": value}.
    """
    bare = _unwrap(annotation)
    if bare is Any or bare is _NoneType or bare is None or bare is str:
        return None, False
    try:
        schema = type_schema(annotation)
    except TypeError:
        return None, False
    origin = get_origin(bare)
    if origin is None and (_is_dataclass(bare) or _is_typeddict(bare) or is_model(bare)):
        return _inline_root_ref(schema), False
    if (origin or bare) in _MAPPING_ORIGINS:
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped = _object_schema({"result": schema}, ["result"])
    # As FastMCP marks it: its client (and others that read the mark) then hands over the value, not a
    # {"result": ...} object. The official Python SDK wraps the same way, unmarked.
    wrapped[WRAP_MARK] = True
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _inline_root_ref(schema: Schema) -> Schema:
    """Replace a root {"$ref": "#/$defs/X"} by X itself: MCP wants "type": "object" at an outputSchema's root.

    X stays in "$defs" only when something still refers to it (a recursive class).
    """
    ref = schema["$ref"]
    name = ref[len("#/$defs/"):]
    defs = dict(schema["$defs"])
    definition = defs.pop(name)
    root = {**definition, **{key: value for key, value in schema.items() if key not in ("$ref", "$defs")}}
    if _refers_to(root, ref) or _refers_to(defs, ref):
        defs[name] = definition
    if defs:
        root["$defs"] = defs
    return root


def _refers_to(node: Any, ref: str) -> bool:
    """Whether a "$ref" to `ref` occurs anywhere in `node`."""
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_refers_to(value, ref) for value in node.values())
    if isinstance(node, list):
        return any(_refers_to(item, ref) for item in node)
    return False


# Docstring sections that describe the arguments, Google style ("Args:" then indented entries) and NumPy
# style ("Parameters" underlined with dashes, then "name : type" entries with indented descriptions).
# The entry patterns are compiled on first use (and kept by re): compiling them with the module would slow
# every server's start-up, and many docstrings have no such section.
_GOOGLE_HEADERS = ("Args:", "Arguments:", "Parameters:")
_GOOGLE_ENTRY = r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$"  # name (type): text
_NUMPY_HEADER = "Parameters"
_NUMPY_ENTRY = r"^\*{0,2}(?P<name>\w+)\s*(?::.*)?$"  # name : type


def _parse_docstring(doc: Optional[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """Split a docstring into its description (without the arguments section) and per-argument texts."""
    if not doc:
        return None, {}
    lines = _docstring_lines(doc)
    section = _find_arguments_section(lines)
    if section is None:
        return "\n".join(lines).strip() or None, {}
    start, body, end, entry = section
    rest = "\n".join(lines[:start] + lines[end:]).strip()
    return rest or None, _argument_texts(lines[body:end], entry)


def _docstring_lines(doc: str) -> List[str]:
    """The lines of a docstring cleaned as inspect.cleandoc cleans them, each right-stripped: tabs expanded,
    the first line's indent and the indent the other lines share removed (blank lines at either end stay).

    Not inspect.cleandoc itself: importing inspect would weigh on every server's start-up.
    """
    lines = [line.rstrip() for line in doc.expandtabs().splitlines()]
    return [lines[0].lstrip(" ")] + _dedent(lines[1:])


def _dedent(lines: List[str]) -> List[str]:
    """Right-stripped lines without the indent their non-blank lines share, as textwrap.dedent does."""
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line), default=0)
    return [line[margin:] for line in lines]


def _find_arguments_section(lines: List[str]) -> Optional[Tuple[int, int, int, str]]:
    """(header line, first body line, end line, entry pattern) of the arguments section, if any."""
    for start, line in enumerate(lines):
        if line in _GOOGLE_HEADERS:  # the common indent is gone: headers sit at column 0
            end = start + 1
            while end < len(lines) and (not lines[end] or lines[end][0].isspace()):
                end += 1
            return start, start + 1, end, _GOOGLE_ENTRY
        if line == _NUMPY_HEADER and _is_underline(lines, start + 1):
            end = start + 2
            while end < len(lines) and not (lines[end] and not lines[end][0].isspace()
                                            and _is_underline(lines, end + 1)):
                end += 1
            return start, start + 2, end, _NUMPY_ENTRY
    return None


def _is_underline(lines: List[str], index: int) -> bool:
    return index < len(lines) and bool(lines[index].strip()) and set(lines[index].strip()) == {"-"}


def _argument_texts(body: List[str], entry: str) -> Dict[str, str]:
    """name -> description from a section body: entries at its left margin, continuations indented."""
    texts: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in _dedent(body):
        match = re.match(entry, line) if line[:1] not in (" ", "\t") else None
        if match:
            current = str(match.group("name"))
            texts[current] = [match.groupdict().get("text") or ""]
        elif current is not None and line.strip():
            texts[current].append(line.strip())
    joined = {name: " ".join(part for part in parts if part) for name, parts in texts.items()}
    return {name: text for name, text in joined.items() if text}
