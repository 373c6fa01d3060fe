"""A real HTTPS admission webhook server for tests: its own CA, a cert with service SANs, routes.

Tests need a webhook that a caller reaches over verified TLS, exactly as kube-apiserver would,
without depending on kruise's webhook. Each route is a function from the AdmissionReview request
to the ``response`` part (uid is filled in), or to a ``Reply`` for deliberately broken answers.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Reply:
    """A raw HTTP answer, for tests of broken webhooks."""

    status: int = 200
    body: bytes = b""
    delay: asyncio.Event | None = None  # wait on this before answering (never set -> timeout)


Handler = Callable[[dict[str, Any]], "dict[str, Any] | Reply"]


@dataclass
class Certificates:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @property
    def ca_bundle(self) -> str:
        """The base64 of the CA PEM, as clientConfig.caBundle holds it."""
        return base64.b64encode(self.ca_pem).decode()


def make_certificates(dns_names: list[str]) -> Certificates:
    """A throwaway CA and a server cert for ``dns_names`` plus 127.0.0.1 (EC keys: fast)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "sandbox-test-ca")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        x509.CertificateBuilder()
        .subject_name(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0] if dns_names else "x")])
        )
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return Certificates(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def patch_response(operations: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """An allowed response carrying a base64 JSONPatch."""
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(orjson.dumps(operations)).decode(),
        **extra,
    }


def server_context(certificates: Certificates) -> ssl.SSLContext:
    """ssl loads keys only from files, so they pass through a private temporary directory."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert.write_bytes(certificates.cert_pem)
        key.write_bytes(certificates.key_pem)
        context.load_cert_chain(cert, key)
    return context


@dataclass
class WebhookServer:
    """HTTP/1.1 over TLS on 127.0.0.1; records every review it receives, per path."""

    certificates: Certificates
    routes: dict[str, Handler] = field(default_factory=dict)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    port: int = 0
    answers_per_connection: int | None = None
    """Answer at most this many requests on one connection, then close it when the next request
    arrives, unanswered: a keep-alive timer firing just as a client reuses the idle connection."""
    connections: int = 0
    dropped: int = 0  # requests that arrived on a connection closed under them
    _server: asyncio.AbstractServer | None = None
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    async def start(self, port: int = 0) -> WebhookServer:
        context = server_context(self.certificates)
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port, ssl=context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in list(self._writers):
                writer.close()
            await self._server.wait_closed()

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        answered = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if self.answers_per_connection is not None and answered >= self.answers_per_connection:
                    self.dropped += 1
                    return
                answered += 1
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1].split("?")[0]
                headers = {
                    k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                reply = self._answer(path, body)
                if reply.delay is not None:
                    await reply.delay.wait()
                writer.write(
                    f"HTTP/1.1 {reply.status} X\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(reply.body)}\r\n\r\n".encode()
                    + reply.body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def _answer(self, path: str, body: bytes) -> Reply:
        handler = self.routes.get(path)
        if handler is None:
            return Reply(status=404, body=b"404 page not found")
        review = orjson.loads(body)
        self.received.setdefault(path, []).append(review)
        result = handler(review["request"])
        if isinstance(result, Reply):
            return result
        response = {"uid": review["request"]["uid"], **result}
        return Reply(
            body=orjson.dumps(
                {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
            )
        )


async def _serve_forever(port: int, cert_dir: Path) -> None:
    """Run as a separate process: /label adds ``webhook: called``; /deny refuses with a message."""
    certificates = Certificates(
        ca_pem=b"",
        cert_pem=(cert_dir / "tls.crt").read_bytes(),
        key_pem=(cert_dir / "tls.key").read_bytes(),
    )
    server = WebhookServer(certificates)
    server.routes["/label"] = lambda request: patch_response(
        [{"op": "add", "path": "/metadata/labels", "value": {"webhook": "called"}}]
    )
    server.routes["/deny"] = lambda request: {"allowed": False, "status": {"message": "denied by a process"}}
    await server.start(port)
    print("ready", flush=True)
    await asyncio.Event().wait()  # until SIGTERM ends the process


if __name__ == "__main__":
    import sys

    asyncio.run(_serve_forever(int(sys.argv[1]), Path(sys.argv[2])))
