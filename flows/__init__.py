"""Prefect flows that run dream on a schedule.

- `flows.dream_store.dream_store`: one store, one task per stage.
- `flows.dream_fleet.dream_fleet`: every store under some roots, gated cheaply.

They call the library's one run sequence (`dream.pipeline.run.run`) with
hooks that make each stage a Prefect task, and hold no logic of their own;
see ``docs/prefect.md`` for the deployments in ``prefect.yaml``.
"""
