"""The protocol's constants: version, revision, frame limits and the
host's default waits (docs/PROTOCOL.md, sections 2, 3, 6 and 11)."""

PROTOCOL_VERSION = 1
"""The protocol version this package speaks."""

PROTOCOL_REVISION = 8
"""The revision of :data:`PROTOCOL_VERSION` this package speaks and sends in
its ``Hello``. A test checks it against the host's ``PROTOCOL_REVISION``."""

MAX_HELLO_FRAME = 4 * 1024
"""The largest ``Hello`` payload the host reads."""

MAX_CLIENT_FRAME = 1024 * 1024
"""The largest payload of any later frame to the host."""

MAX_HOST_FRAME = 16 * 1024 * 1024
"""The largest payload the host sends; a larger length prefix means the
stream is corrupt."""

DEFAULT_ASK_TIMEOUT_MS = 600_000
"""How long the host waits for a turn's end when ``ask`` names no wait."""

DEFAULT_WAIT_TIMEOUT_MS = 30_000
"""How long the host waits in ``wait_for`` when the request names no wait."""

PROBE_RUN_LIMIT_MS = 180_000
"""How long the host lets a ``probe_runtime`` run take."""

INPUT_CHUNK_BYTES = 512 * 1024
"""The most input one ``send`` request carries when :meth:`Client.send`
splits a large input (base64 adds a third, and the frame is 1 MiB)."""
