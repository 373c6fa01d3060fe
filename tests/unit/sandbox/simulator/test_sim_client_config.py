"""Kubeconfig loading for the simulator's own client."""

import base64
import ssl

import pytest
import yaml

from kruise.sandbox.simulator.client import Kubeconfig, resource_path


def write(tmp_path, cluster, user, current="ctx"):
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def test_bearer_token_and_plain_http(tmp_path):
    config = Kubeconfig(write(tmp_path, {"server": "http://127.0.0.1:6443/"}, {"token": "abc"}))
    assert config.server == "http://127.0.0.1:6443"
    assert config.headers == {"Authorization": "Bearer abc"}
    assert config.namespace == "team"
    assert config.verify is True


def test_token_file_relative_to_kubeconfig(tmp_path):
    (tmp_path / "token").write_text("from-file\n")
    config = Kubeconfig(write(tmp_path, {"server": "http://h"}, {"tokenFile": "token"}))
    assert config.headers["Authorization"] == "Bearer from-file"


def test_basic_auth(tmp_path):
    config = Kubeconfig(write(tmp_path, {"server": "http://h"}, {"username": "admin", "password": "pw"}))
    assert config.headers["Authorization"] == "Basic " + base64.b64encode(b"admin:pw").decode()


def test_insecure_https_disables_verification(tmp_path):
    config = Kubeconfig(
        write(tmp_path, {"server": "https://h", "insecure-skip-tls-verify": True}, {"token": "t"})
    )
    assert isinstance(config.verify, ssl.SSLContext)
    assert config.verify.verify_mode == ssl.CERT_NONE


def test_unknown_context_is_named(tmp_path):
    with pytest.raises(ValueError, match="current-context 'other' is not among contexts"):
        Kubeconfig(write(tmp_path, {"server": "http://h"}, {}, current="other"))


def test_missing_server_is_named(tmp_path):
    with pytest.raises(ValueError, match="cluster 'c' has no server"):
        Kubeconfig(write(tmp_path, {}, {}))


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (("v1", "pods", "default", "web", "status"), "/api/v1/namespaces/default/pods/web/status"),
        (("v1", "nodes", None, "node-1"), "/api/v1/nodes/node-1"),
        (("apps/v1", "deployments", "ns"), "/apis/apps/v1/namespaces/ns/deployments"),
        (
            ("coordination.k8s.io/v1", "leases", "kube-node-lease", "n"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n",
        ),
    ],
)
def test_resource_paths(args, path):
    assert resource_path(*args) == path
