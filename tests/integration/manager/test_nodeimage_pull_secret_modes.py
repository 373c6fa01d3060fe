"""NodeImage pull secret clean-up against the emulator for an object written at v1beta1: the manager
reads it at v1alpha1, finds `mode: batch` in the conversion-data annotation, keeps that reference
though its Secret is gone, and writes the annotation back so a v1beta1 reader still sees the mode.

The manager fixture runs no conversion webhook, so the object is created at v1alpha1 exactly as the
conversion writes it (`kruise.api.conversion.convert`), and read back at v1beta1 the same way."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kruise.api.conversion import STASH_ANNOTATION, convert
from kruise.kube.clock import rfc3339
from kruise.kube.resources import NODEIMAGES, SECRETS
from kruise.manager.controllers.nodeimage import SETUP

NAME = "virtual"
ALPHA, BETA = "apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"


@pytest.fixture
def controller_setups():
    return [SETUP]


def ref(name, mode=None):
    return {"namespace": "default", "name": name, **({"mode": mode} if mode else {})}


async def test_batch_reference_to_a_missing_secret_is_kept_with_its_mode(kruise_cluster):
    client = kruise_cluster.client
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "here", "namespace": "default"},
              "type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "e30="}}  # fmt: skip
    await client.create(SECRETS, secret)
    secrets = kruise_cluster.context.informers.informer(SECRETS)

    async def cached():  # the controller judges Secrets by its cache
        return secrets.get("default/here")

    await kruise_cluster.until(cached, lambda s: s is not None)

    beta = {
        "apiVersion": BETA,
        "kind": "NodeImage",
        "metadata": {"name": NAME, "labels": {"apps.kruise.io/fake-nodeimage": "true"}},
        "spec": {
            "images": {
                "nginx": {
                    "pullSecrets": [ref("batch-gone", "batch"), ref("gone"), ref("here")],
                    "tags": [{"tag": "1.25", "version": 0, "createdAt": rfc3339(datetime.now(UTC))}],
                }
            }
        },
    }
    await client.create(NODEIMAGES, convert(beta, ALPHA))

    async def read():
        return await client.get(NODEIMAGES, NAME)

    def secrets_of(obj):
        return obj["spec"]["images"]["nginx"].get("pullSecrets")

    stored = await kruise_cluster.until(read, lambda o: len(secrets_of(o)) == 2)
    assert secrets_of(stored) == [ref("batch-gone"), ref("here")]
    assert secrets_of(convert(stored, BETA)) == [ref("batch-gone", "batch"), ref("here")]

    # the Secret of the plain reference goes too; an unrelated write wakes the controller
    await client.delete(SECRETS, "here", "default")
    await kruise_cluster.until(cached, lambda s: s is None)
    await client.patch(NODEIMAGES, NAME, {"metadata": {"annotations": {"poke": "1"}}})
    stored = await kruise_cluster.until(read, lambda o: len(secrets_of(o)) == 1)
    assert secrets_of(stored) == [ref("batch-gone")]
    assert stored["metadata"]["annotations"]["poke"] == "1"
    assert STASH_ANNOTATION in stored["metadata"]["annotations"]
    assert secrets_of(convert(stored, BETA)) == [ref("batch-gone", "batch")]
