"""A toy notifier kind, registered from this test folder: proof that a kind is one folder plus one line."""
