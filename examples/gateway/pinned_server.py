"""An example server pinned to one era, to put behind the gateway: ``python3 -m examples.gateway.pinned_server
ERA MODULE`` serves ``MODULE``'s ``server`` (an example of this folder's parent) speaking only the handshake
revisions (ERA ``handshake``) or only 2026-07-28 (ERA ``envelope``) over stdio."""

import importlib
import sys

from mcplite.protocol.versions import ENVELOPE_VERSIONS, HANDSHAKE_VERSIONS


def main() -> None:
    era, module = sys.argv[1], sys.argv[2]
    server = importlib.import_module(module).server
    server.supported_versions = tuple(HANDSHAKE_VERSIONS if era == "handshake" else ENVELOPE_VERSIONS)
    server.run()


if __name__ == "__main__":
    main()
