"""Cache projections: kept paths only, frozen, interned, shared; guarded reads of dropped paths fail."""

import copy
import datetime
import sys

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.kube import projection as projection_module
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.projection import (
    VIOLATIONS,
    DroppedFieldRead,
    FrozenDict,
    FrozenList,
    Projection,
    Record,
    _Packed,
    is_projected,
    parse_paths,
)
from kruise.kube.resources import PODS
from kruise.kube.store import mutable_copy
from tests.kit import until
from tests.kit.pods import pod

KEEP = [
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.resourceVersion",
    "metadata.uid",
    "metadata.labels",
    "metadata.ownerReferences",
    "spec.nodeName",
    "spec.containers.name",
    "spec.containers.image",
    "status.conditions.type",
    "status.conditions.status",
]
SHARED = ["metadata.ownerReferences", "spec.containers"]


def decoded_pod(name: str, node: str = "n1", image: str = "nginx:1.27") -> dict:
    """A CloneSet's web pod as decoded off the wire (through JSON, so no string is shared with another
    pod's before the projection interns it)."""
    built = pod(
        name,
        uid=f"uid-{name}",
        rv="1",
        labels={"app": "web"},
        owner={"kind": "CloneSet", "name": "web", "uid": "cs-uid", "controller": True},
        meta={"managedFields": [{"manager": "x"}]},
        node=node,
        containers=[{"name": "main", "image": image, "env": [{"name": "A", "value": "1"}]}],
        volumes=[{"name": "v", "emptyDir": {}}],
        conditions=[{"type": "Ready", "status": "True", "lastTransitionTime": "t"}],
        typed=True,
    )
    return orjson.loads(orjson.dumps(built))


def test_keeps_declared_paths_only_and_through_lists() -> None:
    cached = Projection(KEEP, SHARED, guard=False).apply(decoded_pod("a"))
    assert cached == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "a",
            "namespace": "default",
            "uid": "uid-a",
            "resourceVersion": "1",
            "labels": {"app": "web"},
            "ownerReferences": [{"kind": "CloneSet", "name": "web", "uid": "cs-uid", "controller": True}],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "nginx:1.27"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_shared_subtrees_are_one_object_per_content_and_strings_are_interned() -> None:
    projection = Projection(KEEP, SHARED, guard=False)
    a, b, c = (
        projection.apply(decoded_pod("a")),
        projection.apply(decoded_pod("b")),
        projection.apply(decoded_pod("c", image="nginx:1.28")),
    )
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a["spec"]["containers"] is not c["spec"]["containers"]
    assert a["metadata"]["ownerReferences"] is c["metadata"]["ownerReferences"]
    assert a["metadata"] is not b["metadata"]
    assert a["metadata"]["labels"]["app"] is sys.intern("web")
    # Met again whole (the owner references, the list of containers): one table entry each, not
    # one per level below.
    assert projection.shared_objects == 2
    del a, b
    assert projection.shared_objects == 1  # weakly held: gone with the last pod that had them


def test_unique_paths_are_not_interned() -> None:
    cached = Projection(KEEP, SHARED, unique=["metadata.uid"], guard=False).apply(decoded_pod("a"))
    assert sys.intern("".join(["uid-", "a"])) is not cached["metadata"]["uid"]
    assert sys.intern("".join(["def", "ault"])) is cached["metadata"]["namespace"]


def test_cached_objects_are_read_only_and_copies_are_private() -> None:
    cached = Projection(KEEP, SHARED, guard=False).apply(decoded_pod("a"))
    assert isinstance(cached["metadata"]["labels"], FrozenDict)
    assert isinstance(cached["spec"]["containers"], FrozenList)
    with pytest.raises(TypeError, match="mutable_copy"):
        cached["metadata"]["labels"]["x"] = "y"
    with pytest.raises(TypeError, match="read-only"):
        cached["spec"]["containers"].append({})
    with pytest.raises(TypeError):
        cached["metadata"].setdefault("annotations", {})
    for copied in (mutable_copy(cached), copy.deepcopy(cached)):
        copied["metadata"]["labels"]["x"] = "y"
        copied["spec"]["containers"].append({"name": "b"})
        assert "x" not in cached["metadata"]["labels"]
        assert len(cached["spec"]["containers"]) == 1
    assert orjson.loads(orjson.dumps(cached)) == cached


