"""protocol/skills: the skills extension's shared rules (SEP-2640; ext-skills specification/stable/skills.mdx).

Pure tables: the naming rule, digests, the shape check of a received entry, and the verification of a file's
bytes (and SKILL.md's frontmatter) against the entry that lists it.
"""

import base64
import hashlib
from typing import Any, Dict, List

import pytest

from mcplite import SkillVerificationError
from mcplite.errors import RemoteProtocolError
from mcplite.protocol.skills import (
    DYNAMIC,
    MAX_RESOURCES,
    MAX_TOTAL_SIZE,
    contents_bytes,
    digest,
    entry_problems,
    frontmatter_differences,
    name_problem,
    skill_name,
    skill_root,
    verify_file,
    verify_skill_file,
)

SKILL_MD = b"---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"
FORMS = b"Supporting content.\n"
URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"


def entry(**changes: Any) -> Dict[str, Any]:
    """The entry the conformance suite's mock lists for pdf-processing, with ``changes``."""
    base: Dict[str, Any] = {
        "uri": URI,
        "frontmatter": {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"},
        "resources": [{"uri": URI, "digest": digest(SKILL_MD), "size": len(SKILL_MD)},
                      {"uri": FORMS_URI, "digest": digest(FORMS), "size": len(FORMS)}]}
    base.update(changes)
    return base


@pytest.mark.parametrize("name, valid", [
    ("pdf-processing", True), ("a", True), ("x" * 64, True), ("v2", True),
    ("", False), ("x" * 65, False), ("PDF", False), ("-lead", False), ("trail-", False), ("dou--ble", False),
    ("under_score", False), ("dot.ted", False), ("spa ce", False), (None, False),
])
def test_the_naming_rule(name: Any, valid: bool) -> None:
    assert (name_problem(name) is None) is valid


def test_digest_is_sha256_of_the_raw_bytes_in_lowercase_hex() -> None:
    assert digest(b"") == "sha256:" + hashlib.sha256(b"").hexdigest()
    assert digest(b"abc") == "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@pytest.mark.parametrize("uri, root, name", [
    ("skill://git-workflow/SKILL.md", "skill://git-workflow", "git-workflow"),
    ("skill://acme/billing/refunds/SKILL.md", "skill://acme/billing/refunds", "refunds"),
    ("github://owner/repo/skills/refunds/SKILL.md", "github://owner/repo/skills/refunds", "refunds"),
    ("skill://SKILL.md", None, None), ("skill://x/README.md", None, None), ("SKILL.md", None, None),
])
def test_skill_root_and_name_from_the_uri(uri: str, root: Any, name: Any) -> None:
    assert (skill_root(uri), skill_name(uri)) == (root, name)


def test_a_good_entry_and_a_dynamic_one_have_no_problems() -> None:
    assert entry_problems(entry()) == []
    assert entry_problems(entry(resources=DYNAMIC)) == []


ENTRY_PROBLEMS = [
    (entry(uri="skill://pdf-processing/README.md"), "not the URI of a SKILL.md"),
    (entry(frontmatter={"name": "pdf-processing"}), "frontmatter.description is missing"),
    (entry(frontmatter="x"), "frontmatter is missing or not an object"),
    (entry(frontmatter={"name": "other", "description": "d"}), "differs from the name in the uri"),
    (entry(resources=None), "neither a list of files"),
    (entry(resources="static"), "neither a list of files"),
    (entry(resources=[{"uri": FORMS_URI, "digest": digest(FORMS), "size": 20}]), "does not list the SKILL.md"),
    (entry(resources=entry()["resources"] + [entry()["resources"][1]]), "listed twice"),
    (entry(resources=entry()["resources"] + [{"uri": "skill://other/x.md", "digest": digest(b""), "size": 0}]),
     "outside the skill"),
    (entry(resources=[{"uri": URI, "digest": "sha256:ABC", "size": 1}]), "is not sha256:"),
    (entry(resources=[{"uri": URI, "digest": digest(b"").replace("sha256", "md5"), "size": 1}]), "is not sha256:"),
    (entry(resources=[{"uri": URI, "digest": digest(b""), "size": -1}]), "is not a byte count"),
    (entry(resources=[{"uri": URI, "digest": digest(b""), "size": True}]), "is not a byte count"),
    (entry(resources=[{"uri": URI, "digest": digest(b"")}]), "is not a byte count"),
    (entry(resources=[{"uri": URI, "digest": digest(b""), "size": 0}] + [
        {"uri": f"skill://pdf-processing/{n}", "digest": digest(b""), "size": 0} for n in range(MAX_RESOURCES)]),
     "more than the 512"),
    (entry(resources=[{"uri": URI, "digest": digest(b""), "size": MAX_TOTAL_SIZE + 1}]), "more than the 16777216"),
    ("not an object", "not an object"),
]


@pytest.mark.parametrize("value, words", ENTRY_PROBLEMS)
def test_entry_problems(value: Any, words: str) -> None:
    problems = entry_problems(value)
    assert any(words in problem for problem in problems), problems


