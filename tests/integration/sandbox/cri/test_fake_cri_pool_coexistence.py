"""The sandbox's CRI copy coexists with a default-pool ``runtime.v1`` client, like kruise-daemon's.

Each case runs in a fresh interpreter: registering ``runtime.v1`` in the default pool of the
test process would collide with kruise-daemon's real generated client later in the suite.
The child generates ordinary ``_pb2``/``_pb2_grpc`` modules from api.proto, imports them in
either order relative to the sandbox, and drives the sandbox's server with the generated stub.
"""

import importlib.util
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from kruise.sandbox.cri.regen import PROTO

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, sys.argv[1])
    order = sys.argv[2]

    def load_generated():
        import grpc, api_pb2, api_pb2_grpc
        return grpc, api_pb2, api_pb2_grpc

    if order == "default-first":
        grpc, pb, pb_grpc = load_generated()
    from kruise.sandbox.cri import FakeRuntime
    from kruise.sandbox.cri.schema import messages
    if order == "private-first":
        grpc, pb, pb_grpc = load_generated()

    async def main():
        runtime = FakeRuntime("n")
        server = await runtime.serve(sys.argv[1] + "/cri.sock")
        try:
            async with grpc.aio.insecure_channel(server.endpoint) as channel:
                images = pb_grpc.ImageServiceStub(channel)
                runtime_service = pb_grpc.RuntimeServiceStub(channel)
                pulled = await images.PullImage(pb.PullImageRequest(image=pb.ImageSpec(image="nginx")))
                assert pulled.image_ref == runtime.image_ref("nginx"), pulled
                version = await runtime_service.Version(pb.VersionRequest())
                assert version.runtime_api_version == "v1", version
        finally:
            await server.stop()
        assert messages.VersionRequest.DESCRIPTOR.file.pool is not pb.DESCRIPTOR.pool
        print("ok")

    asyncio.run(main())
    """
)


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None, reason="grpcio-tools (dev extra) missing")
@pytest.mark.parametrize("order", ["default-first", "private-first"])
def test_sandbox_copy_coexists_with_a_default_pool_client(order: str) -> None:
    with tempfile.TemporaryDirectory(prefix="cri-pool-", dir="/tmp") as gen:
        protoc = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTO.parent}",
            f"--python_out={gen}",
            f"--grpc_python_out={gen}",
            PROTO.name,
        ]
        subprocess.run(protoc, check=True, capture_output=True, timeout=60)
        assert (Path(gen) / "api_pb2.py").exists()
        child = subprocess.run(
            [sys.executable, "-c", CHILD, gen, order], capture_output=True, text=True, timeout=60
        )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == "ok"
