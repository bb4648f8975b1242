"""Scenario templates, one module per category (see tether_bench.make_scenarios)."""
