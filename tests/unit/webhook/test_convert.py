"""`/convert`: ConversionReview in, ConversionReview out, through the full webhook app."""

from __future__ import annotations

import json

import httpx
import pytest

from kruise.api.conversion import STASH_ANNOTATION

JSON = {"content-type": "application/json"}
G = "apps.kruise.io"


def review(desired: str, *objects: dict, api_version: str = "apiextensions.k8s.io/v1") -> dict:
    request = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "desiredAPIVersion": desired,
        "objects": list(objects),
    }
    return {"apiVersion": api_version, "kind": "ConversionReview", "request": request}


def daemonset(version: str, **spec: object) -> dict:
    return {
        "apiVersion": f"{G}/{version}",
        "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "default"},
        "spec": spec,
    }


async def post(client: httpx.AsyncClient, body: object) -> httpx.Response:
    return await client.post("/convert", content=json.dumps(body), headers=JSON)


async def test_converts_every_object_and_echoes_the_uid(client: httpx.AsyncClient) -> None:
    alpha = daemonset("v1alpha1", updateStrategy={"rollingUpdate": {"rollingUpdateType": "Surging"}})
    alpha["metadata"]["annotations"] = {"daemonset.kruise.io/progressive-create-pod": "true"}
    cloneset = {"apiVersion": f"{G}/v1alpha1", "kind": "CloneSet", "metadata": {"name": "c"}, "spec": {}}
    resp = await post(client, review(f"{G}/v1beta1", alpha, cloneset))
    assert resp.status_code == 200
    body = resp.json()
    assert body["apiVersion"] == "apiextensions.k8s.io/v1" and body["kind"] == "ConversionReview"
    response = body["response"]
    assert response["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002"
    assert response["result"] == {"status": "Success"}
    converted_ds, converted_cs = response["convertedObjects"]
    assert converted_ds["apiVersion"] == f"{G}/v1beta1"
    assert converted_ds["spec"]["scaleStrategy"] == {"partitionedScaling": True}
    assert converted_ds["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] == "Standard"
    assert STASH_ANNOTATION in converted_ds["metadata"]["annotations"]
    assert converted_cs["spec"] == {"scaleStrategy": {"enablePVCReuse": True}}

    back = await post(client, review(f"{G}/v1alpha1", *response["convertedObjects"]))
    assert back.json()["response"]["convertedObjects"] == [alpha, cloneset]


async def test_v1beta1_reviews_are_answered_in_kind(client: httpx.AsyncClient) -> None:
    body = review(f"{G}/v1alpha1", daemonset("v1beta1"), api_version="apiextensions.k8s.io/v1beta1")
    resp = await post(client, body)
    assert resp.json()["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert resp.json()["response"]["result"]["status"] == "Success"


async def test_one_bad_object_fails_the_review_naming_it_and_the_field(client: httpx.AsyncClient) -> None:
    bad = daemonset("v1beta1", scaleStrategy={"partitionedScaling": "yes"})
    resp = await post(client, review(f"{G}/v1alpha1", daemonset("v1beta1"), bad))
    assert resp.status_code == 200
    response = resp.json()["response"]
    assert response["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002"
    assert "convertedObjects" not in response
    assert response["result"]["status"] == "Failure"
    assert response["result"]["message"] == (
        "objects[1] (DaemonSet default/ds): "
        "spec.scaleStrategy.partitionedScaling: must be a boolean, got 'yes'"
    )


async def test_unconvertible_kind_and_version_fail(client: httpx.AsyncClient) -> None:
    ejob = {"apiVersion": f"{G}/v1alpha1", "kind": "EphemeralJob", "metadata": {"name": "e"}}
    message = (await post(client, review(f"{G}/v1beta1", ejob))).json()["response"]["result"]["message"]
    assert (
        message
        == "objects[0] (EphemeralJob e): kind: EphemeralJob.apps.kruise.io has no conversion between versions"
    )
    resp = await post(client, review(f"{G}/v2", daemonset("v1alpha1")))
    assert (
        "desiredAPIVersion: version 'v2' is not one of v1alpha1, v1beta1"
        in resp.json()["response"]["result"]["message"]
    )


async def test_empty_object_list_succeeds(client: httpx.AsyncClient) -> None:
    resp = await post(client, review(f"{G}/v1beta1"))
    assert resp.json()["response"] == {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "convertedObjects": [],
        "result": {"status": "Success"},
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json", "request body is not JSON"),
        ([], "body must be an object"),
        ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "apiVersion/kind must be one of"),
        ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}, "request is required"),
        (
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview",
                "request": {"desiredAPIVersion": "x"},
            },
            "request.uid is required",
        ),
        (
            {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": {"uid": "u"}},
            "request.desiredAPIVersion is required",
        ),
    ],
)
async def test_malformed_reviews_get_a_400(client: httpx.AsyncClient, body: object, message: str) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    resp = await client.post("/convert", content=content, headers=JSON)
    assert resp.status_code == 400
    assert message in resp.json()["message"]


