"""Forecasts made before anything is created: whether a burst bucket drains during the run."""
