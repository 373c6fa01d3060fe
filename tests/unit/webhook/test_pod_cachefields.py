"""kruise-webhook's pod cache: per-pod lists packed, read back whole by its handlers, the guard on."""

from __future__ import annotations

import orjson
import pytest

from kruise.api.objects import conditions_of, container_statuses_of, find_named
from kruise.control.pub.budget import is_pod_ready
from kruise.kube.projection import VIOLATIONS, DroppedFieldRead
from kruise.kube.resources import PODS
from kruise.kube.store import mutable_copy
from kruise.webhook.cachefields import projections


def running_pod(name: str, when: str) -> dict:
    """A running pod as a kubelet reports it, as decoded off the wire."""
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": when}
        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    status = {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "conditions": conditions,
        "containerStatuses": [
            {
                "name": "c",
                "image": "i",
                "containerID": f"containerd://{name}",
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": when}},
            }
        ],
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]},
        "status": status,
    }
    return orjson.loads(orjson.dumps(pod))


def test_conditions_are_packed_and_read_back_whole() -> None:
    projection = projections()[PODS]
    projection.apply(running_pod("first", "t0"))  # a layout is made on its content's second sighting
    a, b = projection.apply(running_pod("a", "t1")), projection.apply(running_pod("b", "t2"))
    assert a["status"].conditions[0] is b["status"].conditions[0]  # one layout, per-pod timestamps
    assert conditions_of(a) == running_pod("a", "t1")["status"]["conditions"]
    assert is_pod_ready(a) and is_pod_ready(b)
    assert mutable_copy(b)["status"]["conditions"][1]["lastTransitionTime"] == "t2"
    VIOLATIONS.clear()
    with pytest.raises(DroppedFieldRead, match=r"status\.podIP: not kept"):
        a["status"].get("podIP")
    assert VIOLATIONS == ["status.podIP"]
    VIOLATIONS.clear()


def test_container_statuses_are_packed_and_read_back_whole() -> None:
    projection = projections()[PODS]
    raw = running_pod("a", "t1")
    projection.apply(running_pod("first", "t0"))  # a layout is made on its content's second sighting
    a, b = projection.apply(raw), projection.apply(running_pod("b", "t2"))
    assert a["status"].containerStatuses[0] is b["status"].containerStatuses[0]
    assert container_statuses_of(a) == raw["status"]["containerStatuses"]
    assert find_named(container_statuses_of(b), "c")["containerID"] == "containerd://b"
    assert mutable_copy(a)["status"]["containerStatuses"] == raw["status"]["containerStatuses"]
    VIOLATIONS.clear()
    with pytest.raises(DroppedFieldRead, match=r"status\.hostIP: not kept"):
        a["status"]["hostIP"]
    assert VIOLATIONS == ["status.hostIP"]
    VIOLATIONS.clear()


def test_a_condition_with_a_probe_time_reads_back_as_given() -> None:
    """`lastProbeTime` is in the shared layout (kubelets leave it null): a pod that has one gets a
    layout of its own and still reads back exactly."""
    projection = projections()[PODS]
    raw = running_pod("a", "t1")
    raw["status"]["conditions"][1]["lastProbeTime"] = "p1"
    probed, plain = projection.apply(raw), projection.apply(running_pod("b", "t2"))
    assert conditions_of(probed) == raw["status"]["conditions"]
    assert probed["status"].conditions[0] is not plain["status"].conditions[0]
    assert conditions_of(plain)[1]["lastProbeTime"] is None
