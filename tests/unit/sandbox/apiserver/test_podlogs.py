"""pods/log container choice, with kube-apiserver's ValidateContainer messages."""

from __future__ import annotations

import pytest

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.podlogs import choose_container


def pod(*containers: str, init: tuple[str, ...] = ()) -> dict:
    spec = {"containers": [{"name": c} for c in containers]}
    if init:
        spec["initContainers"] = [{"name": c} for c in init]
    return {"metadata": {"name": "p"}, "spec": spec}


def test_single_container_is_the_default():
    assert choose_container(pod("app"), "") == "app"


def test_init_containers_can_be_named():
    assert choose_container(pod("app", init=("setup",)), "setup") == "setup"


@pytest.mark.parametrize(
    "obj, requested, message",
    [
        (
            pod("a", "b", init=("i",)),
            "",
            "a container name must be specified for pod p, choose one of: [a b] "
            "or one of the init containers: [i]",
        ),
        (pod("a"), "x", "container x is not valid for pod p"),
        (pod(), "", "no containers in pod p"),
    ],
)
def test_bad_requests(obj, requested, message):
    with pytest.raises(StatusError) as caught:
        choose_container(obj, requested)
    assert caught.value.code == 400
    assert caught.value.message == message
