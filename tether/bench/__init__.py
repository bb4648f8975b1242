"""Benchmark: tether against AgentExecutor and create_agent, on real or simulated models."""
