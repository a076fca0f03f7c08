"""Serving skills (the extension ``io.modelcontextprotocol/skills``, SEP-2640): loading, the index, the handlers.

`Registry.add_skills` and `Registry.add_skill` read skill directories with `load_skill`: a folder with a
``SKILL.md`` (YAML frontmatter with ``name`` and ``description``) and any supporting files. Each skill is read
once, whole, when it is added, and served from memory from then on: the digests in its entry and the bytes a
client reads are the same snapshot, so a file edited on disk afterwards cannot be served under a stale digest
(add the skill again to publish the change). What the loader refuses, with a `ValueError` naming the path:

- a ``SKILL.md`` without frontmatter, frontmatter beyond the YAML subset (`protocol.frontmatter`), a ``name``
  or ``description`` missing, a name that breaks the naming rule or differs from its directory's name;
- a symbolic link that leads out of the skill's directory, and any link to a directory (not followed, so a
  link cannot loop or reach outside); a file that is neither a regular file nor a link to one;
- more than ``max_files`` files (default 512), a file over ``max_file_size`` bytes, or more than
  ``max_total_size`` bytes in all (default 16 MiB): the extension's limits, which every host accepts.

Names beginning with a dot (``.git``, ``.DS_Store``) are not part of a skill and are skipped.

`SkillIndex` is what the handlers read: every skill by the URI of its ``SKILL.md``, every file by URI, and
every directory's children (the directories of an organisational prefix such as ``skill://acme`` included).
The registry replaces it whole under its lock when a skill is added or removed, and the handlers read the
current one without a lock (as with the other catalogs). A client asks only for URIs; a URI the index does
not hold (``skill://x/../../etc/passwd`` included) is simply not served.
"""

from __future__ import annotations

import os
import stat

from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, RPCError
from ..protocol import skills as rules
from ..protocol.frontmatter import FrontmatterError, parse_frontmatter
from .connections import uri_param

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, Iterable, List, Optional, Tuple

    from ..session import RequestContext
    from .connections import Connection

    #: The `Registry` a handler serves from (not imported by name: the registry imports this module).
    Registry = Any

__all__ = ["SkillFile", "Skill", "SkillIndex", "load_skill", "find_skills", "list_skills", "get_skill",
           "read_directory"]

#: Default size limit of one file of a skill (bytes): the extension's limit for a whole skill.
MAX_FILE_SIZE = rules.MAX_TOTAL_SIZE

#: ``mimeType`` by file extension; a file not named here is text/plain when it is UTF-8, else octet-stream.
_MIME_TYPES = {
    ".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".py": "text/x-python",
    ".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".toml": "application/toml", ".csv": "text/csv", ".html": "text/html", ".htm": "text/html",
    ".xml": "application/xml", ".js": "text/javascript", ".ts": "text/x-typescript", ".sh": "application/x-sh",
    ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".pdf": "application/pdf",
    ".zip": "application/zip",
}


class SkillFile:
    """One file of a skill: where it is served, what it is, and its bytes (read when the skill was added)."""

    __slots__ = ("uri", "path", "data", "mime_type", "text")

    def __init__(self, uri: str, path: str, data: bytes) -> None:
        self.uri = uri
        self.path = path  # relative to the skill's directory, "/"-separated
        self.data = data
        try:
            self.text: Optional[str] = data.decode("utf-8")
        except UnicodeDecodeError:
            self.text = None  # served as a base64 blob
        suffix = os.path.splitext(path)[1].lower()
        fallback = "text/plain" if self.text is not None else "application/octet-stream"
        self.mime_type = _MIME_TYPES.get(suffix, fallback)

    def contents(self) -> Dict[str, Any]:
        """The item of a ``resources/read`` result: text when the bytes are UTF-8, else a base64 blob."""
        if self.text is not None:
            return {"uri": self.uri, "mimeType": self.mime_type, "text": self.text}
        import base64

        return {"uri": self.uri, "mimeType": self.mime_type, "blob": base64.b64encode(self.data).decode("ascii")}


class Skill:
    """A loaded skill: its path in the skill namespace, its frontmatter, its files and its entry."""

    __slots__ = ("path", "name", "uri", "root", "frontmatter", "files", "entry")

    def __init__(self, path: str, frontmatter: Dict[str, Any], files: List[SkillFile]) -> None:
        self.path = path  # "pdf-processing", "acme/billing/refunds"
        self.name: str = frontmatter["name"]
        self.root = rules.SCHEME + path  # the skill's directory resource
        self.uri = f"{self.root}/{rules.SKILL_FILE}"
        self.frontmatter = frontmatter
        self.files = files  # SKILL.md first
        self.entry: Dict[str, Any] = {
            "uri": self.uri, "frontmatter": frontmatter,
            "resources": [{"uri": f.uri, "digest": rules.digest(f.data), "size": len(f.data)} for f in files]}

    def resource(self) -> Dict[str, Any]:
        """The ``SKILL.md`` as ``resources/list`` lists it: named and described by its frontmatter."""
        return {"uri": self.uri, "name": self.name, "description": self.frontmatter["description"],
                "mimeType": "text/markdown", "size": len(self.files[0].data)}


