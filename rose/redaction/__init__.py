"""Redaction: secrets taken out of everything before it is written, and the table of secret
formats."""
