"""kruise-daemon's ContainerRecreateRequest handling: `progress` plans each pass (pure), the
recreator carries it out through the CRI."""

from kruise.daemon.containerrecreate.progress import plan_recreate

__all__ = ["plan_recreate"]
