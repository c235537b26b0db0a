"""Stores that live on a service: dream dreams a local mirror and pushes accepted changes back."""
