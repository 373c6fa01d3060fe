"""ImagePullJob planning without I/O: `nodeimages` (target nodes, progress, status) and `pullsecrets` (copies
of its pull Secrets for kruise-daemon).
"""
