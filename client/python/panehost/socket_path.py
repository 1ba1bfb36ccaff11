"""Where the host's socket is (PROTOCOL.md, section 1), and the checks a
client makes before it sends anything to it (docs/SECURITY.md, "Clients
check whom they talk to")."""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys
from typing import Mapping, Optional

from .errors import UntrustedHost


def default_socket_path(env: Optional[Mapping[str, str]] = None) -> str:
    """The host's socket path by the protocol's rules, first match wins:
    ``PANEHOST_SOCKET`` when set and not empty;
    ``$XDG_RUNTIME_DIR/panehost/host.sock`` when ``XDG_RUNTIME_DIR`` is set
    and not empty; otherwise ``<tmp>/panehost-<uid>/host.sock``, where
    ``<tmp>`` is ``$TMPDIR`` when set and not empty, else ``/tmp``."""
    env = os.environ if env is None else env
    explicit = env.get("PANEHOST_SOCKET")
    if explicit:
        return explicit
    runtime_dir = env.get("XDG_RUNTIME_DIR")
    if runtime_dir:
        return os.path.join(runtime_dir, "panehost", "host.sock")
    tmp = env.get("TMPDIR") or "/tmp"
    return os.path.join(tmp, f"panehost-{os.geteuid()}", "host.sock")


_ADVICE = (
    "; another user may be listening there. Remove it if it is yours, or choose another socket "
    "(socket_path, PANEHOST_SOCKET, or XDG_RUNTIME_DIR)"
)


def check_socket_dir(path: str) -> None:
    """Raises :class:`UntrustedHost` unless the socket's directory is private
    to the user: a directory (not a symbolic link), owned by the user, with
    no permission bit for group or others. A directory that does not exist
    passes: there is no host, and connecting says so."""
    directory = os.path.dirname(path) or "."
    uid = os.geteuid()
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return
    except OSError as error:
        raise UntrustedHost(path, f"{directory}: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UntrustedHost(path, f"{directory} is not a directory (a symbolic link is not followed){_ADVICE}")
    if info.st_uid != uid:
        raise UntrustedHost(path, f"{directory} is owned by uid {info.st_uid}, not by this user (uid {uid}){_ADVICE}")
    if info.st_mode & 0o077:
        mode = oct(stat.S_IMODE(info.st_mode))[2:]
        raise UntrustedHost(path, f"{directory} has mode {mode}; it must be 0700 or narrower{_ADVICE}")


def peer_uid(sock: socket.socket) -> Optional[int]:
    """The uid of the process listening at the other end of a connected Unix
    socket, from the kernel; ``None`` where the platform does not say."""
    if hasattr(socket, "SO_PEERCRED"):
        # struct ucred { pid_t pid; uid_t uid; gid_t gid; }
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        return uid
    if sys.platform == "darwin" or "bsd" in sys.platform:
        # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]; }
        sol_local, local_peercred = 0, 0x001
        raw = sock.getsockopt(sol_local, local_peercred, 4 + 4 + 4 + 16 * 4)
        return struct.unpack_from("I", raw, 4)[0]
    return None


def check_peer(path: str, sock: socket.socket) -> None:
    """Raises :class:`UntrustedHost` unless the process listening on the
    connected ``sock`` runs as this user."""
    uid = os.geteuid()
    try:
        peer = peer_uid(sock)
    except OSError as error:
        raise UntrustedHost(path, f"the kernel did not say who listens on it: {error.strerror}") from None
    if peer is None:
        raise UntrustedHost(path, "the kernel did not say who listens on it")
    if peer != uid:
        raise UntrustedHost(path, f"the process listening on it runs as uid {peer}, not as this user (uid {uid})")
