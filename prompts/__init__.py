"""The agent's prompts: Jinja2 templates, shipped inside the package as `dream.prompts`."""