def test_guarded_read_of_a_dropped_path_raises_names_it_and_is_recorded() -> None:
    VIOLATIONS.clear()
    cached = Projection(KEEP, SHARED, guard=True).apply(decoded_pod("a"))
    assert cached["spec"]["nodeName"] == "n1"
    assert cached["status"]["conditions"][0].get("status") == "True"
    assert cached["metadata"]["labels"].get("absent") is None  # a kept whole subtree: any key
    with pytest.raises(DroppedFieldRead, match=r"spec\.volumes: not kept"):
        cached["spec"]["volumes"]
    with pytest.raises(DroppedFieldRead, match=r"status\.conditions\.lastTransitionTime"):
        cached["status"]["conditions"][0].get("lastTransitionTime")
    with pytest.raises(DroppedFieldRead, match=r"metadata\.managedFields"):
        "managedFields" in cached["metadata"]  # noqa: B015 - the membership test is the read
    # Copying first is no way around it, and a copy may read what it wrote itself.
    copied = mutable_copy(cached)
    with pytest.raises(DroppedFieldRead, match=r"spec\.containers\.env"):
        copied["spec"]["containers"][0].get("env")
    copied["spec"]["hostname"] = "h"
    assert copied["spec"]["hostname"] == "h"
    assert VIOLATIONS == [
        "spec.volumes",
        "status.conditions.lastTransitionTime",
        "metadata.managedFields",
        "spec.containers.env",
    ]
    VIOLATIONS.clear()


COMPACT_KEEP = [*KEEP, "status.containerStatuses"]


def with_statuses(obj: dict) -> dict:
    obj["status"]["containerStatuses"] = [
        {"name": "main", "ready": True, "state": {"running": {"startedAt": "t1"}}, "lastState": {}}
    ]
    return obj


