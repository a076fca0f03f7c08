"""Scenario parser-fuzz: every parser of remote input ends in its own error class, and quickly.

Each fuzzer below mutates valid input of one parser, seeded, and asserts that the parser either accepts it or
raises the error class that parser documents (never `RecursionError`, `UnicodeError`, `KeyError` and the like),
and that no single input costs more than a bound. The parsers and their classes:

- ``fuzz_jose``: JWTs (headers and claims), JWKs and DPoP proofs: `JWTError`, `DPoPProofError`;
- ``fuzz_request_state``: sealed 2026-07-28 ``requestState``: `InvalidRequestState`;
- ``fuzz_oauth_documents``: protected resource and authorization server metadata, token responses: `AuthError`;
- ``fuzz_frontmatter``: SKILL.md front matter: `FrontmatterError`.

Each module's ``run(seed, cases)`` raises AssertionError naming the case that failed; the figures count the
cases run. The same functions run as pytest tests (tests/security/), with fewer cases.
"""

import time
from typing import Callable, List, Tuple

from . import fuzz_frontmatter, fuzz_jose, fuzz_oauth_documents, fuzz_request_state
from .harness import Result, Run, scenario

FUZZERS: List[Tuple[str, Callable[[int, int], None]]] = [
    ("jose", fuzz_jose.run),
    ("request_state", fuzz_request_state.run),
    ("oauth_documents", fuzz_oauth_documents.run),
    ("frontmatter", fuzz_frontmatter.run),
]


@scenario("parser-fuzz", quick_timeout=120, long_timeout=1800)
def parser_fuzz(run: Run) -> Result:
    result = Result()
    cases = run.size(5_000, 200_000)
    for name, fuzz in FUZZERS:
        began = time.monotonic()
        try:
            fuzz(run.seed, cases)
        except AssertionError as exc:
            result.problems.append(f"{name}: {exc}")
        result.figures[name] = f"{cases}/{time.monotonic() - began:.1f}s"
    return result
