"""features_for: the emulator's version-dependent behaviour (in-place pod resize) by reported gitVersion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.features import NEWEST, ApiFeatures, features_for, server_minor

LEGACY = ApiFeatures(resize_subresource=False, resources_in_pod_update=True)
NONE = ApiFeatures(resize_subresource=False, resources_in_pod_update=False)
V133 = ApiFeatures(resize_subresource=True, resources_in_pod_update=False, memory_decrease_needs_restart=True)


@pytest.mark.parametrize(
    ("git_version", "expected"),
    [
        ("v1.36.0", NEWEST),
        ("v1.32.0", NEWEST),
        ("v1.32+gke.1", NEWEST),
        ("v1.33.2", V133),
        ("v1.34.0", NEWEST),
        ("v2.0.0", NEWEST),
        ("v1.31.4", LEGACY),
        ("v1.31.4-gke.1200", LEGACY),
        ("v1.27.0", LEGACY),
        ("v1.26.15", NONE),
        ("v0.9.0", NONE),
        ("", NEWEST),
        ("unknown", NEWEST),
    ],
)
def test_features_by_version(git_version: str, expected: ApiFeatures) -> None:
    assert features_for(git_version) == expected


@given(st.integers(0, 3), st.integers(0, 60), st.integers(0, 30), st.sampled_from(["", "-gke.1", "+k3s1"]))
def test_only_1_27_to_1_31_resize_through_the_update(major: int, minor: int, patch: int, suffix: str) -> None:
    version = f"v{major}.{minor}.{patch}{suffix}"
    assert server_minor(version) == (major, minor)
    features = features_for(version)
    assert features.resize_subresource is ((major, minor) >= (1, 32))
    assert features.resources_in_pod_update is ((1, 27) <= (major, minor) < (1, 32))
    assert not (features.resize_subresource and features.resources_in_pod_update)