def test_compact_paths_are_read_only_records_that_read_and_serialize_as_the_dicts_they_were() -> None:
    cached = Projection(COMPACT_KEEP, SHARED, guard=False).apply(with_statuses(decoded_pod("a")))
    compact = Projection(
        COMPACT_KEEP, SHARED, compact=["status.conditions", "status.containerStatuses"], guard=False
    ).apply(with_statuses(decoded_pod("a")))
    condition = compact["status"]["conditions"][0]
    entry = compact["status"]["containerStatuses"][0]
    assert isinstance(condition, Record) and isinstance(entry, Record) and isinstance(entry["state"], Record)
    assert not isinstance(condition, dict)
    assert condition == {"type": "Ready", "status": "True"}
    assert {"type": "Ready", "status": "True"} == condition  # noqa: SIM300 - dict.__eq__ defers to the record
    assert list(entry) == ["name", "ready", "state", "lastState"]  # the object's order
    assert entry.get("ready") is True and entry.get("image") is None and "image" not in entry
    assert entry["state"]["running"]["startedAt"] == "t1" and dict(entry["lastState"]) == {}
    assert {**condition, "reason": "r"} == {"type": "Ready", "status": "True", "reason": "r"}
    assert repr(condition) == "{'type': 'Ready', 'status': 'True'}"
    with pytest.raises(KeyError):
        entry["image"]
    assert orjson.loads(orjson.dumps(compact)) == orjson.loads(orjson.dumps(cached)) == compact
    with pytest.raises(TypeError, match="mutable_copy"):
        condition["status"] = "False"  # type: ignore[index]
    with pytest.raises(TypeError, match="read-only"):
        condition.status = "False"  # type: ignore[attr-defined]
    for copied in (mutable_copy(compact), copy.deepcopy(compact)):
        assert type(copied["status"]["conditions"][0]) is not Record
        copied["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = "t2"
        assert copied["status"]["conditions"] == compact["status"]["conditions"]
    assert entry["state"]["running"]["startedAt"] == "t1"
    assert type(copy.copy(condition)) is dict and condition.copy() == condition
    # Records of one shape share their class; keys that cannot be attributes stay a FrozenDict.
    other = Projection(COMPACT_KEEP, compact=["status.conditions", "metadata.labels"], guard=False)
    first, second = other.apply(decoded_pod("a")), other.apply(decoded_pod("b"))
    assert type(first["status"]["conditions"][0]) is type(second["status"]["conditions"][0])
    assert isinstance(first["metadata"]["labels"], Record)  # "app": a plain name
    odd = decoded_pod("c")
    odd["metadata"]["labels"] = {"app.kubernetes.io/name": "web", "items": "x"}
    assert isinstance(other.apply(odd)["metadata"]["labels"], FrozenDict)


def test_guarded_records_raise_on_dropped_keys_and_their_copies_stay_guarded() -> None:
    VIOLATIONS.clear()
    cached = Projection(KEEP, SHARED, compact=["status.conditions"], guard=True).apply(decoded_pod("a"))
    condition = cached["status"]["conditions"][0]
    assert isinstance(condition, Record) and condition.get("status") == "True"
    with pytest.raises(DroppedFieldRead, match=r"status\.conditions\.lastTransitionTime"):
        condition.get("lastTransitionTime")
    with pytest.raises(DroppedFieldRead, match=r"status\.conditions\.reason"):
        "reason" in condition  # noqa: B015 - the membership test is the read
    copied = mutable_copy(cached)["status"]["conditions"][0]
    with pytest.raises(DroppedFieldRead, match=r"status\.conditions\.reason"):
        copied["reason"]
    copied["reason"] = "written"
    assert copied["reason"] == "written"
    assert VIOLATIONS == [
        "status.conditions.lastTransitionTime",
        "status.conditions.reason",
        "status.conditions.reason",
    ]
    VIOLATIONS.clear()


def with_token(obj: dict, suffix: str) -> dict:
    """`obj` with the ServiceAccount admission's per-pod token mount in each container."""
    mount = {"name": f"kube-api-access-{suffix}", "readOnly": True, "mountPath": "/var/run/secrets"}
    for container in obj["spec"]["containers"]:
        container["volumeMounts"] = [mount]
    return obj


def test_compact_shared_paths_are_hash_consed_records() -> None:
    """Containers differ per pod by the token mount alone: stored as records, a third of a dict, and
    still one object per content (across pods and within one)."""
    keep = [*KEEP, "spec.containers.volumeMounts"]
    plain = Projection(keep, SHARED, guard=False)
    compact = Projection(keep, SHARED, compact=["spec.containers"], guard=False)
    a, b, a2 = (
        compact.apply(with_token(decoded_pod(n), t)) for n, t in (("a", "x1"), ("b", "x2"), ("c", "x1"))
    )
    container = a["spec"]["containers"][0]
    assert isinstance(container, Record) and not isinstance(container, dict)
    assert isinstance(container["volumeMounts"][0], Record)
    assert container == {
        "name": "main",
        "image": "nginx:1.27",
        "volumeMounts": [{"name": "kube-api-access-x1", "readOnly": True, "mountPath": "/var/run/secrets"}],
    }
    assert a["spec"]["containers"] is a2["spec"]["containers"]  # equal content: one object
    assert b["spec"]["containers"][0] != container and b["spec"]["containers"][0]["name"] == "main"
    assert (
        sys.getsizeof(container)
        < sys.getsizeof(plain.apply(with_token(decoded_pod("a"), "x1"))["spec"]["containers"][0]) / 2
    )
    assert orjson.dumps(a) == orjson.dumps(plain.apply(with_token(decoded_pod("a"), "x1")))
    copied = mutable_copy(a)["spec"]["containers"][0]
    copied["image"] = "nginx:1.28"
    assert container["image"] == "nginx:1.27"
    with pytest.raises(TypeError, match="read-only"):
        container["image"] = "nginx:1.28"  # type: ignore[index]
    # Guarded: a shared record raises on what the projection dropped, as a shared dict does.
    VIOLATIONS.clear()
    guarded = Projection(keep, SHARED, compact=["spec.containers"], guard=True).apply(
        with_token(decoded_pod("a"), "x1")
    )
    with pytest.raises(DroppedFieldRead, match=r"spec\.containers\.ports"):
        guarded["spec"]["containers"][0].get("ports")
    assert VIOLATIONS == ["spec.containers.ports"]
    VIOLATIONS.clear()


def test_own_records_make_only_that_object_a_record() -> None:
    """A pod's metadata, spec and status as records; what is below them keeps its own form."""
    projection = Projection(KEEP, SHARED, own_records=["metadata", "spec", "status"], guard=True)
    cached = projection.apply(decoded_pod("a"))
    assert isinstance(cached, FrozenDict) and is_projected(cached) and is_projected({**cached})
    assert all(isinstance(cached[part], Record) for part in ("metadata", "spec", "status"))
    assert isinstance(cached["metadata"]["labels"], FrozenDict)  # below: not a record
    assert (
        cached["spec"]["containers"] is projection.apply(decoded_pod("b"))["spec"]["containers"]
    )  # still shared
    assert orjson.dumps(cached) == orjson.dumps(Projection(KEEP, SHARED, guard=False).apply(decoded_pod("a")))
    VIOLATIONS.clear()
    with pytest.raises(DroppedFieldRead, match=r"metadata\.annotations: not kept"):
        cached["metadata"].get("annotations")
    assert VIOLATIONS == ["metadata.annotations"]
    VIOLATIONS.clear()
    with pytest.raises(ValueError, match=r"own-records path 'status\.phase': must be a kept path"):
        Projection(KEEP, own_records=["status.phase"])
    with pytest.raises(ValueError, match=r"own-records path 'spec\.containers': must not be in a shared"):
        Projection(KEEP, SHARED, own_records=["spec.containers"])
    assert projection != Projection(KEEP, SHARED, guard=True)


def test_paths_validate_and_merge() -> None:
    assert parse_paths(["spec.containers", "spec.containers.name", "metadata.name"]) == {
        "spec": {"containers": None},
        "metadata": {"name": None},
    }
    with pytest.raises(ValueError, match="empty segment"):
        parse_paths(["spec..name"])
    with pytest.raises(ValueError, match="must be a kept path"):
        Projection(["metadata.name"], ["spec.containers"])
    with pytest.raises(ValueError, match=r"compact path 'spec\.containers': must be a kept path"):
        Projection(["metadata.name"], compact=["spec.containers"])
    with pytest.raises(ValueError, match="must not hold a shared path below it"):
        Projection(["spec.containers"], ["spec.containers"], compact=["spec"])
    merged = Projection(["metadata.name"], guard=False).union(Projection(["spec.nodeName"], guard=False))
    assert merged.keep == ["metadata.name", "spec.nodeName"]


async def test_informer_caches_and_delivers_the_projected_form(fake_api) -> None:
    fake_api.put("a", spec={"nodeName": "n1", "volumes": [{"name": "v"}]})
    projection = Projection(
        ["kind", "metadata.name", "metadata.namespace", "metadata.resourceVersion"], guard=False
    )
    informer = SharedInformer(fake_api, PODS, indexers={}, projection=projection)
    seen = []
    informer.add_event_handler(on_add=seen.append, on_update=lambda old, new: seen.append(new))
    informer.start()
    assert await informer.wait_for_sync(5)
    fake_api.put("a", spec={"nodeName": "n2"})
    await until(lambda: len(seen) == 2, timeout=5)
    assert [set(obj) for obj in seen] == [{"kind", "metadata"}, {"kind", "metadata"}]
    assert informer.get("default/a") is seen[-1]
    assert isinstance(seen[-1], FrozenDict)
    await informer.stop()


class NeverSends(Client):
    """A client whose transport must not be reached."""

    def __init__(self) -> None:
        pass

    async def request(self, *args, **kwargs):
        raise AssertionError("a projected object reached the wire")


@pytest.mark.parametrize("guard", [True, False])
async def test_a_projected_object_or_any_copy_of_it_is_never_put_back_whole(guard: bool) -> None:
    cached = Projection(KEEP, SHARED, guard=guard).apply(decoded_pod("a"))
    copies = [mutable_copy(cached), copy.deepcopy(cached), copy.deepcopy(dict(cached)), {**cached}]
    for body in (cached, *copies):
        with pytest.raises(ValueError, match="projected cache object cannot be PUT"):
            await NeverSends().update(PODS, body)
        with pytest.raises(ValueError, match="read the object from the apiserver"):
            await NeverSends().update_status(PODS, body)
    assert not is_projected(orjson.loads(orjson.dumps(cached)))  # what the apiserver would return


TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def admitted(name: str, token: str, containers: list[dict] | None = None) -> dict:
    """A pod as the ServiceAccount admission leaves it: its own token volume mounted in every container."""
    containers = containers or [
        {
            "name": "app",
            "image": "nginx:1.27",
            "command": ["nginx", "-g", "daemon off;"],
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "500m"}},
            "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
            "volumeMounts": [{"name": "logs", "mountPath": "/var/log"}],
        },
        {"name": "sidecar", "image": "busybox:1.36", "args": ["sleep", "infinity"]},
    ]
    mount = {"name": token, "readOnly": True, "mountPath": TOKEN_PATH}
    obj = decoded_pod(name)
    obj["spec"]["containers"] = [
        {**c, "volumeMounts": [*c.get("volumeMounts", []), mount]}
        for c in orjson.loads(orjson.dumps(containers))
    ]
    return obj


