"""Certificate generation, SANs, and the renew-or-keep decision (pure, no cluster)."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kruise.webhook import certs

DNS = "kruise-webhook-service.kruise-system.svc"
NOW = datetime.datetime(2026, 11, 23, tzinfo=datetime.UTC)
HALF_YEAR = datetime.timedelta(days=180)


@pytest.fixture(scope="module")
def bundle() -> certs.CertBundle:
    return certs.generate_bundle(DNS, NOW)


def test_ca_and_serving_certificate_shape(bundle):
    ca = x509.load_pem_x509_certificate(bundle.ca_cert)
    cert = x509.load_pem_x509_certificate(bundle.cert)
    assert ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "webhook-cert-ca"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == DNS
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost", DNS]
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    cert.verify_directly_issued_by(ca)
    assert cert.not_valid_after_utc - NOW > datetime.timedelta(days=3640)
    assert ca.public_key().key_size == 2048


def test_secret_data_uses_upstream_keys(bundle):
    data = bundle.secret_data()
    assert set(data) == {"ca-key.pem", "ca-cert.pem", "key.pem", "cert.pem", "tls.key", "tls.crt"}
    assert data["tls.crt"] == data["cert.pem"] and data["tls.key"] == data["key.pem"]
    assert certs.CertBundle.from_secret_data(data) == bundle
    assert certs.CertBundle.from_secret_data({"tls.crt": b"x"}) is None


def test_ip_host_gets_an_ip_san():
    _key, cert_pem = certs.generate_serving(*certs.generate_ca(NOW), "127.0.0.1", NOW)
    cert = x509.load_pem_x509_certificate(cert_pem)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_good_bundle_is_kept(bundle):
    assert certs.problems(bundle, DNS, HALF_YEAR, NOW) == []
    assert certs.renew(bundle, DNS, HALF_YEAR, NOW) is None


def test_expiring_certificate_is_renewed_under_the_same_ca(bundle):
    later = NOW + datetime.timedelta(days=3650 - 100)  # 100 days left < 180 threshold; CA has < 1 year too
    assert any("expires" in p for p in certs.problems(bundle, DNS, HALF_YEAR, later))
    soon = NOW + datetime.timedelta(days=3650 - 400)  # 400 days left: CA still reusable
    replacement = certs.renew(bundle, DNS, datetime.timedelta(days=500), soon)
    assert replacement is not None
    assert replacement.ca_cert == bundle.ca_cert and replacement.cert != bundle.cert
    assert certs.problems(replacement, DNS, datetime.timedelta(days=500), soon) == []


def test_old_ca_is_replaced(bundle):
    later = NOW + datetime.timedelta(days=3650 - 100)
    replacement = certs.renew(bundle, DNS, HALF_YEAR, later)
    assert replacement is not None and replacement.ca_cert != bundle.ca_cert


def test_wrong_name_or_garbage_is_renewed(bundle):
    assert certs.problems(bundle, "other.svc", HALF_YEAR, NOW) == ["certificate is not valid for other.svc"]
    garbage = certs.CertBundle(b"x", b"y", b"z", b"w")
    assert certs.problems(garbage, DNS, HALF_YEAR, NOW)[0].startswith("unparseable PEM")
    assert certs.renew(garbage, DNS, HALF_YEAR, NOW) is not None


def test_foreign_certificate_is_detected(bundle):
    other = certs.generate_bundle(DNS, NOW)
    mixed = certs.CertBundle(bundle.ca_key, bundle.ca_cert, other.key, other.cert)
    assert "serving certificate is not signed by the CA" in certs.problems(mixed, DNS, HALF_YEAR, NOW)
    swapped = certs.CertBundle(bundle.ca_key, bundle.ca_cert, other.key, bundle.cert)
    assert "serving key does not match the certificate" in certs.problems(swapped, DNS, HALF_YEAR, NOW)


@pytest.mark.parametrize(
    ("text", "days"), [("6m", 180), ("10d", 10), ("1y", 365), ("0d", 0)]
)  # fmt: skip
def test_renew_before_parsing(text, days):
    assert certs.parse_renew_before(text) == datetime.timedelta(days=days)


@pytest.mark.parametrize("text", ["", "6", "6w", "-1d", "d"])
def test_renew_before_rejects_bad_values(text):
    with pytest.raises(ValueError, match="CERTS_RENEW_BEFORE"):
        certs.parse_renew_before(text)