# ---- loading ------------------------------------------------------------------------------------------
def load_skill(directory: str, path: str, *, max_files: int = rules.MAX_RESOURCES,
               max_file_size: int = MAX_FILE_SIZE, max_total_size: int = rules.MAX_TOTAL_SIZE) -> Skill:
    """Read the skill in ``directory``, to be served at ``skill://<path>`` (``path``'s last segment is its name).

    Raises `ValueError` naming the file for everything listed in the module docstring.
    """
    real_root = os.path.realpath(directory)
    skill_md = os.path.join(directory, rules.SKILL_FILE)
    if not os.path.isfile(skill_md):
        raise ValueError(f"{directory}: no {rules.SKILL_FILE} (a skill is a directory with a {rules.SKILL_FILE})")
    files: List[Tuple[str, str]] = []  # (relative path, file system path)
    for relative, full in _walk(directory, real_root):
        files.append((relative, full))
        if len(files) > max_files:
            raise ValueError(f"{directory}: more than {max_files} files (the extension's limit per skill)")
    files.sort(key=lambda item: (item[0] != rules.SKILL_FILE, item[0]))  # SKILL.md first, then by path
    total = 0
    loaded: List[SkillFile] = []
    for relative, full in files:
        size = os.stat(full).st_size
        if size > max_file_size:
            raise ValueError(f"{full}: {size} bytes, over the limit of {max_file_size} per file")
        total += size
        if total > max_total_size:
            raise ValueError(f"{directory}: the skill's files exceed {max_total_size} bytes in all "
                             "(the extension's limit per skill)")
        data = _read_regular(full, max_file_size)
        if len(data) > max_file_size:  # the file grew while we read it
            raise ValueError(f"{full}: over the limit of {max_file_size} bytes per file")
        loaded.append(SkillFile(f"{rules.SCHEME}{path}/{relative}", relative, data))
    frontmatter = _frontmatter(skill_md, loaded[0].data)
    name = path.rsplit("/", 1)[-1]
    if frontmatter["name"] != name:
        raise ValueError(f"{skill_md}: the frontmatter name {frontmatter['name']!r} differs from the skill's "
                         f"directory name {name!r} (the Agent Skills specification requires them equal)")
    return Skill(path, frontmatter, loaded)


def _read_regular(path: str, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of the regular file at ``path``, which `_walk` checked: opened without following
    a link in its last component (``O_NOFOLLOW`` where the system has it) and checked again once open, so a file
    swapped for a link or a device after the walk is refused rather than read."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise ValueError(f"{path}: not a regular file any more; refused")
        return file.read(limit + 1)


def _frontmatter(skill_md: str, data: bytes) -> Dict[str, Any]:
    try:
        frontmatter, _ = parse_frontmatter(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{skill_md} is not UTF-8: {exc}") from None
    except FrontmatterError as exc:
        raise ValueError(f"{skill_md}: {exc}") from None
    for field in ("name", "description"):
        if not isinstance(frontmatter.get(field), str) or not frontmatter[field]:
            raise ValueError(f"{skill_md}: the frontmatter needs a non-empty {field!r} (a string)")
    problem = rules.name_problem(frontmatter["name"])
    if problem is not None:
        raise ValueError(f"{skill_md}: {problem}")
    return frontmatter


def _walk(directory: str, real_root: str) -> Iterable[Tuple[str, str]]:
    """Every file of a skill directory: ``(path relative to it, "/"-separated; path on disk)``, dot names
    skipped, links checked (see the module docstring)."""
    pending = [("", directory)]
    while pending:
        relative_dir, full_dir = pending.pop()
        with os.scandir(full_dir) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.name.startswith("."):
                    continue
                relative = f"{relative_dir}{entry.name}"
                path = entry.path
                if entry.is_symlink():
                    target = path = os.path.realpath(entry.path)  # read through the checked target
                    if os.path.commonpath([real_root, target]) != real_root:
                        raise ValueError(f"{entry.path}: a symbolic link that leads out of the skill's directory "
                                         f"(to {target}); refused")
                    if os.path.isdir(target):
                        raise ValueError(f"{entry.path}: a symbolic link to a directory; links to directories "
                                         "are not followed (refused)")
                mode = os.stat(path).st_mode
                if stat.S_ISDIR(mode):
                    pending.append((relative + "/", path))
                elif stat.S_ISREG(mode):
                    yield relative, path
                else:
                    raise ValueError(f"{entry.path}: neither a regular file nor a directory; refused")


def find_skills(root: str) -> List[Tuple[str, str]]:
    """Every skill under ``root``: ``(its directory, its path relative to root, "/"-separated)``, nested
    skills included, in path order. A directory is a skill when it holds a ``SKILL.md``; ``root`` itself may
    not be one (give its parent). Dot names and symbolic links to directories are not searched."""
    found: List[Tuple[str, str]] = []
    for current, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(current, d)))
        relative = os.path.relpath(current, root)
        if rules.SKILL_FILE in names and relative != ".":
            found.append((current, relative.replace(os.sep, "/")))
    if os.path.isfile(os.path.join(root, rules.SKILL_FILE)):
        raise ValueError(f"{root} is itself a skill: add_skills takes the directory that holds skills "
                         "(use add_skill for one skill)")
    return sorted(found, key=lambda item: item[1])


