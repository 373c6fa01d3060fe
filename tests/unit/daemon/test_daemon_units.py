"""kruise-daemon pure parts: flags, runtime discovery, NodeImage status, backoff, pull credentials,
and the committed CRI stubs matching api.proto."""

from __future__ import annotations

import base64
import json

import pytest

from kruise.daemon.cri import regen
from kruise.daemon.cri.client import RuntimeNotFound, discover_socket
from kruise.daemon.imagepuller import status as st
from kruise.daemon.options import parse_args


def test_flags_and_node_name_from_env():
    options = parse_args(["--addr", "127.0.0.1:0"], env={"NODE_NAME": "n1"})
    assert options.node_name == "n1" and (options.addr_host, options.addr_port) == ("127.0.0.1", 0)
    assert parse_args([], env={"NODE_NAME": "n1"}).addr_port == 10221
    assert parse_args(["--node-name", "n2"], env={"NODE_NAME": "n1"}).node_name == "n2"


@pytest.mark.parametrize(
    ("argv", "env", "flag"),
    [([], {}, "--node-name"), (["--addr", "nope"], {"NODE_NAME": "n"}, "--addr"),
     (["--feature-gates", "Nope=true"], {"NODE_NAME": "n"}, "--feature-gates")],
)  # fmt: skip
def test_bad_flags_exit_2_naming_the_flag(argv, env, flag, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv, env=env)
    assert exit_.value.code == 2
    assert flag in capsys.readouterr().err


def test_runtime_discovery(tmp_path):
    with pytest.raises(RuntimeNotFound, match="not found container runtime sock"):
        discover_socket(None, tmp_path)
    (tmp_path / "crio").mkdir()
    (tmp_path / "crio" / "crio.sock").touch()
    assert discover_socket(None, tmp_path) == tmp_path / "crio" / "crio.sock"
    (tmp_path / "containerd.sock").touch()
    assert discover_socket(None, tmp_path) == tmp_path / "containerd.sock"  # containerd is probed first
    assert discover_socket(f"unix://{tmp_path}/crio/crio.sock", "/unused") == tmp_path / "crio" / "crio.sock"
    with pytest.raises(RuntimeNotFound):
        discover_socket(str(tmp_path / "missing.sock"))


def test_node_image_status_counts_and_sorts():
    states = [
        st.TagState("nginx", "1.26", phase=st.PHASE_PULLING),
        st.TagState("nginx", "1.25", phase=st.PHASE_SUCCEEDED, progress=100, image_id="sha256:a"),
        st.TagState("redis", "7", phase=st.PHASE_FAILED, message="boom"),
    ]
    status = st.node_image_status(states)
    assert (status["desired"], status["succeeded"], status["failed"], status["pulling"]) == (3, 1, 1, 1)
    assert [t["tag"] for t in status["imageStatuses"]["nginx"]["tags"]] == ["1.25", "1.26"]
    assert status["imageStatuses"]["redis"]["tags"][0]["message"] == "boom"
    assert "imageID" not in status["imageStatuses"]["nginx"]["tags"][1]


def test_backoff_doubles_and_caps():
    assert st.backoff_delays(1) == []
    assert st.backoff_delays(4) == [1.0, 2.0, 4.0]
    assert st.backoff_delays(8)[-1] == 30.0


@pytest.mark.parametrize(
    ("image", "registry"),
    [("nginx:1.25", "docker.io"), ("library/nginx", "docker.io"), ("ghcr.io/a/b:1", "ghcr.io"),
     ("localhost/x", "localhost"), ("reg:5000/x", "reg:5000")],
)  # fmt: skip
def test_registry_of(image, registry):
    assert st.registry_of(image) == registry


def secret(config: dict, key: str = ".dockerconfigjson") -> dict:
    return {"data": {key: base64.b64encode(json.dumps(config).encode()).decode()}}


def test_credentials_from_docker_config():
    hub = secret({"auths": {"https://index.docker.io/v1/": {"username": "u", "password": "p"}}})
    ghcr = secret({"auths": {"ghcr.io": {"auth": base64.b64encode(b"me:tok").decode()}}})
    assert st.credentials_for("nginx:1", [ghcr, hub]) == {"username": "u", "password": "p"}
    creds = st.credentials_for("ghcr.io/x/y:1", [hub, ghcr])
    assert creds["username"] == "me" and creds["password"] == "tok"
    assert st.credentials_for("quay.io/x:1", [hub, ghcr]) is None
    legacy = secret({"quay.io": {"username": "q", "password": "w"}}, key=".dockercfg")
    assert st.credentials_for("quay.io/x:1", [legacy]) == {"username": "q", "password": "w"}


def test_committed_stubs_match_the_proto():
    from google.protobuf import descriptor_pb2

    from kruise.daemon.cri import api_pb2, api_pb2_grpc

    committed = descriptor_pb2.FileDescriptorProto()
    api_pb2.DESCRIPTOR.CopyToProto(committed)
    assert regen.canonical(committed) == regen.compile_file_descriptor(), (
        "daemon/cri stubs are stale: run python -m kruise.daemon.cri.regen"
    )
    for service in committed.service:
        servicer = getattr(api_pb2_grpc, f"{service.name}Servicer")
        assert all(hasattr(servicer, method.name) for method in service.method), service.name
