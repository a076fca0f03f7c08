"""The skills extension end to end: a server serving a directory of skills, a client reading it, the CLI.

The server is ours, in memory (both eras) and over HTTP on 127.0.0.1; the client is `Client`. A server that
serves content not matching its entries is our server with its snapshot altered after loading: the client
must refuse it (SEP-2640 "Integrity and Verification"). The CLI runs in a subprocess of its own.
"""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from support import ROOT, WAIT
from support.http import serving

from mcplite import CapabilityError, Client, LocalProtocolError, RemoteError, Server, SkillVerificationError
from mcplite.protocol.skills import digest
from mcplite.server.skills import SkillFile

VERSIONS = ["2026-07-28", "2025-11-25"]
PDF_SKILL_MD = ("---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
                "metadata:\n  version: \"2.1.0\"\n---\n\n# PDF processing\n\nSee references/FORMS.md.\n")


def write(path: Path, text: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        with path.open("w", encoding="utf-8", newline="") as file:  # (write_text takes newline= from 3.10 on)
            file.write(text)
    return path


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    """Two skills, one nested under an organisational prefix; a binary file; a dot file to skip."""
    root = tmp_path / "skills"
    write(root / "pdf-processing" / "SKILL.md", PDF_SKILL_MD)
    write(root / "pdf-processing" / "references" / "FORMS.md", "Forms.\n")
    write(root / "pdf-processing" / "templates" / "regional" / "eu.md", "EU.\n")
    write(root / "pdf-processing" / "logo.png", b"\x89PNG\r\n\x1a\n\xff\x00")
    write(root / "pdf-processing" / ".DS_Store", "junk")
    write(root / "acme" / "billing" / "refunds" / "SKILL.md", "---\nname: refunds\ndescription: Refunds.\n---\nBody\n")
    return root


@pytest.fixture
def server(skills_dir: Path) -> Server:
    server = Server("skills-test")
    server.add_skills(str(skills_dir))
    return server


@pytest.fixture(params=VERSIONS)
def client(request: pytest.FixtureRequest, server: Server) -> Iterator[Client]:
    with Client(server, protocol_version=request.param, timeout=WAIT) as client:
        yield client


# ---- loading a directory -----------------------------------------------------------------------------------
def test_add_skills_finds_every_skill_and_its_files(server: Server) -> None:
    index = server._skill_index
    assert index is not None
    assert sorted(index.skills) == ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]
    pdf = index.skills["skill://pdf-processing/SKILL.md"]
    assert [f.path for f in pdf.files] == ["SKILL.md", "logo.png", "references/FORMS.md", "templates/regional/eu.md"]
    assert pdf.entry["resources"][0] == {"uri": pdf.uri, "digest": digest(PDF_SKILL_MD.encode()),
                                         "size": len(PDF_SKILL_MD.encode())}


def test_add_skill_serves_one_directory_under_a_prefix(skills_dir: Path) -> None:
    server = Server("one")
    assert server.add_skill(str(skills_dir / "pdf-processing"), prefix="docs/") == \
        "skill://docs/pdf-processing/SKILL.md"
    with pytest.raises(ValueError, match="already served"):
        server.add_skill(str(skills_dir / "pdf-processing"), prefix="docs")
    server.remove_skill("pdf-processing")
    assert server._skill_index is not None and server._skill_index.skills == {}
    with pytest.raises(KeyError):
        server.remove_skill("pdf-processing")


def skill(tmp_path: Path, frontmatter: str, name: str = "demo") -> Path:
    return write(tmp_path / name / "SKILL.md", f"---\n{frontmatter}\n---\nbody\n").parent


