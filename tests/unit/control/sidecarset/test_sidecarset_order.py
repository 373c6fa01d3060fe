"""SidecarSet rollout order: ActivePods, then priorityStrategy, then scatterStrategy (with `key=*`),
and how partition / maxUnavailable cut the ordered list (upstream GetNextUpgradePods)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from test_sidecarset_update import sidecar_pod, sidecarset

from kruise.control.sidecarset import order, update


def labelled(name, ready=True, **labels):
    body = sidecar_pod(name, ready=ready)
    body["metadata"]["labels"] = labels
    return body


def names(pods):
    return [p["metadata"]["name"] for p in pods]


def test_wildcard_scatter_term_expands_to_each_value_once():
    pods = [labelled("a", zone="z1"), labelled("b", zone="z2"), labelled("c", zone="z1"), labelled("d")]
    terms = [{"key": "zone", "value": "*"}, {"key": "zone", "value": "z2"}, {"key": "app", "value": "x"}]
    assert order.expand_scatter_terms(terms, pods) == [
        {"key": "zone", "value": "z1"},
        {"key": "zone", "value": "z2"},
        {"key": "app", "value": "x"},
    ]


def test_weight_priority_picks_the_heaviest_pod_first():
    strategy = {
        "maxUnavailable": 1,
        "priorityStrategy": {
            "weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"tier": "canary"}}}]
        },
    }
    pods = [labelled("a"), labelled("b"), labelled("c", tier="canary")]
    assert names(update.pods_to_update(sidecarset(**strategy), pods)) == ["c"]


def test_order_priority_takes_larger_suffix_first():
    strategy = {"maxUnavailable": 3, "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}}
    pods = [labelled("a", rank="r-1"), labelled("b", rank="r-10"), labelled("c", rank="r-2")]
    assert names(update.pods_to_update(sidecarset(**strategy), pods)) == ["b", "c", "a"]


def test_priority_outranks_readiness_and_unready_pods_take_no_budget():
    strategy = {"maxUnavailable": 1, "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}}
    pods = [labelled("a", rank="9"), labelled("b", ready=False, rank="1")]
    # priority puts a (rank 9) ahead of the unready b; a takes the only budget, b takes none
    assert names(update.pods_to_update(sidecarset(**strategy), pods)) == ["a", "b"]


def test_budget_exhausted_stops_the_walk_as_upstream():
    strategy = {"maxUnavailable": 1, "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}}
    busy = sidecar_pod("u", hash_="h2", ready=False)
    pods = [busy, labelled("a", rank="9"), labelled("b", ready=False, rank="1")]
    assert names(update.pods_to_update(sidecarset(**strategy), pods)) == []


def test_partition_holds_back_the_last_pods_in_order():
    strategy = {
        "maxUnavailable": 5,
        "partition": 1,
        "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]},
    }
    pods = [labelled("a", rank="1"), labelled("b", rank="3"), labelled("c", rank="2")]
    assert names(update.pods_to_update(sidecarset(**strategy), pods)) == ["b", "c"]
    percent = sidecarset(maxUnavailable=5, partition="50%")  # 1.5 rounds up to 2 of 3 kept
    assert len(update.pods_to_update(percent, pods)) == 1


def test_scatter_spreads_a_zone_through_the_order():
    pods = [labelled(f"p{i}", zone="z1" if i < 4 else "z2") for i in range(8)]
    strategy = {"maxUnavailable": 8, "scatterStrategy": [{"key": "zone", "value": "z1"}]}
    got = names(update.pods_to_update(sidecarset(**strategy), pods))
    z1 = [i for i, n in enumerate(got) if int(n[1:]) < 4]
    assert z1[-1] == len(got) - 1  # the last z1 pod goes last
    assert z1[:3] != [0, 1, 2]  # the others are not bunched at the front
    wildcard = {"maxUnavailable": 8, "scatterStrategy": [{"key": "zone", "value": "*"}]}
    assert sorted(names(update.pods_to_update(sidecarset(**wildcard), pods))) == sorted(got)


@given(
    st.lists(st.tuples(st.sampled_from(["z1", "z2", "z3"]), st.booleans(), st.integers(0, 20)), max_size=12),
    st.integers(0, 4),
    st.integers(1, 5),
)
def test_order_is_a_permutation_and_cut_respects_partition_and_budget(specs, partition, budget):
    pods = [
        labelled(f"p{i}", ready=ready, zone=zone, rank=str(rank))
        for i, (zone, ready, rank) in enumerate(specs)
    ]
    strategy = {
        "partition": partition,
        "maxUnavailable": budget,
        "priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]},
        "scatterStrategy": [{"key": "zone", "value": "*"}],
    }
    ordered = order.sort_for_update(strategy, pods, pods)
    assert sorted(names(ordered)) == sorted(names(pods))
    chosen = update.pods_to_update(sidecarset(**strategy), pods)
    assert len(chosen) <= max(len(pods) - partition, 0)
    assert sum(1 for p in chosen if p["status"]["conditions"][0]["status"] == "True") <= budget
    assert names(chosen) == names(ordered)[: len(chosen)]  # a prefix of the order
