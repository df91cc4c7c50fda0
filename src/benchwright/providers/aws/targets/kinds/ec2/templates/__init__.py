"""User-data templates for self-managed targets on EC2 (``string.Template``: $name placeholders)."""
