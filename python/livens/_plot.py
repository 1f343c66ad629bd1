"""Plots of a Result with matplotlib."""
