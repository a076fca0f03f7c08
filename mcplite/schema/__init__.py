"""Python callables and types <-> JSON Schema: the schema layer (pure: no I/O, no threads).

- `functions`: a function's signature and docstring -> a tool's input schema, and `FunctionSchema.bind`.
- `from_types`: a type annotation -> its schema, and a Python value -> JSON (`to_jsonable`).
- `convert`: the converters that turn validated JSON arguments back into the Python values a function asked for.
- `validation`: the compiled JSON Schema validator (2020-12 subset) and `coerce_from_string`.
- `uritemplate`: RFC 6570 URI templates, for resource templates.

This ``__init__`` imports nothing: the server's start-up path imports `validation` (which needs no `typing`),
and `functions` (with `from_types` and `convert`) loads with the first registered handler.
"""
