"""TokenRequest (`serviceaccounts/<name>/token`) as kube-apiserver 1.36 serves it: a JWT naming the
account, which the emulator then authenticates as that account (JSON bodies; `kubectl create token`
sends protobuf, whose TokenRequest schema the emulator's tables do not hold yet)."""

from __future__ import annotations

import base64
import json

import pytest
import yaml

from kruise.sandbox.simulator.client import ApiError, Client

TOKEN = "/api/v1/namespaces/default/serviceaccounts/{}/token"


def request(seconds=None):
    spec = {} if seconds is None else {"expirationSeconds": seconds}
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    yield c
    await c.close()


def kubeconfig_with(emulator, tmp_path, token):
    config = yaml.safe_load(emulator.kubeconfig.read_text())
    config["users"][0]["user"] = {"token": token}
    path = tmp_path / f"as-{len(list(tmp_path.iterdir()))}"
    path.write_text(yaml.safe_dump(config))
    return path


async def test_a_requested_token_authenticates_as_the_account(emulator, client, tmp_path):
    reply = await client.create(TOKEN.format("default"), request(1200))
    assert (reply["kind"], reply["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    assert reply["spec"]["expirationSeconds"] == 1200
    token = reply["status"]["token"]
    body = claims(token)
    assert body["sub"] == "system:serviceaccount:default:default"
    assert body["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert body["exp"] - body["iat"] == 1200

    account = Client(kubeconfig_with(emulator, tmp_path, token))
    forged = Client(kubeconfig_with(emulator, tmp_path, token[:-2] + "xx"))
    try:
        names = {n["metadata"]["name"] for n in (await account.list("/api/v1/namespaces"))["items"]}
        assert "default" in names
        with pytest.raises(ApiError) as caught:
            await forged.list("/api/v1/namespaces")
        assert caught.value.status == 401
    finally:
        await account.close()
        await forged.close()


async def test_default_duration_is_an_hour_and_short_ones_are_refused(client):
    reply = await client.create(TOKEN.format("default"), request())
    assert reply["spec"]["expirationSeconds"] == 3600
    with pytest.raises(ApiError) as caught:
        await client.create(TOKEN.format("default"), request(300))
    assert caught.value.status == 422
    assert "spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes" in (
        caught.value.message
    )
    with pytest.raises(ApiError) as missing:
        await client.create(TOKEN.format("nobody"), request())
    assert missing.value.not_found
