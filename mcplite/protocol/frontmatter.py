"""A YAML-frontmatter reader: the subset of YAML that ``SKILL.md`` files use, in the standard library.

A skill's ``SKILL.md`` begins with a ``---`` line, a YAML mapping, and another ``---`` line (Agent Skills
specification); the skills extension (SEP-2640) sends that mapping as JSON and has clients compare the two
field by field. Both sides therefore need to read it exactly as a YAML parser would, and nothing more.

What is read (YAML 1.2, core schema):

- block mappings (nested by indentation) and block sequences (``- item``, also at the indentation of the key
  that owns them, and ``- key: value`` items);
- flow sequences and mappings on one line (``[a, "b c"]``, ``{k: v}``), nested;
- plain scalars, also folded over several more-indented lines; single-quoted (``''`` is a quote) and
  double-quoted scalars (the YAML escapes: ``\\n``, ``\\t``, ``\\"``, ``\\\\``, ``\\xHH``, ``\\uHHHH``, ...),
  also over several lines;
- literal (``|``) and folded (``>``) block scalars, with the ``-``/``+`` chomping indicators and an
  indentation digit;
- comments (``#`` at the start of a line or after a space).

Plain scalars are resolved as the core schema says: ``null``/``~``/nothing is None, ``true``/``false`` are
booleans, integers (also ``0x``/``0o``) and floats are numbers, everything else is a string. Dates stay
strings (JSON has no date). Keys are strings as written. What is beyond the subset (anchors and aliases,
tags, ``?`` complex keys, directives, several documents, tabs used for indentation, a flow collection over
several lines, collections nested more than `MAX_DEPTH` deep, ``.inf``/``.nan`` and numbers too large for a
float, which JSON cannot carry) and what is not YAML at all (a duplicate key, a value where none may be, bad
indentation, a lone surrogate or an escape that names no Unicode character) raise `FrontmatterError`, which
names the line and column. Nothing else escapes: whatever the text, the result is a mapping of plain JSON
values or that error (tests/reliability/fuzz_frontmatter.py holds the reader to it).

Pure: strings in, plain Python values (dict, list, str, int, float, bool, None) out.
"""

from __future__ import annotations

import math
import re

from .json_text import MAX_NUMBER_LENGTH

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at run time (see mcplite/__init__)
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

__all__ = ["FrontmatterError", "split_frontmatter", "parse_frontmatter", "load_yaml", "MAX_DEPTH"]

#: How deep collections may nest (block and flow together). A skill's front matter nests two or three levels;
#: the bound keeps a hostile SKILL.md (a server's, read by a client) from exhausting the reader's recursion,
#: which would otherwise escape as RecursionError, with every frame of the caller's stack it needs to spare.
MAX_DEPTH = 64


class FrontmatterError(ValueError):
    """The frontmatter is not YAML, or uses YAML beyond the subset read here (see the module docstring).

    ``line`` and ``column`` count from 1, in the file the frontmatter came from.
    """

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.reason = message
        self.line = line
        self.column = column


# ---- the frontmatter block ----------------------------------------------------------------------------
_DELIMITER = re.compile(r"---[ \t]*\Z")