POD_SHAPE = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.containers"]


@pytest.mark.parametrize("guard", [False, True])
def test_pods_differing_only_in_their_token_mount_share_everything_else(guard: bool) -> None:
    projection = Projection(POD_SHAPE, ["spec.containers"], guard=guard)
    pods = [
        admitted(f"p{i}", f"kube-api-access-{token}") for i, token in enumerate(["x2b4c", "q9z7d", "m5k6f"])
    ]
    cached = [projection.apply(p) for p in pods]
    for original, got in zip(pods, cached, strict=True):
        assert got["spec"]["containers"] == original["spec"]["containers"]  # nothing lost or changed
    first, second = cached[0]["spec"]["containers"], cached[2]["spec"]["containers"]
    assert first is not second and first[0] is not second[0]  # each holds its own token mount
    for field in ("command", "ports", "env", "resources", "readinessProbe", "name", "image"):
        assert first[0][field] is second[0][field], field
    assert first[1]["args"] is second[1]["args"]
    assert first[0]["volumeMounts"][0] is second[0]["volumeMounts"][0]  # the logs mount
    # A pod's token mount is one object in all its containers, and differs from the next pod's.
    assert first[0]["volumeMounts"][-1] is first[1]["volumeMounts"][0]
    assert first[0]["volumeMounts"][-1] is not second[0]["volumeMounts"][-1]


