"""Ed25519 signing keys: generation, loading, and key ids.

The private key file is created with mode 0600 from its first byte, whatever the
umask, under a temporary name and hard-linked into place (``_files.write_new``), so a
key is never world-readable, a half-written key never appears under the real name,
and an existing key is never overwritten (``link`` fails if the name is taken). A key id is the hex SHA-256 of the
public key's DER SubjectPublicKeyInfo: it names exactly one key, whatever its PEM
formatting.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from redaction_pressure.contract import InputFileError, read_bounded

from ._files import write_new

PRIVATE_NAME = "signing-key.pem"
PUBLIC_NAME = "signing-key.pub.pem"
MAX_KEY_FILE_BYTES = 64 * 1024


class KeyFileError(Exception):
    """A key file that is missing, unreadable, or not an Ed25519 key."""


def keyid(public_key: Ed25519PublicKey) -> str:
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()


def keygen(out_dir: Path) -> tuple[Path, Path, str]:
    """Writes a new key pair into ``out_dir``; returns (private path, public path, key id).
    Raises FileExistsError if either key file already exists."""
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    private_path, public_path = out_dir / PRIVATE_NAME, out_dir / PUBLIC_NAME
    for p in (private_path, public_path):
        if os.path.lexists(p):
            raise FileExistsError(f"{p} already exists; refusing to overwrite a key")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    write_new(private_path, private_pem, 0o600, exact_mode=True)
    write_new(public_path, public_pem, 0o644, exact_mode=True)
    return private_path, public_path, keyid(key.public_key())


def _read(path: Path) -> bytes:
    """The key file's bytes: the user names it, so a link is followed, but it must be a
    regular file (a FIFO would block, ``/dev/zero`` never ends) of a key's size."""
    try:
        return read_bounded(path, MAX_KEY_FILE_BYTES, follow_links=True)
    except InputFileError as exc:
        raise KeyFileError(f"cannot read key file {path}: {exc}") from None
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {path}: {exc.strerror or exc}") from None


def _one_block(path: Path, data: bytes) -> bytes:
    """``data`` if it holds exactly one PEM block. The loader reads the first block and
    ignores the rest, so a file of two keys (a keyring made with ``cat``, a key put in
    front of the published one) would pin, or sign with, only its first key while the
    user believes either may be the one used: which key is meant must never be a guess."""
    blocks = sum(1 for line in data.splitlines() if line.lstrip().startswith(b"-----BEGIN "))
    if blocks > 1:
        raise KeyFileError(f"{path} holds {blocks} PEM blocks; a key file holds exactly one key (only the first "
                           f"would be used, so which key is meant is ambiguous): give one key per file")
    return data


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(_one_block(path, _read(path)), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path} is not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} is not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(_one_block(path, _read(path)))
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path} is not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path} is not an Ed25519 public key")
    return key
