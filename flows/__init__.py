"""Prefect flows that run dream on a schedule.

- `flows.dream_store.dream_store`: one store, one task per stage.
- `flows.dream_fleet.dream_fleet`: every store under some roots, gated cheaply.

They compose the library's stages (`dream.pipeline`) and hold no logic of
their own; see ``docs/prefect.md`` for the deployments in ``prefect.yaml``.
"""
