"""The moto backends a rehearsal patches, one module per AWS service (see rehearse/hooks.py)."""
