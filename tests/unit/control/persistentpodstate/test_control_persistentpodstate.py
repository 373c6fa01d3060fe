"""PersistentPodState planning: what is recorded per pod, what is dropped on scale-in, the
auto-generated spec, and the node selector / preferred affinity injected into a recreated pod."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.persistentpodstate import podstates
from tests.kit.pods import controller_ref, pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node(name, **labels):
    return {"metadata": {"name": name, "labels": {HOST: name, **labels}}}


def sts_pod(name, node_name="node-1", ready=True, annotations=None, owner="web", api_version="apps/v1"):
    """A StatefulSet `owner`'s pod, on `node_name` (None: not yet scheduled)."""
    return pod(
        name,
        annotations=annotations or {},
        owner=controller_ref("StatefulSet", owner, uid="sts-uid", api_version=api_version),
        node=node_name or None,
        ready=ready,
    )


def pps(spec_extra=None, pod_states=None, generation=3, name="web", target="web", api_version="apps/v1"):
    spec = {
        "targetRef": {"apiVersion": api_version, "kind": "StatefulSet", "name": target},
        "requiredPersistentTopology": {"nodeTopologyKeys": [HOST]},
        "preferredPersistentTopology": [{"weight": 50, "preference": {"nodeTopologyKeys": [ZONE]}}],
    }
    spec.update(spec_extra or {})
    obj = {"metadata": {"name": name, "namespace": "default", "generation": generation}, "spec": spec}
    if pod_states is not None:
        obj["status"] = {"podStates": pod_states}
    return obj


NODES = {"node-1": node("node-1", **{ZONE: "zone-a"}), "node-2": node("node-2", **{ZONE: "zone-b"})}


def test_ready_pods_on_nodes_are_recorded_with_their_topology_labels():
    pods = {
        "web-0": sts_pod("web-0"),
        "web-1": sts_pod("web-1", "node-2"),
        "web-2": sts_pod("web-2", ready=False),
        "web-3": sts_pod("web-3", node_name=None),
    }
    status = podstates.next_status(pps(), podstates.Workload(4), pods, NODES.get)
    assert status == {
        "observedGeneration": 3,
        "podStates": {
            "web-0": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1", ZONE: "zone-a"}},
            "web-1": {"nodeName": "node-2", "nodeTopologyLabels": {HOST: "node-2", ZONE: "zone-b"}},
        },
    }


def test_kept_annotations_are_recorded_and_missing_keys_left_out():
    spec = {"persistentPodAnnotations": [{"key": "ip"}, {"key": "absent"}]}
    pods = {"web-0": sts_pod("web-0", annotations={"ip": "10.0.0.5", "other": "x"})}
    status = podstates.next_status(pps(spec), podstates.Workload(1), pods, NODES.get)
    assert status["podStates"]["web-0"]["annotations"] == {"ip": "10.0.0.5"}


def test_pod_on_an_unknown_node_is_skipped_until_the_node_is_seen():
    pods = {"web-0": sts_pod("web-0", "node-9")}
    assert podstates.next_status(pps(), podstates.Workload(1), pods, NODES.get) == {"observedGeneration": 3}


def test_a_pod_that_moved_is_recorded_again_and_an_unchanged_record_is_kept_as_is():
    old = {"web-0": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1", ZONE: "zone-a"}}}
    moved = podstates.next_status(
        pps(pod_states=old), podstates.Workload(1), {"web-0": sts_pod("web-0", "node-2")}, NODES.get
    )
    assert moved["podStates"]["web-0"]["nodeName"] == "node-2"
    stale = {"web-0": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1", ZONE: "old"}}}
    kept = podstates.next_status(
        pps(pod_states=stale), podstates.Workload(1), {"web-0": sts_pod("web-0")}, NODES.get
    )
    assert kept["podStates"] == stale  # same node and same keys: not re-read


def test_scaled_in_ordinals_are_forgotten_once_their_pod_is_gone():
    old = {f"web-{i}": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}} for i in range(4)}
    pods = {"web-0": sts_pod("web-0"), "web-1": sts_pod("web-1"), "web-3": sts_pod("web-3", ready=False)}
    status = podstates.next_status(pps(pod_states=old), podstates.Workload(2), pods, NODES.get)
    assert sorted(status["podStates"]) == ["web-0", "web-1", "web-3"]  # web-3 still exists


