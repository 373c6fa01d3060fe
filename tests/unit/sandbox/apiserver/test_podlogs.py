"""pods/log container choice, with kube-apiserver's ValidateContainer messages."""

from __future__ import annotations

import pytest

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.podlogs import choose_container
from tests.kit.pods import pod


def pod_of(*containers: str, init: tuple[str, ...] = ()) -> dict:
    """Pod p of `containers` and `init` containers, by name only."""
    return pod(
        namespace=None,
        containers=[{"name": c} for c in containers],
        initContainers=[{"name": c} for c in init] if init else None,
    )


def test_single_container_is_the_default():
    assert choose_container(pod_of("app"), "") == "app"


def test_init_containers_can_be_named():
    assert choose_container(pod_of("app", init=("setup",)), "setup") == "setup"


@pytest.mark.parametrize(
    "obj, requested, message",
    [
        (
            pod_of("a", "b", init=("i",)),
            "",
            "a container name must be specified for pod p, choose one of: [a b] "
            "or one of the init containers: [i]",
        ),
        (pod_of("a"), "x", "container x is not valid for pod p"),
        (pod_of(), "", "no containers in pod p"),
    ],
)
def test_bad_requests(obj, requested, message):
    with pytest.raises(StatusError) as caught:
        choose_container(obj, requested)
    assert caught.value.code == 400
    assert caught.value.message == message
