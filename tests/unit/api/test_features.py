"""Feature gate parsing and upstream's knock-on rules."""

from __future__ import annotations

import pytest

from kruise.api import features as f


def test_defaults_match_upstream() -> None:
    gates = f.FeatureGates(env={})
    assert gates.enabled(f.POD_WEBHOOK)
    assert gates.enabled(f.POD_UNAVAILABLE_BUDGET_DELETE_GATE)
    assert not gates.enabled(f.POD_UNAVAILABLE_BUDGET_UPDATE_GATE)
    assert not gates.enabled(f.IMAGE_PULL_JOB_GATE)
    assert gates.enabled(f.IN_PLACE_UPDATE_ENV_FROM_METADATA)
    assert not gates.enabled(f.RESOURCES_DELETION_PROTECTION)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("", {}),
        ("ImagePullJobGate=true", {"ImagePullJobGate": True}),
        (" CloneSetShortHash=false , PodWebhook=1", {"CloneSetShortHash": False, "PodWebhook": True}),
        ("AllAlpha=true", {"AllAlpha": True}),
    ],
)
def test_parse(spec: str, expected: dict[str, bool]) -> None:
    assert f.parse(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("Nope=true", "unrecognized feature gate: Nope"),
        ("PodWebhook", "missing bool value for PodWebhook"),
        ("PodWebhook=yes", "invalid value of PodWebhook=yes"),
    ],
)
def test_parse_errors_name_the_gate(spec: str, message: str) -> None:
    with pytest.raises(f.FeatureGateError, match=message):
        f.parse(spec)


def test_pod_webhook_off_forces_dependents_off() -> None:
    gates = f.FeatureGates.from_flag("PodWebhook=false,PodUnavailableBudgetUpdateGate=true", env={})
    assert not gates.enabled(f.POD_UNAVAILABLE_BUDGET_DELETE_GATE)
    assert not gates.enabled(f.POD_UNAVAILABLE_BUDGET_UPDATE_GATE)
    assert not gates.enabled(f.WORKLOAD_SPREAD)


def test_daemon_off_forces_daemon_gates_off_even_when_asked() -> None:
    gates = f.FeatureGates.from_flag("KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true", env={})
    assert not gates.enabled(f.PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE)
    assert not gates.enabled(f.IMAGE_PULL_JOB_GATE)
    assert not gates.enabled(f.IN_PLACE_UPDATE_ENV_FROM_METADATA)


def test_pre_download_turns_on_image_pull_jobs() -> None:
    gates = f.FeatureGates.from_flag("PreDownloadImageForInPlaceUpdate=true", env={})
    assert gates.enabled(f.IMAGE_PULL_JOB_GATE)


def test_cascading_crd_protection_needs_resource_protection() -> None:
    off = f.FeatureGates.from_flag("DeletionProtectionForCRDCascadingGate=true", env={})
    assert not off.enabled(f.DELETION_PROTECTION_FOR_CRD_CASCADING_GATE)
    on = f.FeatureGates.from_flag(
        "ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true", env={}
    )
    assert on.enabled(f.DELETION_PROTECTION_FOR_CRD_CASCADING_GATE)


def test_all_alpha_then_explicit_wins() -> None:
    gates = f.FeatureGates.from_flag("AllAlpha=true,CloneSetShortHash=false", env={})
    assert gates.enabled(f.CLONESET_PARTITION_ROLLBACK)
    assert not gates.enabled(f.CLONESET_SHORT_HASH)
    assert gates.enabled(f.WORKLOAD_SPREAD)  # beta: untouched by AllAlpha


def test_legacy_custom_resource_env_without_sidecarset_disables_pod_webhook() -> None:
    assert not f.FeatureGates(env={"CUSTOM_RESOURCE_ENABLE": "CloneSet,BroadcastJob"}).enabled(f.POD_WEBHOOK)
    assert f.FeatureGates(env={"CUSTOM_RESOURCE_ENABLE": "CloneSet,SidecarSet"}).enabled(f.POD_WEBHOOK)


def test_unknown_gate_lookup_is_an_error() -> None:
    with pytest.raises(KeyError):
        f.FeatureGates(env={}).enabled("Typo")