def test_when_deleted_retention_keeps_scaled_in_records():
    old = {"web-5": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1"}}}
    spec = {"persistentPodStateRetentionPolicy": "WhenDeleted"}
    status = podstates.next_status(pps(spec, pod_states=old), podstates.Workload(1), {}, NODES.get)
    assert "web-5" in status["podStates"]


def test_workload_gone_or_deleting_clears_every_record():
    old = {"web-0": {"nodeName": "node-1"}}
    assert podstates.next_status(pps(pod_states=old), None, {}, NODES.get) == {"observedGeneration": 3}
    deleting = podstates.Workload(1, deleting=True)
    assert podstates.next_status(pps(pod_states=old), deleting, {}, NODES.get) == {"observedGeneration": 3}


def test_in_replicas_skips_reserved_ordinals():
    assert [i for i in range(8) if podstates.in_replicas(i, 3, [1, "3-4"])] == [0, 2, 5]
    assert not podstates.in_replicas(-1, 3)


@given(st.integers(0, 30), st.sets(st.integers(0, 40), max_size=10))
def test_in_replicas_counts_exactly_replicas_unreserved_ordinals(replicas, reserved):
    live = [i for i in range(80) if podstates.in_replicas(i, replicas, sorted(reserved))]
    assert len(live) == replicas
    assert not set(live) & reserved
    assert live == sorted(i for i in range(max(live, default=-1) + 1) if i not in reserved)


def test_workload_shape_defaults_replicas_to_one():
    assert podstates.Workload.of({"metadata": {}, "spec": {}}) == podstates.Workload(1)
    deleting = {"metadata": {"deletionTimestamp": "t"}, "spec": {"replicas": 0, "reserveOrdinals": [2]}}
    assert podstates.Workload.of(deleting) == podstates.Workload(0, (2,), True)


# --- auto-generation -------------------------------------------------------------------------


def sts(**annotations):
    return {"metadata": {"name": "web", "namespace": "default", "uid": "sts-uid", "annotations": annotations}}


AUTO = "kruise.io/auto-generate-persistent-pod-state"
REQUIRED = "kruise.io/required-persistent-topology"
PREFERRED = "kruise.io/preferred-persistent-topology"
KEPT = "kruise.io/persistent-pod-annotations"


def test_generation_wanted_only_with_true_and_a_topology():
    assert podstates.wants_generated(sts(**{AUTO: "true", REQUIRED: HOST}))
    assert podstates.wants_generated(sts(**{AUTO: "true", PREFERRED: ZONE}))
    assert not podstates.wants_generated(sts(**{AUTO: "true"}))
    assert podstates.keeps_generated(sts(**{AUTO: "true"}))
    assert not podstates.wants_generated(sts(**{AUTO: "false", REQUIRED: HOST}))


def test_generated_object_is_named_after_and_controlled_by_the_workload():
    obj = podstates.generated(
        sts(**{AUTO: "true", REQUIRED: f"{HOST},{ZONE}", PREFERRED: ZONE, KEPT: "a,b"}),
        "apps/v1",
        "StatefulSet",
    )
    assert obj["metadata"]["name"] == "web"
    assert obj["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "sts-uid", "controller": True}
    ]
    assert obj["spec"] == {
        "targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"nodeTopologyKeys": [HOST, ZONE]},
        "persistentPodAnnotations": [{"key": "a"}, {"key": "b"}],
        "preferredPersistentTopology": [{"weight": 100, "preference": {"nodeTopologyKeys": [ZONE]}}],
    }
    assert podstates.generated_by(obj, sts())
    assert not podstates.generated_by(obj, {"metadata": {"uid": "other"}})


def test_generate_key_round_trips():
    key = podstates.generate_key("ns", "apps.kruise.io/v1beta1", "StatefulSet", "web")
    namespace, _, name = key.partition("/")
    assert namespace == "ns"
    assert podstates.parse_generate_name(name) == ("apps.kruise.io/v1beta1", "StatefulSet", "web")
    assert podstates.parse_generate_name("generate#apps/v1#web") is None


# --- webhook injection -------------------------------------------------------------------------

RECORDED = {"web-0": {"nodeName": "node-1", "nodeTopologyLabels": {HOST: "node-1", ZONE: "zone-a"}}}


def test_recreated_pod_gets_node_selector_and_preferred_affinity():
    new = sts_pod("web-0", node_name=None)
    assert podstates.inject(new, [pps(pod_states=RECORDED)])
    assert new["spec"]["nodeSelector"] == {HOST: "node-1"}
    assert new["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {
            "weight": 50,
            "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]},
        }
    ]
    assert new["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "web"


def test_injection_is_idempotent_and_merges_existing_selector():
    new = sts_pod("web-0", node_name=None)
    new["spec"]["nodeSelector"] = {"disk": "ssd"}
    podstates.inject(new, [pps(pod_states=RECORDED)])
    once = copy.deepcopy(new)
    podstates.inject(new, [pps(pod_states=RECORDED)])
    assert new == once
    assert new["spec"]["nodeSelector"] == {"disk": "ssd", HOST: "node-1"}


def test_no_injection_for_first_creation_other_owners_or_deleted_pps():
    assert not podstates.inject(sts_pod("web-7", node_name=None), [pps(pod_states=RECORDED)])
    assert not podstates.inject(sts_pod("web-0", node_name=None, owner="db"), [pps(pod_states=RECORDED)])
    clone = sts_pod("web-0", node_name=None)
    clone["metadata"]["ownerReferences"][0]["kind"] = "CloneSet"
    assert not podstates.inject(clone, [pps(pod_states=RECORDED)])
    deleting = pps(pod_states=RECORDED)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert not podstates.inject(sts_pod("web-0", node_name=None), [deleting])
    no_labels = {"web-0": {"nodeName": "node-1"}}
    assert not podstates.inject(sts_pod("web-0", node_name=None), [pps(pod_states=no_labels)])


def test_advanced_statefulset_pod_matches_pps_of_any_kruise_version():
    new = sts_pod("web-0", node_name=None, api_version="apps.kruise.io/v1beta1")
    assert podstates.inject(new, [pps(pod_states=RECORDED, api_version="apps.kruise.io/v1alpha1")])


def test_preferred_term_without_recorded_keys_is_kept_empty_as_upstream():
    spec = {
        "requiredPersistentTopology": None,
        "preferredPersistentTopology": [{"weight": 10, "preference": {"nodeTopologyKeys": ["rack"]}}],
    }
    selector, preferred = podstates.node_affinity(spec, RECORDED["web-0"])
    assert selector is None
    assert preferred == [{"weight": 10, "preference": {}}]
