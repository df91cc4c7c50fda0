"""Notifiers: who hears about a run. One folder per kind (``slack/``), one line in ``registry.BUILTIN``.

A kind's descriptor (``base.NotifierKind``) declares everything the rest of the system asks about it:
its ``notify.<kind>`` spec section, its senders for a local run and on AWS, and the secret it reads.
"""
