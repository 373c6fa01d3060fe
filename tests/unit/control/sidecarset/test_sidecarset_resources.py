# ruff: noqa: E501  (exact webhook messages read best unsplit)
"""resourcesPolicy at injection: target containers, sum/max aggregation, expressions, errors;
and shareVolumeDevicePolicy sharing the app containers' volumeDevices."""

import copy
import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.goquantity import Quantity
from kruise.control.sidecarset.injection import InjectionError, inject
from kruise.control.sidecarset.resources import (
    ResourcesPolicyError,
    aggregate,
    compute_resources,
    target_containers,
)
from tests.kit.pods import pod

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def container(name, limits=None, requests=None, **extra):
    resources = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"name": name, "image": "app", "resources": resources, **extra}


def app_pod(*containers, init=()):
    """A web pod of `containers` and `init` containers."""
    return pod(labels={"app": "web"}, containers=list(containers), initContainers=list(init))


def policy(mode="sum", regex=".*", limits=None, requests=None):
    expr = {}
    if limits is not None:
        expr["limits"] = limits
    if requests is not None:
        expr["requests"] = requests
    return {"targetContainersMode": mode, "targetContainersNameRegex": regex, "resourcesExpr": expr}


def sidecarset(name="s", containers=(), init=(), volumes=()):
    return {
        "metadata": {"name": name, "annotations": {}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": list(containers),
            "initContainers": list(init),
            "volumes": list(volumes),
        },
    }


APP1 = container("app1", {"cpu": "1", "memory": "1Gi"}, {"cpu": "500m", "memory": "512Mi"})
APP2 = container("app2", {"cpu": "2", "memory": "2Gi"}, {"cpu": "1", "memory": "1Gi"})
NATIVE = container("native", {"cpu": "500m", "memory": "256Mi"}, {"cpu": "100m"}, restartPolicy="Always")
PLAIN_INIT = container("init", {"cpu": "4", "memory": "4Gi"}, {"cpu": "4"})


def names(containers):
    return [c["name"] for c in containers]


def test_targets_are_native_sidecars_then_containers_matching_the_regex():
    the_pod = app_pod(APP1, APP2, init=[PLAIN_INIT, NATIVE])
    assert names(target_containers(the_pod, ".*", [])) == ["native", "app1", "app2"]
    assert names(target_containers(the_pod, "app2", [])) == ["app2"]
    assert names(target_containers(the_pod, "^app", [])) == ["app1", "app2"]
    assert names(target_containers(the_pod, "1$", [])) == ["app1"]  # unanchored search, as Go's MatchString


def test_targets_leave_out_every_container_a_matched_sidecarset_injects():
    the_pod = app_pod(APP1, container("envoy"), init=[container("istio-init", restartPolicy="Always")])
    sets = [sidecarset(containers=[{"name": "envoy"}], init=[{"name": "istio-init"}])]
    assert names(target_containers(the_pod, ".*", sets)) == ["app1"]


@pytest.mark.parametrize(
    ("mode", "limits", "requests"),
    [
        ("sum", {"cpu": "3", "memory": "3Gi"}, {"cpu": "1500m", "memory": "1536Mi"}),
        ("max", {"cpu": "2", "memory": "2Gi"}, {"cpu": "1", "memory": "1Gi"}),
        ("avg", {}, {}),  # an unknown mode aggregates nothing (the CRD enum refuses it first)
    ],
)
def test_aggregate_modes(mode, limits, requests):
    got_limits, got_requests = aggregate([APP1, APP2], mode)
    assert {k: str(v) for k, v in got_limits.items()} == limits
    assert {k: str(v) for k, v in got_requests.items()} == requests


@pytest.mark.parametrize("mode", ["sum", "max"])
def test_one_unlimited_target_makes_the_aggregate_limit_unlimited(mode):
    unlimited = container("free", None, {"memory": "64Mi"})
    limits, requests = aggregate([APP1, unlimited], mode)
    assert limits == {}
    assert str(requests["cpu"]) == "500m"
    assert str(requests["memory"]) == ("576Mi" if mode == "sum" else "512Mi")


