"""The emulator's serving certificate names every address it serves at (pods on a real node's bridge
verify it against the cluster CA, as client-go does in a pod)."""

from __future__ import annotations

import ipaddress
import ssl

import httpx
import pytest
from cryptography import x509

from kruise.sandbox.apiserver.server import ApiServer
from kruise.sandbox.apiserver.tls import generate


def ip_sans(cert_pem: bytes) -> list[str]:
    cert = x509.load_pem_x509_certificate(cert_pem)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]


def test_for_hosts_adds_the_address_and_keeps_the_ca() -> None:
    certs = generate()
    more = certs.for_hosts("198.18.0.1")
    assert more.ca_pem == certs.ca_pem
    assert ip_sans(more.cert_pem) == ["127.0.0.1", "198.18.0.1"]
    ca = x509.load_pem_x509_certificate(certs.ca_pem)
    x509.load_pem_x509_certificate(more.cert_pem).verify_directly_issued_by(ca)
    assert more.for_hosts("198.18.0.1") is more  # nothing new to name: the same certificate


def test_for_hosts_needs_the_ca_key() -> None:
    certs = generate()
    without = type(certs)(certs.ca_pem, certs.cert_pem, certs.key_pem)
    with pytest.raises(ValueError, match="ca_key_pem"):
        without.for_hosts("10.0.0.1")


async def test_listen_also_serves_a_certificate_naming_that_address() -> None:
    server = ApiServer()
    await server.start("127.0.0.1", 0)
    try:
        other = "127.0.0.2"
        assert ipaddress.ip_address(other).is_loopback
        await server.listen_also(other)
        assert server.ca_pem is not None
        context = ssl.create_default_context(cadata=server.ca_pem.decode())
        headers = {"Authorization": f"Bearer {server.token}"}
        async with httpx.AsyncClient(verify=context, headers=headers) as client:
            answer = await client.get(f"https://{other}:{server.port}/version")
            assert answer.status_code == 200, answer.text
            first = await client.get(f"{server.url}/version")  # the first address keeps verifying
            assert first.status_code == 200
    finally:
        await server.stop()
