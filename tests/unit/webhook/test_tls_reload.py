"""A renewed certificate is served on the next handshake without restarting uvicorn."""

from __future__ import annotations

import asyncio
import ssl

from cryptography import x509

from kruise.webhook import certs
from kruise.webhook.app import create_app
from kruise.webhook.certcontroller import write_files
from kruise.webhook.server import HTTPSServer


async def _peer_cert(port: int, ca: bytes) -> x509.Certificate:
    context = ssl.create_default_context(cadata=ca.decode())
    _reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=context, server_hostname="localhost"
    )
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.close()
    await writer.wait_closed()
    return x509.load_der_x509_certificate(der)


async def test_reload_swaps_the_served_certificate(tmp_path):
    first = certs.generate_bundle("localhost")
    write_files(tmp_path, first)
    server = HTTPSServer(create_app({}), "127.0.0.1", 0, tmp_path / "tls.crt", tmp_path / "tls.key")
    task = await server.start(timeout=10)
    try:
        port = server.bound_port()
        assert (await _peer_cert(port, first.ca_cert)).serial_number == x509.load_pem_x509_certificate(
            first.cert
        ).serial_number
        key, cert = certs.generate_serving(first.ca_key, first.ca_cert, "localhost")
        second = certs.CertBundle(first.ca_key, first.ca_cert, key, cert)
        write_files(tmp_path, second)
        server.reload_certificate()
        served = await _peer_cert(port, first.ca_cert)
        assert served.serial_number == x509.load_pem_x509_certificate(second.cert).serial_number
    finally:
        server.stop()
        await task
