"""ImageListPullJob planning without I/O: `children` (one ImagePullJob per listed image, their status)."""
