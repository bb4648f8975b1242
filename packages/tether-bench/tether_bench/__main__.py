"""``python -m tether_bench``: the benchmark command without the tether CLI."""

from tether_bench.cli import bench_app

bench_app(prog_name="tether bench")
