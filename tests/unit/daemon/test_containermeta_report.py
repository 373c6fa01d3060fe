"""The containermeta reporter's decisions: which pod events matter, the report's JSON and which
containers restart (upstream pkg/daemon/containermeta)."""

from __future__ import annotations

import copy
import json
from typing import Any

from kruise.control.common.inplace import envhash
from kruise.daemon.containermeta import controller
from kruise.daemon.containermeta.report import (
    RuntimeContainer,
    dump_meta_set,
    is_watched,
    needs_report,
    new_meta,
    parse_meta_set,
    reusable_meta,
    set_env_hash,
    stale_env,
)
from tests.kit.pods import pod

KEY = "apps.kruise.io/runtime-containers-meta"
ENV = [{"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['test-env']"}}}]


def cloned_pod(value: str = "foo", *, updating: bool = False, report: list | None = None) -> dict[str, Any]:
    """A CloneSet pod whose main container reads env from annotation test-env=`value`; `report`: the
    containers meta the daemon last reported; `updating`: an in-place update is under way."""
    annotations = {"test-env": value}
    if report is not None:
        annotations[KEY] = json.dumps({"containers": report})
    return pod(
        annotations=annotations,
        owner={"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "c", "controller": True},
        containers=[{"name": "main", "image": "nginx", "env": ENV}],
        conditions=[{"type": "InPlaceUpdateReady", "status": "False" if updating else "True"}],
        status={
            "containerStatuses": [{"name": "main", "containerID": "containerd://abc", "restartCount": 0}]
        },
    )


def meta(container_id: str = "containerd://abc", env_hash: int = 27323935) -> dict[str, Any]:
    return {
        "name": "main",
        "containerID": container_id,
        "restartCount": 0,
        "hashes": {"plainHash": 0, "extractedEnvFromMetadataHash": env_hash},
    }


def test_only_kruise_workload_or_sidecarset_pods_are_watched() -> None:
    assert is_watched(cloned_pod())
    foreign = cloned_pod()
    foreign["metadata"]["ownerReferences"][0]["apiVersion"] = "apps/v1"
    assert not is_watched(foreign)
    foreign["metadata"]["annotations"]["kruise.io/sidecarset-hash"] = "{}"
    assert is_watched(foreign)


def test_missing_or_outdated_report_needs_a_report() -> None:
    assert needs_report(None, cloned_pod(), True)
    assert needs_report(None, cloned_pod(report=[meta("containerd://old")]), True)
    assert not needs_report(None, cloned_pod(report=[meta()]), True)


def test_metadata_change_wakes_the_pod_only_with_the_gate() -> None:
    old, new = cloned_pod(report=[meta()]), cloned_pod("bar", report=[meta()])
    assert needs_report(old, new, True)
    assert not needs_report(old, new, False)


def test_container_without_id_yet_is_not_reported() -> None:
    fresh = cloned_pod()
    fresh["status"]["containerStatuses"][0]["containerID"] = ""
    assert not needs_report(None, fresh, True)


def test_stale_hash_restarts_only_during_an_in_place_update() -> None:
    container = cloned_pod()["spec"]["containers"][0]
    assert not stale_env(cloned_pod("bar"), container, meta())  # someone edited a running pod
    assert stale_env(cloned_pod("bar", updating=True), container, meta())
    assert not stale_env(cloned_pod("foo", updating=True), container, meta())
    unknown = meta()
    set_env_hash(unknown, 0)  # env not read yet: never restarted blindly
    assert not stale_env(cloned_pod("bar", updating=True), container, unknown)


def test_report_json_is_gos() -> None:
    entry = new_meta(RuntimeContainer("main", "containerd://abc", 2, 0, True))
    assert dump_meta_set([entry]) == (
        '{"containers":[{"name":"main","containerID":"containerd://abc","restartCount":2,'
        '"hashes":{"plainHash":0}}]}'
    )
    set_env_hash(entry, 27323935)
    assert json.loads(dump_meta_set([entry]))["containers"][0]["hashes"] == {
        "plainHash": 0,
        "extractedEnvFromMetadataHash": 27323935,
    }
    assert dump_meta_set([]) == '{"containers":[]}'


def test_a_container_keeps_the_hash_read_at_its_start() -> None:
    earlier = [meta()]
    reused = reusable_meta(earlier, "containerd://abc")
    assert reused == meta() and reused is not earlier[0]
    assert reusable_meta(earlier, "containerd://new") is None


def test_malformed_report_is_replaced() -> None:
    broken = cloned_pod()
    broken["metadata"]["annotations"][KEY] = "not json"
    assert parse_meta_set(broken) is None
    assert needs_report(None, broken, True)


def test_env_output_parsing_and_hash() -> None:
    values = controller.parse_env(b"PATH=/bin\nTEST_ENV=foo\nEQ=a=b\n")
    assert values == {"PATH": "/bin", "TEST_ENV": "foo", "EQ": "a=b"}
    container = copy.deepcopy(cloned_pod()["spec"]["containers"][0])
    assert envhash.current_hash(container, lambda n: values.get(n, "")) == 27323935
