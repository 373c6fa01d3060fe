"""kruise-py's OCI image without Docker: `make image` (as root, on Debian).

    python docker/image.py [--registry HOST:PORT] [--tag TAG] [--no-push] [--strict-locks]

Builds the root file system (docker/rootfs.py), packs it as a one-layer OCI image with the sandbox's
reproducible writer (kruise.sandbox.realnode.oci: sorted entries, mtime 0, uid/gid 0, gzip without name
or time), writes it as an OCI layout (`build/image/oci`) and an OCI archive (`build/image/kruise-py.oci.tar`,
for `ctr images import` or `skopeo copy oci-archive:`), pushes it over the registry API v2 and prints the
reference and digest. Same source, same mirror state and the same SOURCE_DATE_EPOCH give the same digest.

Importing kruise.sandbox here does not cross the layering (tests/unit/test_layering.py): docker/ is build
tooling run from the development install, never part of the image, and the image's own wheel is built
without the sandbox.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import debian_base
import httpx
import rootfs
import wheels

from kruise.sandbox.realnode import oci
from kruise.sandbox.realnode.push import PushError, push_image
from kruise.sandbox.realnode.registry import LocalRegistry

REPO = rootfs.REPO
BUILD = REPO / "build/image"
REPOSITORY = "kruise-py"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"
RUNTIME = oci.ImageConfig(
    entrypoint=("kruise-manager",),
    env=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",),
    working_dir="/",
    user="65534:65534",
)


class ImageError(RuntimeError):
    pass


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def revision() -> str:
    """The commit the image is built from, `-dirty` when the files that go into it differ from it."""
    head = _git("rev-parse", "HEAD")
    if not head:
        raise ImageError(
            "revision: not in a git checkout (the label org.opencontainers.image.revision needs it)"
        )
    changed = _git("status", "--porcelain", "--", *wheels.SOURCES, "crds", "docker")
    return f"{head}-dirty" if changed else head


def source_url() -> str:
    """Where the source lives: the checkout's `origin` remote, if it has one."""
    return _git("remote", "get-url", "origin")


def installed_version(tree: Path) -> str:
    (info,) = sorted((tree / wheels.SITE).glob("kruise_py-*.dist-info"))
    return info.name.removeprefix("kruise_py-").removesuffix(".dist-info")


def labels(version: str, commit: str, source: str, epoch: int) -> dict[str, str]:
    created = datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    found = {
        "org.opencontainers.image.title": REPOSITORY,
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.revision": commit,
        "org.opencontainers.image.created": created,
    }
    if source:
        found["org.opencontainers.image.source"] = source
    return found


def tree_entries(tree: Path) -> list[oci.Entry]:
    """Every path of the tree as a layer entry (permission bits kept; owner and mtime the writer's)."""
    entries = []
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree).as_posix()
        info = path.lstat()
        mode = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            entries.append(oci.symlink(rel, os.readlink(path)))
        elif stat.S_ISDIR(info.st_mode):
            entries.append(oci.directory(rel, mode=mode))
        elif stat.S_ISREG(info.st_mode):
            entries.append(oci.file(rel, path.read_bytes(), mode=mode))
        else:
            raise ImageError(f"{rel}: only files, directories and symlinks go into the image layer")
    return entries


def pack(tree: Path, *, version: str, commit: str, source: str, epoch: int) -> oci.Image:
    created = labels(version, commit, source, epoch)["org.opencontainers.image.created"]
    config = dataclasses.replace(RUNTIME, labels=labels(version, commit, source, epoch))
    return oci.build_image([oci.Layer.of(tree_entries(tree))], config, created=created)