def split_frontmatter(text: str) -> Optional[Tuple[str, str, int]]:
    """``(yaml, body, first_line)`` of a document that begins with a ``---`` delimited block, else None.

    ``first_line`` is the line number of the block's first line in ``text`` (for error positions). A byte
    order mark before the first ``---`` is allowed; line ends may be ``\\n`` or ``\\r\\n``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or not _DELIMITER.match(lines[0].rstrip("\r")):
        return None
    for index in range(1, len(lines)):
        if _DELIMITER.match(lines[index].rstrip("\r")):
            block = "\n".join(line.rstrip("\r") for line in lines[1:index])
            return block, "\n".join(lines[index + 1:]), 2
    return None


def parse_frontmatter(text: str) -> Tuple[Dict[str, Any], str]:
    """The frontmatter mapping of a ``SKILL.md`` and the body after it.

    Raises `FrontmatterError` when the text does not begin with a ``---`` delimited block, when the block is
    not a mapping, or when it is not YAML of the subset read here.
    """
    found = split_frontmatter(text)
    if found is None:
        raise FrontmatterError("the document does not begin with a '---' delimited frontmatter block", 1, 1)
    block, body, first_line = found
    value = load_yaml(block, first_line=first_line)
    if not isinstance(value, dict):
        raise FrontmatterError("the frontmatter is not a mapping of keys to values", first_line, 1)
    return value, body


def load_yaml(text: str, *, first_line: int = 1) -> Any:
    """The value of one YAML document of the subset (see the module docstring); None for an empty one."""
    return _Reader(text, first_line).document()


# ---- scalars ------------------------------------------------------------------------------------------
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF_NAN = re.compile(r"[-+]?\.(inf|Inf|INF)\Z|\.(nan|NaN|NAN)\Z")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
#: Characters a plain scalar may not begin with (YAML 1.2 c-indicator), with what each would have meant.
_INDICATORS = {"&": "an anchor", "*": "an alias", "!": "a tag", "%": "a directive", "@": "a reserved indicator",
               "`": "a reserved indicator", "?": "a complex key", "|": "a block scalar", ">": "a block scalar"}
_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
#: The largest integer a front matter may hold: what JSON text may carry (`json_text.MAX_NUMBER_LENGTH` decimal
#: digits). int() bounds decimal literals itself; hex and octal ones it reads at any length.
_MAX_INT_BITS = int(MAX_NUMBER_LENGTH * math.log2(10))
#: A lone surrogate: no Unicode character, so no UTF-8 text holds one (a str may, from code other than a decoder).
_SURROGATE = re.compile("[\ud800-\udfff]")


def resolve_plain(text: str) -> Any:
    """A plain scalar's value under the YAML 1.2 core schema (None, bool, int, float or the string itself).

    Raises `ValueError` for ``.inf`` and ``.nan``, which JSON cannot carry.
    """
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if _INT.match(text):
        return int(text)
    if _OCT.match(text) or _HEX.match(text):
        value = int(text[2:], 8 if text[1] == "o" else 16)
        if value.bit_length() > _MAX_INT_BITS:
            raise ValueError(f"{text[:24]}... is an integer beyond {MAX_NUMBER_LENGTH} digits, which JSON text "
                             "does not carry; quote it for a string")
        return value
    if _FLOAT.match(text):
        number = float(text)
        if math.isinf(number):
            raise ValueError(f"{text} is too large for a float, which JSON cannot carry; quote it for a string")
        return number
    if _INF_NAN.match(text):
        raise ValueError(f"{text} (infinity or not-a-number) cannot be carried in JSON; quote it for a string")
    return text


class _Line:
    __slots__ = ("number", "indent", "text")

    def __init__(self, number: int, indent: int, text: str) -> None:
        self.number = number  # in the file
        self.indent = indent  # spaces before the content
        self.text = text  # the whole line, indentation included, comment not removed


class _Reader:
    """One document, read top-down: `block` reads the node at a line, `_value` the rest of a line."""

    def __init__(self, text: str, first_line: int) -> None:
        self.lines: List[_Line] = []
        raws = text.split("\n")
        if raws and raws[-1] == "":  # the final line break ends the last line; it does not start another
            raws.pop()
        for offset, raw in enumerate(raws):
            stripped = raw.lstrip(" ")
            number = first_line + offset
            surrogate = _SURROGATE.search(raw)
            if surrogate is not None:
                raise FrontmatterError("a lone surrogate, which is not a Unicode character", number,
                                       surrogate.start() + 1)
            if stripped.startswith("\t") or (stripped == "" and "\t" in raw):
                raise FrontmatterError("a tab in indentation (YAML indents with spaces only)", number,
                                       len(raw) - len(stripped) + 1)
            self.lines.append(_Line(number, len(raw) - len(stripped), raw))
        self.position = 0  # index of the next line to read
        self.depth = 0  # the collections open around the one being read (see MAX_DEPTH)

    # -- lines --
    def _error(self, message: str, line: _Line, column: int) -> FrontmatterError:
        return FrontmatterError(message, line.number, column + 1)

    @staticmethod
    def _blank(line: _Line) -> bool:
        content = line.text[line.indent:]
        return content == "" or content.startswith("#")

    def _next_content(self) -> Optional[_Line]:
        """The next line with content (skipping blank and comment-only lines), not consumed."""
        while self.position < len(self.lines):
            line = self.lines[self.position]
            if not self._blank(line):
                if line.text[:3] in ("---", "...") and line.text[3:4] in ("", " "):
                    raise self._error("several YAML documents (or a document marker) in the frontmatter", line, 0)
                return line
            self.position += 1
        return None

    def document(self) -> Any:
        line = self._next_content()
        if line is None:
            return None
        if line.text.startswith("%"):
            raise self._error("a YAML directive", line, 0)
        value = self.block(line.indent, line)
        rest = self._next_content()
        if rest is not None:
            raise self._error("content after the end of the document (bad indentation?)", rest, rest.indent)
        return value

    # -- what a line is --
    @staticmethod
    def _is_sequence_line(line: _Line) -> bool:
        content = line.text[line.indent:]
        return content == "-" or content.startswith("- ")

    def _is_mapping_line(self, line: _Line, start: Optional[int] = None) -> Optional[Tuple[str, int]]:
        """``(key, column after the colon)`` when the line (from ``start``) is ``key: ...``, else None."""
        column = line.indent if start is None else start
        text = line.text
        if column < len(text) and text[column] in "[{":  # a flow collection (one as a key is beyond the subset)
            return None
        if column < len(text) and text[column] in "\"'":
            end = self._quoted_end(text, column)
            if end is None:
                return None
            after = end
            while after < len(text) and text[after] == " ":
                after += 1
            if after < len(text) and text[after] == ":" and (after + 1 == len(text) or text[after + 1] == " "):
                key, _ = self._quoted(line, column, single_line=True)
                return key, after + 1
            return None
        index = column
        while index < len(text):
            char = text[index]
            if char == "#" and index > column and text[index - 1] == " ":
                return None
            if char == ":" and (index + 1 == len(text) or text[index + 1] == " "):
                key = text[column:index].rstrip(" ")
                return (key, index + 1) if key else None
            index += 1
        return None

    # -- nodes --
    def block(self, indent: int, line: _Line) -> Any:
        """The node that starts at ``line`` (whose indentation is ``indent``): a sequence, a mapping or a scalar."""
        if self._is_sequence_line(line):
            return self._sequence(indent)
        if self._is_mapping_line(line) is not None:
            return self._mapping(indent)
        self.position += 1
        return self._value(line, line.indent, indent - 1)

    def _enter(self, indent: int) -> None:
        """One collection deeper, at the line being read (its reader steps back out when it ends);
        `FrontmatterError` past `MAX_DEPTH`."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            line = self.lines[min(self.position, len(self.lines) - 1)]
            raise self._error(f"collections nested more than {MAX_DEPTH} deep", line, indent)

    def _mapping(self, indent: int, first: Optional[Tuple[_Line, int]] = None) -> Dict[str, Any]:
        """A block mapping whose keys sit at column ``indent``; ``first``: its first line and the key's column
        when that line is a sequence item's (``- key: value``)."""
        self._enter(indent)
        try:
            return self._mapping_entries(indent, first)
        finally:
            self.depth -= 1

    def _mapping_entries(self, indent: int, first: Optional[Tuple[_Line, int]]) -> Dict[str, Any]:
        result: Dict[str, Any] = {}
        while True:
            if first is not None:
                line, column = first
                first = None
            else:
                found = self._next_content()
                if found is None or found.indent < indent:
                    return result
                line, column = found, found.indent
                if line.indent > indent:
                    raise self._error("a line indented more than the keys of its mapping", line, line.indent)
                if self._is_sequence_line(line):
                    raise self._error("a sequence item where a mapping key was expected", line, line.indent)
            key_found = self._is_mapping_line(line, column)
            if key_found is None:
                raise self._error("expected 'key: value' in a mapping", line, column)
            key, after = key_found
            self._check_key(key, line, column)
            if key in result:
                raise self._error(f"duplicate key {key!r}", line, column)
            self.position += 1
            result[key] = self._mapping_value(line, after, indent)

    def _check_key(self, key: str, line: _Line, column: int) -> None:
        first = line.text[column]
        if first in "\"'":
            return
        if first in _INDICATORS or first in "[{]},-" and (first != "-" or key == "-"):
            what = _INDICATORS.get(first, "a flow collection as a key" if first in "[{" else "an indicator")
            raise self._error(f"{what} is beyond the YAML this reader supports", line, column)

    def _mapping_value(self, line: _Line, after: int, indent: int) -> Any:
        """The value after ``key:`` (``after``: the column past the colon); may continue on the next lines."""
        rest = line.text[after:]
        if rest.strip(" ") == "" or rest.lstrip(" ").startswith("#"):
            child = self._next_content()
            if child is None:
                return None
            if child.indent > indent:
                return self.block(child.indent, child)
            if child.indent == indent and self._is_sequence_line(child):
                return self._sequence(indent)  # "key:\n- a" (a sequence at the key's own indentation)
            return None
        start = after + len(rest) - len(rest.lstrip(" "))
        return self._value(line, start, indent)

    def _sequence(self, indent: int) -> List[Any]:
        self._enter(indent)
        try:
            return self._sequence_items(indent)
        finally:
            self.depth -= 1

    def _sequence_items(self, indent: int) -> List[Any]:
        result: List[Any] = []
        while True:
            line = self._next_content()
            if line is None or line.indent < indent:
                return result
            if line.indent > indent:
                raise self._error("a line indented more than the items of its sequence", line, line.indent)
            if not self._is_sequence_line(line):
                return result  # the end of a sequence at a key's indentation: the next key
            result.append(self._item(line, indent))

    def _item(self, line: _Line, indent: int) -> Any:
        """One ``- ...`` item: a scalar, a nested block on the next lines, or a compact mapping ``- k: v``."""
        column = indent + 1
        while column < len(line.text) and line.text[column] == " ":
            column += 1
        rest = line.text[column:]
        if rest == "" or rest.startswith("#"):
            self.position += 1
            child = self._next_content()
            if child is None or child.indent <= indent:
                return None
            return self.block(child.indent, child)
        if rest == "-" or rest.startswith("- "):
            raise self._error("a sequence nested on the same line ('- - x') is beyond the YAML this reader "
                              "supports", line, column)
        if self._is_mapping_line(line, column) is not None:
            return self._mapping(column, (line, column))
        self.position += 1
        return self._value(line, column, indent)

    def _value(self, line: _Line, start: int, parent_indent: int) -> Any:
        """The scalar or flow collection that starts at column ``start`` of ``line`` (already consumed);
        a plain or quoted scalar may continue on lines indented more than ``parent_indent``."""
        text = line.text
        first = text[start]
        if first in "\"'":
            value, end = self._quoted(line, start, parent_indent=parent_indent)
            self._rest_is_comment(self._current_line_of(end[0]), end[1])
            return value
        if first in "[{":
            value, end_column = self._flow(line, start)
            self._rest_is_comment(line, end_column)
            return value
        if first in "|>":
            return self._block_scalar(line, start, parent_indent)
        if first in _INDICATORS or first in "]}" or (first == "-" and text[start + 1:start + 2] in ("", " ")):
            what = _INDICATORS.get(first, "an indicator")
            raise self._error(f"{what} is beyond the YAML this reader supports", line, start)
        return self._plain(line, start, parent_indent)

    def _current_line_of(self, number: int) -> _Line:
        return next(line for line in self.lines if line.number == number)

    def _rest_is_comment(self, line: _Line, column: int) -> None:
        rest = line.text[column:]
        stripped = rest.lstrip(" ")
        if stripped and not (stripped.startswith("#") and (rest != stripped or column == 0)):
            raise self._error("unexpected text after a value", line, column + len(rest) - len(stripped))

    # -- plain scalars --
    def _plain(self, line: _Line, start: int, parent_indent: int) -> Any:
        parts = [self._plain_part(line, start)]
        multi_line = False
        breaks = 0
        while self.position < len(self.lines):
            nxt = self.lines[self.position]
            content = nxt.text[nxt.indent:]
            if content == "":
                breaks += 1
                self.position += 1
                continue
            if nxt.indent <= parent_indent or content.startswith("#"):
                break
            if self._is_mapping_line(nxt) is not None:
                raise self._error("a mapping key inside a multi-line value (bad indentation?)", nxt, nxt.indent)
            multi_line = True
            parts.append("\n" * breaks if breaks else " ")
            parts.append(self._plain_part(nxt, nxt.indent))
            breaks = 0
            self.position += 1
        text = "".join(parts)
        if multi_line:
            return text
        try:
            return resolve_plain(text)
        except ValueError as exc:
            raise self._error(str(exc), line, start) from None

    def _plain_part(self, line: _Line, start: int) -> str:
        """A plain scalar's text on one line, from ``start`` to a comment or the end; ``: `` is an error."""
        text = line.text
        end = len(text)
        index = start
        while index < len(text):
            char = text[index]
            if char == "#" and index > start and text[index - 1] == " ":
                end = index
                break
            if char == ":" and (index + 1 == len(text) or text[index + 1] == " "):
                raise self._error("': ' inside a plain value (quote the value)", line, index)
            index += 1
        return text[start:end].rstrip(" ")

    # -- quoted scalars --
    @staticmethod
    def _quoted_end(text: str, start: int) -> Optional[int]:
        """The column after the closing quote of the quoted scalar at ``start`` on this line, or None."""
        quote = text[start]
        index = start + 1
        while index < len(text):
            char = text[index]
            if quote == "'" and char == "'":
                if text[index + 1:index + 2] == "'":
                    index += 2
                    continue
                return index + 1
            if quote == '"' and char == "\\":
                index += 2
                continue
            if quote == '"' and char == '"':
                return index + 1
            index += 1
        return None

    def _quoted(self, line: _Line, start: int, *, parent_indent: int = -1,
                single_line: bool = False) -> Tuple[str, Tuple[int, int]]:
        """A quoted scalar's value and ``(line number, column)`` after its closing quote. Line breaks inside
        fold as YAML says: one break is a space, each further break a newline."""
        quote = line.text[start]
        out: List[str] = []
        current, column = line, start + 1
        pending_space = False
        while True:
            text = current.text
            while column < len(text):
                char = text[column]
                if quote == "'" and char == "'":
                    if text[column + 1:column + 2] == "'":
                        out.append("'")
                        column += 2
                        continue
                    return "".join(out), (current.number, column + 1)
                if quote == '"' and char == '"':
                    return "".join(out), (current.number, column + 1)
                if quote == '"' and char == "\\":
                    if column + 1 == len(text):  # an escaped line break: the lines join with nothing between
                        pending_space = False
                        column += 1
                        break
                    escape = text[column + 1]
                    if escape in _HEX_ESCAPES:
                        digits = text[column + 2:column + 2 + _HEX_ESCAPES[escape]]
                        if len(digits) != _HEX_ESCAPES[escape] or not all(c in _HEX_DIGITS for c in digits):
                            raise self._error(f"a bad \\{escape} escape", current, column)
                        code = int(digits, 16)
                        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                            raise self._error(f"\\{escape}{digits} is not a Unicode character", current, column)
                        out.append(chr(code))
                        column += 2 + len(digits)
                        continue
                    if escape not in _ESCAPES:
                        raise self._error(f"unknown escape \\{escape}", current, column)
                    out.append(_ESCAPES[escape])
                    column += 2
                    continue
                out.append(char)
                column += 1
            else:
                # the line ended inside the quotes: trailing spaces go, the break folds
                while out and out[-1] == " ":
                    out.pop()
                pending_space = True
            if single_line:
                raise self._error("a quoted key that does not end on its line", line, start)
            # continue on the next line
            index = self.lines.index(current) + 1
            breaks = 0
            while index < len(self.lines) and self.lines[index].text.strip(" ") == "":
                breaks += 1
                index += 1
            if index >= len(self.lines):
                raise self._error("a quoted value that is never closed", line, start)
            current = self.lines[index]
            if current.indent <= parent_indent:
                raise self._error("a quoted value that is never closed (or a continuation line not indented)",
                                  line, start)
            self.position = index + 1
            if breaks:
                out.append("\n" * breaks)
            elif pending_space:
                out.append(" ")
            pending_space = False
            column = current.indent

    # -- block scalars --
    def _block_scalar(self, line: _Line, start: int, parent_indent: int) -> str:
        header = line.text[start:]
        match = re.match(r"([|>])([-+]?)([1-9]?)([-+]?)( +#.*)? *\Z", header)
        if match is None or (match.group(2) and match.group(4)):
            raise self._error("a block scalar header must be | or > with an optional chomping indicator (- or +) "
                              "and indentation digit", line, start)
        style, chomp, explicit = match.group(1), match.group(2) or match.group(4), match.group(3)
        base = max(parent_indent, 0)
        content_indent: Optional[int] = base + int(explicit) if explicit else None
        body: List[Tuple[int, str]] = []  # (indentation, the text past the content's) per line; blank: ""
        while self.position < len(self.lines):
            nxt = self.lines[self.position]
            is_blank = nxt.text.strip(" ") == ""
            if not is_blank:
                if content_indent is None:
                    if nxt.indent <= parent_indent:
                        break
                    content_indent = nxt.indent
                if nxt.indent < content_indent:
                    break
            body.append((nxt.indent, "" if is_blank else nxt.text[content_indent:]))
            self.position += 1
        if content_indent is None:
            content_indent = 0
        lines = [text for _, text in body]  # lines past the content indentation keep their extra spaces
        trailing = 0
        while lines and lines[-1] == "":
            lines.pop()
            trailing += 1
        if style == "|":
            text = "\n".join(lines)
        else:
            text = self._fold(lines)
        if not lines:
            return "\n" * trailing if chomp == "+" else ""
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" * (trailing + 1)
        return text + "\n"

    @staticmethod
    def _fold(lines: List[str]) -> str:
        """Folded-style content: a break between two text lines is a space; an empty line is a newline; lines
        that start with a space ("more indented") keep their breaks."""
        out: List[str] = []
        previous: Optional[str] = None
        empties = 0
        for line in lines:
            if line == "":
                empties += 1
                continue
            if previous is not None:
                if previous.startswith(" ") or line.startswith(" "):
                    out.append("\n" * (empties + 1))
                else:
                    out.append("\n" * empties if empties else " ")
            elif empties:
                out.append("\n" * empties)
            out.append(line)
            previous = line
            empties = 0
        return "".join(out)

    # -- flow collections --
    def _flow(self, line: _Line, start: int) -> Tuple[Any, int]:
        """A flow sequence or mapping that must end on ``line``; returns it and the column after it."""
        parser = _Flow(line.text, start, lambda message, column: self._error(message, line, column),
                       MAX_DEPTH - self.depth)
        value = parser.node()
        return value, parser.index


