"""Seed 002's SidecarSet hot upgrade on real nodes (`kruise sandbox up --runtime containerd`).

The seed's `hotupgrade-sidecarset` and `busybox` CloneSet run unchanged on the sandbox's stand-ins of
`openkruise/hotupgrade-sample`: kruise-webhook injects `sidecar-1` (sidecarv1) and `sidecar-2` (empty),
the kubelet runs each one's postStart `/migrate.sh` in the real container. A client pod elsewhere on
the bridge asks the sidecar's `GET /serve` at the pod's IP every 100 ms and logs each answer or
failure. The seed's `kubectl patch` to sidecarv2 then goes through kruise-manager: sidecar-2 is
restarted on sidecarv2, takes the listening socket over from sidecar-1 (its postStart hook holds it
until then), and only then is sidecar-1 put back on the empty image. Across the switch the client
counts zero failed requests, as does the sample's own main container (it exits on its first failure,
so its restartCount stays 0).
"""

from __future__ import annotations

import json

import pytest
from harness import SEED_002_HOT_CLONESET, SEED_002_HOT_SIDECARSET, Cluster, until

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]


EMPTY = "openkruise/hotupgrade-sample:empty"
SIDECARV2 = "openkruise/hotupgrade-sample:sidecarv2"
PATCH = f'[{{"op": "replace", "path": "/spec/containers/0/image", "value": "{SIDECARV2}"}}]'  # the seed's

# Every request's outcome on its own line: `ok <n> <body>` or `FAIL <n> <error>`. (Busybox 1.35's
# `wget -T` segfaults on a refused connection, hence `timeout`.)
CLIENT = r"""
n=0
while :; do
  n=$((n+1))
  if body=$(timeout 5 wget -q -O - "http://$TARGET:9091/serve" 2>&1); then
    echo "ok $n $body"
  else
    echo "FAIL $n $body" | tr '\n' ' '; echo
  fi
  sleep 0.1
done
"""


def client_pod(target_ip: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "hotupgrade-client", "namespace": "default"},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": "client",
                        "image": "busybox",
                        "command": ["sh", "-c", CLIENT],
                        "env": [{"name": "TARGET", "value": target_ip}],
                    }
                ],
            },
        }
    )


async def the_pod(cluster: Cluster) -> dict:
    _, out = await cluster.kubectl("get", "pods", "-l", "app=hotupgrade", "-o", "json")
    (pod,) = [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]
    return pod


def spec_image(pod: dict, name: str) -> str:
    return next(c["image"] for c in pod["spec"]["containers"] if c["name"] == name)


def status_of(pod: dict, name: str) -> dict:
    return next((s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name), {})


def all_ready(pod: dict) -> bool:
    statuses = pod["status"].get("containerStatuses") or []
    return len(statuses) == 3 and all(s.get("ready") for s in statuses)


async def client_log(cluster: Cluster) -> list[str]:
    _, out = await cluster.kubectl("logs", "hotupgrade-client")
    return out.splitlines()


def answered(version: str, at_least: int):
    def check(lines: list[str]) -> bool:
        return sum(f"version({version})" in line for line in lines) >= at_least

    return check


async def until_injecting(cluster: Cluster) -> None:
    """kruise-webhook injects into pods created after its cache holds the SidecarSet: poll a
    server-side dry run of a matching pod until it comes back with the sidecars."""
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "injection-probe", "namespace": "default", "labels": {"app": "hotupgrade"}},
        "spec": {"containers": [{"name": "probe", "image": "busybox"}]},
    }

    async def containers() -> int:
        code, out = await cluster.kubectl(
            "create", "--dry-run=server", "-f", "-", "-o", "json", stdin=json.dumps(probe), check=False
        )
        return len(json.loads(out)["spec"]["containers"]) if code == 0 else 0

    await until(containers, lambda count: count == 3, "hotupgrade-sidecarset in kruise-webhook's cache")


async def test_seed_hot_upgrade_serves_every_request_across_the_switch(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_HOT_SIDECARSET)
        await until_injecting(cluster)
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_HOT_CLONESET)
        before = await until(lambda: the_pod(cluster), all_ready, "busybox pod 3/3 ready", timeout=180)
        assert spec_image(before, "sidecar-1") == "openkruise/hotupgrade-sample:sidecarv1"
        assert spec_image(before, "sidecar-2") == EMPTY
        pod_name, pod_ip = before["metadata"]["name"], before["status"]["podIP"]

        await cluster.kubectl("apply", "-f", "-", stdin=client_pod(pod_ip))
        await cluster.kubectl("wait", "pod/hotupgrade-client", "--for=condition=Ready", "--timeout=120s")
        await until(
            lambda: client_log(cluster), answered("v1", 10), "the client hears sidecar v1", timeout=60
        )

        await cluster.kubectl("patch", "sidecarset", "hotupgrade-sidecarset", "--type=json", "-p", PATCH)
        after = await until(
            lambda: the_pod(cluster),
            lambda pod: (
                spec_image(pod, "sidecar-2") == SIDECARV2
                and spec_image(pod, "sidecar-1") == EMPTY
                and status_of(pod, "sidecar-1").get("image", "").endswith(EMPTY)
                and all_ready(pod)
            ),
            "sidecar-2 on sidecarv2 and sidecar-1 back on the empty image, all ready",
            timeout=180,
        )
        await cluster.kubectl(
            "wait", "sidecarset/hotupgrade-sidecarset", "--for=jsonpath={.status.updatedReadyPods}=1",
            "--timeout=120s",
        )  # fmt: skip
        lines = await until(
            lambda: client_log(cluster), answered("v2", 10), "the client hears sidecar v2", timeout=60
        )

        # zero failed requests from the client on the bridge, and answers switch from v1 to v2 once
        failures = [line for line in lines if not line.startswith("ok ")]
        assert failures == [], failures
        versions = ["v2" if "version(v2)" in line else "v1" for line in lines]
        switch = versions.index("v2")
        assert set(versions[:switch]) == {"v1"} and set(versions[switch:]) == {"v2"}, versions
        numbers = [int(line.split()[1]) for line in lines]
        assert numbers == list(range(1, len(lines) + 1))

        # the same pod, its IP kept; the sample's main container never saw a failure either
        assert after["metadata"]["uid"] == before["metadata"]["uid"]
        assert after["status"]["podIP"] == pod_ip
        assert status_of(after, "busybox")["restartCount"] == 0
        _, main = await cluster.kubectl("logs", pod_name, "-c", "busybox")
        assert "failed" not in main and "version(v2)" in main, main[-2000:]
        # the listener really moved: v1 handed it over, v2 received it
        assert status_of(after, "sidecar-1")["restartCount"] == 1
        assert status_of(after, "sidecar-2")["restartCount"] == 1
        _, old = await cluster.kubectl("logs", pod_name, "-c", "sidecar-1", "--previous")
        assert "listener handed over" in old, old
        _, new = await cluster.kubectl("logs", pod_name, "-c", "sidecar-2")
        assert "received the listening socket" in new and "serve(version=v2)" in new, new
    finally:
        for what in (
            ("pod", "hotupgrade-client"),
            ("cloneset", "busybox"),
            ("sidecarset", "hotupgrade-sidecarset"),
        ):
            await cluster.kubectl("delete", *what, "--ignore-not-found", "--wait=true", "--timeout=120s")
