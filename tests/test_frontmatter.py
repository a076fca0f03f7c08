"""protocol/frontmatter: the YAML subset SKILL.md frontmatter uses, read as a YAML parser reads it; errors beyond.

Pure tables, no I/O. Where YAML 1.1 and 1.2 agree, PyYAML (when installed) is asked too, as an oracle that
the values are the ones a real parser gives; the core-schema cases where 1.1 differs (``yes``, ``0o17``) are
checked against the 1.2 answer only.
"""

from typing import Any

import pytest

from mcplite.protocol.frontmatter import FrontmatterError, load_yaml, parse_frontmatter, split_frontmatter

try:
    import yaml
except ImportError:  # the oracle is optional: the expected values below are written out
    yaml = None

#: (YAML, the value) where YAML 1.1 (PyYAML) and 1.2 agree.
AGREED = [
    ("name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents",
     {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}),
    ("a: 'it''s'\nb: \"tab\\there \\u00e9 \\\"q\\\" \\\\\"", {"a": "it's", "b": 'tab\there \u00e9 "q" \\'}),
    ("n: 12\nf: 1.5\ng: -3\nt: true\nF: False\nz: null\nw: ~\ne:", {"n": 12, "f": 1.5, "g": -3, "t": True,
                                                                 "F": False, "z": None, "w": None, "e": None}),
    ("version: \"2.1\"\nplain: 2.1.0\nurl: http://x.example/a#b\nhash: a#b", {"version": "2.1", "plain": "2.1.0",
                                                                               "url": "http://x.example/a#b",
                                                                               "hash": "a#b"}),
    ("metadata:\n  version: \"1\"\n  author: me\n  nested:\n    deep: yes please", {
        "metadata": {"version": "1", "author": "me", "nested": {"deep": "yes please"}}}),
    ("tools:\n- Bash\n- Read  # a comment\nnext: 1", {"tools": ["Bash", "Read"], "next": 1}),
    ("tools:\n  - Bash\n  - 'Read'\n", {"tools": ["Bash", "Read"]}),
    ("items:\n- name: a\n  size: 1\n- name: b\n  tags: [x, y]\n", {
        "items": [{"name": "a", "size": 1}, {"name": "b", "tags": ["x", "y"]}]}),
    ("flow: [a, 'b c', \"d\", 3, [n, 1], {k: v}]\nmap: {a: 1, b: [2]}", {
        "flow": ["a", "b c", "d", 3, ["n", 1], {"k": "v"}], "map": {"a": 1, "b": [2]}}),
    ("empty_list: []\nempty_map: {}", {"empty_list": [], "empty_map": {}}),
    ("x:\n  - [1, 2]\n  - {a: b, c: [d]}", {"x": [[1, 2], {"a": "b", "c": ["d"]}]}),
    ("list:\n  - a: 1\n    b:\n      - x\n  - c: 2\nend: true",
     {"list": [{"a": 1, "b": ["x"]}, {"c": 2}], "end": True}),
    ("description: >-\n  Para one\n  continues.\n\n  Para two.\nname: x", {
        "description": "Para one continues.\nPara two.", "name": "x"}),
    ("b: 'x: y'\n\"c: d\": e\nurl: https://example.com:8080/p", {"b": "x: y", "c: d": "e",
                                                                  "url": "https://example.com:8080/p"}),
    ("description: this is\n  continued over\n  three lines", {"description": "this is continued over three lines"}),
    ("description: one\n\n  two", {"description": "one\ntwo"}),
    ("description: \"a quoted\n  value\"", {"description": "a quoted value"}),
    ("lit: |\n  line 1\n    indented\n  line 3\nnext: x", {"lit": "line 1\n  indented\nline 3\n", "next": "x"}),
    ("lit: |-\n  no newline\n", {"lit": "no newline"}),
    ("lit: |+\n  keep\n\n", {"lit": "keep\n\n"}),
    ("fold: >\n  one\n  two\n\n  three\n", {"fold": "one two\nthree\n"}),
    ("fold: >-\n  a\n  b\n", {"fold": "a b"}),
    ("fold: >\n  a\n    more\n  b\n", {"fold": "a\n  more\nb\n"}),
    ("key with spaces: v\n\"quoted key\": w\n'single': x", {"key with spaces": "v", "quoted key": "w", "single": "x"}),
    ("# a leading comment\n\na: 1 # trailing\n", {"a": 1}),
    ("allowed-tools: Bash(git:*) Read", {"allowed-tools": "Bash(git:*) Read"}),
    ("unicode: héllo wörld ✓", {"unicode": "héllo wörld ✓"}),
    ("", None),
]