def test_a_shared_piece_below_the_container_refuses_changes() -> None:
    projection = Projection(POD_SHAPE, ["spec.containers"], guard=False)
    a, b = (projection.apply(admitted(n, f"kube-api-access-{n}xxxx")) for n in "ab")
    app = a["spec"]["containers"][0]
    assert app["env"] is b["spec"]["containers"][0]["env"]
    with pytest.raises(TypeError, match="mutable_copy"):
        app["env"].append({"name": "X", "value": "1"})
    with pytest.raises(TypeError, match="read-only"):
        app["env"][0]["name"] = "OTHER"
    with pytest.raises(TypeError, match="read-only"):
        app["resources"]["requests"].update(cpu="1")
    with pytest.raises(TypeError, match="read-only"):
        app["volumeMounts"][-1]["readOnly"] = False
    copied = mutable_copy(a)
    copied["spec"]["containers"][0]["env"][0]["name"] = "OTHER"
    assert b["spec"]["containers"][0]["env"][0]["name"] == "POD_NAME"


SCALARS = st.one_of(st.sampled_from(["a", "b", "80", ""]), st.integers(0, 2), st.booleans(), st.none())
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3)
    ),
    max_leaves=6,
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "sidecar"])},
    optional={
        "env": JSON,
        "resources": JSON,
        "command": st.lists(st.sampled_from(["sh", "-c", "run"]), max_size=3),
    },
)


