"""A simulated HBase-like cluster: metric source and actuator target for demos and evaluation."""
