"""kruise-manager's pod cache keeps the union of what its running controllers declare, and no more."""

from datetime import UTC, datetime

import orjson
import pytest

from kruise.api.objects import conditions_of, container_statuses_of
from kruise.control.cloneset.diffs import is_pod_ready as cloneset_ready
from kruise.control.cloneset.podsort import _max_restarts
from kruise.control.common import podstatus
from kruise.control.pub.budget import is_pod_ready as pub_ready
from kruise.kube.projection import VIOLATIONS, DroppedFieldRead, Projection
from kruise.kube.resources import PODS
from kruise.kube.store import STORE_FIELDS, mutable_copy
from kruise.manager.cachefields import POD_SHARED, pod_projection, projections
from kruise.manager.context import ControllerSetup
from kruise.manager.controllers import discover

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "uid": "u", "resourceVersion": "7", "labels": {"a": "b"}},
    "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}], "schedulerName": "default"},
    "status": {"phase": "Running", "qosClass": "BestEffort"},
}


def setup(name: str, *fields: str) -> ControllerSetup:
    def build(ctx):  # never called: only the declaration matters here
        raise AssertionError("not built")

    return ControllerSetup(name, build, pod_fields=fields)


def test_every_controller_declares_valid_paths() -> None:
    for controller in discover():
        Projection(controller.pod_fields, guard=False)  # raises on a malformed path
        assert len(set(controller.pod_fields)) == len(controller.pod_fields), controller.name


def test_the_cache_keeps_the_union_of_running_controllers_and_what_the_informer_needs() -> None:
    projection = pod_projection([setup("a", "metadata.labels"), setup("b", "status.phase")])
    assert projection.owner == "kruise-manager pods"
    assert set(projection.keep) == {*STORE_FIELDS, "metadata.labels", "status.phase"}
    assert projections([])[PODS].keep == sorted(STORE_FIELDS)


def test_one_controller_cannot_read_what_only_another_declares() -> None:
    only_a = Projection(pod_projection([setup("a", "metadata.labels")]).keep, guard=True)
    cached = only_a.apply(POD)
    assert cached["metadata"]["labels"] == {"a": "b"}
    with pytest.raises(DroppedFieldRead, match=r"^.status: not kept"):
        cached["status"]
    with pytest.raises(DroppedFieldRead, match=r"spec\.containers: not kept"):
        cached["spec"].get("containers")
    assert VIOLATIONS == ["status", "spec.containers"]
    VIOLATIONS.clear()


def test_template_parts_are_shared_when_kept() -> None:
    projection = pod_projection([setup("a", "spec.containers", "spec.volumes")])
    assert projection.shared == ["metadata.ownerReferences", "spec.containers", "spec.volumes"]
    assert set(projection.shared) <= set(POD_SHARED)
    a, b = projection.apply(POD), projection.apply({**POD, "metadata": {**POD["metadata"], "name": "q"}})
    assert a["spec"]["containers"] is b["spec"]["containers"]


def test_a_controller_reading_a_field_it_did_not_declare_fails() -> None:
    """The guard at work on a real controller: podreadiness without `spec.readinessGates` declared."""
    from dataclasses import replace

    from kruise.manager.controllers.podreadiness import SETUP
    from kruise.manager.controllers.podreadiness.reconciler import needs_condition

    gated = {
        **POD,
        "spec": {**POD["spec"], "readinessGates": [{"conditionType": "KruisePodReady"}]},
        "status": {"conditions": []},
    }
    declared = Projection(pod_projection([SETUP]).keep, guard=True)
    assert needs_condition(declared.apply(gated)) is True
    narrowed = replace(SETUP, pod_fields=tuple(f for f in SETUP.pod_fields if f != "spec.readinessGates"))
    with pytest.raises(DroppedFieldRead, match=r"spec\.readinessGates"):
        needs_condition(Projection(pod_projection([narrowed]).keep, guard=True).apply(gated))
    VIOLATIONS.clear()


def running_pod(name: str, when: str) -> dict:
    """A running pod as a kubelet reports it: six conditions, one container status, as decoded."""
    conditions = [
        {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": when}
        for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
    ]
    status = {
        "phase": "Running",
        "qosClass": "BestEffort",
        "conditions": conditions,
        "containerStatuses": [
            {
                "name": "c",
                "image": "i",
                "imageID": "docker.io/library/i@sha256:01",
                "containerID": f"containerd://{name}",
                "ready": True,
                "restartCount": 0,
                "started": True,
                "lastState": {},
                "state": {"running": {"startedAt": when}},
                "user": {"linux": {"uid": 0, "gid": 0}},
            }
        ],
    }
    meta = {**POD["metadata"], "name": name, "uid": f"uid-{name}"}
    return orjson.loads(orjson.dumps({**POD, "metadata": meta, "status": status}))


def test_conditions_are_packed_and_every_reader_still_reads_them() -> None:
    """Six conditions are one tuple of their timestamps (and a layout shared by every pod whose
    conditions agree on the rest); readers get the list of records back, the guard still on."""
    projection = projections(discover())[PODS]
    projection.apply(running_pod("first", "t0"))  # a layout is made on its content's second sighting
    a, b = projection.apply(running_pod("a", "t1")), projection.apply(running_pod("b", "t2"))
    held_a, held_b = a["status"].conditions, b["status"].conditions
    assert held_a[0] is held_b[0] and isinstance(held_a, tuple)  # the shared layout, then per-pod values
    assert conditions_of(a) == running_pod("a", "t1")["status"]["conditions"]
    assert podstatus.is_ready(a) and pub_ready(a) and cloneset_ready(a, datetime.now(UTC))
    assert mutable_copy(a)["status"]["conditions"][2] == {
        "type": "Ready",
        "status": "True",
        "lastProbeTime": None,
        "lastTransitionTime": "t1",
    }
    VIOLATIONS.clear()
    with pytest.raises(DroppedFieldRead, match=r"status\.qosClass: not kept"):
        a["status"]["qosClass"]
    assert VIOLATIONS == ["status.qosClass"]
    VIOLATIONS.clear()


def test_container_statuses_are_packed_and_every_reader_still_reads_them() -> None:
    """A container's status is a layout shared by the replicas (name, image, imageID, state's kind,
    restarts) plus the pod's own container ID and start time; reads give the records back, whose
    dropped fields (`user`: no controller declares it) still raise."""
    projection = projections(discover())[PODS]
    raw = running_pod("a", "t1")
    projection.apply(running_pod("first", "t0"))  # a layout is made on its content's second sighting
    a, b = projection.apply(raw), projection.apply(running_pod("b", "t2"))
    held_a, held_b = a["status"].containerStatuses, b["status"].containerStatuses
    assert held_a[0] is held_b[0] and held_a != held_b
    status = container_statuses_of(a)[0]
    assert status["containerID"] == "containerd://a" and status["state"]["running"]["startedAt"] == "t1"
    assert {k: v for k, v in raw["status"]["containerStatuses"][0].items() if k != "user"} == status
    assert _max_restarts(a) == 0  # the sort of active pods reads restartCount
    assert mutable_copy(b)["status"]["containerStatuses"][0]["containerID"] == "containerd://b"
    VIOLATIONS.clear()
    with pytest.raises(DroppedFieldRead, match=r"status\.containerStatuses\.user: not kept"):
        status["user"]
    assert VIOLATIONS == ["status.containerStatuses.user"]
    VIOLATIONS.clear()
