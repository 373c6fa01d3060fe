"""e2e plumbing: run ``kruise sandbox up`` as a real process and kubectl against a cluster."""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import httpx

T = TypeVar("T")

E2E_NODES = 2
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


def kubectl_binary() -> str:
    beside = Path(sys.executable).parent / "kubectl"
    return str(beside) if beside.exists() else (shutil.which("kubectl") or "kubectl")


def kruise_binary() -> list[str]:
    beside = Path(sys.executable).parent / "kruise"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "kruise.cli.main"]


@dataclass
class SandboxProcess:
    """A running ``kruise sandbox up``: its output lines arrive on a queue read by a thread."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    output: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, *args: str) -> SandboxProcess:
        process = subprocess.Popen(
            [*kruise_binary(), "sandbox", "up", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        running = cls(process)
        threading.Thread(target=running._pump, daemon=True).start()
        return running

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for(self, prefix: str, timeout: float) -> str:
        """The first output line starting with ``prefix``; fails with the output so far otherwise."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} line within {timeout}s; output: {self.output}") from None
            if line is None:
                raise AssertionError(
                    f"sandbox exited ({self.process.wait()}) before {prefix!r}; output: {self.output}"
                )
            self.output.append(line)
            if line.startswith(prefix):
                return line

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=STOP_TIMEOUT)


def ready_kubeconfig(line: str) -> Path:
    fields = dict(part.split("=", 1) for part in line.split()[1:])
    return Path(fields["kubeconfig"])


@dataclass(frozen=True)
class Cluster:
    kubeconfig: Path
    is_sandbox: bool
    nodes: int | None  # known only for the sandbox
    log_dir: Path | None = None  # where a host-process sandbox's kruise processes log

    async def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            kubectl_binary(),
            "--kubeconfig",
            str(self.kubeconfig),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else None,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await process.communicate(stdin.encode() if stdin is not None else None)
        text = out.decode(errors="replace")
        if check and process.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({process.returncode}): {text}")
        return process.returncode or 0, text


PLUGIN_DIR = Path(sys.executable).parent  # where pip installed the kubectl-kruise script


