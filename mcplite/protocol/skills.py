"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640) as data and rules, for both sides.

A server serves *skills* (Agent Skills: a directory with a ``SKILL.md`` that begins with YAML frontmatter,
plus supporting files) as resources under ``skill://<skill-path>/<file-path>``, and answers ``skills/list``,
``skills/get`` and, when it declares ``directoryRead``, ``resources/directory/read``. A skill's *entry* is
``{uri, frontmatter, resources}``: the URI of its ``SKILL.md``, that file's frontmatter as JSON, and every
file of the skill as ``{uri, digest: "sha256:<hex>", size}`` (or the string ``"dynamic"``).

A client reads the listing only (no file until the skill is loaded), and checks every file it reads against
the entry it holds: the size and SHA-256 digest of the bytes, and for ``SKILL.md`` the frontmatter, field by
field. Any difference is a `SkillVerificationError`, and the content is not used.

This module holds what both sides share: the names, the limits, the naming rule, digests, the shape check of
an entry, and the verification of a file against an entry. Pure: bytes and dicts in, answers out. Importing
it costs nothing a server does not already load (the server's caching table names the two cacheable methods).
"""

from __future__ import annotations

import re

from ..errors import SkillVerificationError
from .methods import SKILLS_GET, SKILLS_LIST  # the extension's methods, named with the others

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional

__all__ = [
    "EXTENSION", "SKILLS_LIST", "SKILLS_GET", "DIRECTORY_READ", "DIRECTORY_MIME_TYPE", "SKILL_FILE", "SCHEME",
    "DYNAMIC", "MAX_RESOURCES", "MAX_TOTAL_SIZE", "name_problem", "digest", "skill_root", "skill_name",
    "entry_problems", "contents_bytes", "verify_file", "frontmatter_differences", "verify_skill_file",
]

#: The extension's identifier, under ``capabilities.extensions``.
EXTENSION = "io.modelcontextprotocol/skills"
DIRECTORY_READ = "resources/directory/read"
#: The ``mimeType`` of a directory resource (a child of ``resources/directory/read`` that is a directory).
DIRECTORY_MIME_TYPE = "inode/directory"
SKILL_FILE = "SKILL.md"
SCHEME = "skill://"
#: The ``resources`` of an entry whose content is generated, so that no digest can be published.
DYNAMIC = "dynamic"
#: The per-skill limits every host accepts (and servers should not exceed): files, and bytes over all of them.
MAX_RESOURCES = 512
MAX_TOTAL_SIZE = 16 * 1024 * 1024

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")
# The Agent Skills naming rule: 1-64 of lowercase letters, digits and hyphens; no hyphen first, last or twice.
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?\Z")


def name_problem(name: object) -> Optional[str]:
    """Why ``name`` is not a valid skill name (Agent Skills: 1-64 characters of ``a-z``, ``0-9`` and ``-``,
    no hyphen at either end or twice in a row), or None when it is."""
    if not isinstance(name, str) or not name:
        return "a skill name must be a non-empty string"
    if not _NAME.match(name):
        return (f"skill name {name!r} breaks the naming rule: 1-64 characters of lowercase letters, digits "
                "and hyphens, with no hyphen first, last or twice in a row")
    return None


def digest(data: bytes) -> str:
    """The SEP-2640 digest of a file's bytes: ``sha256:`` and 64 lowercase hex digits."""
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_root(uri: str) -> Optional[str]:
    """The skill directory of a ``SKILL.md`` URI (the URI without ``/SKILL.md``), or None for another URI."""
    scheme, separator, rest = uri.partition("://")
    suffix = "/" + SKILL_FILE
    if not separator or not rest.endswith(suffix) or not rest[:-len(suffix)]:
        return None
    return uri[:-len(suffix)]


def skill_name(uri: str) -> Optional[str]:
    """The skill name a ``SKILL.md`` URI carries: its last path segment before ``SKILL.md`` (or None)."""
    root = skill_root(uri)
    return None if root is None else root.rsplit("/", 1)[-1].split("://")[-1]


def entry_problems(entry: object) -> List[str]:
    """What is wrong with a skill entry as received (empty when nothing is): the fields it must have, digests
    and sizes of the right form, files inside the skill and listed once, the SKILL.md among them, and the
    extension's limits (512 files, 16 MiB)."""
    if not isinstance(entry, dict):
        return ["the entry is not an object"]
    problems: List[str] = []
    uri = entry.get("uri")
    root = skill_root(uri) if isinstance(uri, str) else None
    if root is None:
        problems.append(f"uri {uri!r} is not the URI of a {SKILL_FILE}")
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, dict):
        problems.append("frontmatter is missing or not an object")
    else:
        for field in ("name", "description"):
            if not isinstance(frontmatter.get(field), str) or not frontmatter[field]:
                problems.append(f"frontmatter.{field} is missing or empty")
        if root is not None and isinstance(uri, str) and frontmatter.get("name") != skill_name(uri):
            problems.append(f"frontmatter.name {frontmatter.get('name')!r} differs from the name in the uri "
                            f"({skill_name(uri)!r})")
    resources = entry.get("resources")
    if resources == DYNAMIC:
        return problems
    if not isinstance(resources, list):
        return problems + [f'resources is {resources!r}, neither a list of files nor "{DYNAMIC}"']
    seen = set()
    total = 0
    for index, item in enumerate(resources):
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            problems.append(f"resources[{index}] has no uri")
            continue
        file_uri = item["uri"]
        if file_uri in seen:
            problems.append(f"{file_uri} is listed twice")
        seen.add(file_uri)
        if root is not None and file_uri != uri and not file_uri.startswith(root + "/"):
            problems.append(f"{file_uri} is outside the skill ({root})")
        if not isinstance(item.get("digest"), str) or not _DIGEST.match(item["digest"]):
            problems.append(f"{file_uri}: digest {item.get('digest')!r} is not sha256:<64 lowercase hex digits>")
        size = item.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            problems.append(f"{file_uri}: size {size!r} is not a byte count")
        else:
            total += size
    if isinstance(uri, str) and uri not in seen:
        problems.append(f"resources does not list the {SKILL_FILE} itself ({uri})")
    if len(resources) > MAX_RESOURCES:
        problems.append(f"the skill has {len(resources)} files, more than the {MAX_RESOURCES} hosts must accept")
    if total > MAX_TOTAL_SIZE:
        problems.append(f"the skill's files total {total} bytes, more than the {MAX_TOTAL_SIZE} hosts must accept")
    return problems


