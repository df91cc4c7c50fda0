"""Slack: one Block Kit message per run through an incoming webhook (``notify.slack``).

``spec`` the section, ``message`` the message, ``send`` the post (a local run; the webhook from an
environment variable), ``aws`` the post from AWS (the webhook from Secrets Manager), ``kind`` the
descriptor the registry reads.
"""