class _Flow:
    """A flow collection on one line: ``[a, b]``, ``{k: v}``, nested, with plain and quoted scalars."""

    def __init__(self, text: str, index: int, error: Any, depth_left: int = MAX_DEPTH) -> None:
        self.text = text
        self.index = index
        self.error = error
        self.depth_left = depth_left  # how many more collections may open (see MAX_DEPTH)

    def _skip(self) -> None:
        while self.index < len(self.text) and self.text[self.index] == " ":
            self.index += 1
        if self.index < len(self.text) and self.text[self.index] == "#":
            raise self.error("a flow collection must end on the line it starts (a comment inside it)", self.index)

    def _peek(self) -> str:
        self._skip()
        if self.index >= len(self.text):
            raise self.error("a flow collection must end on the line it starts", self.index)
        return self.text[self.index]

    def node(self) -> Any:
        char = self._peek()
        if char == "[":
            return self._collection("]")
        if char == "{":
            return self._collection("}")
        if char in "\"'":
            return self._quoted()
        return self._plain()

    def _collection(self, close: str) -> Any:
        if self.depth_left <= 0:
            raise self.error(f"collections nested more than {MAX_DEPTH} deep", self.index)
        self.depth_left -= 1
        try:
            return self._entries(close)
        finally:
            self.depth_left += 1

    def _entries(self, close: str) -> Any:
        self.index += 1
        items: List[Any] = []
        mapping: Dict[str, Any] = {}
        while True:
            if self._peek() == close:
                self.index += 1
                return mapping if close == "}" else items
            start = self.index
            key = self.node()
            if isinstance(key, (list, dict)) and (close == "}" or self._peek() == ":"):
                raise self.error("a flow collection as a key is beyond the YAML this reader supports", start)
            if self._peek() == ":":
                self.index += 1
                if not isinstance(key, str):  # keys are strings as written, as in block mappings (``~: 1``)
                    key = self.text[start:self.index - 1].strip()
                char = self._peek()
                value = None if char in ",]}" else self.node()
                if close == "]":
                    items.append({key: value})  # [k: v] is a one-pair mapping, as YAML says
                else:
                    if key in mapping:
                        raise self.error(f"duplicate key {key!r}", start)
                    mapping[key] = value
            elif close == "}":
                if not isinstance(key, str):
                    key = self.text[start:self.index].strip()
                if key in mapping:
                    raise self.error(f"duplicate key {key!r}", start)
                mapping[key] = None
            else:
                items.append(key)
            char = self._peek()
            if char == ",":
                self.index += 1
            elif char != close:
                raise self.error(f"expected ',' or '{close}' in a flow collection", self.index)

    def _quoted(self) -> str:
        quote = self.text[self.index]
        end = _Reader._quoted_end(self.text, self.index)
        if end is None:
            raise self.error("a quoted value that is never closed", self.index)
        raw = self.text[self.index:end]
        self.index = end
        if quote == "'":
            return raw[1:-1].replace("''", "'")
        reader = _Reader(raw, 1)
        value, _ = reader._quoted(reader.lines[0], 0, single_line=True)
        return value

    def _plain(self) -> Any:
        start = self.index
        char = self.text[start]
        if char in _INDICATORS or char in ",]}":
            raise self.error(f"{_INDICATORS.get(char, 'an indicator')} is beyond the YAML this reader supports",
                             start)
        while self.index < len(self.text):
            char = self.text[self.index]
            if char in ",[]{}":
                break
            if char == ":" and (self.index + 1 == len(self.text) or self.text[self.index + 1] in " ,]}"):
                break
            if char == "#" and self.text[self.index - 1] == " ":
                break
            self.index += 1
        text = self.text[start:self.index].rstrip(" ")
        try:
            return resolve_plain(text)
        except ValueError as exc:
            raise self.error(str(exc), start) from None
