"""Self-managed servers on EC2: the kind's descriptor (kind.py), its target class (target.py), its
user-data templates (templates/), node replacement (node_replace.py) and yb-admin (yb_admin.py)."""
