"""See ARCHITECTURE.md for what lives here."""
