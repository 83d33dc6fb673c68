"""metctl's actuator: infrastructure and data-store drivers, and the journaled executor."""
