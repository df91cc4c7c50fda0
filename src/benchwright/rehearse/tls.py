"""TLS for stand-ins of targets that use it (ElastiCache with ``tls: true``, its default): a throwaway
CA and a server certificate for 127.0.0.1, made with the openssl command for one rehearsal and deleted
with it. Runner containers trust the CA through ``SSL_CERT_FILE`` (the system bundle plus this CA), the
way a runner in AWS trusts Amazon's CA, so the runner verifies the stand-in's certificate."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchwright.rehearse.stack import RehearsalError

SYSTEM_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
IN_CONTAINER = "/benchwright-rehearsal-tls"  # where runner containers see the directory


@dataclass
class TlsMaterial:
    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def cert(self) -> Path:
        return self.directory / "server.crt"

    @property
    def key(self) -> Path:
        return self.directory / "server.key"

    @property
    def bundle(self) -> Path:
        """The system CAs and the rehearsal's CA (SSL_CERT_FILE of a runner container)."""
        return self.directory / "bundle.crt"

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def _openssl(*args: str, cwd: Path) -> None:
    done = subprocess.run(
        ["openssl", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    if done.returncode != 0:
        raise RehearsalError(f"openssl {args[0]} failed: {done.stderr.strip()[-300:]}")


def make_tls() -> TlsMaterial:
    """A CA, and a certificate for IP 127.0.0.1 signed by it (valid for two days)."""
    if shutil.which("openssl") is None:
        raise RehearsalError(
            "openssl not found: it makes the TLS stand-in's certificate (apt-get install openssl)"
        )
    tls = TlsMaterial(Path(tempfile.mkdtemp(prefix="benchwright-rehearsal-tls-")))
    d = tls.directory
    d.chmod(0o755)
    subj = "/CN=benchwright rehearsal CA"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "2", "-subj", subj, cwd=d)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=127.0.0.1", cwd=d)  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.crt", "-days", "2", "-extfile", "san.ext", cwd=d)  # fmt: skip
    (d / "ca.key").unlink()  # nothing more is signed with it
    system = SYSTEM_BUNDLE.read_text() if SYSTEM_BUNDLE.is_file() else ""
    tls.bundle.write_text(system + "\n" + tls.ca.read_text())
    for path in (tls.ca, tls.cert, tls.key, tls.bundle):
        path.chmod(0o644)  # the stand-in runs as the redis user; the key dies with the rehearsal
    return tls
