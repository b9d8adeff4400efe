"""The simulated world's model: the backend and its answers to each semantic call."""
