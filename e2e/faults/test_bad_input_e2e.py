"""Fault scenario 8, bad input: a generated corpus of malformed admission requests against a real
kruise-webhook process over HTTPS.

The corpus (`tests/kit/admission_corpus.py`) takes a valid sample of every kind kruise-webhook is
configured for (Kruise kinds from docs/'s examples, pods, evictions and the deletion-protected built-in
kinds) and breaks each of its fields with the wrong values the field's type invites, sending it as
every operation the webhook entry takes (DELETE carries it as the old object); the AdmissionReview
envelope is broken too (truncated and invalid JSON, wrong content type, missing request fields). Every
answer must be an allow or a denial — none a 5xx or an error review with code >= 500, no dropped
connection — and the process must stay alive and healthy. A few malformed Kruise objects also go
through the sandbox's apiserver with a real `kubectl apply --dry-run=server`, so the error the user
reads is checked: it names the field. The per-kind table and the counts are printed (`-s`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid
from pathlib import Path

import httpx
import yaml
from harness import KRUISE_WEBHOOK_CONFIGS, Cluster, webhook_process_ready

from tests.kit.admission_corpus import Case, corpus
from tests.kit.admission_tally import Tally, outcome
from tests.kit.ports import free_port

# Gates that put more handlers in the path (deletion protection, PUB updates, image pull jobs, ...).
GATES = (
    "ResourcesDeletionProtection=true,ImagePullJobGate=true,ResourceDistributionGate=true,"
    "PodUnavailableBudgetUpdateGate=true,KruisePodReadinessGate=true,DeletionProtectionForCRDCascadingGate=true"
)
CLIENTS = 8
KUBECTL_KINDS_CASES = 1  # malformed objects per Kruise kind sent through kubectl


async def start_webhook(cluster: Cluster, port: int, certs: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", str(cluster.kubeconfig),
        "--namespace", "kruise-system", "--bind-address", "127.0.0.1", "--port", str(port),
        "--webhook-url", f"https://127.0.0.1:{port}", "--cert-dir", str(certs),
        "--shutdown-grace-seconds", "1", "--feature-gates", GATES,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def send_all(port: int, cases: list[Case]) -> Tally:
    tally = Tally()
    limit = asyncio.Semaphore(CLIENTS)
    async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{port}", verify=False, timeout=30.0) as http:

        async def one(case: Case) -> None:
            async with limit:
                try:
                    headers = {"content-type": case.content_type}
                    answer = await http.post(f"{case.path}?timeout=30s", content=case.body, headers=headers)
                    result, message = outcome(case, answer.status_code, answer.content)
                except httpx.TransportError as exc:
                    result, message = outcome(case, None, repr(exc).encode())
            tally.add(case, result, message)

        await asyncio.gather(*(one(case) for case in cases))
    return tally


async def healthy(port: int) -> bool:
    async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{port}", verify=False, timeout=5.0) as http:
        codes = [(await http.get(probe)).status_code for probe in ("/healthz", "/readyz")]
    return codes == [200, 200]


def through_kubectl(tally: Tally) -> list[Case]:
    """Per Kruise kind, the first CREATE of a wrong-typed field under `spec` that kruise-webhook refused
    naming the field over HTTPS: what a user's typo looks like, and what kubectl shows of it. (Values
    upstream lets through, such as a non-numeric string for an int-or-string, are not picked.)"""
    picked: dict[str, list[Case]] = {}
    for case, _message in tally.examples["denied_naming_field"]:
        kruise = case.obj is not None and "kruise.io/" in str(case.obj.get("apiVersion"))
        if not kruise or not case.what.startswith("CREATE "):
            continue
        if case.field and case.field.startswith("spec.") and "where" in case.what:
            chosen = picked.setdefault(case.kind, [])
            if len(chosen) < KUBECTL_KINDS_CASES:
                chosen.append(case)
    return [c for chosen in picked.values() for c in chosen]


async def test_malformed_admission_requests_are_refused_naming_the_field(
    sandbox_only: Cluster, tmp_path: Path
):
    cluster = sandbox_only
    ns = f"e2e-fault-bad-{uuid.uuid4().hex[:6]}"
    for name in ("kruise-system", ns):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))  # fmt: skip
    cases = corpus()
    port = free_port()
    webhook = await start_webhook(cluster, port, tmp_path / "certs")
    try:
        await webhook_process_ready(cluster, port)
        tally = await send_all(port, cases)
        alive = webhook.returncode is None and await healthy(port)

        user_errors: list[tuple[str, str, int, str]] = []
        for case in through_kubectl(tally):
            obj = {**case.obj, "metadata": {**case.obj["metadata"], "namespace": ns}}  # type: ignore[index]
            code, out = await cluster.kubectl(
                "apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(obj), check=False
            )
            user_errors.append((case.kind, case.field or "", code, out.strip()))
        named = sum(code != 0 and field in out for _, field, code, out in user_errors)
        internal = [e for e in user_errors if "nternal error" in e[3]]

        print(f"\nFAULT bad-input: {len(cases)} malformed requests over HTTPS, {CLIENTS} clients")
        print(tally.table())
        for result in ("internal_errors", "crashes", "denied_other"):
            for case, message in tally.examples[result][:5]:
                print(f"  {result}: {case.kind} {case.path} {case.what} [{case.field}]: {message[:160]}")
        print(f"kubectl apply --dry-run=server: {named}/{len(user_errors)} refused naming the field")
        for kind, field, code, out in user_errors:
            print(f"  {kind} [{field}] exit {code}: {out[:200]}")
        print(tally.summary())
        assert tally.total("internal_errors") == 0, tally.examples["internal_errors"][:10]
        assert tally.total("crashes") == 0, tally.examples["crashes"][:10]
        assert alive, "kruise-webhook is not alive and healthy after the corpus"
        assert not internal and named == len(user_errors), user_errors
    finally:
        # Stop the process first: alive, kruise-webhook re-creates its configurations, and one re-created
        # after the delete below (failurePolicy Fail, a dead port) failed the next tests on this cluster.
        if webhook.returncode is None:
            webhook.send_signal(signal.SIGTERM)
            await asyncio.wait_for(webhook.wait(), timeout=30)
        for kind, name in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the process
            await cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
