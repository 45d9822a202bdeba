"""timeseries."""
