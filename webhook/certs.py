"""The webhook's own PKI: a self-signed CA and a serving certificate, as upstream's cert writer makes them.

Pure functions over PEM bytes (no I/O), so generation, SANs and the renewal decision are unit-tested
without a cluster; `kruise.webhook.certsecret` stores the result in the Secret.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "webhook-cert-ca"
VALIDITY = datetime.timedelta(days=3650)
CA_MIN_REMAINING = datetime.timedelta(days=365)  # keep an existing CA only if it outlives this
DEFAULT_RENEW_BEFORE = datetime.timedelta(days=180)  # upstream CERTS_RENEW_BEFORE "6m"
KEY_SIZE = 2048

# Secret keys, upstream's names: the PEM pair for the CA, the serving pair, and the same pair as tls.*.
CA_KEY, CA_CERT, SERVER_KEY, SERVER_CERT, TLS_KEY, TLS_CERT = (
    "ca-key.pem", "ca-cert.pem", "key.pem", "cert.pem", "tls.key", "tls.crt",
)  # fmt: skip


class ExternalCertsError(RuntimeError):
    """EnableExternalCerts: the external certificate is missing or incomplete, or the webhook
    configurations / CRDs do not trust its CA yet."""


_RENEW = re.compile(r"^([0-9]+)([dmy])$")


def parse_renew_before(text: str) -> datetime.timedelta:
    """CERTS_RENEW_BEFORE: `<n>d`, `<n>m` (30-day months) or `<n>y`."""
    match = _RENEW.match(text.strip())
    if not match:
        raise ValueError(f"CERTS_RENEW_BEFORE: invalid value {text!r}: must be <n>d, <n>m or <n>y")
    count, unit = int(match.group(1)), match.group(2)
    return datetime.timedelta(days=count * {"d": 1, "m": 30, "y": 365}[unit])


@dataclass(frozen=True)
class CertBundle:
    ca_key: bytes
    ca_cert: bytes
    key: bytes
    cert: bytes

    def secret_data(self) -> dict[str, bytes]:
        return {
            CA_KEY: self.ca_key, CA_CERT: self.ca_cert, SERVER_KEY: self.key, SERVER_CERT: self.cert,
            TLS_KEY: self.key, TLS_CERT: self.cert,
        }  # fmt: skip

    @classmethod
    def from_secret_data(cls, data: dict[str, bytes]) -> CertBundle | None:
        try:
            return cls(data[CA_KEY], data[CA_CERT], data[SERVER_KEY], data[SERVER_CERT])
        except KeyError:
            return None


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=KEY_SIZE)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def generate_ca(now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    now = now or _now()
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, True, False, False, False), critical=True
        )  # digitalSignature, keyEncipherment, keyCertSign
        .sign(key, hashes.SHA256())
    )
    return _key_pem(key), cert.public_bytes(serialization.Encoding.PEM)


def _san(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def generate_serving(
    ca_key_pem: bytes, ca_cert_pem: bytes, dns_name: str, now: datetime.datetime | None = None
) -> tuple[bytes, bytes]:
    """CN = dns_name; SANs `localhost` + dns_name (an IP host in `--webhook-url` mode becomes an IP SAN)."""
    now = now or _now()
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
    key = _key()
    names = ["localhost"] + ([dns_name] if dns_name != "localhost" else [])
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectAlternativeName([_san(n) for n in names]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    return _key_pem(key), cert.public_bytes(serialization.Encoding.PEM)


def generate_bundle(dns_name: str, now: datetime.datetime | None = None) -> CertBundle:
    ca_key, ca_cert = generate_ca(now)
    key, cert = generate_serving(ca_key, ca_cert, dns_name, now)
    return CertBundle(ca_key, ca_cert, key, cert)


def problems(
    bundle: CertBundle, dns_name: str, renew_before: datetime.timedelta, now: datetime.datetime | None = None
) -> list[str]:
    """Why this bundle must not be served as is (empty list = fine). Any parse error counts as a problem."""
    now = now or _now()
    try:
        ca = x509.load_pem_x509_certificate(bundle.ca_cert)
        cert = x509.load_pem_x509_certificate(bundle.cert)
        key = serialization.load_pem_private_key(bundle.key, password=None)
        serialization.load_pem_private_key(bundle.ca_key, password=None)
    except ValueError as exc:
        return [f"unparseable PEM: {exc}"]
    found: list[str] = []
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        found.append("serving certificate is not signed by the CA")
    if key.public_key().public_numbers() != cert.public_key().public_numbers():  # type: ignore[union-attr]
        found.append("serving key does not match the certificate")
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = {str(n.value) for n in sans}
    except x509.ExtensionNotFound:
        names = set()
    if dns_name not in names:
        found.append(f"certificate is not valid for {dns_name}")
    if cert.not_valid_after_utc - renew_before <= now:
        found.append(f"certificate expires at {cert.not_valid_after_utc.isoformat()}")
    if cert.not_valid_before_utc > now:
        found.append("certificate is not valid yet")
    return found


def ca_reusable(bundle: CertBundle | None, now: datetime.datetime | None = None) -> bool:
    """Keep the CA (and thus every caBundle already handed out) while it has at least a year left."""
    if bundle is None:
        return False
    try:
        ca = x509.load_pem_x509_certificate(bundle.ca_cert)
        serialization.load_pem_private_key(bundle.ca_key, password=None)
    except ValueError:
        return False
    return ca.not_valid_after_utc - CA_MIN_REMAINING > (now or _now())


def renew(
    current: CertBundle | None, dns_name: str, renew_before: datetime.timedelta,
    now: datetime.datetime | None = None,
) -> CertBundle | None:  # fmt: skip
    """A replacement bundle, or None when `current` is fine as is."""
    if current is not None and not problems(current, dns_name, renew_before, now):
        return None
    if current is not None and ca_reusable(current, now):
        key, cert = generate_serving(current.ca_key, current.ca_cert, dns_name, now)
        return CertBundle(current.ca_key, current.ca_cert, key, cert)
    return generate_bundle(dns_name, now)
