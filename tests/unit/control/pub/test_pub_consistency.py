"""PUB's pod consistency check (upstream `IsPodStateConsistent`): digest images, sidecars a SidecarSet
updated in place, and the workload's own in-place update."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.pub import budget

OLD_ID = "docker.io/library/sidecar@sha256:" + "a" * 64
NEW_ID = "docker.io/library/sidecar@sha256:" + "b" * 64
STAMP = "2026-01-01T12:00:00Z"


def sidecar_state(statuses: dict[str, str], **extra) -> dict:
    return {
        "revision": "r2",
        "updateTimestamp": STAMP,
        "lastContainerStatuses": {name: {"imageID": image_id} for name, image_id in statuses.items()},
        **extra,
    }


def a_pod(containers, statuses, annotations=None):
    """containers: (name, image, injected); statuses: (name, image, imageID)."""
    return {
        "metadata": {"name": "a", "namespace": "ns", "annotations": dict(annotations or {})},
        "spec": {
            "containers": [
                {
                    "name": name,
                    "image": image,
                    **({"env": [{"name": "IS_INJECTED", "value": "true"}]} if inj else {}),
                }
                for name, image, inj in containers
            ]
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": name, "image": image, "imageID": image_id, "ready": True}
                for name, image, image_id in statuses
            ],
        },
    }


def sidecar_pod(*, restarted: bool, listed: str = "ss", recorded_by: str = "ss", injected: bool = True):
    """App `main` plus sidecar `sidecar` that SidecarSet `recorded_by` moved from v1 to v2 in place."""
    status = ("sidecar", "sidecar:v2", NEW_ID) if restarted else ("sidecar", "sidecar:v1", OLD_ID)
    annotations = {
        "kruise.io/sidecarset-injected-list": listed,
        "kruise.io/sidecarset-inplace-update-state": json.dumps(
            {recorded_by: sidecar_state({"sidecar": OLD_ID})}
        ),
    }
    return a_pod(
        [("main", "app:v1", False), ("sidecar", "sidecar:v2", injected)],
        [("main", "app:v1", "docker.io/library/app@sha256:" + "c" * 64), status],
        annotations,
    )


def test_sidecar_updated_in_place_but_not_restarted_is_inconsistent():
    assert not budget.is_pod_state_consistent(sidecar_pod(restarted=False))
    assert budget.is_pod_state_consistent(sidecar_pod(restarted=True))


@pytest.mark.parametrize(
    ("listed", "recorded_by", "injected", "consistent"),
    [
        ("a,ss", "ss", True, False),  # any listed SidecarSet's record counts
        ("ss", "other", True, True),  # a record of a SidecarSet the pod does not list is ignored
        ("", "ss", True, True),  # no injected list: sidecars are not checked
        ("ss", "ss", False, True),  # a container without IS_INJECTED=true is not a sidecar here
    ],
)
def test_which_sidecars_and_records_are_checked(listed, recorded_by, injected, consistent):
    pod = sidecar_pod(restarted=False, listed=listed, recorded_by=recorded_by, injected=injected)
    assert budget.is_pod_state_consistent(pod) is consistent


def test_retag_to_the_same_image_id_counts_as_restarted():
    pod = sidecar_pod(restarted=False)
    pod["status"]["containerStatuses"][1]["image"] = "sidecar:v2"
    assert budget.is_pod_state_consistent(pod)


@pytest.mark.parametrize(
    ("raw", "consistent"),
    [
        ("null", True),  # Go decodes null into an empty map: nothing recorded
        ("{}", True),
        ("not json", False),
        ('["ss"]', False),
        ('{"ss": null}', False),  # upstream dereferences a nil state: never "completed"
        ('{"ss": {"revision": 5}}', False),  # any type error fails Go's decode
        ('{"ss": {"updateTimestamp": "yesterday"}}', False),
        ('{"ss": {"updateTimestamp": ""}}', False),  # metav1.Time: only null or RFC 3339
        ('{"ss": {"updateTimestamp": "2026-01-01"}}', False),
        ('{"ss": {"updateTimestamp": null, "revision": null}}', True),
        ('{"ss": {"updateImages": "true"}}', False),
        ('{"ss": {"containerBatchesRecord": [{"containers": [1]}]}}', False),
        ('{"ss": {"lastContainerStatuses": {"sidecar": {"imageID": 7}}}}', False),
        ('{"ss": {"LastContainerStatuses": {"sidecar": {"ImageID": "OLD"}}}}', False),
        (
            '{"ss": {"lastContainerStatuses": {"sidecar": {"imageID": "OLD", "imageID": null}}}}',
            False,
        ),
        (
            '{"ss": {"lastContainerStatuses": {"sidecar": {"imageID": "OLD"}},'
            ' "lastContainerStatuses": null}}',  # a later null empties the map
            True,
        ),
        ('{"ss": {"lastContainerStatuses": {"sidecar": {"imageID": "other"}}}}', True),
    ],
)
def test_sidecar_state_is_decoded_as_go_decodes_it(raw, consistent):
    pod = sidecar_pod(restarted=False)
    pod["metadata"]["annotations"]["kruise.io/sidecarset-inplace-update-state"] = raw.replace("OLD", OLD_ID)
    assert budget.is_pod_state_consistent(pod) is consistent


def test_undecodable_workload_inplace_state_is_inconsistent_not_an_error():
    pod = a_pod(
        [("main", "app:v1", False)], [("main", "app:v1", "x")], {"apps.kruise.io/inplace-update-state": "{"}
    )
    assert not budget.is_pod_state_consistent(pod)


def digest(repo: str, hex_char: str) -> str:
    return f"{repo}@sha256:{hex_char * 64}"


def test_all_digest_images_decide_alone():
    """Every container pinned by digest and running it: consistent even though the workload's in-place
    record says the kubelet has not restarted it (same imageID, status image not the spec one);
    upstream looks no further."""
    image = digest("docker.io/library/app", "d")
    pending = json.dumps(
        {"revision": "r2", "updateTimestamp": STAMP, "lastContainerStatuses": {"main": {"imageID": image}}}
    )
    pod = a_pod(
        [("main", image, False)],
        [("main", "app:v2", image)],
        {"apps.kruise.io/inplace-update-state": pending},
    )
    assert budget.is_pod_state_consistent(pod)
    pod["spec"]["containers"][0]["image"] = "docker.io/library/app:v3"  # a tag image: the record decides
    assert not budget.is_pod_state_consistent(pod)


def test_a_digest_container_not_running_its_digest_is_inconsistent_even_beside_tag_images():
    pod = a_pod(
        [("main", "app:v1", False), ("pinned", digest("docker.io/library/x", "e"), False)],
        [("main", "app:v1", "id"), ("pinned", "x", digest("docker.io/library/x", "f"))],
    )
    assert not budget.is_pod_state_consistent(pod)


def test_a_digest_container_without_status_is_inconsistent():
    pod = a_pod([("pinned", digest("docker.io/library/x", "e"), False)], [])
    assert not budget.is_pod_state_consistent(pod)


REPOS = st.sampled_from(["busybox", "docker.io/library/busybox", "registry.local:5000/team/app"])
HEX = st.sampled_from("0123456789abcdef")
SCHEMES = st.sampled_from(["", "docker-pullable://", "containerd://"])


@given(
    st.lists(
        st.tuples(REPOS, HEX, st.one_of(st.none(), st.tuples(REPOS, HEX)), SCHEMES),
        min_size=1,
        max_size=4,
    )
)
def test_digest_only_pods_are_consistent_exactly_when_each_runs_its_digest(rows):
    """Each row: spec repo+digest, what the kubelet reports (None: no status), scheme on the imageID.
    Repos compare as written (`busybox` and `docker.io/library/busybox` differ), as upstream."""
    containers, statuses, expected = [], [], True
    for i, (repo, hex_char, running, scheme) in enumerate(rows):
        containers.append((f"c{i}", digest(repo, hex_char), False))
        if running is None:
            expected = False
            continue
        statuses.append((f"c{i}", "ignored:tag", scheme + digest(*running)))
        expected = expected and running == (repo, hex_char)
    assert budget.is_pod_state_consistent(a_pod(containers, statuses)) is expected


@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=4),
    st.lists(st.booleans(), min_size=21, max_size=21),
)
def test_sidecars_are_consistent_exactly_when_none_is_still_on_its_recorded_image_id(rows, upper):
    """Each row: the sidecar has a record, the kubelet still reports the recorded imageID, the status
    image equals the spec image. Field names in any letter case decode the same (Go's json)."""
    field = "".join(ch.upper() if up else ch for ch, up in zip("lastContainerStatuses", upper, strict=True))
    containers, statuses, records, expected = [], [], {}, True
    for i, (recorded, same_id, same_image) in enumerate(rows):
        name = f"s{i}"
        containers.append((name, "sidecar:v2", True))
        statuses.append((name, "sidecar:v2" if same_image else "sidecar:v1", OLD_ID if same_id else NEW_ID))
        if recorded:
            records[name] = {"imageID": OLD_ID}
        if recorded and same_id and not same_image:
            expected = False
    state = {"ss": {"revision": "r", "updateTimestamp": STAMP, field: records}}
    annotations = {
        "kruise.io/sidecarset-injected-list": "ss",
        "kruise.io/sidecarset-inplace-update-state": json.dumps(state),
    }
    assert budget.is_pod_state_consistent(a_pod(containers, statuses, annotations)) is expected
