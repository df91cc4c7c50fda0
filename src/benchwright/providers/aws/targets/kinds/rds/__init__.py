"""RDS PostgreSQL / MySQL instances: the kind's descriptor (kind.py) and its target class (target.py)."""