def layout_entries(image: oci.Image, tag: str) -> list[oci.Entry]:
    """An OCI image layout (image-spec `image-layout.md`) holding `image` under the name `tag`."""
    manifest = {**image.manifest.descriptor(), "annotations": {REF_NAME: tag}}
    index = {"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": [manifest]}
    entries = [
        oci.file("oci-layout", oci.canonical_json({"imageLayoutVersion": "1.0.0"})),
        oci.file("index.json", oci.canonical_json(index)),
    ]
    for blob in [*image.blobs(), image.manifest]:
        entries.append(oci.file(f"blobs/sha256/{blob.digest.removeprefix('sha256:')}", blob.data))
    return entries


def write_layout(image: oci.Image, tag: str, directory: Path, archive: Path) -> None:
    entries = layout_entries(image, tag)
    shutil.rmtree(directory, ignore_errors=True)
    for entry in entries:
        target = directory / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.data)
    archive.write_bytes(oci.tar_bytes(entries))


async def push(image: oci.Image, registry: str, repository: str, tag: str) -> str:
    """Push to `registry` (host:port or URL; none: a local docker-registry under build/image/registry,
    started for the push and stopped again, its storage kept); return the registry's host:port."""
    if registry:
        url = registry if "://" in registry else f"http://{registry}"
        async with httpx.AsyncClient(base_url=url, timeout=120.0, trust_env=False) as client:
            await push_image(client, repository, [tag], image)
        return url.split("://", 1)[1].rstrip("/")
    local = LocalRegistry(BUILD / "registry")
    await local.start()
    try:
        async with local.client() as client:
            client.timeout = httpx.Timeout(120.0)
            await push_image(client, repository, [tag], image)
    finally:
        await local.stop()
    return local.address


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docker/image.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--registry",
        default=os.environ.get("KRUISE_IMAGE_REGISTRY", ""),
        help="push to HOST:PORT or URL (env KRUISE_IMAGE_REGISTRY; default: a local docker-registry)",
    )
    parser.add_argument("--repository", default=REPOSITORY, help="(default: %(default)s)")
    parser.add_argument("--tag", default="", help="(default: kruise-py's version)")
    parser.add_argument(
        "--source",
        default=os.environ.get("KRUISE_IMAGE_SOURCE", "") or source_url(),
        help="label org.opencontainers.image.source (env KRUISE_IMAGE_SOURCE; default: git remote origin)",
    )
    parser.add_argument("--no-push", action="store_true", help="only write the OCI layout and archive")
    parser.add_argument("--strict-locks", action="store_true", help="fail when the mirror dropped a pin")
    args = parser.parse_args(argv)
    started = time.monotonic()
    tree = BUILD / "rootfs"
    try:
        epoch = rootfs.source_date_epoch()
        rootfs.build(tree, BUILD / "cache", epoch, args.strict_locks)
        problems = rootfs.check(tree)
        if problems:
            raise ImageError("the root file system fails its checks:\n" + "\n".join(problems))
        version = installed_version(tree)
        image = pack(tree, version=version, commit=revision(), source=args.source, epoch=epoch)
        tag = args.tag or version
        write_layout(image, tag, BUILD / "oci", BUILD / f"{args.repository.replace('/', '_')}.oci.tar")
        size = rootfs.tree_size(tree) / 1e6
        layer = len(image.layers[0].blob.data) / 1e6
        print(f"image {args.repository}:{tag}: {size:.1f} MB uncompressed, layer {layer:.1f} MB gzipped")
        print(
            f"OCI layout {BUILD / 'oci'}, archive {BUILD / (args.repository.replace('/', '_') + '.oci.tar')}"
        )
        if not args.no_push:
            where = asyncio.run(push(image, args.registry, args.repository, tag))
            print(f"pushed {where}/{args.repository}:{tag}")
            print(f"image {where}/{args.repository}@{image.digest}")
        print(f"digest {image.digest}")
        print(f"built in {time.monotonic() - started:.0f} s")
    except (ImageError, rootfs.BuildError, debian_base.DebianError, wheels.WheelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (PushError, httpx.HTTPError, OSError) as error:
        print(f"error: push to {args.registry or 'the local registry'}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