async def test_wrong_content_type_is_a_400(client: httpx.AsyncClient) -> None:
    resp = await client.post(
        "/convert", content=json.dumps(review(f"{G}/v1beta1")), headers={"content-type": "text/plain"}
    )
    assert resp.status_code == 400
    assert "expected application/json" in resp.json()["message"]


async def test_requests_are_counted(client: httpx.AsyncClient) -> None:
    await post(client, review(f"{G}/v1beta1"))
    text = (await client.get("/metrics")).text
    assert 'controller_runtime_webhook_requests_total{code="200",webhook="/convert"} 1.0' in text


async def test_converts_the_kinds_master_moved_last(client: httpx.AsyncClient) -> None:
    """UnitedDeployment, PersistentPodState, ResourceDistribution, WorkloadSpread go through `/convert`."""
    meta = {"name": "x", "namespace": "default"}
    objects = [
        {
            "apiVersion": f"{G}/v1alpha1",
            "kind": "UnitedDeployment",
            "metadata": meta,
            "spec": {"replicas": 2},
            "status": {"subsetReplicas": {"a": 2}, "updateStatus": {"updatedRevision": "r"}},
        },
        {
            "apiVersion": f"{G}/v1alpha1",
            "kind": "PersistentPodState",
            "metadata": meta,
            "spec": {"requiredPersistentTopology": {"nodeTopologyKeys": ["zone"]}},
        },
        {
            "apiVersion": f"{G}/v1alpha1",
            "kind": "ResourceDistribution",
            "metadata": {"name": "x"},
            "spec": {"targets": {"namespaceLabelSelector": {"matchLabels": {"a": "b"}}}},
        },
        {
            "apiVersion": f"{G}/v1alpha1",
            "kind": "WorkloadSpread",
            "metadata": meta,
            "spec": {"subsets": [{"name": "a", "requiredNodeSelectorTerm": {"matchExpressions": []}}]},
        },
    ]
    resp = await post(client, review(f"{G}/v1beta1", *objects))
    response = resp.json()["response"]
    assert response["result"] == {"status": "Success"}
    ud, pps, rd, ws = response["convertedObjects"]
    assert ud["status"] == {"updatedRevision": "r", "subsetStatuses": [{"name": "a", "replicas": 2}]}
    assert pps["spec"] == {"requiredPersistentTopology": {"keys": ["zone"]}}
    assert rd["spec"] == {"targets": {"namespaceSelector": {"matchLabels": {"a": "b"}}}}
    assert ws["spec"] == {"subsets": [{"name": "a", "requiredNodeSelector": {"matchExpressions": []}}]}
    back = await post(client, review(f"{G}/v1alpha1", *response["convertedObjects"]))
    assert back.json()["response"]["convertedObjects"] == objects
