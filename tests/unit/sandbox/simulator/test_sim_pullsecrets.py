"""The kubelet's keyring over a pod's imagePullSecrets: which credentials a pull of an image tries."""

from __future__ import annotations

import base64
import json

from kruise.sandbox.simulator.noderuntime import RegistryAuth
from kruise.sandbox.simulator.pullsecrets import DOCKER_CFG, DOCKER_CONFIG_JSON, credentials, repository_of


def secret(auths: dict, kind: str = DOCKER_CONFIG_JSON) -> dict:
    key, body = (
        (".dockerconfigjson", {"auths": auths}) if kind == DOCKER_CONFIG_JSON else (".dockercfg", auths)
    )
    return {"type": kind, "data": {key: base64.b64encode(json.dumps(body).encode()).decode()}}


def auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def test_repository_of_normalizes_like_the_kubelet() -> None:
    assert repository_of("busybox") == "docker.io/library/busybox"
    assert repository_of("openkruise/hotupgrade-sample:busybox") == "docker.io/openkruise/hotupgrade-sample"
    assert repository_of("registry.x.test/private/busybox:latest") == "registry.x.test/private/busybox"
    assert repository_of("localhost:5000/app@sha256:abc") == "localhost:5000/app"


def test_the_registry_host_matches_and_auth_wins_over_username() -> None:
    found = credentials(
        "registry.x.test/private/busybox:latest",
        [
            secret(
                {
                    "registry.x.test": {
                        "username": "u",
                        "password": "p",
                        "auth": auth("kruise", "pw:with:colons"),
                    }
                }
            )
        ],
    )
    assert found == [
        RegistryAuth(username="kruise", password="pw:with:colons", server_address="registry.x.test")
    ]


def test_other_hosts_paths_and_ports_do_not_match() -> None:
    secrets = [
        secret({"other.test": {"auth": auth("a", "b")}}),
        secret({"registry.x.test/team": {"auth": auth("a", "b")}}),
        secret({"registry.x.test:5000": {"auth": auth("a", "b")}}),
    ]
    assert credentials("registry.x.test/private/busybox", secrets) == []
    assert credentials("registry.x.test:5000/private/busybox", secrets) == [
        RegistryAuth("a", "b", server_address="registry.x.test:5000")
    ]


def test_globs_schemes_v1_paths_and_most_specific_first() -> None:
    secrets = [
        secret({"https://*.x.test/v2/": {"auth": auth("wide", "1")}}),
        secret({"registry.x.test/private": {"auth": auth("narrow", "2")}}),
    ]
    found = credentials("registry.x.test/private/busybox", secrets)
    assert [a.username for a in found] == ["narrow", "wide"]


def test_docker_hub_keys_serve_images_without_a_host() -> None:
    hub = secret({"https://index.docker.io/v1/": {"auth": auth("hub", "h")}}, kind=DOCKER_CFG)
    assert [a.username for a in credentials("busybox", [hub])] == ["hub"]
    assert [a.username for a in credentials("docker.io/openkruise/x:1", [hub])] == ["hub"]
    assert credentials("quay.io/x/y", [hub]) == []


def test_secrets_of_other_types_or_unreadable_are_skipped() -> None:
    opaque = {**secret({"registry.x.test": {"auth": auth("a", "b")}}), "type": "Opaque"}
    broken = {"type": DOCKER_CONFIG_JSON, "data": {".dockerconfigjson": "not base64 json"}}
    assert credentials("registry.x.test/private/busybox", [opaque, broken]) == []
