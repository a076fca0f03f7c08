"""``--save DIR``: the images, audio and blobs of a result written to files, under names that stay in DIR.

A name comes from the resource's URI (its last path segment) or is made as ``TOOL-N.EXT`` (the extension
from the MIME type). Either way it is reduced to letters, digits, ``.``, ``_`` and ``-``: a server chooses
these names, so ``..``, an absolute path, a separator or a hidden file's leading dot never reach the file
system, and a file that is there already is never written over (``name-2.png`` is taken instead).
"""

import base64
import binascii
import mimetypes
import os
import re
from typing import Any, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit

#: The longest name written (the part before the extension is cut to fit).
MAX_NAME = 100
#: Extensions of the types tools send most, which `mimetypes` does not know everywhere (audio/wav).
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
              "image/svg+xml": ".svg", "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3",
              "audio/ogg": ".ogg", "audio/webm": ".webm", "application/pdf": ".pdf", "application/json": ".json"}


def binary_parts(blocks: Iterable[Any]) -> List[Tuple[Optional[str], Optional[str], str]]:
    """(uri, mimeType, base64 data) of each image, audio and blob among content blocks or resource contents."""
    parts: List[Tuple[Optional[str], Optional[str], str]] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") in ("image", "audio") and isinstance(block.get("data"), str):
            parts.append((None, _text(block.get("mimeType")), block["data"]))
            continue
        contents = block.get("resource") if block.get("type") == "resource" else block
        if isinstance(contents, Mapping) and isinstance(contents.get("blob"), str):
            parts.append((_text(contents.get("uri")), _text(contents.get("mimeType")), contents["blob"]))
    return parts


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def safe_name(uri: Optional[str], mime_type: Optional[str], stem: str, number: int) -> str:
    """The file name for one part: the URI's last segment when it makes a name, else ``STEM-N.EXT``."""
    name = _clean(unquote(urlsplit(uri).path.rstrip("/").rsplit("/", 1)[-1])) if uri else ""
    if not name:
        bare = mime_type.split(";")[0].strip().lower() if mime_type else ""
        extension = EXTENSIONS.get(bare) or (mimetypes.guess_extension(bare) if bare else None) or ".bin"
        name = f"{_clean(stem) or 'result'}-{number}{extension}"
    return name


def _clean(name: str) -> str:
    """``name`` reduced to safe characters, without leading dots (no ``..``, no hidden file), cut to length."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
    if len(name) > MAX_NAME:
        root, extension = os.path.splitext(name)
        name = root[:MAX_NAME - len(extension[:20])] + extension[:20]
    return name


def save_parts(folder: str, blocks: Iterable[Any], stem: str) -> List[Tuple[str, int]]:
    """Write each image, audio and blob of ``blocks`` into ``folder`` (made if missing): [(path, size)].

    Raises:
        OSError: the folder cannot be made or a file cannot be written.
        ValueError: a part's data is not base64 (nothing of it is written).
    """
    parts = binary_parts(blocks)
    if not parts:
        return []
    os.makedirs(folder, exist_ok=True)
    written = []
    for number, (uri, mime_type, data) in enumerate(parts, 1):
        try:
            payload = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"part {number} ({uri or mime_type or 'no type'}) is not base64: not saved") from None
        written.append((_write_new(folder, safe_name(uri, mime_type, stem, number), payload), len(payload)))
    return written


def _write_new(folder: str, name: str, payload: bytes) -> str:
    """Write ``payload`` to a file of ``folder`` that did not exist: ``name``, else ``name-2``, ``name-3``..."""
    root, extension = os.path.splitext(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)
    for attempt in range(1, 1000):
        path = os.path.join(folder, name if attempt == 1 else f"{root}-{attempt}{extension}")
        try:
            descriptor = os.open(path, flags, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as file:
            file.write(payload)
        return path
    raise FileExistsError(f"{os.path.join(folder, name)} and 998 more names like it exist already")
