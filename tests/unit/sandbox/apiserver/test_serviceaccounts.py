"""The ServiceAccount admission plugin's pod mutation, as pure logic."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.serviceaccounts import MOUNT_PATH, admit_pod, namespace_objects, token_volume

ACCOUNTS = {("ns", "default"): {"metadata": {"name": "default"}}}


def lookup(ns: str, name: str):
    return ACCOUNTS.get((ns, name))


def a_pod(containers: int, inits: int) -> dict:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {
            "initContainers": [{"name": f"i{n}", "image": "busybox"} for n in range(inits)],
            "containers": [{"name": f"c{n}", "image": "nginx"} for n in range(containers)],
        },
    }


@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 2**32))
def test_one_volume_mounted_everywhere_and_readmission_is_a_no_op(containers, inits, seed):
    pod = a_pod(containers, inits)
    admit_pod(pod, lookup, random.Random(seed))
    [volume] = pod["spec"]["volumes"]
    assert volume == token_volume(volume["name"])
    for c in pod["spec"]["initContainers"] + pod["spec"]["containers"]:
        assert c["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}]
    again = copy.deepcopy(pod)
    admit_pod(again, lookup, random.Random(seed + 1))
    assert again == pod  # the reinvoked plugin reuses the volume it added


def test_a_container_added_later_gets_the_existing_volume():
    pod = a_pod(1, 0)
    admit_pod(pod, lookup)
    name = pod["spec"]["volumes"][0]["name"]
    pod["spec"]["containers"].insert(0, {"name": "sidecar", "image": "envoy"})
    admit_pod(pod, lookup)
    assert len(pod["spec"]["volumes"]) == 1
    assert pod["spec"]["containers"][0]["volumeMounts"][0]["name"] == name


def test_no_volume_when_no_container_needs_it():
    pod = a_pod(1, 0)
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "own", "mountPath": MOUNT_PATH}]
    admit_pod(pod, lookup)
    assert "volumes" not in pod["spec"]


def test_unknown_account_is_forbidden():
    pod = a_pod(1, 0)
    pod["spec"]["serviceAccountName"] = "ghost"
    with pytest.raises(StatusError) as info:
        admit_pod(pod, lookup)
    assert info.value.code == 403


def test_namespace_objects_carry_the_ca():
    (sa_key, sa), (cm_key, cm) = namespace_objects("team", b"PEM")
    assert sa_key == ("", "serviceaccounts") and sa["metadata"] == {"name": "default", "namespace": "team"}
    assert cm_key == ("", "configmaps") and cm["data"] == {"ca.crt": "PEM"}
