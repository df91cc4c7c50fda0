"""`benchwright deploy --check`: everything that can be checked before a deploy, offline, in a checkout."""