# ---- the index ------------------------------------------------------------------------------------------
class SkillIndex:
    """What the handlers read: skills by ``SKILL.md`` URI, files by URI, directories' children by URI.

    Immutable once built: the registry builds a new one for every change (`with_skill`, `without`).
    """

    __slots__ = ("skills", "files", "directories")

    def __init__(self, skills: Optional[Dict[str, Skill]] = None) -> None:
        self.skills: Dict[str, Skill] = dict(skills or {})
        self.files: Dict[str, SkillFile] = {}
        children: Dict[str, Dict[str, Dict[str, Any]]] = {}
        for skill in self.skills.values():
            # the directories of an organisational prefix (skill://acme, skill://acme/billing) lead to the skill
            segments = skill.path.split("/")
            for depth in range(1, len(segments)):
                parent = rules.SCHEME + "/".join(segments[:depth])
                child_uri = f"{parent}/{segments[depth]}"
                children.setdefault(parent, {}).setdefault(child_uri, {
                    "uri": child_uri, "name": segments[depth], "mimeType": rules.DIRECTORY_MIME_TYPE})
            for file in skill.files:
                self.files.setdefault(file.uri, file)
                parts = file.path.split("/")
                parent = skill.root
                for depth, part in enumerate(parts):
                    child_uri = f"{parent}/{part}"
                    if depth == len(parts) - 1:
                        child = {"uri": child_uri, "name": part, "mimeType": file.mime_type, "size": len(file.data)}
                        if file.uri == skill.uri:
                            child.update(name=skill.name, description=skill.frontmatter["description"])
                    else:
                        child = {"uri": child_uri, "name": part, "mimeType": rules.DIRECTORY_MIME_TYPE}
                    children.setdefault(parent, {}).setdefault(child_uri, child)
                    parent = child_uri
        self.directories = {uri: [kids[key] for key in sorted(kids)] for uri, kids in children.items()}

    def with_skill(self, skill: Skill) -> "SkillIndex":
        if skill.uri in self.skills:
            raise ValueError(f"a skill is already served at {skill.uri}")
        return SkillIndex({**self.skills, skill.uri: skill})

    def without(self, uri: str) -> "SkillIndex":
        if uri not in self.skills:
            raise KeyError(f"no skill is served at {uri}")
        return SkillIndex({key: skill for key, skill in self.skills.items() if key != uri})

    def resolve(self, name_or_uri: str) -> str:
        """The ``SKILL.md`` URI of a skill named by its URI, its path (``acme/refunds``) or its name."""
        for candidate in (name_or_uri, f"{rules.SCHEME}{name_or_uri}/{rules.SKILL_FILE}"):
            if candidate in self.skills:
                return candidate
        named = [uri for uri, skill in self.skills.items() if skill.name == name_or_uri]
        if len(named) == 1:
            return named[0]
        if named:
            raise KeyError(f"several skills are named {name_or_uri!r}: {', '.join(sorted(named))}")
        raise KeyError(f"no skill {name_or_uri!r}")


# ---- handlers -------------------------------------------------------------------------------------------
def _index(server: Registry) -> SkillIndex:
    index: Optional[SkillIndex] = server._skill_index
    if index is None:  # the extension is not declared: these methods do not exist here
        raise RPCError(METHOD_NOT_FOUND, "Method not found: this server does not serve skills")
    return index


def list_skills(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``skills/list``: every skill's entry, a page at a time (an entry is never split)."""
    from .results import page

    index = _index(server)
    return page("skills", [skill.entry for _, skill in sorted(index.skills.items())], ctx.params,
                server.page_size)


def get_skill(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``skills/get {uri}``: one skill's entry; -32602 when the URI is not the ``SKILL.md`` of a served skill."""
    index = _index(server)
    uri = uri_param(ctx)
    skill = index.skills.get(uri)
    if skill is None:
        raise RPCError(INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
    return {"skill": skill.entry}


def read_directory(server: Registry, connection: Connection, ctx: RequestContext) -> Dict[str, Any]:
    """``resources/directory/read {uri, cursor?}``: the direct children of a skill directory, a page at a
    time; -32602 for a URI that is not a directory served here (a file, or nothing)."""
    from .results import page

    index = _index(server)
    if not server.skills_directory_read:
        raise RPCError(METHOD_NOT_FOUND, "Method not found: this server does not declare directoryRead")
    uri = uri_param(ctx)
    children = index.directories.get(uri.rstrip("/") if uri.count("/") > 2 else uri)
    if children is None:
        what = "a file, not a directory" if uri in index.files else "not a directory served here"
        raise RPCError(INVALID_PARAMS, f"{uri} is {what}", {"uri": uri})
    return page("resources", children, ctx.params, server.page_size)
