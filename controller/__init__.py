"""metctl's controller: the CLI, configuration, the control loop, state and telemetry.

The only package that wires the others together; it holds no policy of its own.
"""
