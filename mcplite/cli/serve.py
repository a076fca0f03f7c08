"""``serve``: load a `Server` from a file or a module, and run it over stdio or HTTP."""

import argparse
import functools
import importlib
import importlib.util
import os
import sys
from typing import Any, Dict, Optional, Tuple

from ..server import Server
from .exits import EXIT_OK, UsageError


def load_server(spec: str) -> Server:
    """The `Server` named by ``FILE_OR_MODULE[:OBJECT]``.

    A path to a ``.py`` file is run as a module (its folder first on ``sys.path``, as ``python FILE``
    would); anything else is imported as a module name. Without ``:OBJECT``, the module must hold exactly
    one `Server`. ``OBJECT`` may be dotted (``app.server``).

    Raises:
        UsageError: the file or module cannot be loaded, or holds no (or several) servers.
    """
    location, object_path = _split_object(spec)
    module = _load_module(location)
    if object_path:
        try:
            found = functools.reduce(getattr, object_path.split("."), module)
        except AttributeError:
            raise UsageError(f"{location} has no {object_path!r}") from None
        if not isinstance(found, Server):
            raise UsageError(f"{location}:{object_path} is a {type(found).__name__}, not a Server")
        return found
    servers: Dict[int, Tuple[str, Server]] = {}  # by identity: one server may have several names
    for name, value in vars(module).items():
        if isinstance(value, Server):
            servers.setdefault(id(value), (name, value))
    if len(servers) == 1:
        return next(iter(servers.values()))[1]
    if not servers:
        raise UsageError(f"{location} defines no Server object")
    names = ", ".join(sorted(name for name, _ in servers.values()))
    raise UsageError(f"{location} defines several Server objects ({names}); choose one with {location}:NAME")


def _split_object(spec: str) -> Tuple[str, Optional[str]]:
    location, colon, object_path = spec.rpartition(":")
    # Only a dotted name after the colon is an object: "C:\\servers\\x.py" is a path, not "C:" + object.
    if colon and location and all(part.isidentifier() for part in object_path.split(".")):
        return location, object_path
    return spec, None


def _load_module(location: str) -> Any:
    is_file = location.endswith(".py") or os.sep in location or (os.altsep or os.sep) in location
    try:
        if is_file:
            return _load_file(location)
        if os.getcwd() not in sys.path:  # `python -m` would find modules in the current folder too
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(location)
    except UsageError:
        raise
    except Exception as exc:  # the module's own failure: report it as the reason it cannot be served
        raise UsageError(f"cannot load {location}: {type(exc).__name__}: {exc}") from None


def _load_file(path: str) -> Any:
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    # Registered under its name, as an imported module is: dataclasses and string annotations in it look
    # their module up there. A name already taken (a file called json.py) is left alone.
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


#: The options of serving over HTTP, as the usage errors name them when given without ``--http``.
HTTP_OPTION_NAMES = "--shutdown-grace, --allow-host, --allow-origin, --access-log, --auth-token-env and --authenticate"


def http_options_given(args: argparse.Namespace) -> bool:
    """Whether the command line gives any of `http_serving_options`' options (they need ``--http``)."""
    return bool(args.shutdown_grace is not None or args.allow_hosts or args.allow_origins or args.access_log
                or args.auth_token_env is not None or args.authenticate is not None)


def http_serving_options(args: argparse.Namespace) -> Dict[str, Any]:
    """The HTTP server's options from the command line's ``--shutdown-grace``, ``--allow-host``,
    ``--allow-origin``, ``--access-log``, ``--auth-token-env`` and ``--authenticate`` (``serve`` and
    ``gateway`` both take them).

    Raises:
        UsageError: ``--auth-token-env`` names a variable that is unset or too short, or ``--authenticate``
            names nothing callable.
    """
    options: Dict[str, Any] = {}
    if args.shutdown_grace is not None:
        options["shutdown_grace"] = args.shutdown_grace
    if args.allow_hosts:
        options["allowed_hosts"] = args.allow_hosts
    if args.allow_origins:
        options["allowed_origins"] = args.allow_origins
    if args.access_log:
        options["access_log"] = True
    if args.auth_token_env is not None:
        from ..oauth.bearer import StaticTokenAuth

        token = os.environ.get(args.auth_token_env, "")
        if not token:
            raise UsageError(f"--auth-token-env: the environment variable {args.auth_token_env} is not set")
        try:
            options["authenticate"] = StaticTokenAuth([token])
        except ValueError as exc:
            raise UsageError(f"--auth-token-env {args.auth_token_env}: {exc}") from None
    if args.authenticate is not None:
        options["authenticate"] = load_authenticate(args.authenticate)
    return options


def load_authenticate(spec: str) -> Any:
    """The ``authenticate`` hook named by ``FILE_OR_MODULE:OBJECT`` (a callable, or a `BearerAuth`).

    Raises:
        UsageError: no ``:OBJECT``, the file or module cannot be loaded, or the object is missing or not callable.
    """
    location, object_path = _split_object(spec)
    if not object_path:
        raise UsageError(f"--authenticate needs FILE_OR_MODULE:OBJECT, naming the hook, not {spec!r}")
    try:
        found = functools.reduce(getattr, object_path.split("."), _load_module(location))
    except AttributeError:
        raise UsageError(f"{location} has no {object_path!r}") from None
    if not callable(found):
        raise UsageError(f"{location}:{object_path} is a {type(found).__name__}, not an authenticate hook (a "
                         "callable taking the request headers)")
    return found


def _serve(args: argparse.Namespace) -> int:
    if args.http is None and (args.stateless or args.json_response or http_options_given(args)):
        raise UsageError(f"--stateless, --json-response, {HTTP_OPTION_NAMES} need --http HOST:PORT")
    server = load_server(args.target)
    options = http_serving_options(args)
    if args.stateless:
        options["stateless"] = True
    if args.json_response:
        options["json_response"] = True
    try:
        server.run(http=args.http, **options)
    except ValueError as exc:  # the address or an option refused before serving (a public address, no --allow-host)
        raise UsageError(str(exc)) from None
    return EXIT_OK