def _nodes(value: object, path: str = "") -> list[tuple[str, object]]:
    """Every dict and list of `value` with its path (list items under their index)."""
    if isinstance(value, dict):
        out: list[tuple[str, object]] = [(path, value)]
        for key, child in value.items():
            out += _nodes(child, f"{path}.{key}")
        return out
    if isinstance(value, list):
        out = [(path, value)]
        for i, child in enumerate(value):
            out += _nodes(child, f"{path}[{i}]")
        return out
    return []


@settings(max_examples=60, deadline=None)
@given(
    templates=st.lists(st.lists(CONTAINER, min_size=1, max_size=3), min_size=1, max_size=3),
    pods=st.lists(st.tuples(st.integers(0, 2), st.text("bcdfg245", min_size=5, max_size=5)), max_size=8),
)
def test_equal_parts_of_cached_pods_are_one_frozen_object_whatever_the_pods(templates, pods) -> None:
    projection = Projection(POD_SHAPE, ["spec.containers"], guard=False)
    originals = [
        admitted(f"p{i}", f"kube-api-access-{token}", templates[t % len(templates)])
        for i, (t, token) in enumerate(pods)
    ]
    cached = [projection.apply(p) for p in originals]
    seen: dict[str, object] = {}
    for original, got in zip(originals, cached, strict=True):
        assert got["spec"]["containers"] == original["spec"]["containers"]
        assert orjson.dumps(got) == orjson.dumps(
            {k: original[k] for k in ("metadata", "spec")}
            | {
                "metadata": {k: original["metadata"][k] for k in ("name", "namespace", "uid")},
                "spec": {"containers": original["spec"]["containers"]},
            }
        )
        for _, node in _nodes(got["spec"]["containers"]):
            assert isinstance(node, (FrozenDict, FrozenList))
            # Equal content (in equal key order, true apart from 1) is one object.
            assert seen.setdefault(orjson.dumps(node), node) is node
            with pytest.raises(TypeError, match="read-only"):
                node.clear()


def test_equal_records_are_one_record_and_stay_read_only() -> None:
    projection = Projection(COMPACT_KEEP, SHARED, compact=["status.containerStatuses"], guard=False)
    a, b = (projection.apply(with_statuses(decoded_pod(n))) for n in "ab")
    odd = with_statuses(decoded_pod("c"))
    odd["status"]["containerStatuses"][0]["ready"] = 1  # equal to True as a key, not as content
    c = projection.apply(odd)
    status_a, status_b, status_c = (p["status"]["containerStatuses"][0] for p in (a, b, c))
    assert status_a is status_b and status_a["lastState"] is status_c["lastState"]
    assert status_c is not status_a and status_c["ready"] == 1 and status_c["ready"] is not True
    assert b'"ready":1' in orjson.dumps(c) and b'"ready":true' in orjson.dumps(a)
    with pytest.raises(TypeError, match="read-only"):
        status_a["ready"] = False


def test_parts_differing_only_in_dropped_fields_are_still_one_object() -> None:
    projection = Projection(KEEP, SHARED, guard=False)
    a, b = (projection.apply(decoded_pod(n)) for n in "ab")
    other = decoded_pod("c")
    other["spec"]["containers"][0]["env"] = [{"name": "B", "value": "2"}]  # not kept: the text differs
    c = projection.apply(other)
    assert a["spec"]["containers"] is b["spec"]["containers"] is c["spec"]["containers"]