#: (YAML, the 1.2 core-schema value) where PyYAML (1.1) answers otherwise.
CORE_SCHEMA_ONLY = [
    ("a: yes\nb: on\nc: no", {"a": "yes", "b": "on", "c": "no"}),
    ("o: 0o17\nh: 0x1F", {"o": 15, "h": 31}),
    ("d: 2024-01-02", {"d": "2024-01-02"}),  # dates stay strings: JSON has none
]


@pytest.mark.parametrize("text, value", AGREED + CORE_SCHEMA_ONLY)
def test_reads_the_subset(text: str, value: Any) -> None:
    assert load_yaml(text) == value


@pytest.mark.skipif(yaml is None, reason="PyYAML is not installed (the oracle)")
@pytest.mark.parametrize("text, value", AGREED)
def test_the_values_are_those_a_yaml_parser_gives(text: str, value: Any) -> None:
    assert yaml.safe_load(text) == value == load_yaml(text)


def test_booleans_and_numbers_keep_their_types() -> None:
    value = load_yaml("t: true\none: 1\nf: 1.0")
    assert value["t"] is True and type(value["one"]) is int and type(value["f"]) is float


#: (YAML, the line and column the error names, a word of its message).
ERRORS = [
    ("a: &anchor 1", 1, 4, "anchor"),
    ("a: *alias", 1, 4, "alias"),
    ("a: !tag x", 1, 4, "tag"),
    ("? complex\n: key", 1, 1, "complex key"),
    ("[a, b]: c", 1, 7, "after a value"),  # a flow collection as a key
    ("a: 1\na: 2", 2, 1, "duplicate key 'a'"),
    ("a: b: c", 1, 5, "': ' inside a plain value"),
    ("a: 1\n  b: 2", 2, 3, "bad indentation"),
    ("a:\n  b:\n    c: 1\n   d: 2", 4, 4, "indented more"),
    ("a:\n\tb: 1", 2, 1, "tab"),
    ("a: [1, 2\nb: 3", 1, 9, "must end on the line"),
    ("a: \"never closed", 1, 4, "never closed"),
    ("a: .inf", 1, 4, "JSON"),
    ("a: \"\\q\"", 1, 5, "unknown escape"),
    ("a: 1\n---\nb: 2", 2, 1, "several YAML documents"),
    ("%YAML 1.2\na: 1", 1, 1, "directive"),
    ("a: 'x' trailing", 1, 8, "after a value"),
    ("- a\nb: 1", 2, 1, "after the end of the document"),
    ("a: |x\n  y", 1, 4, "block scalar header"),
]


@pytest.mark.parametrize("text, line, column, words", ERRORS)
def test_errors_name_the_line_and_column(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(FrontmatterError) as caught:
        load_yaml(text)
    assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"line {line}, column {column}: ")


def test_line_numbers_count_from_the_file_s_first_line() -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter("---\nname: x\nname: y\n---\nbody")
    assert (caught.value.line, caught.value.column) == (3, 1)


# ---- the frontmatter block -------------------------------------------------------------------------------
SPLITS = [
    ("---\na: 1\n---\nbody\n", ("a: 1", "body\n", 2)),
    ("\ufeff---\r\na: 1\r\n---  \r\nbody", ("a: 1", "body", 2)),
    ("---\n---\n", ("", "", 2)),
    ("no frontmatter\n---\na: 1\n---\n", None),
    ("---\na: 1\n", None),  # never closed
    (" ---\na: 1\n---\n", None),
]


@pytest.mark.parametrize("text, split", SPLITS)
def test_split_frontmatter(text: str, split: Any) -> None:
    assert split_frontmatter(text) == split


def test_parse_frontmatter_returns_the_mapping_and_the_body() -> None:
    assert parse_frontmatter("---\nname: x\ndescription: y\n---\n\n# Title\n") == (
        {"name": "x", "description": "y"}, "\n# Title\n")


@pytest.mark.parametrize("text, words", [
    ("# no frontmatter", "does not begin"),
    ("---\n- a list\n---\n", "not a mapping"),
    ("---\njust text\n---\n", "not a mapping"),
    ("---\n---\n", "not a mapping"),
])
def test_parse_frontmatter_refuses_what_is_not_a_mapping(text: str, words: str) -> None:
    with pytest.raises(FrontmatterError, match=words):
        parse_frontmatter(text)


def test_a_frontmatter_error_is_a_value_error() -> None:
    assert issubclass(FrontmatterError, ValueError)
