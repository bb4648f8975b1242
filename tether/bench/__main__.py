"""``python -m tether.bench``: the benchmark command without the tether CLI."""

from tether.bench.cli import bench_app

bench_app(prog_name="tether bench")
