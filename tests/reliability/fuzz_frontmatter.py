"""A seeded mutation fuzzer for the SKILL.md front matter reader (`mcplite.protocol.frontmatter`).

A client reads the ``SKILL.md`` a server sends and a server reads the skills on its disk, so every text must end
in one of two ways: a mapping of plain JSON values (dict, list, str, int, finite float, bool, None; one that
encodes as strict UTF-8 JSON), or `FrontmatterError`. Never RecursionError, IndexError, UnicodeError,
StopIteration, a float JSON cannot carry, or a lone surrogate that fails later on the wire.

Each case is made from valid front matter by a few mutations: characters and YAML indicators inserted,
deleted or repeated, lines duplicated or re-indented, two documents spliced, and nesting amplified (deep
indentation ladders, ``[[[[``, ``{a: {a: ...``) past any depth bound. ``run(seed, cases)`` checks ``cases``
of them; case ``i`` of seed ``s`` is always the same text (``make_case(s, i)``), and a failure says how to
reproduce it. Run it alone with ``python3 tests/reliability/fuzz_frontmatter.py [SEED] [CASES]``.
"""

import json
import math
import random
import sys
from pathlib import Path
from typing import Any, Callable, List

try:
    from mcplite.protocol.frontmatter import FrontmatterError, parse_frontmatter
except ImportError:  # run as a script from anywhere: this checkout's mcplite
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from mcplite.protocol.frontmatter import FrontmatterError, parse_frontmatter

__all__ = ["run", "make_case", "check", "SEEDS"]

#: Valid front matter of every construct the reader knows: the material the mutations start from.
SEEDS = [
    "name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n",
    "name: a\ndescription: 'it''s'\nb: \"tab\\there \\u00e9 \\\"q\\\" \\\\\"\n",
    "n: 12\nf: 1.5\ng: -3\nt: true\nz: null\nw: ~\nh: 0x1F\no: 0o17\ne:\n",
    "metadata:\n  version: \"1\"\n  author: me\n  nested:\n    deep: yes please\n",
    "tools:\n- Bash\n- Read  # a comment\nnext: 1\n",
    "items:\n- name: a\n  size: 1\n- name: b\n  tags: [x, y]\n",
    "flow: [a, 'b c', \"d\", 3, [n, 1], {k: v}]\nmap: {a: 1, b: [2]}\n",
    "text: |\n  line one\n  line two\n\nfolded: >-\n  a\n  b\n\n  c\nkeep: |+\n  x\n\n",
    "plain: a long\n  value over\n\n  lines\nquoted: \"one\n  two\\\n  three\"\n",
    "list:\n  - a: 1\n    b:\n      - x\n  - c: 2\nend: true\n",
    "# a comment\nname: x   # trailing\ndescription: \"\\x41\\U0001F600\"\n",
]

#: What the mutations insert: YAML's indicators and the characters that have broken readers before.
TOKENS = ["[", "]", "{", "}", ",", ":", ": ", "- ", "-", "#", " #", "'", "\"", "\\", "|", ">", "|-", ">+2", "&a",
          "*a", "!t", "%", "@", "`", "?", "\t", "\n", "\n  ", "  ", "\r", "\r\n", "\ufeff", "---", "...", "\\x",
          "\\u", "\\U", "\\UFFFFFFFF", "\\U0010FFFF", "\\U00110000", "\\ud800", "\\udfff", "\\N", "\\0", "~",
          "null", "1e999", "-1e400", ".inf", ".nan", "0x", "0o9", "9" * 40, "\x00", "\x85", "\u2028", "é",
          "\U0001F600", "\ud800"]


def _insert(rng: random.Random, text: str) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(TOKENS) + text[at:]


def _delete(rng: random.Random, text: str) -> str:
    if not text:
        return text
    at = rng.randrange(len(text))
    return text[:at] + text[at + rng.randint(1, 8):]


def _repeat(rng: random.Random, text: str) -> str:
    if not text:
        return text
    at = rng.randrange(len(text))
    piece = text[at:at + rng.randint(1, 6)]
    return text[:at] + piece * rng.randint(2, 40) + text[at:]


def _lines(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    choice = rng.random()
    if choice < 0.4:
        lines.insert(at, lines[rng.randrange(len(lines))])
    elif choice < 0.7:
        lines[at] = " " * rng.randint(1, 6) + lines[at]
    elif len(lines) > 1:
        del lines[at]
    return "\n".join(lines)


def _splice(rng: random.Random, text: str) -> str:
    other = rng.choice(SEEDS)
    return text[:rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1):]


