"""InPlaceWriter's resize write follows the server version (upstream ShouldUpdateResourceByResize):
on 1.32+ the new cpu/memory go through `pods/resize` first and the object write carries the resized
pod; below 1.32 (or an unknown version) they ride the pod object write and `pods/resize` is never asked."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from structlog.testing import capture_logs

from kruise.api.features import FeatureGates
from kruise.control.common.inplace.spec import UpdateSpec
from kruise.kube.client import PatchType, ServerVersion
from kruise.kube.errors import Conflict, TransportError
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import PODS
from kruise.manager.app import read_server_version
from kruise.manager.context import ManagerContext
from kruise.manager.writers.inplace import InPlaceWriter
from tests.kit.client import RecordingClient
from tests.kit.pods import pod

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
REVISION = "controller-revision-hash"
BURSTABLE = {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "128Mi"}}
BIGGER_CPU = {"limits": {"cpu": "400m"}}


def write_revision(target: dict[str, Any], revision: str) -> None:
    target["metadata"].setdefault("labels", {})[REVISION] = revision


def resources_only() -> UpdateSpec:
    return UpdateSpec(revision="rev-2", container_resources={"main": copy.deepcopy(BIGGER_CPU)})


def expected_resources() -> dict[str, Any]:
    return {"requests": BURSTABLE["requests"], "limits": {"cpu": "400m", "memory": "128Mi"}}


def writer(client: RecordingClient, *, resize_subresource: bool) -> InPlaceWriter:
    return InPlaceWriter(
        client, ResourceVersionExpectations(), vertical_scaling=True, resize_subresource=resize_subresource
    )


@pytest.fixture
def client() -> RecordingClient:
    c = RecordingClient()
    c.put(
        PODS,
        pod(
            labels={REVISION: "rev-1"},
            readinessGates=[{"conditionType": "InPlaceUpdateReady"}],
            containers=[{"name": "main", "image": "nginx:1", "resources": BURSTABLE}],
            conditions=[{"type": "InPlaceUpdateReady", "status": "True"}],
        ),
    )
    return c


async def test_from_1_32_the_resize_subresource_goes_first_then_the_object_write(client):
    stored = client.object(PODS, "p", "default")
    await writer(client, resize_subresource=True).start(
        stored, resources_only(), NOW, write_revision=write_revision
    )

    resize, update = client.writes
    assert (resize.verb, resize.subresource, resize.patch_type) == ("patch", "resize", PatchType.STRATEGIC)
    assert resize.body == {"spec": {"containers": [{"name": "main", "resources": BIGGER_CPU}]}}
    assert (update.verb, update.subresource) == ("update", None)
    # the object write builds on the resized pod: its resources and its resourceVersion
    assert update.body["spec"]["containers"][0]["resources"] == expected_resources()
    resized_version = int(stored["metadata"]["resourceVersion"]) + 1
    assert update.body["metadata"]["resourceVersion"] == str(resized_version)
    assert update.body["metadata"]["labels"][REVISION] == "rev-2"
    final = client.object(PODS, "p", "default")
    assert final["spec"]["containers"][0]["resources"] == expected_resources()


async def test_below_1_32_the_resources_ride_the_object_write_alone(client):
    stored = client.object(PODS, "p", "default")
    await writer(client, resize_subresource=False).start(
        stored, resources_only(), NOW, write_revision=write_revision
    )

    (update,) = client.writes
    assert (update.verb, update.subresource) == ("update", None)
    assert update.body["spec"]["containers"][0]["resources"] == expected_resources()
    assert update.body["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert update.body["metadata"]["labels"][REVISION] == "rev-2"
    assert client.calls_to(subresource="resize") == []
    final = client.object(PODS, "p", "default")
    assert final["spec"]["containers"][0]["resources"] == expected_resources()


async def test_below_1_32_images_and_resources_are_one_object_write_after_the_status_patch(client):
    spec = UpdateSpec(
        revision="rev-2",
        container_images={"main": "nginx:2"},
        container_resources={"main": copy.deepcopy(BIGGER_CPU)},
    )
    await writer(client, resize_subresource=False).start(
        client.object(PODS, "p", "default"), spec, NOW, write_revision=write_revision
    )

    status, update = client.writes
    assert (status.verb, status.subresource) == ("patch", "status")  # the image restarts: unready first
    assert (update.verb, update.subresource) == ("update", None)
    container = update.body["spec"]["containers"][0]
    assert container["image"] == "nginx:2" and container["resources"] == expected_resources()
    assert client.calls_to(subresource="resize") == []


async def test_below_1_32_a_conflict_rereads_and_still_never_resizes(client):
    client.fail_next("update", PODS, "p", "default", error=Conflict)
    await writer(client, resize_subresource=False).start(
        client.object(PODS, "p", "default"), resources_only(), NOW, write_revision=write_revision
    )

    assert [(c.verb, c.subresource, c.succeeded) for c in client.calls] == [
        ("update", None, False),
        ("get", None, True),
        ("update", None, True),
    ]
    final = client.object(PODS, "p", "default")
    assert final["spec"]["containers"][0]["resources"] == expected_resources()


def test_without_the_gate_there_is_no_resize_whatever_the_version(client):
    gated_off = InPlaceWriter(client, ResourceVersionExpectations(), resize_subresource=True)
    assert gated_off.modes == {"vertical_scaling": False, "resize_subresource": False}


@pytest.mark.parametrize(
    ("version", "through_resize"),
    [
        (None, False),  # not read (or the read failed): upstream's parse-failure answer
        (ServerVersion("v1.31.4", "1", "31"), False),
        (ServerVersion("v1.32+gke.1", "1", "32+"), True),
        (ServerVersion("v1.36.0", "1", "36"), True),
        (ServerVersion("", "1", "32"), False),
    ],
)
def test_the_context_decides_from_the_server_version(
    client, version: ServerVersion | None, through_resize: bool
) -> None:
    ctx = ManagerContext(
        client=client,  # type: ignore[arg-type]
        informers=SharedInformerFactory(client),  # type: ignore[arg-type]
        feature_gates=FeatureGates(env={}),
        server_version=version,
    )
    assert ctx.resize_subresource is through_resize


class VersionClient:
    """Only the call `read_server_version` makes."""

    def __init__(self, answer: ServerVersion | Exception) -> None:
        self.answer = answer

    async def server_version(self) -> ServerVersion:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def test_a_failed_version_read_is_logged_and_counts_as_unknown() -> None:
    with capture_logs() as logs:
        version = await read_server_version(VersionClient(TransportError("GET /version: refused")))  # type: ignore[arg-type]
    assert version is None
    (warning,) = [e for e in logs if e["log_level"] == "warning"]
    assert "pods/resize" in warning["event"] and "refused" in warning["error"]


async def test_a_read_version_is_returned_as_served() -> None:
    served = ServerVersion("v1.31.4-gke.1200", "1", "31+")
    assert await read_server_version(VersionClient(served)) == served  # type: ignore[arg-type]
