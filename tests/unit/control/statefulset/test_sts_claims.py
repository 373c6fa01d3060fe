"""Claims against volumeClaimTemplates: compatibility, readiness, expansion, status.volumeClaims."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.statefulset import claims
from tests.kit.pods import pod


def claim(request="1Gi", capacity=None, sc=None, modes=("ReadWriteOnce",), conditions=None, deleting=False):
    body = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": request}}},
    }
    if sc is not None:
        body["spec"]["storageClassName"] = sc
    status = {}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    if conditions:
        status["conditions"] = conditions
    if status:
        body["status"] = status
    if deleting:
        body["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return body


def template(request="1Gi", sc=None, name="data", modes=("ReadWriteOnce",)):
    body = claim(request, sc=sc, modes=modes)
    body["metadata"]["name"] = name
    return body


@pytest.mark.parametrize(
    ("claim_sc", "template_sc", "expected"),
    [("fast", "fast", True), ("fast", "slow", False), ("fast", None, True), (None, "fast", True)],
)
def test_storage_class_matters_only_when_both_name_one(claim_sc, template_sc, expected):
    assert claims.compatible_without_size(claim(sc=claim_sc), template(sc=template_sc)) is expected


def test_access_modes_must_match_in_order():
    rw = template(modes=("ReadWriteOnce", "ReadOnlyMany"))
    assert claims.compatible_without_size(claim(modes=("ReadWriteOnce", "ReadOnlyMany")), rw)
    assert not claims.compatible_without_size(claim(modes=("ReadOnlyMany", "ReadWriteOnce")), rw)
    assert not claims.compatible_without_size(claim(modes=("ReadWriteOnce",)), rw)


@pytest.mark.parametrize(
    ("request_", "capacity", "wanted", "expected"),
    [
        ("1Gi", "1Gi", "1Gi", (True, True)),
        ("2Gi", "1Gi", "1Gi", (True, False)),  # resized, volume not grown yet
        ("1Gi", "1Gi", "2Gi", (False, True)),  # template grew past the claim
        ("1024Mi", None, "1Gi", (True, False)),  # no capacity reported: not ready
        ("1073741824", "1Gi", "1Gi", (True, True)),
    ],
)
def test_compatible_and_ready(request_, capacity, wanted, expected):
    assert claims.compatible_and_ready(claim(request_, capacity), template(wanted)) == expected


def test_a_claim_differing_in_class_is_neither_compatible_nor_ready():
    assert claims.compatible_and_ready(claim(capacity="1Gi", sc="a"), template(sc="b")) == (False, False)


@given(st.integers(1, 4096), st.integers(1, 4096))
def test_needs_expand_exactly_when_smaller(have, want):
    assert claims.needs_expand(claim(f"{have}Mi"), template(f"{want}Mi")) is (have < want)
    compatible, _ = claims.compatible_and_ready(claim(f"{have}Mi"), template(f"{want}Mi"))
    assert compatible is (have >= want)


def test_expansion_completes_when_ready_or_only_the_file_system_waits():
    pending = [{"type": "FileSystemResizePending", "status": "True"}]
    assert claims.expansion_completed(claim("2Gi", "2Gi"), template("2Gi"))
    assert not claims.expansion_completed(claim("2Gi", "1Gi"), template("2Gi"))
    assert claims.expansion_completed(claim("2Gi", "1Gi", conditions=pending), template("2Gi"))
    assert not claims.expansion_completed(claim("1Gi", "1Gi", conditions=pending), template("2Gi"))


def sts_with(*templates):
    return {"metadata": {"name": "web", "namespace": "ns"}, "spec": {"volumeClaimTemplates": list(templates)}}


def web_pod(ordinal):
    """The StatefulSet web's pod at `ordinal`, only its identity."""
    return pod(f"web-{ordinal}", namespace="ns")


def test_volume_claim_statuses_count_per_template_in_template_order():
    store = {
        "data-web-0": claim("2Gi", "2Gi"),  # compatible and ready
        "data-web-1": claim("2Gi", "1Gi"),  # compatible, volume still growing
        "data-web-2": claim("1Gi", "1Gi"),  # smaller than the template
        "logs-web-0": claim("1Gi", "1Gi"),
        "logs-web-1": claim("1Gi", "1Gi", deleting=True),  # being deleted: not counted
        # logs-web-2 missing: not counted
    }
    sts = sts_with(template("2Gi", name="data"), template("1Gi", name="logs"))
    assert claims.volume_claim_statuses(sts, [web_pod(0), web_pod(1), web_pod(2)], store.get) == [
        {"volumeClaimName": "data", "compatibleReplicas": 2, "compatibleReadyReplicas": 1},
        {"volumeClaimName": "logs", "compatibleReplicas": 1, "compatibleReadyReplicas": 1},
    ]


def test_no_templates_no_status():
    assert claims.volume_claim_statuses(sts_with(), [web_pod(0)], {}.get) == []


def test_pod_claims_pairs_each_existing_claim_with_its_template():
    store = {"data-web-3": claim()}
    pairs = claims.pod_claims(sts_with(template(name="data"), template(name="logs")), web_pod(3), store.get)
    assert [(c["metadata"]["name"], t["metadata"]["name"]) for c, t in pairs] == [("data", "data")]