def test_missing_requests_count_as_zero():
    limits, requests = aggregate([container("a", {"cpu": "1"}), container("b", {"cpu": "1"})], "sum")
    assert {k: str(v) for k, v in limits.items()} == {"cpu": "2"}
    assert requests == {}
    resources = compute_resources(
        policy(
            limits={"cpu": "cpu*50%", "memory": "memory"},
            requests={"cpu": "max(cpu*50%, 50m)", "memory": "memory + 10Mi"},
        ),
        app_pod(container("a", {"cpu": "1"}), container("b", {"cpu": "1"})),
        [],
    )
    # memory limits unlimited: not set; the zero requests feed the expressions
    assert resources == {"limits": {"cpu": "1"}, "requests": {"cpu": "50m", "memory": "10Mi"}}


@pytest.mark.parametrize(
    ("the_policy", "expected"),
    [
        (
            policy(limits={"cpu": "max(cpu*50%, 50m)", "memory": "max(memory*50%, 100Mi)"}),
            {"limits": {"cpu": "1500m", "memory": "1536Mi"}},
        ),
        (
            policy("max", requests={"cpu": "cpu*20%", "memory": "memory/4"}),
            {"requests": {"cpu": "200m", "memory": "256Mi"}},
        ),
        (
            policy(regex="app1", limits={"cpu": "cpu"}, requests={"memory": "min(memory, 128Mi)"}),
            {"limits": {"cpu": "1"}, "requests": {"memory": "128Mi"}},
        ),
        (policy(limits={"cpu": "1"}), {"limits": {"cpu": "1"}}),  # a number is cores for cpu
        (policy(limits={"memory": "memory*0 + 100"}), {"limits": {"memory": "100"}}),
        (
            policy(limits={"memory": "1048576"}),
            {"limits": {"memory": "1048576"}},
        ),  # no 'memory' word: cpu rules
        (policy(limits={}), {}),
    ],
)
def test_compute_resources(the_policy, expected):
    assert compute_resources(the_policy, app_pod(APP1, APP2), []) == expected


@pytest.mark.parametrize(
    ("the_policy", "message"),
    [
        (policy(regex="nothing"), 'no containers match the regex pattern "nothing"'),
        (policy(regex="("), 'failed to get target containers: invalid regex pattern "("'),
        (
            policy(limits={"cpu": "cpu - 10"}),
            'failed to evaluate CPU limits expression: failed to parse expression "cpu - 10": calculation result is negative: -7',
        ),
        (
            policy(requests={"memory": "memory * memory"}),
            'failed to evaluate memory requests expression: failed to parse expression "memory * memory": multiplication of two quantities',
        ),
    ],
)
def test_compute_resources_errors(the_policy, message):
    with pytest.raises(ResourcesPolicyError) as info:
        compute_resources(the_policy, app_pod(APP1, APP2), [])
    assert str(info.value).startswith(message)


millicores = st.integers(min_value=1, max_value=64_000)
optional_cpu = st.one_of(st.none(), millicores)


@given(st.lists(st.tuples(optional_cpu, optional_cpu), min_size=1, max_size=6))
def test_sum_and_max_over_random_containers(cpus):
    containers = [
        container(
            f"c{i}",
            None if limit is None else {"cpu": f"{limit}m"},
            None if request is None else {"cpu": f"{request}m"},
        )
        for i, (limit, request) in enumerate(cpus)
    ]
    limits = [limit for limit, _ in cpus]
    requests = [request for _, request in cpus if request is not None]
    sum_limits, sum_requests = aggregate(containers, "sum")
    max_limits, max_requests = aggregate(containers, "max")
    if None in limits:
        assert "cpu" not in sum_limits and "cpu" not in max_limits
    else:
        assert sum_limits["cpu"].milli_value() == sum(limits)
        assert max_limits["cpu"].milli_value() == max(limits)
    assert (sum_requests["cpu"].milli_value() if "cpu" in sum_requests else 0) == sum(requests)
    if requests:
        assert max_requests["cpu"].milli_value() == max(requests)
    else:
        assert "cpu" not in max_requests


@given(st.lists(st.integers(min_value=1, max_value=4096), min_size=1, max_size=5), st.integers(1, 100))
def test_percentage_of_summed_memory(mebis, percent):
    containers = [container(f"c{i}", {"memory": f"{m}Mi"}) for i, m in enumerate(mebis)]
    resources = compute_resources(policy(limits={"memory": f"memory*{percent}%"}), app_pod(*containers), [])
    total_milli = sum(mebis) * 2**20 * 1000
    expected_milli = int(float(total_milli) * (percent / 100))
    assert Quantity.parse(resources["limits"]["memory"]).milli_value() == expected_milli


# --- through inject() ---


