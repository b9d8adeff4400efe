"""The DAG's rising abstraction and its way back down: compression and merges checked by
replay, descent after a failure, trial patches, repair and demotion."""
