"""The benchmark-only bulk load: objects stored as given (uids kept, missing identity stamped, watchers
told), the whole body refused naming the line and field when one line is bad."""

from __future__ import annotations

import httpx
import orjson
import pytest

from kruise.sandbox.apiserver import bulkload
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.server import ApiServer
from kruise.sandbox.apiserver.threaded import serve_in_thread
from tests.kit.pods import pod


def ndjson(*objects: dict) -> bytes:
    return b"\n".join(orjson.dumps(o) for o in objects)


def running_pod(name: str, **meta: str) -> dict:
    """A stored running pod; `meta`: more metadata."""
    return pod(name, meta=meta, phase="Running", typed=True)


def test_objects_are_stored_as_given_and_watchers_see_them() -> None:
    server = ApiServer(tls=False)
    watcher = server.store.watch(("", "pods"), "", None, lambda _: True)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    body = ndjson(node, running_pod("a", uid="kept-uid"), running_pod("b"))
    assert bulkload.load(server, body + b"\n\n") == 3
    a, b = server.store.get(("", "pods"), "default", "a"), server.store.get(("", "pods"), "default", "b")
    assert a is not None and b is not None and server.store.get(("", "nodes"), "", "n1") is not None
    assert a["metadata"]["uid"] == "kept-uid" and a["status"] == {"phase": "Running"}
    assert b["metadata"]["uid"] and b["metadata"]["creationTimestamp"]
    assert int(b["metadata"]["resourceVersion"]) > int(a["metadata"]["resourceVersion"])
    assert [watcher.queue.get_nowait().type for _ in range(2)] == ["ADDED", "ADDED"]


@pytest.mark.parametrize(
    ("line", "named"),
    [
        (b"{not json", "not JSON"),
        (b"[1]", "must be a JSON object"),
        (orjson.dumps({"apiVersion": "v9", "kind": "Pod", "metadata": {"name": "x"}}), "apiVersion/kind"),
        (orjson.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {}}), "metadata.name"),
        (orjson.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}), "metadata.namespace"),
        (orjson.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x", "namespace": "d"}}),
         "metadata.namespace"),
    ],
)  # fmt: skip
def test_a_bad_line_refuses_the_whole_body_naming_line_and_field(line: bytes, named: str) -> None:
    server = ApiServer(tls=False)
    with pytest.raises(StatusError) as caught:
        bulkload.load(server, ndjson(running_pod("first")) + b"\n" + line)
    assert caught.value.code == 400
    assert "line 2" in str(caught.value.status()) and named in str(caught.value.status())
    assert server.store.get(("", "pods"), "default", "first") is None


@pytest.mark.parametrize(("enabled", "status"), [(True, 200), (False, 404)])
def test_the_path_is_served_only_when_enabled(enabled: bool, status: int) -> None:
    with serve_in_thread(tls=False, bulk_load=enabled) as server:
        response = httpx.post(
            server.url + bulkload.PATH,
            content=ndjson(running_pod("a")),
            headers={"Authorization": f"Bearer {server.token}"},
        )
    assert response.status_code == status
    if enabled:
        assert response.json() == {"kind": "BulkLoadResult", "loaded": 1}
