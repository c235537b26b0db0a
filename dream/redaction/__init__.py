"""Secrets out of everything dream writes: the patterns (detectors) and the redactor that applies them.

Its own package because every layer that writes text a log gave it (transcript import, the nightly
run, the Claude engine's tools) needs it, and none of them may import another for it.
"""
