"""`kruise sandbox up --via-helm`: the release component's pure parts and its failure report."""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from kruise.cli.helm_release import (
    HelmRelease,
    daemonset_available,
    deployment_available,
    kruise_process_images,
)


def deployment(wanted: int, generation: int = 2, **status: int) -> dict:
    return {"metadata": {"generation": generation}, "spec": {"replicas": wanted}, "status": status}


@pytest.mark.parametrize(
    ("obj", "available"),
    [
        (deployment(2, observedGeneration=2, replicas=2, updatedReplicas=2, availableReplicas=2), True),
        (deployment(2, observedGeneration=1, replicas=2, updatedReplicas=2, availableReplicas=2), False),
        (deployment(2, observedGeneration=2, replicas=2, updatedReplicas=2, availableReplicas=1), False),
        (deployment(2, observedGeneration=2, replicas=2, updatedReplicas=1, availableReplicas=2), False),
        (deployment(2, observedGeneration=2, replicas=3, updatedReplicas=2, availableReplicas=2), False),
        (deployment(0, observedGeneration=2), True),
    ],
)
def test_deployment_available_as_rollout_status_sees_it(obj: dict, available: bool):
    assert deployment_available(obj) is available


def test_kruise_image_runs_the_three_entry_points():
    [image] = kruise_process_images()
    assert image.matches("kruise-py:0.1.0") and image.matches("registry.example/x/kruise-py:v1")
    assert not image.matches("nginx:alpine")
    assert set(image.entrypoints) == {"kruise-manager", "kruise-webhook", "kruise-daemon"}
    assert image.default == "kruise-manager"


@pytest.mark.parametrize(
    ("gates", "values"),
    # none given: the values file leaves featureGates to the chart's default
    [("A=true,B=false", {"featureGates": "A=true,B=false"}), ("", {})],
)
async def test_feature_gates_reach_the_chart_and_helm_failures_are_reported(tmp_path: Path, gates, values):
    fake = tmp_path / "helm"
    seen = tmp_path / "seen.yaml"
    fake.write_text(
        "#!/bin/sh\n"
        'while [ "$#" -gt 0 ]; do [ "$1" = "-f" ] && cp "$2" ' + str(seen) + "; shift; done\n"
        'echo "Error: INSTALLATION FAILED: boom" >&2\nexit 1\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    release = HelmRelease(feature_gates=gates, helm=str(fake), timeout=10)
    with pytest.raises(RuntimeError, match=r"helm install kruise .*kruise: Error: INSTALLATION FAILED: boom"):
        await release.start(SimpleNamespace(kubeconfig=tmp_path / "kubeconfig"))  # type: ignore[arg-type]
    await release.stop()
    assert yaml.safe_load(seen.read_text()) == values


def test_the_2_0_api_set_reaches_the_chart_and_skips_its_1_9_crds(tmp_path: Path):
    release = HelmRelease(api_set="2.0")
    assert "--skip-crds" in release.install_args(tmp_path / "values.yaml")
    assert "--skip-crds" not in HelmRelease().install_args(tmp_path / "values.yaml")


async def test_the_api_set_value_is_written_only_when_not_the_default(tmp_path: Path):
    fake = tmp_path / "helm"
    seen = tmp_path / "seen.yaml"
    fake.write_text(
        "#!/bin/sh\n"
        'while [ "$#" -gt 0 ]; do [ "$1" = "-f" ] && cp "$2" ' + str(seen) + "; shift; done\n"
        "exit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    release = HelmRelease(api_set="2.0", helm=str(fake), timeout=10)
    with pytest.raises(RuntimeError):
        await release.start(SimpleNamespace(kubeconfig=tmp_path / "kubeconfig"))  # type: ignore[arg-type]
    await release.stop()
    assert yaml.safe_load(seen.read_text()) == {"apiSet": "2.0"}


def ds_status(generation: int, desired: int, updated: int, available: int) -> dict:
    return {
        "observedGeneration": generation,
        "desiredNumberScheduled": desired,
        "updatedNumberScheduled": updated,
        "numberAvailable": available,
    }


@pytest.mark.parametrize(
    ("status", "available"),
    [
        (ds_status(1, 2, 2, 2), True),
        (ds_status(1, 2, 1, 2), False),
        (ds_status(1, 2, 2, 1), False),
        (ds_status(0, 0, 0, 0), False),
    ],
)
def test_daemonset_available_on_every_desired_node(status: dict, available: bool):
    assert daemonset_available({"metadata": {"generation": 1}, "status": status}) is available
