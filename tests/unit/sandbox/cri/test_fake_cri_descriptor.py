"""The committed descriptor matches api.proto, lives in a private pool, and keeps CRI wire numbers."""

import base64
import importlib.util

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool

from kruise.sandbox.cri._descriptor import DESCRIPTOR_SET_B64
from kruise.sandbox.cri.schema import PACKAGE, POOL, enum_value, message_class, messages, rpcs


def _committed() -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode("".join(DESCRIPTOR_SET_B64)))


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None, reason="grpcio-tools (dev extra) missing")
def test_committed_descriptor_matches_api_proto() -> None:
    from kruise.sandbox.cri.regen import compile_descriptor_set

    fresh = descriptor_pb2.FileDescriptorSet.FromString(compile_descriptor_set())
    assert fresh == _committed(), "api.proto changed: run `python -m kruise.sandbox.cri.regen` and commit"


def test_messages_live_in_a_private_pool() -> None:
    cls = messages.VersionRequest
    assert cls.DESCRIPTOR.file.pool is POOL
    assert POOL is not descriptor_pool.Default()
    assert cls.DESCRIPTOR.full_name == f"{PACKAGE}.VersionRequest"


def test_unknown_message_is_a_clear_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"no message runtime\.v1\.Nope"):
        _ = messages.Nope


def test_rpc_paths_are_the_cri_paths() -> None:
    paths = {rpc.path for rpc in rpcs()}
    required = {
        "/runtime.v1.RuntimeService/" + name
        for name in [
            *("Version", "RunPodSandbox", "StopPodSandbox", "RemovePodSandbox", "PodSandboxStatus"),
            *("ListPodSandbox", "CreateContainer", "StartContainer", "StopContainer", "RemoveContainer"),
            *("ListContainers", "ContainerStatus", "ExecSync", "Exec", "Attach", "UpdateContainerResources"),
        ]
    } | {
        "/runtime.v1.ImageService/" + name
        for name in ["ListImages", "ImageStatus", "PullImage", "RemoveImage", "ImageFsInfo"]
    }
    assert paths == required


# Field numbers are the CRI wire protocol; a wrong one silently drops data between runtimes.
# Written as in the reference digest: "field=number ...".
WIRE_NUMBERS = {
    "VersionResponse": "version=1 runtime_name=2 runtime_version=3 runtime_api_version=4",
    "ImageSpec": "image=1 annotations=2 user_specified_image=18 runtime_handler=19 image_ref=20",
    "AuthConfig": "username=1 password=2 auth=3 server_address=4 identity_token=5 registry_token=6",
    "PullImageRequest": "image=1 auth=2 sandbox_config=3",
    "PullImageResponse": "image_ref=1",
    "ExecRequest": "container_id=1 cmd=2 tty=3 stdin=4 stdout=5 stderr=6",
    "ExecResponse": "url=1",
    "AttachRequest": "container_id=1 stdin=2 tty=3 stdout=4 stderr=5",
    "AttachResponse": "url=1",
    "Image": "id=1 repo_tags=2 repo_digests=3 size=4 uid=5 username=6 spec=7 pinned=8",
    "ImageStatusRequest": "image=1 verbose=2",
    "ImageStatusResponse": "image=1 info=2",
    "ContainerFilter": "id=1 state=2 pod_sandbox_id=3 label_selector=4",
    "ContainerMetadata": "name=1 attempt=2",
    "Container": "id=1 pod_sandbox_id=2 metadata=3 image=4 image_ref=5 state=6 created_at=7 labels=8 "
    "annotations=9 image_id=10",
    "ContainerStatus": "id=1 metadata=2 state=3 created_at=4 started_at=5 finished_at=6 exit_code=7 image=8 "
    "image_ref=9 reason=10 message=11 labels=12 annotations=13 log_path=15 image_id=17",
    "ContainerStatusRequest": "container_id=1 verbose=2",
    "ContainerStatusResponse": "status=1 info=2",
    "StopContainerRequest": "container_id=1 timeout=2",
    "PodSandboxFilter": "id=1 state=2 label_selector=3",
    "PodSandboxMetadata": "name=1 uid=2 namespace=3 attempt=4",
    "PodSandbox": "id=1 metadata=2 state=3 created_at=4 labels=5 annotations=6 runtime_handler=7",
    "ListPodSandboxResponse": "items=1",
    "PodSandboxStatus": "id=1 metadata=2 state=3 created_at=4 network=5 labels=7 annotations=8 "
    "runtime_handler=9",
    "PodSandboxStatusResponse": "status=1 info=2 containers_statuses=3 timestamp=4",
    "PodSandboxConfig": "metadata=1 hostname=2 log_directory=3 dns_config=4 port_mappings=5 labels=6 "
    "annotations=7",
    "RunPodSandboxRequest": "config=1 runtime_handler=2",
    "CreateContainerRequest": "pod_sandbox_id=1 config=2 sandbox_config=3",
    "ContainerConfig": "metadata=1 image=2 command=3 args=4 working_dir=5 envs=6 labels=9 annotations=10 "
    "log_path=11",
    "ExecSyncRequest": "container_id=1 cmd=2 timeout=3",
    "ExecSyncResponse": "stdout=1 stderr=2 exit_code=3",
    "FilesystemUsage": "timestamp=1 fs_id=2 used_bytes=3 inodes_used=4",
    "ImageFsInfoResponse": "image_filesystems=1 container_filesystems=2",
}


@pytest.mark.parametrize("message", sorted(WIRE_NUMBERS))
def test_field_numbers_match_the_cri(message: str) -> None:
    expected = {
        name: int(number) for name, number in (pair.split("=") for pair in WIRE_NUMBERS[message].split())
    }
    fields = message_class(message).DESCRIPTOR.fields_by_name
    assert {name: fields[name].number for name in expected} == expected


@pytest.mark.parametrize(
    ("enum", "name", "number"),
    [
        ("ContainerState", "CONTAINER_CREATED", 0),
        ("ContainerState", "CONTAINER_RUNNING", 1),
        ("ContainerState", "CONTAINER_EXITED", 2),
        ("ContainerState", "CONTAINER_UNKNOWN", 3),
        ("PodSandboxState", "SANDBOX_READY", 0),
        ("PodSandboxState", "SANDBOX_NOTREADY", 1),
    ],
)
def test_enum_numbers_match_the_cri(enum: str, name: str, number: int) -> None:
    assert enum_value(enum, name) == number


def test_messages_round_trip_on_the_wire() -> None:
    request = messages.ListContainersRequest(
        filter=messages.ContainerFilter(
            pod_sandbox_id="abc", state=messages.ContainerStateValue(state=1), label_selector={"k": "v"}
        )
    )
    assert messages.ListContainersRequest.FromString(request.SerializeToString()) == request
