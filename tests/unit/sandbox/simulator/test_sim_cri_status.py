"""A real node's status.images and containerRuntimeVersion shaped as the kubelet shapes them."""

from __future__ import annotations

import pytest

from kruise.sandbox.simulator.cri_status import MAX_IMAGES, kubelet_version, status_images


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("1.6.20~ds1", "1.6.20"),  # Debian's containerd: not semantic, the leading numbers
        ("v1.7.13", "1.7.13"),
        ("1.7.0-rc.1+build.5", "1.7.0-rc.1+build.5"),  # semantic: kept whole
        ("2.0", "2.0"),
    ],
)
def test_runtime_version_as_the_kubelet_parses_it(raw, shown):
    assert kubelet_version(raw) == shown


def test_images_biggest_first_capped_at_50_with_5_names_each():
    many = [([f"sha-{i}", f"img-{i}:latest"], 1000 + i) for i in range(60)]
    many.append(([f"n{i}" for i in range(7)], 10**9))
    shown = status_images(many)
    assert len(shown) == MAX_IMAGES == 50
    assert shown[0] == {"names": ["n0", "n1", "n2", "n3", "n4"], "sizeBytes": 10**9}
    assert [i["sizeBytes"] for i in shown[1:3]] == [1059, 1058]
    assert shown[-1]["sizeBytes"] == 1059 - 48  # the 11 smallest are left out
