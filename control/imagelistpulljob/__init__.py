"""ImageListPullJob planning without I/O: `childjobs` (one ImagePullJob per listed image, their status)."""
