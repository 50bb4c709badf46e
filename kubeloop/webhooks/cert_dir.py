"""Serving a certificate someone else manages (cert-manager), read from a directory: ``--webhook-cert-dir``.

- The directory holds ``tls.crt`` and ``tls.key`` (and maybe ``ca.crt``), as a Secret of type
  ``kubernetes.io/tls`` mounted as a volume does. Nothing is generated and no ``caBundle`` is written by
  the process: cert-manager's cainjector fills it (the ``--cert-manager-certificate`` annotation).
- The pair is checked before it is served: both parse, and the key belongs to the certificate. A bad or
  missing file at start is a :class:`CertDirError` naming the flag and the file.
- Rotation: cert-manager replaces the Secret; the kubelet swaps the mounted files at once (a symlink
  swap). :meth:`MountedCerts.keep_fresh` re-reads the files every ``poll_every`` seconds and, when they
  changed and form a valid pair, loads it into the *same* ``SSLContext``: new handshakes get the new
  certificate, connections already open keep theirs, so no request in flight fails. A changed but
  invalid pair (caught mid-write) is logged and the previous one kept until the next look.
- Both files are read into memory first and checked together, so a swap between the two reads cannot
  load a certificate with another's key; they are handed to ``SSLContext.load_cert_chain`` through a
  private temporary directory (0700), emptied right after.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import shutil
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

log = logging.getLogger(__name__)

FLAG = "--webhook-cert-dir"
CERT, KEY, CA = "tls.crt", "tls.key", "ca.crt"


class CertDirError(ValueError):
    """The certificate directory cannot be served; the message names the flag, the file and the fix."""


def _read(directory: Path, name: str) -> bytes:
    path = directory / name
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CertDirError(f"{FLAG} {directory}: cannot read {path} ({exc.strerror or exc}); mount a "
                           f"kubernetes.io/tls Secret there (keys {CERT} and {KEY})") from exc


def read_pair(directory: Path) -> tuple[bytes, bytes, x509.Certificate]:
    """``(cert PEM, key PEM, certificate)``, checked: both parse and the key matches the certificate."""
    cert_pem, key_pem = _read(directory, CERT), _read(directory, KEY)
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
    except ValueError as exc:
        raise CertDirError(f"{FLAG} {directory}: {directory / CERT} is not a PEM certificate ({exc})") from exc
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as exc:
        # The exception text never quotes the key material.
        raise CertDirError(f"{FLAG} {directory}: {directory / KEY} is not an unencrypted PEM private key") from exc
    spki = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*spki) != cert.public_key().public_bytes(*spki):
        raise CertDirError(f"{FLAG} {directory}: {directory / KEY} is not the key of {directory / CERT}")
    return cert_pem, key_pem, cert


class MountedCerts:
    """The webhook server's certificates from ``directory``, in the shape :class:`WebhookServer` uses."""

    def __init__(self, directory: str | Path, *, poll_every: float = 2.0) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise CertDirError(f"{FLAG} {self.directory}: no such directory; mount the serving certificate's "
                               f"Secret there (keys {CERT} and {KEY})")
        self.poll_every = poll_every
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl_context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.cert: x509.Certificate | None = None
        self.not_after: dt.datetime | None = None
        self.rotations = 0  # pairs loaded
        self.pem: tuple[bytes, bytes] | None = None  # the pair loaded (cert, key), as in WebhookCerts
        self.on_change: list[Callable[[], None]] = []  # told of each new pair, as in WebhookCerts
        self._tmp = Path(tempfile.mkdtemp(prefix="kubeloop-webhook-"))  # 0700 by mkdtemp

    @property
    def loaded(self) -> bool:
        """True once a valid pair is in the SSL context (readiness waits for it)."""
        return self.cert is not None

    @property
    def ca_bundle(self) -> bytes | None:
        """``ca.crt`` if the directory has one (cert-manager's issuer CA); else None."""
        path = self.directory / CA
        return path.read_bytes() if path.is_file() else None

    @property
    def ca_bundle_b64(self) -> None:
        """None: in this mode the process never writes a ``caBundle`` (cainjector does)."""
        return None

    def reload(self) -> bool:
        """Loads the files if they changed since the last load; True if a new pair was loaded.

        Raises :class:`CertDirError` if they changed and do not form a valid pair."""
        cert_pem, key_pem, cert = read_pair(self.directory)
        if self.pem == (cert_pem, key_pem):
            return False
        crt_path, key_path = self._tmp / CERT, self._tmp / KEY
        crt_path.write_bytes(cert_pem)
        key_path.touch(mode=0o600)
        key_path.write_bytes(key_pem)
        try:
            self.ssl_context.load_cert_chain(crt_path, key_path)
        finally:
            crt_path.unlink()
            key_path.unlink()
        self.pem, self.cert, self.not_after = (cert_pem, key_pem), cert, cert.not_valid_after_utc
        self.rotations += 1
        log.info("webhook serving certificate loaded from %s, valid until %s", self.directory,
                 self.not_after.isoformat())
        for listener in self.on_change:
            listener()
        return True

    async def keep_fresh(self, check_every: float | None = None) -> None:
        """Reloads changed files every :attr:`poll_every` seconds until cancelled. (``check_every`` is the
        server's interval for certificates it issues itself; files are looked at more often.)"""
        while True:
            await asyncio.sleep(self.poll_every)
            try:
                self.reload()
            except CertDirError as exc:
                log.warning("%s; still serving the previous certificate", exc)

    def close(self) -> None:
        """Removes the private temporary directory."""
        shutil.rmtree(self._tmp, ignore_errors=True)

