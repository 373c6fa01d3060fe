"""``kubectl explain`` reads custom resource schemas from the emulator's OpenAPI v3 documents."""

from __future__ import annotations

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.explain.example.com
spec:
  group: explain.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: Gadget is a thing for tests.
        properties:
          spec:
            type: object
            description: Desired state of the gadget.
            required: [size]
            properties:
              size: {type: integer, description: How big the gadget is.}
              tags: {type: array, items: {type: string}}
"""


async def test_explain_custom_resource_fields(kubectl):
    await kubectl("apply", "-f", "-", stdin=CRD)
    await kubectl("wait", "--for=condition=Established", "crd/gadgets.explain.example.com", "--timeout=10s")
    top = await kubectl("explain", "gadgets")
    assert "KIND:       Gadget" in top.out and "VERSION:    v1beta1" in top.out
    assert "Gadget is a thing for tests." in top.out
    spec = await kubectl("explain", "gadget.spec")
    assert "Desired state of the gadget." in spec.out
    assert "size\t<integer> -required-" in spec.out
    assert "How big the gadget is." in spec.out
    assert "tags\t<[]string>" in spec.out
    labels = await kubectl("explain", "gadget.metadata.labels")
    assert "<map[string]string>" in labels.out
    recursive = await kubectl("explain", "gadgets", "--recursive")
    assert "ownerReferences\t<[]OwnerReference>" in recursive.out


async def test_openapi_v3_document_carries_the_schema(kubectl):
    await kubectl("apply", "-f", "-", stdin=CRD)
    await kubectl("wait", "--for=condition=Established", "crd/gadgets.explain.example.com", "--timeout=10s")
    doc = (await kubectl("get", "--raw", "/openapi/v3/apis/explain.example.com/v1beta1")).json()
    schemas = doc["components"]["schemas"]
    gadget = schemas["com.example.explain.v1beta1.Gadget"]
    assert gadget["x-kubernetes-group-version-kind"] == [
        {"group": "explain.example.com", "kind": "Gadget", "version": "v1beta1"}
    ]
    assert gadget["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    assert schemas["com.example.explain.v1beta1.GadgetList"]["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/com.example.explain.v1beta1.Gadget"
    }
