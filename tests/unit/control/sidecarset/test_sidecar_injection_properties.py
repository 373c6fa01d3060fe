"""Injection invariants over generated pods and SidecarSets."""

from __future__ import annotations

import copy
import datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from sidecar_builders import app_pod

from kruise.control.sidecarset.injection import InjectionConflict, inject

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
_names = st.sampled_from(["a", "b", "c", "d", "e"])
_policies = st.sampled_from(["BeforeAppContainer", "AfterAppContainer"])


@st.composite
def sidecarsets(draw: st.DrawFn) -> list[dict]:
    """Distinct sidecar names across SidecarSets (validation guarantees that for overlapping ones)."""
    count = draw(st.integers(1, 4))
    names = draw(
        st.lists(st.sampled_from([f"s{i}" for i in range(8)]), min_size=count, max_size=count, unique=True)
    )
    items = []
    for i, chunk in enumerate([names[j::count] for j in range(count)]):
        containers = [
            {"name": n, "image": "x", "podInjectPolicy": draw(_policies),
             "volumeMounts": [{"name": draw(_names), "mountPath": f"/{n}"}],
             "shareVolumePolicy": {"type": draw(st.sampled_from(["enabled", "disabled"]))}}
            for n in chunk
        ]  # fmt: skip
        volumes = [
            {"name": v, "emptyDir": {"medium": f"set{i}"}} for v in draw(st.lists(_names, unique=True))
        ]
        items.append({"metadata": {"name": f"set{i}", "annotations": {}},
                      "spec": {"containers": containers, "volumes": volumes}})  # fmt: skip
    return items


@settings(max_examples=150)
@given(
    sidecarsets(),
    st.lists(_names, unique=True, max_size=3),
    st.lists(st.sampled_from(["app1", "app2", "app3"]), unique=True, min_size=1, max_size=3),
)
def test_injection_invariants(sets, pod_volume_names, app_names):
    apps = [
        {"name": n, "image": "app", "volumeMounts": [{"name": "data", "mountPath": f"/app/{n}"}]}
        for n in app_names
    ]
    p = app_pod(
        containers=apps, volumes=[{"name": v, "emptyDir": {"medium": "pod"}} for v in pod_volume_names]
    )
    before = copy.deepcopy(p)
    try:
        assert inject(p, sets, now=NOW)
    except InjectionConflict:
        raise AssertionError("distinct names must not conflict") from None
    containers = p["spec"]["containers"]
    names = [c["name"] for c in containers]
    sidecar_names = [c["name"] for s in sets for c in s["spec"]["containers"]]
    assert sorted(names) == sorted(app_names + sidecar_names)  # each exactly once
    assert [n for n in names if n in app_names] == app_names  # app order kept
    for c in containers:
        if c["name"] in sidecar_names:
            assert {"name": "IS_INJECTED", "value": "true"} in c["env"]
            paths = [m["mountPath"] for m in c["volumeMounts"]]
            assert len(paths) == len(set(paths))
    volumes = p["spec"].get("volumes", [])
    assert len({v["name"] for v in volumes}) == len(volumes)
    assert volumes[: len(pod_volume_names)] == before["spec"].get("volumes", [])  # the pod's own win
    brought = {
        m["name"]
        for s in sets
        for c in s["spec"]["containers"]
        for m in c["volumeMounts"]
        if m["name"] in {v["name"] for v in s["spec"]["volumes"]}
    }  # a mount naming no volume of its own SidecarSet brings nothing
    assert {v["name"] for v in volumes} == set(pod_volume_names) | brought
    assert set(p["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"].split(",")) == {
        s["metadata"]["name"] for s in sets
    }
