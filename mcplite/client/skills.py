"""The client side of the skills extension (``io.modelcontextprotocol/skills``, SEP-2640): a loaded skill.

`Client.list_skills` and `Client.get_skill` return skill entries and read no file: the extension forbids
fetching a skill's files ahead of need. `Client.load_skill` is the loading path: it checks the entry, reads
the ``SKILL.md`` and verifies it (size, SHA-256 digest, then the frontmatter field by field) and returns a
`LoadedSkill`, which holds that entry for as long as you act on the skill. Its `LoadedSkill.read` reads a
supporting file when asked, and verifies it against the same entry; a file the entry does not list is
refused without asking the server. Every refusal is a `SkillVerificationError`, and refused content is never
returned.

Verification proves that the files are what the entry describes, not that either is trustworthy: the same
server supplies both (SEP-2640, "Digests Are Not a Trust Anchor"). Skill content is untrusted input.
"""

from __future__ import annotations

from ..errors import LocalProtocolError, SkillVerificationError
from ..protocol import skills as rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional

    from ..protocol import types as t

__all__ = ["LoadedSkill", "check_entry", "load", "resolve_relative", "find_by_name"]


def check_entry(entry: Any) -> None:
    """`SkillVerificationError` ("entry") when an entry is malformed or over the limits (`rules.entry_problems`)."""
    problems = rules.entry_problems(entry)
    if problems:
        uri = entry.get("uri") if isinstance(entry, dict) else None
        raise SkillVerificationError(str(uri), "entry", f"the skill entry for {uri} cannot be loaded: "
                                     + "; ".join(problems))


def resolve_relative(entry: Dict[str, Any], path: str) -> str:
    """The URI of ``path`` in a skill: a URI as it is, a relative path resolved against the skill's root
    (``references/GUIDE.md`` -> ``skill://<skill-path>/references/GUIDE.md``). ``..`` may not leave the skill."""
    if "://" in path:
        return path
    root = rules.skill_root(str(entry.get("uri")))
    assert root is not None  # checked by check_entry
    parts: List[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise LocalProtocolError(f"{path!r} leads out of the skill {root}")
            parts.pop()
            continue
        parts.append(part)
    return f"{root}/{'/'.join(parts)}"


class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified; it holds the entry it was verified against.

    Attributes:
        entry: the skill entry (``uri``, ``frontmatter``, ``resources``) every read is checked against.
        uri: the ``SKILL.md`` URI; ``name`` and ``description``: from the frontmatter.
        frontmatter: the frontmatter as read from the file (equal to the entry's: that was checked).
        text: the whole ``SKILL.md``, frontmatter included.
    """

    def __init__(self, entry: Dict[str, Any], data: bytes, frontmatter: Dict[str, Any],
                 read_bytes: Callable[[str], bytes]) -> None:
        self.entry = entry
        self.uri: str = entry["uri"]
        self.frontmatter = frontmatter
        self.name: str = frontmatter["name"]
        self.description: str = frontmatter["description"]
        self.text = data.decode("utf-8")
        self._read_bytes = read_bytes
        self._root = rules.skill_root(self.uri)
        # A "dynamic" skill publishes no sizes: what is read of it counts against the extension's limit.
        self._dynamic_total = len(data)

    def __repr__(self) -> str:
        return f"LoadedSkill({self.uri!r})"

    @property
    def files(self) -> List[str]:
        """The URIs of the skill's files as the entry lists them (empty for a ``"dynamic"`` skill)."""
        resources = self.entry.get("resources")
        return [item["uri"] for item in resources] if isinstance(resources, list) else []

    @property
    def body(self) -> str:
        """``SKILL.md`` after its frontmatter."""
        from ..protocol.frontmatter import split_frontmatter

        found = split_frontmatter(self.text)
        return found[1] if found is not None else self.text

    def read(self, path: str) -> bytes:
        """The bytes of a file of the skill (a path relative to its root, or a URI), read now and verified
        against the held entry; a file the entry does not list is refused before anything is sent.

        A skill whose entry says ``"resources": "dynamic"`` publishes nothing to verify against: its files are
        read as they come, only from inside the skill, and at most 16 MiB of them in all (the extension's limit).

        Raises `SkillVerificationError` ("unlisted", "size", "digest", "unreadable").
        """
        uri = resolve_relative(self.entry, path)
        dynamic = self.entry.get("resources") == rules.DYNAMIC
        if dynamic and not uri.startswith(f"{self._root}/"):
            raise SkillVerificationError(uri, "unlisted", f"{uri} is not a file of the skill {self._root}")
        if not dynamic and all(uri != listed for listed in self.files):
            rules.verify_file(self.entry, uri, b"")  # raises: unlisted
        data = self._read_bytes(uri)
        rules.verify_file(self.entry, uri, data)
        if dynamic:
            self._dynamic_total += len(data)
            if self._dynamic_total > rules.MAX_TOTAL_SIZE:
                raise SkillVerificationError(uri, "size", f"{uri}: the dynamic skill {self._root} has now served "
                                             f"more than {rules.MAX_TOTAL_SIZE} bytes, the extension's limit")
        return data

    def read_text(self, path: str) -> str:
        """`read`, decoded as UTF-8."""
        return self.read(path).decode("utf-8")


def load(entry: t.Skill, read_bytes: Callable[[str], bytes]) -> LoadedSkill:
    """Load a skill from its entry: check the entry, read ``SKILL.md`` with ``read_bytes(uri)`` and verify it."""
    check_entry(entry)
    held: Dict[str, Any] = dict(entry)
    data = read_bytes(held["uri"])
    frontmatter = rules.verify_skill_file(held, data)
    return LoadedSkill(held, data, frontmatter, read_bytes)


def find_by_name(entries: List[t.Skill], name: str) -> Optional[t.Skill]:
    """The entry a name chooses: the one whose ``uri`` is ``name``, else whose frontmatter name is; several
    of the same name are an error (names are labels, not identifiers: give the URI)."""
    for entry in entries:
        if entry.get("uri") == name:
            return entry
    named = [entry for entry in entries if isinstance(entry.get("frontmatter"), dict)
             and entry["frontmatter"].get("name") == name]
    if len(named) > 1:
        raise LocalProtocolError(f"several skills are named {name!r} ("
                                 + ", ".join(str(entry.get("uri")) for entry in named) + "): give its URI")
    return named[0] if named else None
