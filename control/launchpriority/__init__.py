"""Container launch priority without I/O: `barriers` (which barrier key each container waits for)."""
