"""metctl's monitor: metric sources, counter-to-rate conversion, smoothing, the snapshot collector."""