def injected(the_pod, *sets):
    the_pod = copy.deepcopy(the_pod)
    inject(the_pod, [copy.deepcopy(s) for s in sets], now=NOW)
    return the_pod


def test_inject_sets_sidecar_and_native_sidecar_resources():
    sidecar = {
        "name": "proxy", "image": "envoy", "podInjectPolicy": "BeforeAppContainer",
        "resourcesPolicy": policy(limits={"cpu": "cpu*10%"}, requests={"memory": "memory/2"}),
    }  # fmt: skip
    native = {
        "name": "logger", "image": "fluent", "restartPolicy": "Always",
        "resourcesPolicy": policy("max", regex="^app", limits={"memory": "memory"}),
    }  # fmt: skip
    the_pod = injected(app_pod(APP1, APP2), sidecarset(containers=[sidecar], init=[native]))
    by_name = {c["name"]: c for c in the_pod["spec"]["containers"] + the_pod["spec"]["initContainers"]}
    assert by_name["proxy"]["resources"] == {"limits": {"cpu": "300m"}, "requests": {"memory": "768Mi"}}
    assert by_name["logger"]["resources"] == {"limits": {"memory": "2Gi"}}
    assert "resourcesPolicy" not in by_name["proxy"] and "resourcesPolicy" not in by_name["logger"]
    # the app containers are untouched
    assert by_name["app1"]["resources"] == APP1["resources"]


def test_inject_leaves_the_cached_sidecarset_untouched():
    sidecar = {"name": "proxy", "image": "envoy", "resourcesPolicy": policy(limits={"cpu": "cpu"})}
    cached = sidecarset(containers=[sidecar])
    frozen = copy.deepcopy(cached)
    the_pod = app_pod(APP1)
    inject(the_pod, [cached], now=NOW)
    assert cached == frozen


def test_inject_refuses_a_pod_no_container_matches():
    sidecar = {
        "name": "proxy",
        "image": "envoy",
        "resourcesPolicy": policy(regex="^db$", limits={"cpu": "cpu"}),
    }
    with pytest.raises(InjectionError, match='no containers match the regex pattern "\\^db\\$"'):
        injected(app_pod(APP1), sidecarset(containers=[sidecar]))


def test_share_volume_device_policy_shares_app_devices():
    app = {
        "name": "app", "image": "db",
        "volumeDevices": [{"name": "disk0", "devicePath": "/dev/nvme1"}, {"name": "disk1", "devicePath": "/data"}],
    }  # fmt: skip
    sharing = {
        "name": "backup", "image": "b", "shareVolumeDevicePolicy": {"type": "enabled"},
        "volumeMounts": [{"name": "cfg", "mountPath": "/data"}],  # /data is taken: disk1 is not shared
    }  # fmt: skip
    private = {"name": "other", "image": "o", "shareVolumeDevicePolicy": {"type": "disabled"}}
    absent = {"name": "third", "image": "t"}
    volumes = [{"name": "cfg", "emptyDir": {}}]
    the_pod = injected(app_pod(app), sidecarset(containers=[sharing, private, absent], volumes=volumes))
    by_name = {c["name"]: c for c in the_pod["spec"]["containers"]}
    assert by_name["backup"]["volumeDevices"] == [{"name": "disk0", "devicePath": "/dev/nvme1"}]
    assert "volumeDevices" not in by_name["other"] and "volumeDevices" not in by_name["third"]
    assert "shareVolumeDevicePolicy" not in by_name["backup"]


def test_shared_devices_skip_other_sidecars_and_keep_own_devices():
    app = {"name": "app", "image": "db", "volumeDevices": [{"name": "disk0", "devicePath": "/dev/a"}]}
    earlier = {
        "name": "earlier", "image": "e", "env": [{"name": "IS_INJECTED", "value": "true"}],
        "volumeDevices": [{"name": "disk9", "devicePath": "/dev/z"}],
    }  # fmt: skip
    sharing = {
        "name": "backup", "image": "b", "shareVolumeDevicePolicy": {"type": "enabled"},
        "volumeDevices": [{"name": "disk1", "devicePath": "/dev/a"}],
    }  # fmt: skip
    the_pod = injected(app_pod(app, earlier), sidecarset(containers=[sharing]))
    backup = next(c for c in the_pod["spec"]["containers"] if c["name"] == "backup")
    assert backup["volumeDevices"] == [{"name": "disk1", "devicePath": "/dev/a"}]
