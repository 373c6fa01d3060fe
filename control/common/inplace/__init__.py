"""In-place update engine shared by CloneSet, Advanced StatefulSet, Advanced DaemonSet and SidecarSet.

Pure functions over pod dicts: the caller reads the pod, asks what the next object should look
like, and writes it back with optimistic concurrency (resourceVersion), as upstream's
``inplaceupdate.Interface`` does through its pod adapter.
"""
