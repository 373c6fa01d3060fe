"""On-demand benchmarks (`python -m benchmarks [name ...]`); not collected by pytest."""
