"""In-cluster configuration: client-go's rules, and the service account directory override."""

from __future__ import annotations

from pathlib import Path

import pytest

from kruise.kube.client import Client
from kruise.kube.incluster import (
    SERVICE_ACCOUNT_DIR,
    NotInCluster,
    in_cluster_paths,
    running_in_pod,
)
from kruise.sandbox.apiserver.tls import generate

CA_PEM = generate().ca_pem


def account_dir(root: Path, token: str = "t0ken") -> Path:
    directory = root / "serviceaccount"
    directory.mkdir()
    (directory / "token").write_text(token)
    (directory / "ca.crt").write_bytes(CA_PEM)
    (directory / "namespace").write_text("kruise-system")
    return directory


@pytest.mark.parametrize(
    ("env", "inside"),
    [
        ({}, False),
        ({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, False),
        ({"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": "443"}, False),
        ({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}, True),
    ],
)
def test_running_in_pod_needs_both_service_variables(env, inside):
    assert running_in_pod(env) is inside


def test_paths_default_to_the_standard_directory():
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(NotInCluster, match=f"open {SERVICE_ACCOUNT_DIR}/token: no such file"):
        in_cluster_paths(env)


def test_paths_follow_the_runtime_s_directory_and_bracket_ipv6(tmp_path):
    directory = account_dir(tmp_path)
    env = {
        "KUBERNETES_SERVICE_HOST": "fd00::1",
        "KUBERNETES_SERVICE_PORT": "6443",
        "KUBERNETES_SERVICE_ACCOUNT_DIR": str(directory),
    }
    paths = in_cluster_paths(env)
    assert paths.token_file == directory / "token"
    assert paths.ca_file == directory / "ca.crt"
    assert paths.namespace_file.read_text() == "kruise-system"
    assert paths.server == "https://[fd00::1]:6443"


def test_missing_variables_are_named():
    with pytest.raises(
        NotInCluster, match="KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"
    ):
        in_cluster_paths({})


def test_missing_ca_is_named(tmp_path):
    directory = account_dir(tmp_path)
    (directory / "ca.crt").unlink()
    env = {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": "6443",
        "KUBERNETES_SERVICE_ACCOUNT_DIR": str(directory),
    }
    with pytest.raises(NotInCluster, match=r"ca\.crt: no such file"):
        in_cluster_paths(env)


async def test_client_uses_the_pod_s_server_token_and_ca(tmp_path):
    directory = account_dir(tmp_path, token="s3cret")
    env = {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": "6443",
        "KUBERNETES_SERVICE_ACCOUNT_DIR": str(directory),
    }
    client = Client.in_cluster(env)
    try:
        configuration = client.api_client.configuration
        assert client.host == "https://127.0.0.1:6443"
        assert configuration.ssl_ca_cert == str(directory / "ca.crt")
        assert await configuration.get_api_key_with_prefix("BearerToken") == "Bearer s3cret"
    finally:
        await client.close()


async def test_from_environment_prefers_in_cluster_inside_a_pod(tmp_path, monkeypatch):
    directory = account_dir(tmp_path)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.7")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("KUBERNETES_SERVICE_ACCOUNT_DIR", str(directory))
    client = await Client.from_environment()
    try:
        assert client.host == "https://127.0.0.7:443"
    finally:
        await client.close()
