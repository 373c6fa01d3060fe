"""A throwaway CA and serving certificate, so clients verify TLS exactly as against a real cluster.

The CA's key is kept with the certificates so the server can issue itself a certificate for one
more address later (``ServingCerts.for_hosts``): pods on a real node's bridge reach the API at the
bridge's host address, and a client verifying against the cluster CA needs that address in the
certificate, as kube-apiserver's certificate names every address it is reached at.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

DEFAULT_HOSTS = ("127.0.0.1", "localhost")
CA_NAME = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kruise-sandbox-ca")])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@dataclass(frozen=True)
class ServingCerts:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    ca_key_pem: bytes = b""
    hosts: tuple[str, ...] = DEFAULT_HOSTS

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
            cert.write_bytes(self.cert_pem + self.ca_pem)
            key.write_bytes(self.key_pem)
            ctx.load_cert_chain(cert, key)
        return ctx

    def for_hosts(self, *hosts: str) -> ServingCerts:
        """A serving certificate from the same CA that also names ``hosts`` (itself when it already
        names them all)."""
        wanted = tuple(dict.fromkeys((*self.hosts, *hosts)))
        if wanted == self.hosts:
            return self
        if not self.ca_key_pem:
            raise ValueError("ca_key_pem: these certificates were made without their CA's key")
        ca = x509.load_pem_x509_certificate(self.ca_pem)
        ca_key = serialization.load_pem_private_key(self.ca_key_pem, password=None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
        cert_pem, key_pem = _serving_cert(ca, ca_key, wanted)
        return ServingCerts(self.ca_pem, cert_pem, key_pem, self.ca_key_pem, wanted)


def _serving_cert(
    ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, hosts: tuple[str, ...]
) -> tuple[bytes, bytes]:
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def generate(hosts: tuple[str, ...] = DEFAULT_HOSTS) -> ServingCerts:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(CA_NAME)
        .issuer_name(CA_NAME)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_pem, key_pem = _serving_cert(ca, ca_key, tuple(hosts))
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    return ServingCerts(ca_pem, cert_pem, key_pem, _pem_key(ca_key), tuple(hosts))