def contents_bytes(contents: object, uri: str) -> bytes:
    """The raw bytes of ``uri`` in a ``resources/read`` result's ``contents``: a text item's UTF-8 encoding,
    a blob item's decoded base64. `SkillVerificationError` ("unreadable") when there is no usable item."""
    items = [item for item in contents if isinstance(item, dict)] if isinstance(contents, list) else []
    # the item of that URI; a lone item whatever its uri (a server may echo the URI normalised)
    matching = [item for item in items if item.get("uri") == uri] or (items if len(items) == 1 else [])
    if len(matching) != 1:
        raise SkillVerificationError(uri, "unreadable",
                                     f"{uri}: the read returned {len(matching)} contents for it, not one")
    item = matching[0]
    text = item.get("text")
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")  # a lone surrogate stays a mismatch, not a crash
    if isinstance(item.get("blob"), str):
        import base64
        import binascii

        try:
            return base64.b64decode(item["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(uri, "unreadable", f"{uri}: the blob is not valid base64") from None
    raise SkillVerificationError(uri, "unreadable", f"{uri}: the read returned neither text nor a blob")


def _listed(entry: Mapping[str, Any], uri: str) -> Optional[Mapping[str, Any]]:
    resources = entry.get("resources")
    if not isinstance(resources, list):
        return None
    return next((item for item in resources if isinstance(item, dict) and item.get("uri") == uri), None)


def verify_file(entry: Mapping[str, Any], uri: str, data: bytes) -> None:
    """Check the bytes read from ``uri`` against the held ``entry``: the file must be listed, have the listed
    size and the listed digest. Raises `SkillVerificationError` ("unlisted", "size", "digest"); a
    ``"dynamic"`` entry lists nothing to check, so every file passes."""
    if entry.get("resources") == DYNAMIC:
        return
    listed = _listed(entry, uri)
    if listed is None:
        raise SkillVerificationError(uri, "unlisted", f"{uri} is not listed in the skill's resources: reading "
                                     "it is a verification failure (refresh the entry with skills/get)")
    if len(data) != listed.get("size"):
        raise SkillVerificationError(uri, "size", f"{uri}: read {len(data)} bytes, the entry lists "
                                     f"{listed.get('size')}; the content is not used")
    actual = digest(data)
    if actual != listed.get("digest"):
        raise SkillVerificationError(uri, "digest", f"{uri}: the content's digest {actual} differs from the "
                                     f"entry's {listed.get('digest')}; the content is not used")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 equals 1.0, objects compare by keys, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def frontmatter_differences(from_file: Mapping[str, Any], from_entry: Mapping[str, Any]) -> List[str]:
    """The fields that differ between a ``SKILL.md``'s frontmatter and an entry's, one line each (empty when
    they are identical in content)."""
    import json

    differences = []
    for key in list(from_file) + [key for key in from_entry if key not in from_file]:
        if key not in from_file or key not in from_entry or not _same(from_file[key], from_entry[key]):
            def shown(side: Mapping[str, Any]) -> str:
                return json.dumps(side[key], ensure_ascii=False) if key in side else "(absent)"
            differences.append(f"{key}: file {shown(from_file)}, entry {shown(from_entry)}")
    return differences


def verify_skill_file(entry: Mapping[str, Any], data: bytes) -> Dict[str, Any]:
    """Check a ``SKILL.md``'s bytes against the held ``entry``: as `verify_file`, then its frontmatter, which must
    be YAML this library reads and equal the entry's field by field. Returns the frontmatter.

    Raises `SkillVerificationError` ("unlisted", "size", "digest", "frontmatter").
    """
    from .frontmatter import FrontmatterError, parse_frontmatter

    uri = str(entry.get("uri"))
    verify_file(entry, uri, data)
    try:
        text = data.decode("utf-8")
        frontmatter, _ = parse_frontmatter(text)
    except UnicodeDecodeError as exc:
        raise SkillVerificationError(uri, "frontmatter", f"{uri} is not UTF-8 text: {exc}") from None
    except FrontmatterError as exc:
        raise SkillVerificationError(uri, "frontmatter", f"{uri}: its frontmatter cannot be read: {exc}") from None
    held = entry.get("frontmatter")
    differences = frontmatter_differences(frontmatter, held if isinstance(held, dict) else {})
    if differences:
        raise SkillVerificationError(uri, "frontmatter", f"{uri}: the file's frontmatter differs from the entry's "
                                     f"({'; '.join(differences)}); the skill is not loaded")
    return frontmatter