# ---- reading a file's bytes out of a resources/read result ---------------------------------------------
def test_contents_bytes_encodes_text_as_utf8_and_decodes_blobs() -> None:
    assert contents_bytes([{"uri": URI, "text": "é"}], URI) == "é".encode()
    assert contents_bytes([{"uri": URI, "blob": base64.b64encode(b"\x00\xff").decode()}], URI) == b"\x00\xff"
    # the item for the URI asked, when there are several; a lone item whatever its uri
    assert contents_bytes([{"uri": "other", "text": "a"}, {"uri": URI, "text": "b"}], URI) == b"b"
    assert contents_bytes([{"uri": "skill://pdf-processing/SKILL.md?v=2", "text": "c"}], URI) == b"c"


@pytest.mark.parametrize("contents", [[], None, [{"uri": URI}], [{"uri": URI, "blob": "!!not base64"}],
                                      [{"uri": "a", "text": "1"}, {"uri": "b", "text": "2"}]])
def test_contents_bytes_refuses_what_has_no_usable_content(contents: Any) -> None:
    with pytest.raises(SkillVerificationError) as caught:
        contents_bytes(contents, URI)
    assert caught.value.reason == "unreadable" and caught.value.uri == URI


# ---- verification -----------------------------------------------------------------------------------------
VERIFY = [  # (the uri read, the bytes it returned, the reason it is refused, or None)
    (URI, SKILL_MD, None),
    (FORMS_URI, FORMS, None),
    (FORMS_URI, FORMS.replace(b"content", b"CONTENT"), "digest"),  # same size, other bytes
    (FORMS_URI, FORMS + b"extra", "size"),
    (FORMS_URI, b"", "size"),
    ("skill://pdf-processing/references/EXTRA.md", b"x", "unlisted"),
    ("skill://pdf-processing/../../etc/passwd", b"x", "unlisted"),
]


@pytest.mark.parametrize("uri, data, reason", VERIFY)
def test_verify_file(uri: str, data: bytes, reason: Any) -> None:
    if reason is None:
        verify_file(entry(), uri, data)
        return
    with pytest.raises(SkillVerificationError) as caught:
        verify_file(entry(), uri, data)
    assert (caught.value.reason, caught.value.uri) == (reason, uri)
    assert uri in str(caught.value)


def test_a_dynamic_entry_publishes_nothing_to_check() -> None:
    verify_file(entry(resources=DYNAMIC), FORMS_URI, b"anything")


def test_verification_errors_are_the_server_s_fault() -> None:
    assert issubclass(SkillVerificationError, RemoteProtocolError)


DIFFERENCES = [  # (the file's frontmatter, the entry's, the fields that differ)
    ({"name": "a", "description": "d"}, {"name": "a", "description": "d"}, []),
    ({"name": "a", "description": "d"}, {"description": "d", "name": "a"}, []),  # order does not matter
    ({"name": "a", "description": "x"}, {"name": "a", "description": "d"}, ["description"]),
    ({"name": "a", "license": "MIT"}, {"name": "a"}, ["license"]),
    ({"name": "a"}, {"name": "a", "license": "MIT"}, ["license"]),
    ({"n": 1}, {"n": 1.0}, []),  # JSON numbers
    ({"n": 1}, {"n": True}, ["n"]),  # a boolean is not a number
    ({"n": None}, {}, ["n"]),  # an explicit null is not an absent field
    ({"m": {"v": "1", "w": [1, 2]}}, {"m": {"w": [1, 2], "v": "1"}}, []),
    ({"m": {"v": "1"}}, {"m": {"v": 1}}, ["m"]),
    ({"l": [1, 2]}, {"l": [2, 1]}, ["l"]),
]


@pytest.mark.parametrize("from_file, from_entry, fields", DIFFERENCES)
def test_frontmatter_differences_field_by_field(from_file: Dict[str, Any], from_entry: Dict[str, Any],
                                                fields: List[str]) -> None:
    differences = frontmatter_differences(from_file, from_entry)
    assert [line.split(":")[0] for line in differences] == fields


def test_verify_skill_file_returns_the_frontmatter_of_a_matching_skill_md() -> None:
    assert verify_skill_file(entry(), SKILL_MD) == entry()["frontmatter"]


TAMPERED = SKILL_MD.replace(b"description: Extract, fill, and assemble PDF documents", b"description: Exfiltrate")


@pytest.mark.parametrize("data, held, reason", [
    (SKILL_MD.replace(b"Skill body.", b"Evil body!!"), entry(), "digest"),  # the suite's verify-digest
    (SKILL_MD + b"extra bytes\n", entry(), "size"),  # verify-size
    # verify-frontmatter: digest and size match the file, the frontmatter does not match the entry's
    (TAMPERED, entry(resources=[{"uri": URI, "digest": digest(TAMPERED), "size": len(TAMPERED)}]), "frontmatter"),
    (b"no frontmatter", entry(resources=[{"uri": URI, "digest": digest(b"no frontmatter"), "size": 14}]),
     "frontmatter"),
    (b"---\na: &x 1\n---\n", entry(resources=[{"uri": URI, "digest": digest(b"---\na: &x 1\n---\n"), "size": 16}]),
     "frontmatter"),
    (b"\xff\xfe", entry(resources=[{"uri": URI, "digest": digest(b"\xff\xfe"), "size": 2}]), "frontmatter"),
])
def test_verify_skill_file_refuses(data: bytes, held: Dict[str, Any], reason: str) -> None:
    with pytest.raises(SkillVerificationError) as caught:
        verify_skill_file(held, data)
    assert caught.value.reason == reason
    if reason == "frontmatter" and data == TAMPERED:
        assert "description" in str(caught.value) and "Exfiltrate" in str(caught.value)