def test_sharing_outlives_the_window_of_recent_texts() -> None:
    projection = Projection(KEEP, SHARED, guard=False)
    a, _b = (projection.apply(decoded_pod(n)) for n in "ab")
    others = [projection.apply(decoded_pod(f"o{i}", image=f"img:{i}")) for i in range(3000)]
    late = projection.apply(decoded_pod("late"))
    assert late["spec"]["containers"] is a["spec"]["containers"]
    assert len(projection._by_text) <= projection_module._BY_TEXT and len(others) == 3000


def test_shared_parts_keep_scalar_types_and_take_values_json_cannot_write() -> None:
    projection = Projection(["spec.x"], ["spec.x"], guard=False)
    values = [[1], [True], [1.0], [(1, 2)], [2**70], [{"when": datetime.date(2026, 1, 1)}]]
    cached = [projection.apply({"spec": {"x": v}})["spec"]["x"] for v in values]
    assert cached == values
    assert [type(c[0]) for c in cached[:5]] == [int, bool, float, tuple, int]
    assert isinstance(cached[-1][0], FrozenDict)
    assert type(cached[-1][0]["when"]) is datetime.date  # not its ISO text, which orjson would write
    again = [projection.apply({"spec": {"x": v}})["spec"]["x"] for v in values[:3]]
    assert all(x is y for x, y in zip(again, cached, strict=False))


PACKED_KEEP = [
    "metadata.name",
    "status.conditions",
    "status.containerStatuses.name",
    "status.containerStatuses.containerID",
    "status.containerStatuses.state",
    "status.containerStatuses.resources",
]
PACKED_COMPACT = ["status.conditions", "status.containerStatuses"]
PACKED = {
    "status.conditions": ["lastTransitionTime"],
    "status.containerStatuses": ["containerID", "state.running.startedAt"],
}


def packed_pod(name: str, when: str, ready: str = "True") -> dict:
    """A running pod's status as decoded: two conditions and a container status of its own."""
    status = {
        "conditions": [
            {"type": "Ready", "status": ready, "lastProbeTime": None, "lastTransitionTime": when},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": when},
        ],
        "containerStatuses": [
            {
                "name": "main",
                "containerID": f"containerd://{name}",
                "state": {"running": {"startedAt": when}},
                "resources": {"requests": {"cpu": "100m"}},
                "user": {"linux": {"uid": 0}},
            }
        ],
    }
    return orjson.loads(orjson.dumps({"metadata": {"name": name}, "status": status}))


def packed_projection(guard: bool) -> Projection:
    return Projection(PACKED_KEEP, compact=PACKED_COMPACT, own_records=["status"], packed=PACKED, guard=guard)


def test_packed_lists_read_back_as_their_records_and_share_a_layout() -> None:
    """A pod's conditions and container statuses are one tuple of its own values (timestamps,
    container IDs) and a layout shared with the pods that agree on the rest."""
    projection = packed_projection(guard=False)
    plain = Projection(PACKED_KEEP, compact=PACKED_COMPACT, own_records=["status"], guard=False)
    raw = packed_pod("a", "t1")
    # Content met once is kept as records (a layout only pays when shared); met again, it packs.
    first, first_c = projection.apply(packed_pod("y", "t0")), projection.apply(packed_pod("z", "t0", "False"))
    assert first_c["status"].containerStatuses.__class__ is _Packed  # its container status was met before
    assert first["status"].conditions.__class__ is FrozenList
    assert first["status"]["conditions"] == packed_pod("y", "t0")["status"]["conditions"]
    a, b, c = (
        projection.apply(raw),
        projection.apply(packed_pod("b", "t2")),
        projection.apply(packed_pod("c", "t3", "False")),
    )
    conditions = a["status"]["conditions"]
    assert isinstance(conditions, FrozenList) and isinstance(conditions[0], Record)
    assert conditions == raw["status"]["conditions"]
    assert a["status"].get("containerStatuses")[0]["state"]["running"]["startedAt"] == "t1"
    assert dict(a["status"]["containerStatuses"][0]) == {
        k: v for k, v in raw["status"]["containerStatuses"][0].items() if k != "user"
    }
    # One layout for a and b (they differ by per-pod values only), another for c (its Ready is False).
    packed_a, packed_b, packed_c = (x["status"].conditions for x in (a, b, c))
    assert packed_a[0] is packed_b[0] and packed_a[0] is not packed_c[0]
    assert sys.getsizeof(packed_a) < sum(map(sys.getsizeof, plain.apply(raw)["status"]["conditions"]))
    # Equal content compares equal however it is held; different content does not.
    again = projection.apply(packed_pod("a", "t1"))
    assert a == again and a["status"] == plain.apply(raw)["status"] and a != b
    # Written and copied as the list it stands for.
    assert orjson.dumps(a, default=projection_module.json_default) == orjson.dumps(plain.apply(raw))
    assert mutable_copy(a) == mutable_copy(plain.apply(raw)) == copy.deepcopy(a)
    assert dict(a["status"])["conditions"] == raw["status"]["conditions"]
    with pytest.raises(TypeError, match="not JSON serializable"):
        orjson.dumps(a)  # never silently wrong JSON: the caller passes json_default
    with pytest.raises(TypeError, match="read-only"):
        conditions[0]["status"] = "False"  # type: ignore[index]