def _deep(rng: random.Random, text: str) -> str:
    """Nesting far past any sane depth: what made the recursive reader fail with RecursionError."""
    depth = rng.choice([20, 63, 65, 300, 1_200])  # around MAX_DEPTH (64), and past the recursion limit
    shape = rng.randrange(6)
    if shape == 0:  # block mappings, one more space each
        nested = "".join(" " * level + f"k{level}:\n" for level in range(depth)) + " " * depth + "v\n"
    elif shape == 1:  # block sequences of block sequences
        nested = "".join(" " * level + "-\n" for level in range(depth)) + " " * depth + "x\n"
    elif shape == 2:  # flow sequences
        nested = "k: " + "[" * depth + "1" + "]" * rng.choice([depth, depth - 1, 0]) + "\n"
    elif shape == 3:  # flow mappings
        nested = "k: " + "{a: " * depth + "1" + "}" * rng.choice([depth, depth // 2]) + "\n"
    elif shape == 4:  # compact "- k:" items
        nested = "".join(" " * (2 * level) + "- k:\n" for level in range(depth)) + " " * (2 * depth) + "- v\n"
    else:  # mixed: flow inside block
        nested = "".join(" " * level + f"k{level}:\n" for level in range(depth // 2)) + \
            " " * (depth // 2) + "x: " + "[{a: " * (depth // 4) + "1" + "}]" * (depth // 4) + "\n"
    at = rng.randrange(len(text) + 1)
    return text[:at] + nested + text[at:]


MUTATIONS: List[Callable[[random.Random, str], str]] = [_insert] * 4 + [_delete] * 2 + [_repeat, _lines, _lines,
                                                                                      _splice, _deep]


def make_case(seed: int, index: int) -> str:
    """Case ``index`` of ``seed``: a whole SKILL.md (front matter between ``---`` lines, then a body)."""
    rng = random.Random(f"{seed}/{index}")  # a string seed: the same text on every Python and platform
    text = rng.choice(SEEDS)
    for _ in range(rng.randint(1, 6)):
        text = rng.choice(MUTATIONS)(rng, text)
    body = "\n# Body\nInstructions.\n"
    return text if rng.random() < 0.05 else f"---\n{text}---{body}"


def _check_value(value: Any, where: str = "$") -> None:
    """A plain JSON value, strictly encodable (finite floats, no lone surrogates): what goes on the wire."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"{where}: a key that is not a string: {key!r}"
            _check_value(item, f"{where}.{key}")
    elif isinstance(value, list):
        for number, item in enumerate(value):
            _check_value(item, f"{where}[{number}]")
    elif isinstance(value, float):
        assert math.isfinite(value), f"{where}: {value!r}, which JSON cannot carry"
    else:
        assert value is None or isinstance(value, (str, int, bool)), f"{where}: a {type(value).__name__}"


def check(text: str) -> None:
    """The property: ``text`` reads as a mapping of plain JSON values, or raises FrontmatterError."""
    try:
        frontmatter, body = parse_frontmatter(text)
    except FrontmatterError as exc:
        assert exc.line >= 1 and exc.column >= 1, f"a FrontmatterError without a position: {exc}"
        return
    assert isinstance(frontmatter, dict) and isinstance(body, str)
    _check_value(frontmatter)
    json.dumps(frontmatter, ensure_ascii=False, allow_nan=False).encode("utf-8")  # raises on what cannot go


def run(seed: int, cases: int) -> None:
    """Check ``cases`` fuzzed front matters of ``seed``; AssertionError naming the first one that fails."""
    for index in range(cases):
        text = make_case(seed, index)
        try:
            check(text)
        except BaseException as exc:  # RecursionError, IndexError, ...: each is the failure being looked for
            if isinstance(exc, KeyboardInterrupt):
                raise
            shown = text if len(text) <= 300 else text[:150] + f"...({len(text)} chars)..." + text[-150:]
            raise AssertionError(
                f"front matter case {index} of seed {seed}: {type(exc).__name__}: {exc}\n"
                f"  input: {shown!r}\n"
                f"  reproduce: python3 -c \"import sys; sys.path[:0] = ['.', 'tests']; "
                f"from reliability.fuzz_frontmatter import check, make_case; check(make_case({seed}, {index}))\"")\
                from exc


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 0, int(sys.argv[2]) if len(sys.argv) > 2 else 20_000)
    print("front matter fuzz: no failure")
