"""Scenario templates, one module per category (see tether.bench.make_scenarios)."""