async def kubectl_kruise(
    cluster: Cluster, *args: str, check: bool = True, timeout: float = 90.0
) -> tuple[int, str, str]:
    """`kubectl kruise ...` as a user runs it: kubectl finds the plugin on PATH; it reads KUBECONFIG."""
    env = {**os.environ, "PATH": f"{PLUGIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}",
           "KUBECONFIG": str(cluster.kubeconfig)}  # fmt: skip
    process = await asyncio.create_subprocess_exec(
        kubectl_binary(), "kruise", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    async with asyncio.timeout(timeout):
        out, err = await process.communicate()
    code = process.returncode or 0
    if check and code != 0:
        raise AssertionError(
            f"kubectl kruise {' '.join(args)} failed ({code}): {out.decode()} {err.decode()}"
        )
    return code, out.decode(), err.decode()


async def json_documents(stream: asyncio.StreamReader) -> AsyncIterator[dict]:
    """The JSON documents `kubectl get --watch -o json` writes one after another (pretty-printed, no
    separator), each as soon as it is complete; ends with the stream. Bytes are decoded incrementally, so
    a character split between two reads stays whole."""
    decoder, text = json.JSONDecoder(), codecs.getincrementaldecoder("utf-8")("replace")
    buffer = ""
    while chunk := await stream.read(65536):
        buffer += text.decode(chunk)
        while buffer := buffer.lstrip():
            try:
                document, end = decoder.raw_decode(buffer)
            except json.JSONDecodeError:
                break
            buffer = buffer[end:]
            yield document


async def until(
    probe: Callable[[], Awaitable[T]], done: Callable[[T], object], what: str, timeout: float = 60.0
) -> T:
    """Poll ``probe`` (kubectl reads) until ``done`` holds for its value; fail naming ``what`` and the
    last value when the deadline passes. For states `kubectl wait` cannot express (an object that
    does not exist yet, a condition across several objects)."""
    last: T | None = None
    try:
        async with asyncio.timeout(timeout):
            while True:
                last = await probe()
                if done(last):
                    return last
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(f"{what} not reached within {timeout}s; last seen: {last!r}") from None


KRUISE_WEBHOOK_CONFIGS = (
    ("mutatingwebhookconfiguration", "kruise-mutating-webhook-configuration"),
    ("validatingwebhookconfiguration", "kruise-validating-webhook-configuration"),
)


async def webhook_process_ready(cluster: Cluster, port: int, timeout: float = 60.0) -> None:
    """Until a `kruise-webhook` process started on 127.0.0.1:`port` answers /readyz and both of its
    configurations carry a caBundle. Both are needed: the process writes the caBundle before its
    HTTPS server listens (as upstream's certificate controller does), so a caBundle alone lets the
    apiserver call a port nobody listens on yet."""

    async def ready() -> bool:
        try:
            async with httpx.AsyncClient(verify=False, timeout=5.0) as http:
                if (await http.get(f"https://127.0.0.1:{port}/readyz")).status_code != 200:
                    return False
        except httpx.HTTPError:
            return False
        for kind, name in KRUISE_WEBHOOK_CONFIGS:
            code, out = await cluster.kubectl("get", kind, name, "-o", "json", check=False)
            if code != 0 or not json.loads(out)["webhooks"][0]["clientConfig"].get("caBundle"):
                return False
        return True

    await until(ready, bool, f"kruise-webhook on port {port} ready and configured", timeout=timeout)


SEED_002_CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: cs-demo
spec:
  replicas: 3
  selector:
    matchLabels:
      app: cs
  template:
    metadata:
      labels:
        app: cs
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 80
"""
"""Seed 002's first CloneSet (cs-demo, 3 x nginx:alpine), as the tutorial applies it."""


SEED_002_SIDECARSET = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: test-sidecarset
spec:
  selector:
    matchLabels:
      app: nginx
  updateStrategy:
    type: RollingUpdate
    maxUnavailable: 1
  containers:
  - name: sidecar1
    image: busybox
    command: ["sleep", "999d"]
    volumeMounts:
    - name: log-volume
      mountPath: /var/log
  volumes: # this field will be merged into pod.spec.volumes
  - name: log-volume
    emptyDir: {}
"""
"""Seed 002's SidecarSet (test-sidecarset: sidecar1 into `app=nginx` pods), as the tutorial applies it."""

SEED_002_POD = """
apiVersion: v1
kind: Pod
metadata:
  labels:
    app: nginx # matches the SidecarSet's selector
  name: test-pod
spec:
  containers:
  - name: app
    image: nginx:1.7.9
"""
"""Seed 002's test-pod that SEED_002_SIDECARSET selects, as the tutorial applies it."""


SAMPLE_CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: sample
spec:
  replicas: 3
  selector:
    matchLabels:
      app: sample
  template:
    metadata:
      labels:
        app: sample
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
"""
"""A three-replica nginx CloneSet `sample` (app=sample): the smallest workload proving an install works."""


SEED_002_HOT_SIDECARSET = """
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: hotupgrade-sidecarset
spec:
  selector:
    matchLabels:
      app: hotupgrade
  containers:
  - name: sidecar
    image: openkruise/hotupgrade-sample:sidecarv1
    imagePullPolicy: Always
    lifecycle:
      postStart:
        exec:
          command:
          - /bin/sh
          - /migrate.sh
    upgradeStrategy:
      upgradeType: HotUpgrade
      hotUpgradeEmptyImage: openkruise/hotupgrade-sample:empty
"""
"""Seed 002's hot-upgrade SidecarSet (sidecarv1 with the empty image as its hot-upgrade standby), verbatim."""

SEED_002_HOT_CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  labels:
    app: hotupgrade
  name: busybox
spec:
  replicas: 1
  selector:
    matchLabels:
      app: hotupgrade
  template:
    metadata:
      labels:
        app: hotupgrade
    spec:
      containers:
        - name: busybox
          image: openkruise/hotupgrade-sample:busybox
"""
"""Seed 002's one-replica CloneSet that the hot-upgrade SidecarSet selects, verbatim."""
