"""Intervention: approval gates, cancellation, saved runs."""