def test_packed_lists_fall_back_to_lists_when_they_cannot_pack() -> None:
    projection = packed_projection(guard=False)
    odd = packed_pod("a", "t1")
    odd["status"]["conditions"].append(
        {"type": "X", "status": "True", "class": "kw"}
    )  # `class`: no record key
    cached = projection.apply(odd)
    assert cached["status"].conditions.__class__ is FrozenList
    assert cached["status"]["conditions"] == odd["status"]["conditions"]
    empty = projection.apply({"metadata": {"name": "e"}, "status": {"conditions": []}})
    assert empty["status"]["conditions"] == []


def test_packed_lists_still_guard_dropped_fields() -> None:
    VIOLATIONS.clear()
    cached = packed_projection(guard=True).apply(packed_pod("a", "t1"))
    status = cached["status"]["containerStatuses"][0]
    assert status["state"]["running"]["startedAt"] == "t1" and status["containerID"] == "containerd://a"
    with pytest.raises(DroppedFieldRead, match=r"status\.containerStatuses\.user: not kept"):
        status["user"]
    with pytest.raises(DroppedFieldRead, match=r"status\.containerStatuses\.imageID: not kept"):
        status.get("imageID")
    with pytest.raises(DroppedFieldRead, match=r"status\.podIP: not kept"):
        cached["status"].get("podIP")
    assert VIOLATIONS == [
        "status.containerStatuses.user",
        "status.containerStatuses.imageID",
        "status.podIP",
    ]
    VIOLATIONS.clear()


def test_packed_paths_are_validated() -> None:
    with pytest.raises(ValueError, match=r"packed path 'status\.conditions': must be a kept compact path"):
        Projection(["status.conditions"], packed={"status.conditions": ["lastTransitionTime"]}, guard=False)
    with pytest.raises(ValueError, match=r"packed path 'status\.conditions': its parent must be a record"):
        Projection(
            ["status.conditions"],
            compact=["status.conditions"],
            packed={"status.conditions": ["lastTransitionTime"]},
            guard=False,
        )


def test_lists_no_other_object_agrees_with_keep_no_layout() -> None:
    """A value undeclared as per-object that differs on every pod (here the Ready condition's status
    text) would give each pod a layout of its own (~1 KB): such lists stay records."""
    projection = packed_projection(guard=False)
    pods = [packed_pod(f"p{i}", "t1", ready=f"odd-{i}") for i in range(50)]
    cached = [projection.apply(p) for p in pods]
    assert all(
        c["status"]["conditions"] == p["status"]["conditions"] for c, p in zip(cached, pods, strict=True)
    )
    assert all(c["status"].conditions.__class__ is FrozenList for c in cached)
    assert len(projection._layouts) == 1  # the container statuses' (the same on every pod but their IDs)
