"""Benchmarks that run through the code users run (``hindsight bench ...``)."""
