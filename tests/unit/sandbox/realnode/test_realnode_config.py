"""Prerequisite checks, containerd's per-node configuration, and finding leftover mounts."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kruise.sandbox.realnode import htpasswd, prereqs
from kruise.sandbox.realnode.containerd import ContainerdNode, NodePaths, containerd_config, hosts_toml
from kruise.sandbox.realnode.images import PAUSE_IMAGE, PRIVATE_REGISTRY
from kruise.sandbox.realnode.mounts import mounts_below
from kruise.sandbox.realnode.network import PodNetwork
from kruise.sandbox.realnode.registry import REALM, registry_config


def test_every_missing_binary_is_named_with_the_apt_line() -> None:
    with pytest.raises(prereqs.PrerequisitesMissing) as caught:
        prereqs.check(
            which=lambda name: None if name in {"runc", "docker-registry"} else f"/x/{name}", euid=lambda: 0
        )
    message = str(caught.value)
    assert "runc (package runc)" in message and "docker-registry (package docker-registry)" in message
    assert "containerd (package" not in message
    assert (
        "apt-get install -y containerd runc containernetworking-plugins docker-registry busybox-static"
        in message
    )


def test_non_root_is_refused() -> None:
    with pytest.raises(prereqs.PrerequisitesMissing, match="not root"):
        prereqs.check(which=lambda name: f"/x/{name}", euid=lambda: 1000)


def test_containerd_config_keeps_everything_under_the_node_directory(tmp_path: Path) -> None:
    paths = NodePaths(tmp_path / "node-1")
    config = tomllib.loads(containerd_config(paths))
    assert config["version"] == 2
    assert (config["root"], config["state"]) == (str(paths.root), str(paths.state))
    assert config["grpc"]["address"] == str(paths.socket)
    assert config["ttrpc"]["address"] == str(paths.ttrpc_socket)
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["restrict_oom_score_adj"] is True
    assert cri["netns_mounts_under_state_dir"] is True
    assert cri["sandbox_image"] == PAUSE_IMAGE
    assert cri["cni"]["conf_dir"] == str(paths.cni_conf_dir)
    assert cri["registry"]["config_path"] == str(paths.certs_dir)
    assert cri["containerd"]["runtimes"]["runc"]["options"]["Root"] == str(paths.runc_root)


def test_hosts_toml_sends_pulls_to_the_local_registry_only() -> None:
    hosts = tomllib.loads(hosts_toml("http://127.0.0.1:5000"))
    assert hosts == {
        "server": "http://127.0.0.1:5000",
        "host": {"http://127.0.0.1:5000": {"capabilities": ["pull", "resolve"], "skip_verify": True}},
    }


def test_mounts_below_a_directory_deepest_first() -> None:
    mountinfo = "\n".join(
        [
            "22 1 0:21 / / rw - ext4 /dev/vda rw",
            "30 22 0:40 / /srv/sb/nodes/n1/state/a/rootfs rw - overlay overlay rw",
            "31 22 0:41 / /srv/sb/nodes/n1/state rw - tmpfs tmpfs rw",
            "32 22 0:42 / /srv/sb\\040x/other rw - tmpfs tmpfs rw",
            "33 22 0:43 / /srv/sbother rw - tmpfs tmpfs rw",
        ]
    )
    assert mounts_below(Path("/srv/sb"), mountinfo) == [
        Path("/srv/sb/nodes/n1/state/a/rootfs"),
        Path("/srv/sb/nodes/n1/state"),
    ]
    assert mounts_below(Path("/srv/sb x"), mountinfo) == [Path("/srv/sb x/other")]


def test_private_registry_gets_its_own_hosts_file(tmp_path: Path) -> None:
    network = PodNetwork.create("198.18.0.0/16", "kruise-test")
    node = ContainerdNode(
        "node-1",
        tmp_path / "node-1",
        index=0,
        network=network,
        registry_url="http://127.0.0.1:5000",
        registries=("docker.io",),
        private_registries={PRIVATE_REGISTRY: "http://127.0.0.1:5001"},
    )
    node.write_config()
    servers = {
        folder.name: tomllib.loads((folder / "hosts.toml").read_text())["server"]
        for folder in node.paths.certs_dir.iterdir()
    }
    assert servers == {
        "docker.io": "http://127.0.0.1:5000",
        "_default": "http://127.0.0.1:5000",
        PRIVATE_REGISTRY: "http://127.0.0.1:5001",
    }


def test_registry_config_turns_on_htpasswd_auth_only_when_asked(tmp_path: Path) -> None:
    plain = registry_config(tmp_path / "storage", "127.0.0.1:5000")
    assert "auth" not in plain
    guarded = registry_config(tmp_path / "storage", "127.0.0.1:5001", tmp_path / "htpasswd")
    assert guarded["auth"] == {"htpasswd": {"realm": REALM, "path": str(tmp_path / "htpasswd")}}


def test_htpasswd_file_holds_bcrypt_hashes_the_registry_accepts(tmp_path: Path) -> None:
    path = tmp_path / "auth" / "htpasswd"
    htpasswd.write(path, {"kruise": "secret"})
    (line,) = path.read_text().splitlines()
    user, _, hashed = line.partition(":")
    assert user == "kruise" and hashed.startswith("$2b$")
    assert htpasswd.verify(line, "kruise", "secret")
    assert not htpasswd.verify(line, "kruise", "wrong")
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("user", "password", "field"),
    [("a:b", "pw", "user"), ("has space", "pw", "user"), ("", "pw", "user"), ("kruise", "", "password")],
)
def test_htpasswd_refuses_bad_accounts(user: str, password: str, field: str) -> None:
    with pytest.raises(ValueError, match=f"htpasswd {field}"):
        htpasswd.entry(user, password)


def test_a_versioned_file_requirement_is_found_by_its_glob(tmp_path: Path, monkeypatch) -> None:
    wanted = prereqs.Requirement("perl's bignum modules", "perl", tmp_path, "5.*/bignum.pm")
    monkeypatch.setattr(prereqs, "REQUIREMENTS", (wanted,))
    assert prereqs.missing() == [wanted]
    (tmp_path / "5.36").mkdir()
    (tmp_path / "5.36" / "bignum.pm").write_text("1;\n")
    assert prereqs.missing() == []