@pytest.mark.parametrize("frontmatter, words", [
    ("name: demo", "non-empty 'description'"),
    ("description: d", "non-empty 'name'"),
    ("name: Demo\ndescription: d", "naming rule"),
    ("name: other\ndescription: d", "differs from the skill's directory name"),
    ("name: demo\ndescription: d\nx: *alias", "line 4, column 4"),
])
def test_a_skill_md_that_is_not_valid_is_refused(tmp_path: Path, frontmatter: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Server("x").add_skill(str(skill(tmp_path, frontmatter)))


def test_the_limits_are_refused_before_anything_is_served(tmp_path: Path) -> None:
    directory = skill(tmp_path, "name: demo\ndescription: d")
    write(directory / "big.bin", b"x" * 100)
    write(directory / "a.md", "a")
    server = Server("x")
    with pytest.raises(ValueError, match="over the limit of 50"):
        server.add_skill(str(directory), max_file_size=50)
    with pytest.raises(ValueError, match="more than 2 files"):
        server.add_skill(str(directory), max_files=2)
    with pytest.raises(ValueError, match="exceed 110 bytes"):
        server.add_skill(str(directory), max_total_size=110)
    assert server._skill_index is None  # nothing served, nothing declared
    assert "extensions" not in server.capabilities()


@pytest.mark.skipif(not hasattr(os, "symlink") or sys.platform == "win32", reason="needs symbolic links")
def test_links_out_of_the_skill_and_links_to_directories_are_refused(tmp_path: Path) -> None:
    directory = skill(tmp_path, "name: demo\ndescription: d")
    secret = write(tmp_path / "secret.txt", "password")
    os.symlink(secret, directory / "leak.txt")
    with pytest.raises(ValueError, match="leads out of the skill"):
        Server("x").add_skill(str(directory))
    os.remove(directory / "leak.txt")
    os.symlink(directory / "SKILL.md", directory / "alias.md")  # inside: served as the file it names
    write(directory / "sub" / "x.md", "x")
    Server("x").add_skill(str(directory))
    os.symlink(directory / "sub", directory / "loop")
    with pytest.raises(ValueError, match="to a directory"):
        Server("x").add_skill(str(directory))


def test_a_nested_skill_is_served_on_its_own_and_its_files_belong_to_the_enclosing_one(tmp_path: Path) -> None:
    write(tmp_path / "outer" / "SKILL.md", "---\nname: outer\ndescription: O.\n---\n")
    write(tmp_path / "outer" / "inner" / "SKILL.md", "---\nname: inner\ndescription: I.\n---\n")
    write(tmp_path / "outer" / "inner" / "notes.md", "n")
    server = Server("nested")
    assert server.add_skills(tmp_path) == ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"]  # a Path
    with Client(server, timeout=WAIT) as client:
        outer, inner = client.list_skills()
        assert [r["uri"] for r in outer["resources"]] == [
            "skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]
        assert [r["uri"] for r in inner["resources"]] == ["skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]
        assert client.load_skill(inner).read_text("notes.md") == "n"


def test_add_skills_takes_the_directory_holding_skills(skills_dir: Path) -> None:
    with pytest.raises(ValueError, match="is itself a skill"):
        Server("x").add_skills(str(skills_dir / "pdf-processing"))


# ---- the server's answers ------------------------------------------------------------------------------------
def test_the_extension_is_declared_with_directory_read(client: Client) -> None:
    assert client.server_capabilities["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    assert "resources" in client.server_capabilities
    assert client.skills_extension == {"directoryRead": True}


def test_skills_list_and_get(client: Client) -> None:
    entries = client.list_skills()
    assert [entry["uri"] for entry in entries] == ["skill://acme/billing/refunds/SKILL.md",
                                                   "skill://pdf-processing/SKILL.md"]
    pdf = entries[1]
    assert pdf["frontmatter"] == {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
                                  "metadata": {"version": "2.1.0"}}
    assert client.get_skill("skill://pdf-processing/SKILL.md") == pdf
    assert client.get_skill("pdf-processing") == pdf  # by name, through the listing
    with pytest.raises(RemoteError) as caught:
        client.get_skill("skill://nope/SKILL.md")
    assert caught.value.code == -32602


@pytest.mark.parametrize("method, params", [("skills/get", {}), ("skills/get", {"uri": 7}),
                                            ("resources/directory/read", {"uri": ["x"]}),
                                            ("skills/list", {"cursor": "not ours"})])
def test_bad_params_are_invalid_params(client: Client, method: str, params: Dict[str, Any]) -> None:
    with pytest.raises(RemoteError) as caught:
        client.request(method, params)
    assert caught.value.code == -32602
    assert client.list_skills()  # the connection stays usable


def test_skills_list_pages_never_split_an_entry(skills_dir: Path) -> None:
    server = Server("paged", page_size=1)
    server.add_skills(str(skills_dir))
    with Client(server, timeout=WAIT) as client:
        first = client.request("skills/list")
        assert len(first["skills"]) == 1 and first["nextCursor"]
        assert len(client.list_skills()) == 2


def test_cacheable_results_carry_the_hints_on_2026_07_28(server: Server) -> None:
    with Client(server, protocol_version="2026-07-28", timeout=WAIT) as client:
        for method, params in (("skills/list", {}), ("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})):
            result = client.request(method, params)
            assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")
        assert "ttlMs" not in client.request("resources/directory/read", {"uri": "skill://pdf-processing"})
    with Client(server, protocol_version="2025-11-25", timeout=WAIT) as client:
        assert "ttlMs" not in client.request("skills/list")


def test_resources_list_has_each_skill_md_named_and_described(client: Client) -> None:
    listed = {resource["uri"]: resource for resource in client.list_resources()}
    assert listed["skill://pdf-processing/SKILL.md"]["name"] == "pdf-processing"
    assert listed["skill://pdf-processing/SKILL.md"]["description"] == "Extract, fill, and assemble PDF documents"
    assert listed["skill://pdf-processing/SKILL.md"]["mimeType"] == "text/markdown"
    assert "skill://pdf-processing/references/FORMS.md" not in listed  # supporting files: by URI, not listed


def test_files_are_read_as_text_or_blob(client: Client) -> None:
    text = client.read_resource("skill://pdf-processing/SKILL.md")["contents"][0]
    assert (text["mimeType"], text["text"]) == ("text/markdown", PDF_SKILL_MD)
    blob = client.read_resource("skill://pdf-processing/logo.png")["contents"][0]
    assert blob["mimeType"] == "image/png" and "blob" in blob


@pytest.mark.parametrize("uri", ["skill://pdf-processing/.DS_Store", "skill://pdf-processing/../../etc/passwd",
                                 "skill://pdf-processing/references/../../../secret", "skill://pdf-processing",
                                 "skill://pdf-processing/references"])
def test_what_is_not_a_served_file_is_not_found(client: Client, uri: str) -> None:
    with pytest.raises(RemoteError) as caught:
        client.read_resource(uri)
    assert caught.value.code in (-32002, -32602)  # the revision's "resource not found"


def test_directory_read_lists_direct_children(client: Client) -> None:
    root = client.read_directory("skill://pdf-processing")
    assert [(child["name"], child["mimeType"]) for child in root] == [
        ("pdf-processing", "text/markdown"), ("logo.png", "image/png"), ("references", "inode/directory"),
        ("templates", "inode/directory")]
    assert root[0]["description"] == "Extract, fill, and assemble PDF documents"
    assert [c["uri"] for c in client.read_directory("skill://pdf-processing/templates")] == [
        "skill://pdf-processing/templates/regional"]
    assert [c["uri"] for c in client.read_directory("skill://acme")] == ["skill://acme/billing"]


@pytest.mark.parametrize("uri", ["skill://pdf-processing/SKILL.md", "skill://nope", "file:///etc"])
def test_directory_read_of_what_is_not_a_directory_is_invalid_params(client: Client, uri: str) -> None:
    with pytest.raises(RemoteError) as caught:
        client.read_directory(uri)
    assert caught.value.code == -32602


def test_directory_read_pages(skills_dir: Path) -> None:
    server = Server("paged", page_size=2)
    server.add_skills(str(skills_dir))
    with Client(server, timeout=WAIT) as client:
        first = client.request("resources/directory/read", {"uri": "skill://pdf-processing"})
        assert len(first["resources"]) == 2 and first["nextCursor"]
        assert len(client.read_directory("skill://pdf-processing")) == 4


def test_directory_read_can_be_turned_off(skills_dir: Path) -> None:
    server = Server("no-dirs")
    server.skills_directory_read = False
    server.add_skills(str(skills_dir))
    with Client(server, timeout=WAIT) as client:
        assert client.skills_extension == {}
        with pytest.raises(CapabilityError, match="directoryRead"):
            client.read_directory("skill://pdf-processing")
        with pytest.raises(RemoteError) as caught:
            client.request("resources/directory/read", {"uri": "skill://pdf-processing"})
        assert caught.value.code == -32601


@pytest.mark.parametrize("version", VERSIONS)
def test_a_server_without_skills_declares_nothing_and_knows_no_skill_method(version: str) -> None:
    with Client(Server("plain"), protocol_version=version, timeout=WAIT) as client:
        assert "extensions" not in client.server_capabilities
        with pytest.raises(CapabilityError, match="skills extension"):
            client.list_skills()
        for method in ("skills/list", "skills/get", "resources/directory/read"):
            with pytest.raises(RemoteError) as caught:
                client.request(method, {"uri": "skill://x/SKILL.md"})
            assert caught.value.code == -32601


def test_over_http(server: Server) -> None:
    with serving(server) as http:
        for version in VERSIONS:
            with Client(http.url, protocol_version=version, timeout=WAIT) as client:
                assert [e["frontmatter"]["name"] for e in client.list_skills()] == ["refunds", "pdf-processing"]
                loaded = client.load_skill("pdf-processing")
                assert loaded.read_text("references/FORMS.md") == "Forms.\n"
                assert client.read_directory("skill://pdf-processing/references")[0]["size"] == 7


# ---- the client: lazy reads and verification -----------------------------------------------------------------
class CountingReads:
    """Counts the resources/read requests a server answers (a notification handler cannot see requests, so
    the count is taken at the skill index the handler reads)."""

    def __init__(self, server: Server) -> None:
        self.uris: List[str] = []
        index = server._skill_index
        assert index is not None
        files = index.files
        uris = self.uris

        class Files(dict):  # type: ignore[type-arg]
            def __getitem__(self, uri: str) -> SkillFile:
                uris.append(uri)
                return super().__getitem__(uri)

        index.files = Files(files)


def test_listing_and_getting_read_no_file(server: Server) -> None:
    reads = CountingReads(server)
    with Client(server, timeout=WAIT) as client:
        client.list_skills()
        client.get_skill("pdf-processing")
        assert reads.uris == []
        loaded = client.load_skill("pdf-processing")
        assert reads.uris == ["skill://pdf-processing/SKILL.md"]  # SKILL.md only, when loaded
        loaded.read("references/FORMS.md")
        assert reads.uris[-1] == "skill://pdf-processing/references/FORMS.md"


def test_load_skill_gives_the_verified_text_and_reads_files_on_demand(client: Client) -> None:
    loaded = client.load_skill(client.list_skills()[1])
    assert (loaded.name, loaded.uri) == ("pdf-processing", "skill://pdf-processing/SKILL.md")
    assert loaded.text == PDF_SKILL_MD and loaded.body.startswith("\n# PDF processing")
    assert loaded.frontmatter["metadata"] == {"version": "2.1.0"}
    assert loaded.read("logo.png") == b"\x89PNG\r\n\x1a\n\xff\x00"
    assert loaded.read("skill://pdf-processing/templates/regional/eu.md") == b"EU.\n"
    assert loaded.read("templates/regional/../../references/FORMS.md") == b"Forms.\n"
    with pytest.raises(LocalProtocolError, match="leads out of the skill"):
        loaded.read("../refunds/SKILL.md")


def tamper(server: Server, uri: str, data: bytes) -> None:
    """Serve ``data`` at ``uri`` while the entries keep describing the file as it was loaded."""
    index = server._skill_index
    assert index is not None
    old = index.files[uri]
    index.files[uri] = SkillFile(uri, old.path, data)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("uri, data, reason", [
    ("skill://pdf-processing/SKILL.md", PDF_SKILL_MD.replace("See", "Run").encode(), "digest"),
    ("skill://pdf-processing/SKILL.md", (PDF_SKILL_MD + "more\n").encode(), "size"),
    ("skill://pdf-processing/references/FORMS.md", b"Farms.\n", "digest"),
    ("skill://pdf-processing/references/FORMS.md", b"", "size"),
])
def test_a_file_that_does_not_match_its_entry_is_refused(server: Server, version: str, uri: str, data: bytes,
                                                          reason: str) -> None:
    tamper(server, uri, data)
    with Client(server, protocol_version=version, timeout=WAIT) as client:
        with pytest.raises(SkillVerificationError) as caught:
            client.load_skill("pdf-processing").read("references/FORMS.md")
        assert (caught.value.reason, caught.value.uri) == (reason, uri)


def test_a_skill_md_whose_frontmatter_differs_from_its_entry_is_refused(server: Server) -> None:
    index = server._skill_index
    assert index is not None
    index.skills["skill://pdf-processing/SKILL.md"].entry["frontmatter"] = {
        "name": "pdf-processing", "description": "Something the user approved"}  # the file says otherwise
    with Client(server, timeout=WAIT) as client:
        with pytest.raises(SkillVerificationError) as caught:
            client.load_skill("pdf-processing")
        assert caught.value.reason == "frontmatter" and "description" in str(caught.value)


def test_a_file_the_entry_does_not_list_is_refused_without_asking(server: Server) -> None:
    with Client(server, timeout=WAIT) as client:
        loaded = client.load_skill("pdf-processing")
        reads = CountingReads(server)
        with pytest.raises(SkillVerificationError) as caught:
            loaded.read("references/NEW.md")
        assert caught.value.reason == "unlisted" and reads.uris == []


def test_a_dynamic_skill_is_read_only_inside_itself_and_within_the_size_limit(server: Server,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    with Client(server, timeout=WAIT) as client:
        entry: Dict[str, Any] = dict(client.get_skill("pdf-processing"))
        entry["resources"] = "dynamic"  # as a server whose skill is generated would list it
        loaded = client.load_skill(entry)  # no digest to check: the frontmatter still is
        assert loaded.read("references/FORMS.md") == b"Forms.\n"
        with pytest.raises(SkillVerificationError) as caught:
            loaded.read("skill://acme/billing/refunds/SKILL.md")
        assert caught.value.reason == "unlisted"
        monkeypatch.setattr("mcplite.protocol.skills.MAX_TOTAL_SIZE", len(PDF_SKILL_MD) + 10)
        with pytest.raises(SkillVerificationError) as caught:
            loaded.read("references/FORMS.md")  # 7 more bytes: over the (lowered) limit
        assert caught.value.reason == "size"


def test_a_malformed_entry_is_refused_before_any_read(server: Server) -> None:
    with Client(server, timeout=WAIT) as client:
        entry: Dict[str, Any] = dict(client.list_skills()[1])
        entry["resources"] = [r for r in entry["resources"] if not r["uri"].endswith("SKILL.md")]
        with pytest.raises(SkillVerificationError) as caught:
            client.load_skill(entry)
        assert caught.value.reason == "entry"


def test_a_name_several_skills_share_must_be_given_as_a_uri(tmp_path: Path) -> None:
    write(tmp_path / "a" / "refunds" / "SKILL.md", "---\nname: refunds\ndescription: A.\n---\n")
    write(tmp_path / "b" / "refunds" / "SKILL.md", "---\nname: refunds\ndescription: B.\n---\n")
    server = Server("twins")
    server.add_skills(str(tmp_path))
    with Client(server, timeout=WAIT) as client:
        with pytest.raises(LocalProtocolError, match="several skills are named 'refunds'"):
            client.get_skill("refunds")
        assert client.get_skill("skill://b/refunds/SKILL.md")["frontmatter"]["description"] == "B."
        with pytest.raises(LocalProtocolError, match="no skill named"):
            client.get_skill("nope")


# ---- the command line ------------------------------------------------------------------------------------------
FIXTURE = [sys.executable, "-m", "mcplite", "serve", str(ROOT / "examples" / "everything_server.py")]


def cli(*argv: str) -> "subprocess.CompletedProcess[str]":
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mcplite", *argv], capture_output=True, text=True, env=env,
                          timeout=WAIT * 2, cwd=str(ROOT))


def test_cli_skills_list_and_get() -> None:
    listed = cli("--json", "skills", "list", "--", *FIXTURE)
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)["skills"]
    assert [entry["frontmatter"]["name"] for entry in entries] == ["everything-server"]
    got = cli("--json", "skills", "get", "everything-server", "references/tools.md", "--", *FIXTURE)
    assert got.returncode == 0, got.stderr
    shown = json.loads(got.stdout)
    assert shown["uri"] == "skill://everything-server/references/tools.md"
    assert shown["text"].startswith("# The tools") and shown["skill"] == entries[0]
    human = cli("--human", "skills", "get", "everything-server", "--", *FIXTURE)
    assert human.returncode == 0, human.stderr
    assert human.stdout.startswith("everything-server  skill://everything-server/SKILL.md  (2 files, ")
    assert "\n---\nname: everything-server\n" in human.stdout


@pytest.mark.parametrize("argv, status, words", [
    (["skills", "get", "everything-server", "nope.md"], 3, "is not listed in the skill's resources"),
    (["skills", "get", "no-such-skill"], 3, "no skill named 'no-such-skill'"),
    (["skills", "get"], 2, "needs the skill's NAME"),
    (["skills", "list", "extra"], 2, "takes no NAME"),
])
def test_cli_skills_errors(argv: List[str], status: int, words: str) -> None:
    done = cli(*argv, "--", *FIXTURE)
    assert done.returncode == status and words in done.stderr and done.stdout == ""


def test_cli_skills_on_a_server_without_the_extension() -> None:
    demo = str(ROOT / "examples" / "demo_server.py")
    done = cli("skills", "list", "--", sys.executable, "-m", "mcplite", "serve", demo)
    assert done.returncode == 3 and "does not declare the skills extension" in done.stderr
