"""Registry tag aliases: two tags a registry serves as one image are one image in the fake runtime.

Upstream's "in-place update images with the same imageID" e2e case updates ``nginx:alpine`` to
``nginx:mainline-alpine`` and expects the container's imageID to stay, as it does against Docker Hub.
"""

import pytest

from kruise.sandbox.cri import FakeRuntime
from kruise.sandbox.cri.images import (
    REGISTRY_ALIASES,
    alias_table,
    image_id_for,
    manifest_digest_for,
    parse_reference,
    resolved,
)

ALPINE = "docker.io/library/nginx:alpine"
MAINLINE_ALPINE = "docker.io/library/nginx:mainline-alpine"
FAST = 6000.0


def test_docker_hub_nginx_alpine_tags_are_one_image() -> None:
    alpine, mainline = parse_reference("nginx:alpine"), parse_reference("nginx:mainline-alpine")
    assert REGISTRY_ALIASES[MAINLINE_ALPINE] == ALPINE
    assert image_id_for(alpine) == image_id_for(mainline)
    assert manifest_digest_for(alpine) == manifest_digest_for(mainline)
    assert image_id_for(alpine) != image_id_for(parse_reference("nginx:stable-alpine"))


def test_a_digest_names_its_own_content_even_on_an_aliased_tag() -> None:
    digest = "sha256:" + "cd" * 32
    ref = parse_reference(f"nginx:mainline-alpine@{digest}")
    assert resolved(ref) is ref
    assert manifest_digest_for(ref) == digest


@pytest.mark.parametrize(
    ("groups", "rule"),
    [
        ((("nginx:a", "nginx@sha256:" + "ab" * 32),), "an alias must be a tag without a digest"),
        ((("nginx:a", "nginx:b"), ("nginx:b", "nginx:c")), "a tag may be in one group only"),
    ],
)
def test_a_bad_alias_table_is_refused_naming_the_rule(groups, rule: str) -> None:
    with pytest.raises(ValueError, match=rule):
        alias_table(groups)


@pytest.mark.parametrize("order", [(ALPINE, MAINLINE_ALPINE), (MAINLINE_ALPINE, ALPINE)])
async def test_pulling_the_second_tag_names_the_present_image(order: tuple[str, str]) -> None:
    runtime = FakeRuntime("node-a", speed=FAST)
    first_id = await runtime.pull_image(order[0])
    assert await runtime.pull_image(order[1]) == first_id
    (image,) = runtime.list_images()
    assert image.repo_tags == (ALPINE, MAINLINE_ALPINE)  # sorted, whatever the pull order
    assert len(image.repo_digests) == 1
    assert runtime.image_ref(order[1]) == first_id
    runtime.remove_image(order[1])
    assert runtime.list_images() == []  # removing one name removes the image, with all its names


async def test_containers_of_both_tags_report_one_image_ref_and_the_first_tag() -> None:
    """As containerd: ContainerStatus's image is the image's first tag, its image_ref the repo digest."""
    runtime = FakeRuntime("node-a", speed=FAST)
    await runtime.pull_image("nginx:alpine")
    await runtime.pull_image("nginx:mainline-alpine")
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1")
    old = runtime.container(runtime.create_container(sandbox_id, "a", "nginx:alpine"))
    new = runtime.container(runtime.create_container(sandbox_id, "b", "nginx:mainline-alpine"))
    assert (old.image_id, old.image_ref) == (new.image_id, new.image_ref)
    assert (old.image_tag, new.image_tag) == (ALPINE, ALPINE)
    assert new.image == "nginx:mainline-alpine"


def test_an_image_store_takes_its_own_alias_table() -> None:
    runtime = FakeRuntime("node-a", speed=FAST)
    runtime.images.aliases = alias_table((("example.com/app:v1", "example.com/app:stable"),))
    (v1,) = runtime.preload("example.com/app:v1")
    (stable,) = runtime.preload("example.com/app:stable")
    (mainline,) = runtime.preload("nginx:mainline-alpine")
    assert v1 == stable
    assert mainline != runtime.preload("nginx:alpine")[0]
